package handle

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

var errRollback = errors.New("rollback")

// TestOpenShareMatrix runs the share-access check through the store:
// for every existing open (access×share) and every new open, Open must
// refuse exactly when MS-FSA says so.
func TestOpenShareMatrix(t *testing.T) {
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		e.heartbeat("fe1", time.Hour)
		for ea := range 8 {
			for es := range 8 {
				err := e.update(func(tx kv.Tx) error {
					base := OpenRequest{Account: "acct", Share: "share", FileID: "f", Owner: "fe1"}
					first := base
					first.Access, first.ShareAccess = Access(ea), ShareAccess(es)
					if _, err := Open(tx, e.now(), first); err != nil {
						return fmt.Errorf("first open: %w", err)
					}
					for na := range 8 {
						for ns := range 8 {
							req := base
							req.Access, req.ShareAccess = Access(na), ShareAccess(ns)
							h, err := Open(tx, e.now(), req)
							want := fsaSharingViolation(ntMask(ea, 0), ntShare(es), ntMask(na, 0), ntShare(ns))
							switch {
							case want && !errors.Is(err, ErrSharingViolation):
								t.Errorf("existing %v/%v, new %v/%v: err %v, want sharing violation", Access(ea), ShareAccess(es), Access(na), ShareAccess(ns), err)
							case !want && err != nil:
								t.Errorf("existing %v/%v, new %v/%v: err %v, want success", Access(ea), ShareAccess(es), Access(na), ShareAccess(ns), err)
							case err == nil:
								if _, err := Close(tx, e.now(), "acct", "share", "f", h.HandleID); err != nil {
									return err
								}
							}
						}
					}
					return errRollback
				})
				if !errors.Is(err, errRollback) {
					t.Fatal(err)
				}
			}
		}
		e.assertNoLeftovers()
	})
}

func TestOpenValidation(t *testing.T) {
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		if _, err := e.open(OpenRequest{FileID: "f", Access: Read}); !errors.Is(err, ErrOwnerNotLive) {
			t.Errorf("open without heartbeat: %v", err)
		}
		e.heartbeat("fe1", time.Minute)
		for _, c := range []struct {
			req  OpenRequest
			want error
		}{
			{OpenRequest{FileID: "", Access: Read}, ErrInvalid},
			{OpenRequest{FileID: "f", Access: 8}, ErrInvalid},
			{OpenRequest{FileID: "f", ShareAccess: 8}, ErrInvalid},
			{OpenRequest{FileID: "f", HandleID: "007"}, ErrInvalid},
			{OpenRequest{FileID: "f", HandleID: "0"}, ErrInvalid},
			{OpenRequest{FileID: "f", Access: Read | Write, DeleteOnClose: true}, ErrAccessDenied},
			{OpenRequest{FileID: "f", Owner: "nobody", Access: Read}, ErrOwnerNotLive},
		} {
			if _, err := e.open(c.req); !errors.Is(err, c.want) {
				t.Errorf("open %+v: %v, want %v", c.req, err, c.want)
			}
		}
		h := e.mustOpen(OpenRequest{FileID: "f", HandleID: "42", Access: Read, ShareAccess: ShareAll,
			SessionID: "s1", ClientIP: "10.0.0.5:49152", ParentID: "root", Path: "dir/f.txt"})
		if _, err := e.open(OpenRequest{FileID: "f", HandleID: "42", ShareAccess: ShareAll}); !errors.Is(err, ErrInvalid) {
			t.Errorf("reused handle id: %v", err)
		}
		want := Handle{Account: "acct", Share: "share", FileID: "f", HandleID: "42", ParentID: "root", Path: "dir/f.txt",
			SessionID: "s1", ClientIP: "10.0.0.5:49152", OpenTime: t0, Access: Read, ShareAccess: ShareAll, Owner: "fe1"}
		if h != want {
			t.Errorf("open returned %+v, want %+v", h, want)
		}
		var got Handle
		e.view(func(tx kv.Tx) error {
			var err error
			got, err = Load(tx, e.now(), "acct", "share", "f", "42")
			return err
		})
		if got != want {
			t.Errorf("Get = %+v, want %+v", got, want)
		}
		e.view(func(tx kv.Tx) error {
			if _, err := Load(tx, e.now(), "acct", "share", "f", "43"); !errors.Is(err, ErrNoHandle) {
				t.Errorf("Get of a missing handle: %v", err)
			}
			return nil
		})
	})
}

