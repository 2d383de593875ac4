package file

import (
	"context"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// The File REST directory operations as domain methods: each takes a Ref
// naming the directory and the parsed request values, runs in one kv
// transaction (through the shared domain calls of domain_meta.go) and
// returns the stored entry for the front end (filerest/dir.go) to render.

// EntryOutput is the directory or file record an operation read or
// stored.
type EntryOutput struct {
	Entry *Entry
}

// CreateDirectoryInput is the input of CreateDirectory.
type CreateDirectoryInput struct {
	Ref
	Meta map[string]string
	// SMB are the SMB properties to set (parseSMB with create).
	SMB *SMBRequest
}

// CreateDirectory is Create Directory: 409 ResourceAlreadyExists when a
// directory already has the name (names compare case-insensitively), 409
// ResourceTypeMismatch when a file has it, 404 ParentNotFound when a
// parent is missing or is a file (see domain.create).
func (s *Service) CreateDirectory(ctx context.Context, in CreateDirectoryInput) (EntryOutput, error) {
	c := in.caller()
	e, err := s.dom().create(ctx, &c, &createIn{dir: true, meta: in.Meta, smb: in.SMB})
	return EntryOutput{Entry: e}, err
}

// GetDirectoryPropertiesInput is the input of GetDirectoryProperties.
type GetDirectoryPropertiesInput struct{ Ref }

// GetDirectoryProperties is Get Directory Properties and Get Directory
// Metadata, on the share root too and through share snapshots.
func (s *Service) GetDirectoryProperties(ctx context.Context, in GetDirectoryPropertiesInput) (EntryOutput, error) {
	var e *Entry
	c := in.caller()
	err := s.store.View(ctx, func(tx kv.Tx) (err error) {
		e, err = s.dom().readable(tx, &c, &opGetDirectoryProperties, true)
		return err
	})
	return EntryOutput{Entry: e}, err
}

// SetDirectoryPropertiesInput is the input of SetDirectoryProperties.
type SetDirectoryPropertiesInput struct {
	Ref
	// SMB are the SMB properties to set; absent ones are preserved.
	SMB *SMBRequest
}

// SetDirectoryProperties is Set Directory Properties: the SMB properties
// (attributes, times, permission).
func (s *Service) SetDirectoryProperties(ctx context.Context, in SetDirectoryPropertiesInput) (EntryOutput, error) {
	c := in.caller()
	out, err := s.dom().setProperties(ctx, &c, &propsIn{op: &opSetDirectoryProperties, dir: true, smb: in.SMB})
	return EntryOutput{Entry: out.e}, err
}

// SetDirectoryMetadataInput is the input of SetDirectoryMetadata.
type SetDirectoryMetadataInput struct {
	Ref
	// Meta replaces the directory's metadata (nil clears it).
	Meta map[string]string
}

// SetDirectoryMetadata is Set Directory Metadata.
func (s *Service) SetDirectoryMetadata(ctx context.Context, in SetDirectoryMetadataInput) (EntryOutput, error) {
	c := in.caller()
	out, err := s.dom().setProperties(ctx, &c, &propsIn{op: &opSetDirectoryMetadata, dir: true, setMeta: true, meta: in.Meta})
	return EntryOutput{Entry: out.e}, err
}

// DeleteDirectoryInput is the input of DeleteDirectory.
type DeleteDirectoryInput struct{ Ref }

// DeleteDirectoryOutput is the result of DeleteDirectory (nothing beyond
// success).
type DeleteDirectoryOutput struct{}

// DeleteDirectory is Delete Directory: an empty directory is deleted at
// once, one with entries is 409 DirectoryNotEmpty, the share root 400
// InvalidUri (see domain.delete).
func (s *Service) DeleteDirectory(ctx context.Context, in DeleteDirectoryInput) (DeleteDirectoryOutput, error) {
	c := in.caller()
	return DeleteDirectoryOutput{}, s.dom().delete(ctx, &c, &deleteIn{dir: true})
}
