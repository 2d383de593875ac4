package file

import (
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// Directory operations. A directory is an entry record like a file
// (entry.Dir); its children are keyed by its file ID, so none of these
// operations touches more than the directory's own record (and the ID
// index), whatever the size of the tree below it.

// freshID returns a file ID not yet used in the live share. IDs are
// random 64-bit values, so the loop practically never runs twice; the
// check keeps a collision from silently overwriting the ID index.
func freshID(tx kv.Tx, acct, sh string) (uint64, error) {
	for {
		id := newID()
		_, err := tx.Get(idKey(acct, sh, "", id))
		if err == kv.ErrNotFound {
			return id, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// createDirectory implements Create Directory: 201; 409 ResourceAlreadyExists
// when a directory already has the name (names compare case-insensitively)
// (Create Directory,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-directory);
// 409 ResourceTypeMismatch when a file has it (microsoft/vscode-azurestorage
// #848, the service's message "The specified resource type does not match the
// type of the existing resource" for a directory named like a file); 404
// ParentNotFound when a parent is missing or is a file (azfile
// TestDirCreateDeleteNegativeMultiLevelDir).
func (s *Service) createDirectory(w http.ResponseWriter, r *req) error {
	if err := requireEmptyBody(r); err != nil {
		return err
	}
	meta, smb, err := parseCreate(r.Header)
	if err != nil {
		return err
	}
	c := restCaller(r)
	e, err := s.dom().create(r.Context(), &c, &createIn{dir: true, meta: meta, smb: smb})
	if err != nil {
		return err
	}
	writeEntryWritten(w, e, http.StatusCreated)
	return nil
}

// getDirectoryProperties implements Get Directory Properties and Get
// Directory Metadata (GET or HEAD, ?comp=metadata), on the share root too
// and through share snapshots.
func (s *Service) getDirectoryProperties(w http.ResponseWriter, r *req) error {
	var e *Entry
	c := restCaller(r)
	err := s.store.View(r.Context(), func(tx kv.Tx) (err error) {
		e, err = s.dom().readable(tx, &c, &opGetDirectoryProperties, true)
		return err
	})
	if err != nil {
		return err
	}
	writeEntryProps(w, e)
	h := w.Header()
	h.Set("x-ms-server-encrypted", "true")
	w.WriteHeader(http.StatusOK)
	return nil
}

// setDirectoryProperties implements Set Directory Properties: the SMB
// properties (attributes, times, permission); absent headers preserve.
func (s *Service) setDirectoryProperties(w http.ResponseWriter, r *req) error {
	if err := requireEmptyBody(r); err != nil {
		return err
	}
	smb, err := parseSMB(r.Header, false)
	if err != nil {
		return err
	}
	c := restCaller(r)
	out, err := s.dom().setProperties(r.Context(), &c, &propsIn{op: &opSetDirectoryProperties, dir: true, smb: smb})
	if err != nil {
		return err
	}
	writeEntryWritten(w, out.e, http.StatusOK)
	return nil
}

// setDirectoryMetadata implements Set Directory Metadata: the request's
// x-ms-meta-* replace the directory's metadata (none clears it).
func (s *Service) setDirectoryMetadata(w http.ResponseWriter, r *req) error {
	if err := requireEmptyBody(r); err != nil {
		return err
	}
	meta, err := wire.ParseMetadata(r.Header)
	if err != nil {
		return err
	}
	c := restCaller(r)
	out, err := s.dom().setProperties(r.Context(), &c, &propsIn{op: &opSetDirectoryMetadata, dir: true, setMeta: true, meta: meta})
	if err != nil {
		return err
	}
	setETag(w, out.e)
	w.Header().Set("x-ms-request-server-encrypted", "true")
	w.WriteHeader(http.StatusOK)
	return nil
}

// deleteDirectory implements Delete Directory: 202 for an empty directory,
// 409 DirectoryNotEmpty otherwise (a delete-pending child still counts: it
// exists until its last handle closes) (Delete Directory,
// https://learn.microsoft.com/en-us/rest/api/storageservices/delete-directory).
// The delete is atomic: REST never leaves a directory delete-pending. The
// share root cannot be deleted: 400 InvalidUri (no source names the code; the
// root is the share itself, which only Delete Share removes).
func (s *Service) deleteDirectory(w http.ResponseWriter, r *req) error {
	if err := requireEmptyBody(r); err != nil {
		return err
	}
	c := restCaller(r)
	if err := s.dom().delete(r.Context(), &c, &deleteIn{dir: true}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}