// TestDeleteOnClose: a delete-on-close handle marks the file
// delete-pending when it closes; the file then refuses opens and REST
// operations, and the last close reports it for deletion.
func TestDeleteOnClose(t *testing.T) {
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		e.heartbeat("fe1", time.Hour)
		a := e.mustOpen(OpenRequest{FileID: "f", Access: Read, ShareAccess: ShareAll})
		b := e.mustOpen(OpenRequest{FileID: "f", Access: Delete, ShareAccess: ShareAll, DeleteOnClose: true})
		if e.deletePending("f") {
			t.Fatal("delete-pending before the delete-on-close handle closed")
		}
		if r := e.close("f", b.HandleID); len(r.Delete) != 0 || len(r.Handles) != 1 || r.Handles[0].HandleID != b.HandleID {
			t.Fatalf("closing the delete-on-close handle: %+v", r)
		}
		if !e.deletePending("f") || !e.hasOpen("f") {
			t.Fatal("want delete-pending with an open handle")
		}
		if _, err := e.open(OpenRequest{FileID: "f", Access: Read, ShareAccess: ShareAll}); !errors.Is(err, ErrDeletePending) {
			t.Errorf("open of a delete-pending file: %v", err)
		}
		if _, err := e.open(OpenRequest{FileID: "f", ShareAccess: ShareAll}); !errors.Is(err, ErrDeletePending) {
			t.Errorf("attribute-only open of a delete-pending file: %v", err)
		}
		for _, op := range []string{OpGetFileProperties, OpGetFile, OpPutRange, OpDeleteFile, OpLeaseFileOther} {
			if err := e.checkREST("f", op); !errors.Is(err, ErrDeletePending) {
				t.Errorf("REST %s on a delete-pending file: %v", op, err)
			}
		}
		r := e.close("f", a.HandleID)
		if !slices.Equal(deletedIDs(r), []string{"f"}) || r.Delete[0].Path != "dir/f" {
			t.Fatalf("last close: %+v, want file f reported", r)
		}
		if e.deletePending("f") || e.hasOpen("f") {
			t.Fatal("state not cleared after the last close")
		}
		e.assertNoLeftovers()
		// The caller deleted the file; a new file with that id opens fine.
		e.mustOpen(OpenRequest{FileID: "f", Access: Read})
	})
}

func TestCloseErrors(t *testing.T) {
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		e.heartbeat("fe1", time.Hour)
		h := e.mustOpen(OpenRequest{FileID: "f", Access: Read})
		e.close("f", h.HandleID)
		err := e.update(func(tx kv.Tx) error {
			_, err := Close(tx, e.now(), "acct", "share", "f", h.HandleID)
			return err
		})
		if !errors.Is(err, ErrNoHandle) {
			t.Errorf("second close: %v", err)
		}
		e.assertNoLeftovers()
	})
}

