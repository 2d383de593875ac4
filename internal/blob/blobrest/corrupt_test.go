package blobrest

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// corrupt overwrites the record under key with bytes that are not JSON.
func (e *sdEnv) corrupt(key []byte) {
	e.t.Helper()
	err := e.s.Store().Update(context.Background(), func(tx kv.Tx) error {
		if _, err := tx.Get(key); err != nil {
			return err // the test must corrupt a record that exists
		}
		return tx.Put(key, []byte("{not json"))
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// failsCorrupt runs a request that must fail with the decode error of a
// stored record (not an Azure error code, and not a silent success).
func (e *sdEnv) failsCorrupt(method, target string, hdr map[string]string, body string) {
	e.t.Helper()
	_, err := e.do(method, target, hdr, body)
	if err == nil {
		e.t.Fatalf("%s %s: succeeded over a corrupt record", method, target)
	}
	if _, ok := azerr.As(err); ok || !strings.Contains(err.Error(), "decoding") {
		e.t.Fatalf("%s %s: got %v, want the record's decode error", method, target, err)
	}
}

// TestCorruptBlockRecordFailsCommit: Put Block List drops the blob's other
// uncommitted blocks and releases their data. A block record that does
// not decode must fail the commit (and leave every record and reference
// as it was) instead of being deleted with its references still held.
func TestCorruptBlockRecordFailsCommit(t *testing.T) {
	e, _ := newSDEnv(t)
	e.ok(http.MethodPut, "/acct/cnt/b?comp=block&blockid=YmxrMQ==", nil, "first block")
	e.ok(http.MethodPut, "/acct/cnt/b?comp=block&blockid=YmxrMg==", nil, "second block")
	refsBefore := e.refs()
	keysBefore := e.keys("u")
	e.corrupt(blob.BlockKey("acct", "cnt", "b", "YmxrMg=="))

	e.failsCorrupt(http.MethodPut, "/acct/cnt/b?comp=blocklist", nil, "<BlockList><Latest>YmxrMQ==</Latest></BlockList>")
	sdWant(t, "block records", e.keys("u"), keysBefore)
	sdWant(t, "references", e.refs(), refsBefore)
	sdWant(t, "blobs", e.keys("b"), []string(nil))

	// Get Block List cannot list the corrupt block either.
	e.failsCorrupt(http.MethodGet, "/acct/cnt/b?comp=blocklist&blocklisttype=all", nil, "")
}

// TestCorruptSnapshotFailsDelete: Delete Blob with its snapshots must not
// skip a snapshot record it cannot decode (which would outlive the blob,
// holding its data).
func TestCorruptSnapshotFailsDelete(t *testing.T) {
	e, _ := newSDEnv(t)
	e.put("b", blob.BlockBlob, "content")
	snap := e.snapshot("b")
	e.corrupt(blob.BlobKey("acct", "cnt", "b", snap))
	blobsBefore := e.keys("b")
	refsBefore := e.refs()

	e.failsCorrupt(http.MethodDelete, "/acct/cnt/b", map[string]string{"x-ms-delete-snapshots": "include"}, "")
	sdWant(t, "blobs", e.keys("b"), blobsBefore)
	sdWant(t, "references", e.refs(), refsBefore)
	if got := e.read("b", ""); got != "content" {
		t.Fatalf("blob after the failed delete: %q", got)
	}

	// Listing with snapshots visits the record too.
	e.failsCorrupt(http.MethodGet, "/acct/cnt?restype=container&comp=list&include=snapshots", nil, "")

	// Delete Container returns at once; its reclaim releases every
	// blob's data and stops at the record it cannot decode, leaving
	// every record, reference and the tombstone as they were (the name
	// stays reserved: 409 ContainerBeingDeleted).
	e.ok(http.MethodDelete, "/acct/cnt?restype=container", nil, "")
	_, err := e.s.ReclaimContainers(context.Background())
	if err == nil || !strings.Contains(err.Error(), "decoding") {
		t.Fatalf("reclaim over a corrupt record: %v, want the record's decode error", err)
	}
	sdWant(t, "blobs after the failed reclaim", e.keys("b"), blobsBefore)
	sdWant(t, "references after the failed reclaim", e.refs(), refsBefore)
	_, err = e.do(http.MethodPut, "/acct/cnt?restype=container", nil, "")
	wantCode(t, err, 409, azerr.ContainerBeingDeleted)
}

// TestCorruptBlobRecordFailsListings: List Blobs and Find Blobs by Tags
// report a base record they cannot decode instead of leaving it out.
func TestCorruptBlobRecordFailsListings(t *testing.T) {
	e, _ := newSDEnv(t)
	e.put("a", blob.BlockBlob, "a")
	e.put("b", blob.BlockBlob, "b")
	e.corrupt(blob.BlobKey("acct", "cnt", "b", ""))
	e.failsCorrupt(http.MethodGet, "/acct/cnt?restype=container&comp=list", nil, "")
	e.failsCorrupt(http.MethodGet, "/acct/cnt?restype=container&comp=blobs&where=%22k%22%3D%27v%27", nil, "")
}

// TestCorruptContainerRecordFailsList: List Containers reports a
// container record it cannot decode instead of leaving it out.
func TestCorruptContainerRecordFailsList(t *testing.T) {
	e, _ := newSDEnv(t)
	e.ok(http.MethodPut, "/acct/other?restype=container", nil, "")
	e.corrupt(blob.ContainerKey("acct", "other"))
	e.failsCorrupt(http.MethodGet, "/acct?comp=list", nil, "")
}

// truncate cuts the stored record under key to half its length: for a
// blob record, its binary form ending early.
func (e *sdEnv) truncate(key []byte) {
	e.t.Helper()
	err := e.s.Store().Update(context.Background(), func(tx kv.Tx) error {
		v, err := tx.Get(key)
		if err != nil {
			return err
		}
		if len(v) < 4 || v[0] == '{' {
			e.t.Fatalf("the record is not in the binary form: %q", v)
		}
		return tx.Put(key, append([]byte(nil), v[:len(v)/2]...))
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// TestTruncatedBinaryRecordFails: a blob record in the binary form that
// ends early is reported as the JSON one is: reads, listings and a
// delete with snapshots fail with its decode error, and the delete
// leaves every record and reference as it was.
func TestTruncatedBinaryRecordFails(t *testing.T) {
	e, _ := newSDEnv(t)
	e.put("a", blob.BlockBlob, "a")
	e.put("b", blob.BlockBlob, "content")
	snap := e.snapshot("b")
	e.truncate(blob.BlobKey("acct", "cnt", "b", snap))
	e.truncate(blob.BlobKey("acct", "cnt", "a", ""))
	blobsBefore := e.keys("b")
	refsBefore := e.refs()

	e.failsCorrupt(http.MethodGet, "/acct/cnt/a", nil, "")
	e.failsCorrupt(http.MethodGet, "/acct/cnt?restype=container&comp=list", nil, "")
	e.failsCorrupt(http.MethodDelete, "/acct/cnt/b", map[string]string{"x-ms-delete-snapshots": "include"}, "")
	sdWant(t, "blobs", e.keys("b"), blobsBefore)
	sdWant(t, "references", e.refs(), refsBefore)
	if got := e.read("b", ""); got != "content" {
		t.Fatalf("blob after the failed delete: %q", got)
	}
}
