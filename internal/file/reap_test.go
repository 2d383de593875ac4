package file

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// openHandle opens a handle on the file at path through the handle API, as
// an SMB front end named owner would, live until until.
func openHandle(t *testing.T, s *Service, now time.Time, owner string, until time.Time, sh, path string, acc handle.Access, share handle.ShareAccess, doc bool) handle.Handle {
	t.Helper()
	var h handle.Handle
	err := s.store.Update(t.Context(), func(tx kv.Tx) error {
		if err := handle.Heartbeat(tx, now, owner, until); err != nil {
			return err
		}
		_, e, err := walk(tx, shAcct, sh, "", strings.Split(path, "/"))
		if err != nil {
			return err
		}
		h, err = handle.Open(tx, now, handle.OpenRequest{Account: shAcct, Share: sh, FileID: FormatID(e.ID), ParentID: FormatID(e.Parent),
			Path: path, SessionID: "s1", ClientIP: "10.0.0.1:445", Access: acc, ShareAccess: share, DeleteOnClose: doc, Owner: owner})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A front end that dies holding a delete-on-close handle: until its
// liveness lease runs out REST sees the file busy; then the reaper removes
// the handle and, the file being delete-pending, the file itself.
func TestReapDeadFrontEnd(t *testing.T) {
	s, clk := shService(t)
	shOK(t, s, clk, http.StatusCreated, "PUT", "/reap?restype=share", "")
	shOK(t, s, clk, http.StatusCreated, "PUT", "/reap/f", "", "x-ms-type", "file", "x-ms-content-length", "10")
	shOK(t, s, clk, http.StatusCreated, "PUT", "/reap/g", "", "x-ms-type", "file", "x-ms-content-length", "10")
	now := clk.Now()
	h := openHandle(t, s, now, "fe1", now.Add(30*time.Second), "reap", "f", handle.Read|handle.Delete, handle.ShareRead, true)
	openHandle(t, s, now, "fe1", now.Add(30*time.Second), "reap", "g", handle.Read, handle.ShareRead, false)

	// Sharing: the open shares Read only, so a REST write conflicts, a read
	// does not.
	_, err := shDo(t, s, clk, "PUT", "/reap/g?comp=metadata", "", "x-ms-meta-a", "b")
	shErr(t, err, azerr.SharingViolation)
	shOK(t, s, clk, http.StatusOK, "GET", "/reap/g", "")
	// Delete File fails while any handle is open.
	_, err = shDo(t, s, clk, "DELETE", "/reap/g", "")
	shErr(t, err, azerr.SharingViolation)

	// Mark f delete-pending through its handle: REST gets DeletePending and
	// the listing hides it.
	err = s.store.Update(t.Context(), func(tx kv.Tx) error {
		return handle.SetDeletePending(tx, clk.Now(), shAcct, "reap", h.FileID, h.HandleID, true)
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = shDo(t, s, clk, "GET", "/reap/f", "")
	shErr(t, err, azerr.DeletePending)
	w := shOK(t, s, clk, http.StatusOK, "GET", "/reap?restype=directory&comp=list", "")
	if body := w.Body.String(); strings.Contains(body, "<Name>f</Name>") || !strings.Contains(body, "<Name>g</Name>") {
		t.Fatalf("listing should hide f and show g: %s", body)
	}

	// Before the lease ends the reaper leaves everything alone.
	if n, err := s.ReapHandles(t.Context()); err != nil || n != 0 {
		t.Fatalf("reap before expiry: %d, %v", n, err)
	}
	clk.Advance(31 * time.Second)
	if n, err := s.ReapHandles(t.Context()); err != nil || n != 2 {
		t.Fatalf("reap after expiry: %d handles, %v; want 2", n, err)
	}
	_, err = shDo(t, s, clk, "GET", "/reap/f", "")
	shErr(t, err, azerr.ResourceNotFound)
	shOK(t, s, clk, http.StatusOK, "PUT", "/reap/g?comp=metadata", "", "x-ms-meta-a", "b")
	shOK(t, s, clk, http.StatusAccepted, "DELETE", "/reap/g", "")
}