func TestSetDeletePending(t *testing.T) {
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		e.heartbeat("fe1", time.Hour)
		r := e.mustOpen(OpenRequest{FileID: "f", Access: Read, ShareAccess: ShareAll})
		d := e.mustOpen(OpenRequest{FileID: "f", Access: Read | Delete, ShareAccess: ShareAll})
		set := func(id string, v bool) error {
			return e.update(func(tx kv.Tx) error { return SetDeletePending(tx, e.now(), "acct", "share", "f", id, v) })
		}
		if err := set(r.HandleID, true); !errors.Is(err, ErrAccessDenied) {
			t.Errorf("set through a handle without Delete access: %v", err)
		}
		if err := set("999", true); !errors.Is(err, ErrNoHandle) {
			t.Errorf("set through a missing handle: %v", err)
		}
		if err := set(d.HandleID, true); err != nil {
			t.Fatal(err)
		}
		if !e.deletePending("f") {
			t.Fatal("not delete-pending")
		}
		if err := set(d.HandleID, false); err != nil {
			t.Fatal(err)
		}
		if e.deletePending("f") {
			t.Fatal("still delete-pending after clearing")
		}
		if res := e.close("f", r.HandleID); len(res.Delete) != 0 {
			t.Fatalf("close reported a delete: %+v", res)
		}
		if err := set(d.HandleID, true); err != nil {
			t.Fatal(err)
		}
		if res := e.close("f", d.HandleID); !slices.Equal(deletedIDs(res), []string{"f"}) {
			t.Fatalf("closing the last handle of a delete-pending file: %+v", res)
		}
		e.assertNoLeftovers()
	})
}

func TestCloseSession(t *testing.T) {
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		e.heartbeat("fe1", time.Hour)
		a := e.mustOpen(OpenRequest{FileID: "f1", SessionID: "s1", Access: Read, ShareAccess: ShareAll})
		b := e.mustOpen(OpenRequest{FileID: "f2", SessionID: "s1", Access: Delete, ShareAccess: ShareAll, DeleteOnClose: true})
		c := e.mustOpen(OpenRequest{FileID: "f1", SessionID: "s2", Access: Read, ShareAccess: ShareAll})
		d := e.mustOpen(OpenRequest{FileID: "f3", SessionID: "s1", Access: Delete, ShareAccess: ShareAll, DeleteOnClose: true})
		e.mustOpen(OpenRequest{FileID: "f3", SessionID: "s2", Access: Read, ShareAccess: ShareAll})
		var r Result
		e.must(func(tx kv.Tx) error {
			var err error
			r, err = CloseSession(tx, e.now(), "s1")
			return err
		})
		got := handleIDs(r.Handles)
		want := []string{a.HandleID, b.HandleID, d.HandleID}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("closed %v, want %v", got, want)
		}
		// f2 had only the delete-on-close handle; f3 has another one left.
		if !slices.Equal(deletedIDs(r), []string{"f2"}) {
			t.Errorf("delete %v, want [f2]", deletedIDs(r))
		}
		if !e.deletePending("f3") {
			t.Error("f3 is not delete-pending")
		}
		if hs := e.listAll("f1"); len(hs) != 1 || hs[0].HandleID != c.HandleID {
			t.Errorf("f1 handles %v, want only %s", handleIDs(hs), c.HandleID)
		}
		e.must(func(tx kv.Tx) error {
			var err error
			r, err = CloseSession(tx, e.now(), "s2")
			return err
		})
		if len(r.Handles) != 2 || !slices.Equal(deletedIDs(r), []string{"f3"}) {
			t.Errorf("closing s2: %+v", r)
		}
		e.assertNoLeftovers()
	})
}

