package file

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// TestMalformedHandleFileIDFails: the file service stores every handle
// under a decimal file ID. A handle record whose file ID does not parse is
// corrupt; the scans over handles that resolve it (the open-items check
// of an SMB directory rename, List Handles) report it instead of skipping
// the handle.
func TestMalformedHandleFileIDFails(t *testing.T) {
	e := newVT(t)
	e.mkdir("a")
	e.mkfile("z", 1)
	z := e.open(e.req("z", AccessReadData, vtRWD, DispOpen, 0))

	// Copy z's live handle record under a file ID that is not a number.
	err := e.s.store.Update(context.Background(), func(tx kv.Tx) error {
		p := kv.Key("fh", vtAcct, e.sh, FormatID(z.FileID))
		var handleID string
		var val []byte
		if err := tx.Scan(p, kv.PrefixEnd(p), 0, false, func(k, v []byte) bool {
			parts, _ := kv.Split(k)
			handleID, val = parts[4], append([]byte(nil), v...)
			return false
		}); err != nil {
			return err
		}
		if val == nil {
			t.Fatal("no handle record for the open")
		}
		return tx.Put(kv.Key("fh", vtAcct, e.sh, "not-a-number", handleID), val)
	})
	if err != nil {
		t.Fatal(err)
	}

	wantMalformed := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "malformed file id") {
			t.Fatalf("%s: got %v, want the malformed file id error", what, err)
		}
	}
	d := e.open(e.req("a", AccessDelete, vtRWD, DispOpen, OptDirectoryFile))
	wantMalformed("rename of a directory", e.v.Rename(e.ctx, d, []string{"b"}, false))
	_, err = e.rest(http.MethodGet, "/vfs?restype=directory&comp=listhandles", nil, "x-ms-recursive", "true")
	wantMalformed("List Handles", err)
}
