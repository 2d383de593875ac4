package copysrc

import (
	"errors"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// TestMapped: a mapped reader passes the errors of its read and of the
// object's Readable through the mapping, and leaves a nil Readable nil.
func TestMapped(t *testing.T) {
	refused := errors.New("refused")
	mapped := errors.New("mapped")
	f := func(err error) error {
		if err == refused {
			return mapped
		}
		return err
	}
	var r Reader = func(kv.Tx, time.Time) (*Object, error) { return nil, refused }
	if _, err := r.Mapped(f)(nil, time.Time{}); err != mapped {
		t.Fatalf("read error %v, want the mapped one", err)
	}
	r = func(kv.Tx, time.Time) (*Object, error) {
		return &Object{Size: 5, Readable: func(off, n int64) error {
			if off+n > 3 {
				return refused
			}
			return nil
		}}, nil
	}
	o, err := r.Mapped(f)(nil, time.Time{})
	if err != nil || o.Size != 5 {
		t.Fatalf("read %+v, %v", o, err)
	}
	if err := o.Readable(0, 3); err != nil {
		t.Fatalf("readable range: %v", err)
	}
	if err := o.Readable(2, 2); err != mapped {
		t.Fatalf("locked range: %v, want the mapped error", err)
	}
	r = func(kv.Tx, time.Time) (*Object, error) { return &Object{}, nil }
	if o, _ := r.Mapped(f)(nil, time.Time{}); o.Readable != nil {
		t.Fatal("a nil Readable became a function")
	}
}

// TestAsFailure: an Azure error reading a source becomes
// CannotVerifyCopySource with the read's status and code as details; a
// CannotVerifyCopySource and other errors pass unchanged.
func TestAsFailure(t *testing.T) {
	err := AsFailure(azerr.New(azerr.BlobNotFound))
	ae, ok := azerr.As(err)
	if !ok || ae.Code != azerr.CannotVerifyCopySource || ae.Status != 404 {
		t.Fatalf("got %v", err)
	}
	want := []azerr.Detail{{Name: "CopySourceStatusCode", Value: "404"}, {Name: "CopySourceErrorCode", Value: azerr.BlobNotFound}}
	if len(ae.Details) != 2 || ae.Details[0] != want[0] || ae.Details[1] != want[1] {
		t.Fatalf("details %v", ae.Details)
	}
	f := FailureOf(azerr.BlobUsesCustomerSpecifiedEncryption)
	if AsFailure(f) != error(f) {
		t.Fatal("a CannotVerifyCopySource was wrapped again")
	}
	plain := errors.New("disk")
	if AsFailure(plain) != plain || AsFailure(nil) != nil {
		t.Fatal("a non-Azure error changed")
	}
}