func TestForceClose(t *testing.T) {
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		e.heartbeat("fe1", time.Hour)
		var f1 []Handle
		for range 3 {
			f1 = append(f1, e.mustOpen(OpenRequest{FileID: "f1", SessionID: "s", Access: Read, ShareAccess: ShareAll}))
		}
		e.mustOpen(OpenRequest{FileID: "f2", Access: Read, ShareAccess: ShareAll})
		e.mustOpen(OpenRequest{FileID: "f2", Access: Delete, ShareAccess: ShareAll, DeleteOnClose: true})
		e.mustOpen(OpenRequest{Share: "other", FileID: "f1", Access: Read, ShareAccess: ShareAll})
		force := func(fileID, id string, limit int) Result {
			t.Helper()
			var r Result
			e.must(func(tx kv.Tx) error {
				var err error
				r, err = ForceClose(tx, e.now(), "acct", "share", fileID, id, limit)
				return err
			})
			return r
		}
		if r := force("f1", f1[1].HandleID, 0); len(r.Handles) != 1 || r.Handles[0].HandleID != f1[1].HandleID || r.More {
			t.Fatalf("force close one: %+v", r)
		}
		if r := force("f1", f1[1].HandleID, 0); len(r.Handles) != 0 {
			t.Fatalf("force close of a closed handle: %+v", r)
		}
		if r := force("f1", "12345", 0); len(r.Handles) != 0 {
			t.Fatalf("force close of an unknown id: %+v", r)
		}
		if r := force("f1", "*", 0); len(r.Handles) != 2 || r.More {
			t.Fatalf("force close *: %+v", r)
		}
		if e.hasOpen("f1") {
			t.Fatal("f1 still has handles")
		}
		// Share-wide, one at a time.
		r := force("", "*", 1)
		if len(r.Handles) != 1 || !r.More || len(r.Delete) != 0 {
			t.Fatalf("share-wide with limit 1: %+v", r)
		}
		r = force("", "*", 1)
		if len(r.Handles) != 1 || r.More || !slices.Equal(deletedIDs(r), []string{"f2"}) {
			t.Fatalf("share-wide, second: %+v", r)
		}
		if r := force("", "*", 0); len(r.Handles) != 0 {
			t.Fatalf("nothing left to close: %+v", r)
		}
		// The other share is untouched.
		var n int
		e.view(func(tx kv.Tx) error {
			return List(tx, e.now(), "acct", "other", Position{}, func(Handle) bool { n++; return true })
		})
		if n != 1 {
			t.Errorf("other share has %d handles, want 1", n)
		}
		// Share-wide with one id.
		h := e.mustOpen(OpenRequest{FileID: "f9", Access: Read, ShareAccess: ShareAll})
		if r := force("", h.HandleID, 0); len(r.Handles) != 1 || r.Handles[0].HandleID != h.HandleID {
			t.Fatalf("share-wide one id: %+v", r)
		}
	})
}

// TestListPaging lists a share in pages through markers and checks the
// pages add up to the full, sorted listing.
func TestListPaging(t *testing.T) {
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		e.heartbeat("fe1", time.Hour)
		e.heartbeat("fe2", time.Minute)
		var want []Position
		for i := range 5 {
			fid := fmt.Sprintf("file%d", i)
			for range i + 1 {
				h := e.mustOpen(OpenRequest{FileID: fid, Access: Read, ShareAccess: ShareAll})
				want = append(want, h.Position())
			}
			// Handles of a front end that will die must not be listed.
			e.mustOpen(OpenRequest{FileID: fid, Owner: "fe2", Access: Read, ShareAccess: ShareAll})
		}
		e.clk.Advance(2 * time.Minute)
		slices.SortFunc(want, func(a, b Position) int {
			if c := compareBytes(kv.Key(a.FileID, a.HandleID), kv.Key(b.FileID, b.HandleID)); c != 0 {
				return c
			}
			return 0
		})
		all := e.listAll("")
		var got []Position
		for _, h := range all {
			got = append(got, h.Position())
		}
		if !slices.Equal(got, want) {
			t.Fatalf("full listing %v, want %v", got, want)
		}
		for _, size := range []int{1, 2, 3, 7, 100} {
			var paged []Position
			marker := ""
			for pages := 0; ; pages++ {
				if pages > len(want)+1 {
					t.Fatal("paging does not end")
				}
				after, err := DecodeMarker(marker)
				if err != nil {
					t.Fatal(err)
				}
				var page []Position
				next := ""
				e.view(func(tx kv.Tx) error {
					return List(tx, e.now(), "acct", "share", after, func(h Handle) bool {
						if len(page) == size {
							next = EncodeMarker(page[len(page)-1])
							return false
						}
						page = append(page, h.Position())
						return true
					})
				})
				paged = append(paged, page...)
				if next == "" {
					break
				}
				marker = next
			}
			if !slices.Equal(paged, want) {
				t.Errorf("page size %d: %v, want %v", size, paged, want)
			}
		}
		// ListFile resumes after a handle id.
		f4 := e.listAll("file4")
		if len(f4) != 5 {
			t.Fatalf("file4 has %d live handles", len(f4))
		}
		var rest []Handle
		e.view(func(tx kv.Tx) error {
			return ListFile(tx, e.now(), "acct", "share", "file4", f4[1].HandleID, func(h Handle) bool {
				rest = append(rest, h)
				return true
			})
		})
		if !slices.Equal(handleIDs(rest), handleIDs(f4[2:])) {
			t.Errorf("ListFile after %s: %v, want %v", f4[1].HandleID, handleIDs(rest), handleIDs(f4[2:]))
		}
		// Resuming "after" a position inside file2 with an empty handle id
		// starts at file2's first handle.
		var first Handle
		e.view(func(tx kv.Tx) error {
			return List(tx, e.now(), "acct", "share", Position{FileID: "file2"}, func(h Handle) bool { first = h; return false })
		})
		if first.FileID != "file2" {
			t.Errorf("resume at file2 gave %+v", first)
		}
	})
}

