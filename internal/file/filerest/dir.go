package filerest

import (
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// Directory operations. A directory is an entry record like a file
// (entry.Dir); its children are keyed by its file ID, so none of these
// operations touches more than the directory's own record (and the ID
// index), whatever the size of the tree below it.

// createDirectory implements Create Directory: 201; 409 ResourceAlreadyExists
// when a directory already has the name (names compare case-insensitively)
// (Create Directory,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-directory);
// 409 ResourceTypeMismatch when a file has it (microsoft/vscode-azurestorage
// #848, the service's message "The specified resource type does not match the
// type of the existing resource" for a directory named like a file); 404
// ParentNotFound when a parent is missing or is a file (azfile
// TestDirCreateDeleteNegativeMultiLevelDir).
func (s *Service) createDirectory(r *req) (server.Response, error) {
	if err := requireEmptyBody(r); err != nil {
		return server.Response{}, err
	}
	meta, smb, err := parseCreate(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.f.CreateDirectory(r.Context(), file.CreateDirectoryInput{Ref: refOf(r), Meta: meta, SMB: smb})
	if err != nil {
		return server.Response{}, err
	}
	return entryWritten(out.Entry, http.StatusCreated), nil
}

// getDirectoryProperties implements Get Directory Properties and Get
// Directory Metadata (GET or HEAD, ?comp=metadata), on the share root too
// and through share snapshots.
func (s *Service) getDirectoryProperties(r *req) (server.Response, error) {
	out, err := s.f.GetDirectoryProperties(r.Context(), file.GetDirectoryPropertiesInput{Ref: refOf(r)})
	if err != nil {
		return server.Response{}, err
	}
	resp := server.Response{Status: http.StatusOK, Header: make([]server.HeaderField, 0, 10+len(out.Entry.Meta))}
	setEntryProps(&resp, out.Entry)
	resp.Set("X-Ms-Server-Encrypted", "true")
	return resp, nil
}

// setDirectoryProperties implements Set Directory Properties: the SMB
// properties (attributes, times, permission); absent headers preserve.
func (s *Service) setDirectoryProperties(r *req) (server.Response, error) {
	if err := requireEmptyBody(r); err != nil {
		return server.Response{}, err
	}
	smb, err := parseSMB(r.Header, false)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.f.SetDirectoryProperties(r.Context(), file.SetDirectoryPropertiesInput{Ref: refOf(r), SMB: smb})
	if err != nil {
		return server.Response{}, err
	}
	return entryWritten(out.Entry, http.StatusOK), nil
}

// setDirectoryMetadata implements Set Directory Metadata: the request's
// x-ms-meta-* replace the directory's metadata (none clears it).
func (s *Service) setDirectoryMetadata(r *req) (server.Response, error) {
	if err := requireEmptyBody(r); err != nil {
		return server.Response{}, err
	}
	meta, err := wire.ParseMetadata(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.f.SetDirectoryMetadata(r.Context(), file.SetDirectoryMetadataInput{Ref: refOf(r), Meta: meta})
	if err != nil {
		return server.Response{}, err
	}
	resp := server.Bodiless(http.StatusOK)
	setETag(&resp, out.Entry)
	resp.Set("X-Ms-Request-Server-Encrypted", "true")
	return resp, nil
}

// deleteDirectory implements Delete Directory: 202 for an empty directory,
// 409 DirectoryNotEmpty otherwise (a delete-pending child still counts: it
// exists until its last handle closes) (Delete Directory,
// https://learn.microsoft.com/en-us/rest/api/storageservices/delete-directory).
// The delete is atomic: REST never leaves a directory delete-pending. The
// share root cannot be deleted: 400 InvalidUri (no source names the code; the
// root is the share itself, which only Delete Share removes).
func (s *Service) deleteDirectory(r *req) (server.Response, error) {
	if err := requireEmptyBody(r); err != nil {
		return server.Response{}, err
	}
	if _, err := s.f.DeleteDirectory(r.Context(), file.DeleteDirectoryInput{Ref: refOf(r)}); err != nil {
		return server.Response{}, err
	}
	return server.Bodiless(http.StatusAccepted), nil
}
