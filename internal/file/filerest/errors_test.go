package filerest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/file"
)

// TestAnswerRefusals: the refusals the domain leaves to the
// door are answered with their Azure codes and keep their check; those
// the domain answered itself, and other errors, pass unchanged.
func TestAnswerRefusals(t *testing.T) {
	for _, tc := range []struct {
		by     file.Check
		code   string
		status int
	}{
		{file.ByLock, azerr.FileLockConflict, 409},
		{file.ByQuota, azerr.ShareSizeLimitReached, 403},
		{file.ByReadOnly, azerr.ReadOnlyAttribute, 409},
		{file.ByParent, azerr.ParentNotFound, 404},
		{file.ByExists, azerr.ResourceAlreadyExists, 409},
		{file.ByReplaceDir, azerr.ResourceAlreadyExists, 409},
		{file.ByNotEmpty, azerr.DirectoryNotEmpty, 409},
		{file.ByShareRoot, azerr.InvalidURI, 400},
		{file.BySubtree, azerr.InvalidInput, 400},
	} {
		err := Answer(fmt.Errorf("wrapped: %w", &file.Refusal{By: tc.by, Detail: "d"}))
		ae, ok := azerr.As(err)
		if !ok || ae.Code != tc.code || ae.Status != tc.status || file.RefusedBy(err) != tc.by {
			t.Errorf("%v: got %v (refused by %v), want %d %s", tc.by, err, file.RefusedBy(err), tc.status, tc.code)
		}
	}
	if ae, _ := azerr.As(Answer(&file.Refusal{By: file.BySubtree})); ae == nil || ae.Message != "A directory cannot be moved into itself or its subtree." {
		t.Errorf("subtree message: %v", ae)
	}
	answered := &file.Refusal{By: file.ByLease, Err: azerr.New(azerr.LeaseIDMissing)}
	if err := Answer(answered); err != answered {
		t.Errorf("an answered refusal became %v", err)
	}
	other := errors.New("storage fault")
	if err := Answer(other); err != other {
		t.Errorf("a storage fault became %v", err)
	}
	if err := Answer(nil); err != nil {
		t.Errorf("nil became %v", err)
	}
}

// TestAnswerSourceFailure: a copy source that a byte-range lock
// refuses is reported as the service reports source failures: 409
// CannotVerifyCopySource naming the source's status and code.
func TestAnswerSourceFailure(t *testing.T) {
	err := Answer(&file.SourceError{Err: &file.Refusal{By: file.ByLock, Detail: "d"}})
	ae, ok := azerr.As(err)
	if !ok || ae.Code != azerr.CannotVerifyCopySource || ae.Status != 409 {
		t.Fatalf("got %v", err)
	}
	want := map[string]string{"CopySourceStatusCode": "409", "CopySourceErrorCode": azerr.FileLockConflict}
	for _, d := range ae.Details {
		if w, ok := want[d.Name]; ok && d.Value == w {
			delete(want, d.Name)
		}
	}
	if len(want) != 0 {
		t.Fatalf("details %v lack %v", ae.Details, want)
	}
	other := errors.New("storage fault")
	if err := Answer(&file.SourceError{Err: other}); err != other {
		t.Fatalf("a storage fault reading the source became %v", err)
	}
}