func compareBytes(a, b []byte) int { return slices.Compare(a, b) }

// TestOwnerLiveness: handles of an owner whose heartbeat expired are
// ignored everywhere, never come back, and are deleted by Reap.
func TestOwnerLiveness(t *testing.T) {
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		e.heartbeat("fe1", 30*time.Second)
		e.heartbeat("fe2", time.Hour)
		x := e.mustOpen(OpenRequest{FileID: "f", Access: Read | Write, ShareAccess: ShareNone, SessionID: "s1"})
		if _, err := e.open(OpenRequest{FileID: "f", Owner: "fe2", Access: Read}); !errors.Is(err, ErrSharingViolation) {
			t.Fatalf("open against a live exclusive handle: %v", err)
		}
		if err := e.checkREST("f", OpGetFile); !errors.Is(err, ErrSharingViolation) {
			t.Fatalf("REST against a live exclusive handle: %v", err)
		}
		e.clk.Advance(29 * time.Second)
		e.heartbeat("fe1", 30*time.Second) // renewal: same incarnation
		e.clk.Advance(29 * time.Second)
		if !e.hasOpen("f") {
			t.Fatal("renewed owner's handle died")
		}
		e.clk.Advance(time.Second) // now = until: expired
		if e.hasOpen("f") || len(e.listAll("")) != 0 {
			t.Fatal("dead handle still visible")
		}
		if err := e.checkREST("f", OpDeleteFile); err != nil {
			t.Fatalf("REST against a dead handle: %v", err)
		}
		if _, err := e.open(OpenRequest{FileID: "f", Access: Read}); !errors.Is(err, ErrOwnerNotLive) {
			t.Fatalf("open by an expired owner: %v", err)
		}
		y := e.mustOpen(OpenRequest{FileID: "f", Owner: "fe2", Access: Read | Write, ShareAccess: ShareNone})
		// The old owner comes back: a new incarnation, x stays dead.
		e.heartbeat("fe1", time.Hour)
		if hs := e.listAll(""); len(hs) != 1 || hs[0].HandleID != y.HandleID {
			t.Fatalf("after fe1 returned: %v, want only %s", handleIDs(hs), y.HandleID)
		}
		err := e.update(func(tx kv.Tx) error {
			_, err := Close(tx, e.now(), "acct", "share", "f", x.HandleID)
			return err
		})
		if !errors.Is(err, ErrNoHandle) {
			t.Errorf("close of a dead handle: %v", err)
		}
		var r Result
		e.must(func(tx kv.Tx) error {
			var err error
			r, err = Reap(tx, e.now(), 0)
			return err
		})
		if !slices.Equal(handleIDs(r.Handles), []string{x.HandleID}) || len(r.Delete) != 0 || r.More {
			t.Fatalf("reap: %+v", r)
		}
		if n := e.countKeys(pfxSession); n != 0 {
			t.Errorf("%d session index keys left", n)
		}
		if hs := e.listAll(""); len(hs) != 1 {
			t.Fatalf("reap removed a live handle: %v", handleIDs(hs))
		}
		// Retire kills fe2's handle at once.
		e.must(func(tx kv.Tx) error { return Retire(tx, "fe2") })
		if e.hasOpen("f") {
			t.Fatal("retired owner's handle is live")
		}
		e.must(func(tx kv.Tx) error {
			var err error
			r, err = Reap(tx, e.now(), 0)
			return err
		})
		if len(r.Handles) != 1 {
			t.Fatalf("reap after retire: %+v", r)
		}
		e.assertNoLeftovers()
	})
}

