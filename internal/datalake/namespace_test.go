package datalake

import (
	"errors"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
)

// TestNSErr: namespace errors keep their code, status and message.
func TestNSErr(t *testing.T) {
	for _, e := range []*ns.Error{ns.ErrFilesystemNotFound, ns.ErrPathNotFound, ns.ErrPathAlreadyExists, ns.ErrPathConflict, ns.ErrDirectoryNotEmpty,
		ns.ErrSourcePathNotFound, ns.ErrRenameDestParentAbsent, ns.ErrInvalidDestinationPath, ns.ErrInvalidRenameSource, ns.ErrSourceDestTypeMismatch,
		ns.ErrConditionNotMet, ns.ErrSourceConditionNotMet, ns.ErrPermissionMismatch, ns.ErrInvalidPath, ns.ErrInvalidContinuation, ns.ErrInvalidInput, ns.ErrFilesystemExists} {
		got, ok := azerr.As(nsErr(e))
		if !ok || got.Code != e.Code || got.Status != e.Status || got.Message != e.Message {
			t.Errorf("%v: %v", e, got)
		}
	}
	plain := errors.New("x")
	if nsErr(plain) != plain {
		t.Error("a non-namespace error changed")
	}
}