// TestReapDeleteOnClose: a dead delete-on-close handle makes its file
// delete-pending; Reap reports the file once no live handle is left.
func TestReapDeleteOnClose(t *testing.T) {
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		e.heartbeat("dies", time.Minute)
		e.heartbeat("lives", time.Hour)
		e.mustOpen(OpenRequest{FileID: "f", Owner: "dies", Access: Delete, ShareAccess: ShareAll, DeleteOnClose: true})
		e.mustOpen(OpenRequest{FileID: "g", Owner: "dies", Access: Delete, ShareAccess: ShareAll, DeleteOnClose: true})
		keep := e.mustOpen(OpenRequest{FileID: "g", Owner: "lives", Access: Read, ShareAccess: ShareAll})
		for range 5 {
			e.mustOpen(OpenRequest{FileID: "h", Owner: "dies", Access: Read, ShareAccess: ShareAll})
		}
		e.clk.Advance(time.Minute)
		reap := func(limit int) Result {
			var r Result
			e.must(func(tx kv.Tx) error {
				var err error
				r, err = Reap(tx, e.now(), limit)
				return err
			})
			return r
		}
		var all Result
		for i := 0; ; i++ {
			if i > 10 {
				t.Fatal("reap does not end")
			}
			r := reap(2)
			if len(r.Handles) > 2 {
				t.Fatalf("reap with limit 2 removed %d", len(r.Handles))
			}
			all.Handles = append(all.Handles, r.Handles...)
			all.Delete = append(all.Delete, r.Delete...)
			if !r.More {
				break
			}
		}
		if len(all.Handles) != 7 || !slices.Equal(deletedIDs(all), []string{"f"}) {
			t.Fatalf("reaped %d handles, delete %v; want 7 and [f]", len(all.Handles), deletedIDs(all))
		}
		if n := e.countKeys(pfxOwner); n != 1 {
			t.Errorf("%d owner records, want 1 (the expired one is deleted)", n)
		}
		if !e.deletePending("g") {
			t.Fatal("g is not delete-pending")
		}
		if r := e.close("g", keep.HandleID); !slices.Equal(deletedIDs(r), []string{"g"}) {
			t.Fatalf("closing g's last live handle: %+v", r)
		}
		e.assertNoLeftovers()
	})
}

// TestSettle: a delete-pending file whose handles all died keeps
// answering delete-pending until Settle (or Reap) reports it.
func TestSettle(t *testing.T) {
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		e.heartbeat("fe1", time.Minute)
		h := e.mustOpen(OpenRequest{FileID: "f", Access: Delete, ShareAccess: ShareAll})
		e.must(func(tx kv.Tx) error { return SetDeletePending(tx, e.now(), "acct", "share", "f", h.HandleID, true) })
		settle := func() bool {
			var del bool
			e.must(func(tx kv.Tx) error {
				var err error
				del, err = Settle(tx, e.now(), "acct", "share", "f")
				return err
			})
			return del
		}
		if settle() {
			t.Fatal("settled a file with a live handle")
		}
		e.clk.Advance(time.Minute)
		if err := e.checkREST("f", OpGetFileProperties); !errors.Is(err, ErrDeletePending) {
			t.Fatalf("REST on a delete-pending file with dead handles: %v", err)
		}
		if !settle() {
			t.Fatal("Settle did not report the file")
		}
		if settle() {
			t.Fatal("Settle reported the file twice")
		}
		e.assertNoLeftovers()
	})
}

func TestReconnect(t *testing.T) {
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		e.heartbeat("fe1", time.Minute)
		e.heartbeat("fe2", time.Hour)
		h := e.mustOpen(OpenRequest{FileID: "f", SessionID: "s1", ClientIP: "10.0.0.1:1000", Access: Read, ShareAccess: ShareRead})
		e.clk.Advance(10 * time.Second)
		var r Handle
		e.must(func(tx kv.Tx) error {
			var err error
			r, err = Reconnect(tx, e.now(), "acct", "share", "f", h.HandleID, ReconnectRequest{Owner: "fe2", SessionID: "s2", ClientIP: "10.0.0.1:2000"})
			return err
		})
		if r.Owner != "fe2" || r.SessionID != "s2" || r.ClientIP != "10.0.0.1:2000" || !r.LastReconnectTime.Equal(t0.Add(10*time.Second)) || !r.OpenTime.Equal(t0) {
			t.Fatalf("reconnected handle %+v", r)
		}
		e.clk.Advance(time.Minute) // fe1 is dead now
		if hs := e.listAll(""); len(hs) != 1 || hs[0] != r {
			t.Fatalf("after fe1 died: %+v, want %+v", hs, r)
		}
		var res Result
		e.must(func(tx kv.Tx) error {
			var err error
			if res, err = CloseSession(tx, e.now(), "s1"); err != nil || len(res.Handles) != 0 {
				return fmt.Errorf("closing the old session: %+v, %v", res, err)
			}
			res, err = CloseSession(tx, e.now(), "s2")
			return err
		})
		if len(res.Handles) != 1 {
			t.Fatalf("closing the new session: %+v", res)
		}
		e.assertNoLeftovers()
	})
}

// TestConcurrentExclusiveOpen: goroutines race to open one file with
// ShareNone; exactly one wins, the others get ErrSharingViolation.
func TestConcurrentExclusiveOpen(t *testing.T) {
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		e.heartbeat("fe1", time.Hour)
		for round := range 3 {
			fid := fmt.Sprintf("f%d", round)
			const n = 24
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() {
					acc := []Access{Read, Write, Delete, Read | Write}[i%4]
					_, errs[i] = e.open(OpenRequest{FileID: fid, Access: acc, ShareAccess: ShareNone})
				})
			}
			wg.Wait()
			wins := 0
			for _, err := range errs {
				switch {
				case err == nil:
					wins++
				case !errors.Is(err, ErrSharingViolation):
					t.Errorf("unexpected error: %v", err)
				}
			}
			if wins != 1 {
				t.Errorf("round %d: %d opens won, want 1", round, wins)
			}
			if hs := e.listAll(fid); len(hs) != 1 {
				t.Errorf("round %d: %d handles stored", round, len(hs))
			}
		}
	})
}

// TestConcurrentDeleteOnCloseLastClose: handles of one delete-pending
// file closed concurrently: exactly one close reports the file.
func TestConcurrentLastClose(t *testing.T) {
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		e.heartbeat("fe1", time.Hour)
		const n = 16
		var hs []Handle
		for i := range n {
			hs = append(hs, e.mustOpen(OpenRequest{FileID: "f", Access: Read | Delete, ShareAccess: ShareAll, DeleteOnClose: i == 0}))
		}
		var wg sync.WaitGroup
		reports := make([]int, n)
		for i, h := range hs {
			wg.Go(func() {
				err := e.update(func(tx kv.Tx) error {
					r, err := Close(tx, e.now(), "acct", "share", "f", h.HandleID)
					reports[i] = len(r.Delete)
					return err
				})
				if err != nil {
					t.Errorf("close: %v", err)
				}
			})
		}
		wg.Wait()
		total := 0
		for _, r := range reports {
			total += r
		}
		if total != 1 {
			t.Errorf("%d closes reported the file, want 1", total)
		}
		e.assertNoLeftovers()
	})
}
