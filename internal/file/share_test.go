package file

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/testenv"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/server"
)

const shAcct = "acct"

// shService is a Service over a bolt store and chunk store in a temporary
// directory, with a fake clock.
// maxPermission is the REST front end's bound on a Create Permission
// body (filerest, share_acl.go).
const maxPermission = 64 << 10

func shService(t testing.TB) (*Service, *clock.Fake) {
	t.Helper()
	store, chunks, clk := testenv.Stores(t)
	return New(store, chunks, clk, nil), clk
}

// shDo sends one authenticated request through ServeAzure. target is the
// path and query below the account ("/share?restype=share"); hdr holds
// pairs of header names and values.
func shDo(t *testing.T, s *Service, clk *clock.Fake, method, target, body string, hdr ...string) (*httptest.ResponseRecorder, error) {
	t.Helper()
	hr := httptest.NewRequest(method, "http://127.0.0.1:10003/"+shAcct+target, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		hr.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	err := serveREST(s, w, &server.Request{Request: hr, Account: shAcct, Authenticated: true, Now: clk.Now()})
	return asClientSees(w), err
}

// shOK is shDo that must succeed with status.
func shOK(t *testing.T, s *Service, clk *clock.Fake, status int, method, target, body string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	w, err := shDo(t, s, clk, method, target, body, hdr...)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	if w.Code != status {
		t.Fatalf("%s %s: status %d, want %d", method, target, w.Code, status)
	}
	return w
}

// shErr asserts err is the catalog error code.
func shErr(t *testing.T, err error, code string) {
	t.Helper()
	e, ok := azerr.As(err)
	if !ok || e.Code != code {
		t.Fatalf("got %v, want %s", err, code)
	}
}

// shPutFile writes a file entry named name in the root directory of the
// live share sh with content data, as a data item the entry references.
func shPutFile(t *testing.T, s *Service, sh, name, data string) *entry {
	t.Helper()
	ctx := context.Background()
	st, err := s.data.Stage(ctx, strings.NewReader(data), int64(len(data)), extent.Digests{}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Release()
	now := s.clock.Now()
	e := &entry{Name: name, ID: newID(), Parent: RootID, Created: now, Size: int64(len(data)), Parts: st.Parts}
	touch(e, now)
	err = s.store.Update(ctx, func(tx kv.Tx) error {
		old, err := loadEntry(tx, shAcct, sh, "", RootID, fold(name))
		if err != nil {
			return err
		}
		var oldParts []extent.Part
		if old != nil {
			oldParts = old.Parts
			e.ID = old.ID
		}
		if err := st.Write(tx); err != nil {
			return err
		}
		if err := extent.AdjustRefs(tx, now, oldParts, e.Parts); err != nil {
			return err
		}
		return putEntry(tx, shAcct, sh, "", e)
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// shRead returns the content of file name in share sh at snap.
func shRead(t *testing.T, s *Service, sh, snap, name string) string {
	t.Helper()
	ctx := context.Background()
	var e *entry
	var inline map[string][]byte
	err := s.store.View(ctx, func(tx kv.Tx) (err error) {
		if e, err = loadEntry(tx, shAcct, sh, snap, RootID, fold(name)); err != nil || e == nil {
			return err
		}
		inline, err = extent.Prefetch(tx, e.Parts, 0, e.Size)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if e == nil {
		t.Fatalf("%s@%s: no file %s", sh, snap, name)
	}
	rd := s.data.NewReader(ctx, e.Parts, inline, 0, e.Size)
	defer rd.Close()
	b, err := io.ReadAll(rd)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// shRefs returns the reference count of every data item.
func shRefs(t *testing.T, s *Service) map[string]uint32 {
	t.Helper()
	out := map[string]uint32{}
	err := s.store.View(context.Background(), func(tx kv.Tx) error {
		pre := kv.Key("x")
		return tx.Scan(pre, kv.PrefixEnd(pre), 0, false, func(k, v []byte) bool {
			parts, _ := kv.Split(k)
			out[parts[1]] = binary.BigEndian.Uint32(v)
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// shCount counts the keys under prefix.
func shCount(t *testing.T, s *Service, prefix []byte) int {
	t.Helper()
	n := 0
	err := s.store.View(context.Background(), func(tx kv.Tx) error {
		return tx.Scan(prefix, kv.PrefixEnd(prefix), 0, false, func(_, _ []byte) bool { n++; return true })
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestShareCreateGetSetDelete(t *testing.T) {
	s, clk := shService(t)
	w := shOK(t, s, clk, 201, "PUT", "/sh1?restype=share", "", "x-ms-meta-color", "blue", "x-ms-share-quota", "100", "x-ms-access-tier", "Cool")
	if w.Header().Get("ETag") == "" || w.Header().Get("Last-Modified") == "" || w.Header().Get("x-ms-share-quota") != "100" {
		t.Fatalf("create headers %v", w.Header())
	}
	_, err := shDo(t, s, clk, "PUT", "/sh1?restype=share", "")
	shErr(t, err, azerr.ShareAlreadyExists)

	w = shOK(t, s, clk, 200, "HEAD", "/sh1?restype=share", "")
	h := w.Header()
	for name, want := range map[string]string{
		"X-Ms-Meta-Color": "blue", "x-ms-share-quota": "100", "x-ms-access-tier": "Cool",
		"x-ms-enabled-protocols": "SMB", "x-ms-lease-state": "available", "x-ms-lease-status": "unlocked",
		"x-ms-enable-smb-directory-lease": "true",
	} {
		if got := h.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if h.Get("x-ms-access-tier-change-time") == "" || h.Get("x-ms-root-squash") != "" {
		t.Errorf("headers %v", h)
	}
	// The root directory exists, with the default permission.
	err = s.store.View(context.Background(), func(tx kv.Tx) error {
		root, err := loadEntry(tx, shAcct, "sh1", "", RootID, "")
		if err != nil || root == nil || !root.Dir {
			t.Errorf("root %+v, %v", root, err)
			return err
		}
		sddl, err := loadPermission(tx, shAcct, "sh1", root.SMB.PermKey)
		if sddl != defaultSDDL {
			t.Errorf("root permission %q", sddl)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	etag := h.Get("ETag")
	clk.Advance(time.Second)
	w = shOK(t, s, clk, 200, "PUT", "/sh1?restype=share&comp=properties", "", "x-ms-share-quota", "7", "x-ms-access-tier", "Hot")
	if w.Header().Get("ETag") == etag {
		t.Error("Set Share Properties kept the ETag")
	}
	shOK(t, s, clk, 200, "PUT", "/sh1?restype=share&comp=metadata", "", "x-ms-meta-a", "1")
	h = shOK(t, s, clk, 200, "GET", "/sh1?restype=share&comp=metadata", "").Header()
	if h.Get("x-ms-share-quota") != "7" || h.Get("x-ms-access-tier") != "Hot" || h.Get("X-Ms-Meta-A") != "1" || h.Get("X-Ms-Meta-Color") != "" {
		t.Errorf("after set: %v", h)
	}
	_, err = shDo(t, s, clk, "PUT", "/sh1?restype=share&comp=properties", "", "x-ms-root-squash", "RootSquash")
	shErr(t, err, azerr.InvalidHeaderValue)

	shOK(t, s, clk, 202, "DELETE", "/sh1?restype=share", "")
	_, err = shDo(t, s, clk, "HEAD", "/sh1?restype=share", "")
	shErr(t, err, azerr.ShareNotFound)
	_, err = shDo(t, s, clk, "DELETE", "/sh1?restype=share", "")
	shErr(t, err, azerr.ShareNotFound)
	_, err = shDo(t, s, clk, "DELETE", "/sh1?restype=share", "", "x-ms-delete-snapshots", "all")
	shErr(t, err, azerr.InvalidHeaderValue)

	// NFS shares report their NFS settings.
	shOK(t, s, clk, 201, "PUT", "/nfs?restype=share", "", "x-ms-enabled-protocols", "NFS", "x-ms-root-squash", "AllSquash")
	h = shOK(t, s, clk, 200, "HEAD", "/nfs?restype=share", "").Header()
	if h.Get("x-ms-enabled-protocols") != "NFS" || h.Get("x-ms-root-squash") != "AllSquash" || h.Get("x-ms-access-tier") != "Premium" ||
		h.Get("x-ms-enable-snapshot-virtual-directory-access") != "true" || h.Get("x-ms-enable-smb-directory-lease") != "" {
		t.Errorf("nfs headers %v", h)
	}
}

func TestShareSnapshotIsolationAndPurge(t *testing.T) {
	s, clk := shService(t)
	shOK(t, s, clk, 201, "PUT", "/shr?restype=share", "", "x-ms-meta-m", "base")
	big := strings.Repeat("x", extent.InlineMax+10) // a chunk, not inline
	shPutFile(t, s, "shr", "a.txt", "version one")
	shPutFile(t, s, "shr", "big.bin", big)

	w := shOK(t, s, clk, 201, "PUT", "/shr?restype=share&comp=snapshot", "")
	snap1 := w.Header().Get("x-ms-snapshot")
	// The same instant again: a distinct timestamp, 100 ns later.
	w = shOK(t, s, clk, 201, "PUT", "/shr?restype=share&comp=snapshot&sharesnapshot=bogus", "", "x-ms-meta-only", "mine")
	snap2 := w.Header().Get("x-ms-snapshot")
	if snap1 == "" || snap2 == "" || snap1 == snap2 || len(snap1) != len("2030-01-02T03:04:05.0000000Z") {
		t.Fatalf("snapshots %q %q", snap1, snap2)
	}
	for _, n := range shRefs(t, s) {
		if n != 3 {
			t.Fatalf("refs after two snapshots: %v", shRefs(t, s))
		}
	}

	shPutFile(t, s, "shr", "a.txt", "version two")
	if got := shRead(t, s, "shr", snap1, "a.txt"); got != "version one" {
		t.Fatalf("snapshot content %q", got)
	}
	if got := shRead(t, s, "shr", "", "a.txt"); got != "version two" {
		t.Fatalf("live content %q", got)
	}
	if got := shRead(t, s, "shr", snap2, "big.bin"); got != big {
		t.Fatalf("snapshot big file: %d bytes", len(got))
	}

	// Snapshot metadata: the share's unless given.
	h := shOK(t, s, clk, 200, "HEAD", "/shr?restype=share&sharesnapshot="+snap1, "").Header()
	if h.Get("X-Ms-Meta-M") != "base" {
		t.Errorf("snapshot 1 metadata %v", h)
	}
	h = shOK(t, s, clk, 200, "HEAD", "/shr?restype=share&sharesnapshot="+snap2, "").Header()
	if h.Get("X-Ms-Meta-M") != "" || h.Get("X-Ms-Meta-Only") != "mine" {
		t.Errorf("snapshot 2 metadata %v", h)
	}
	_, err := shDo(t, s, clk, "PUT", "/shr?restype=share&comp=metadata&sharesnapshot="+snap1, "")
	shErr(t, err, azerr.ShareSnapshotOperationNotSupported)

	_, err = shDo(t, s, clk, "DELETE", "/shr?restype=share", "")
	shErr(t, err, azerr.ShareHasSnapshots)

	// Deleting one snapshot releases its references only.
	shOK(t, s, clk, 202, "DELETE", "/shr?restype=share&sharesnapshot="+snap1, "")
	_, err = shDo(t, s, clk, "HEAD", "/shr?restype=share&sharesnapshot="+snap1, "")
	shErr(t, err, azerr.ShareNotFound)
	if got := shRead(t, s, "shr", snap2, "a.txt"); got != "version one" {
		t.Fatalf("snapshot 2 content %q", got)
	}
	if n := shCount(t, s, entriesPrefix(shAcct, "shr", snap1)) + shCount(t, s, idsPrefix(shAcct, "shr", snap1)); n != 0 {
		t.Fatalf("%d records left of the deleted snapshot", n)
	}

	shOK(t, s, clk, 202, "DELETE", "/shr?restype=share", "", "x-ms-delete-snapshots", "include")
	for id, n := range shRefs(t, s) {
		if n != 0 {
			t.Errorf("data item %s still has %d references", id, n)
		}
	}
	for _, pre := range [][]byte{kv.Key("fs", shAcct), kv.Key("fe", shAcct), kv.Key("fi", shAcct), kv.Key("fp", shAcct), kv.Key("fsd")} {
		if n := shCount(t, s, pre); n != 0 {
			t.Errorf("%d records left under %q", n, pre)
		}
	}
	// The name is free again, and the new share is empty.
	shOK(t, s, clk, 201, "PUT", "/shr?restype=share", "")
	if n := shCount(t, s, entriesPrefix(shAcct, "shr", "")); n != 1 {
		t.Errorf("new share has %d entries", n)
	}
}

func TestShareSnapshotLimit(t *testing.T) {
	s, clk := shService(t)
	shOK(t, s, clk, 201, "PUT", "/shr?restype=share", "")
	for range maxShareSnaps {
		shOK(t, s, clk, 201, "PUT", "/shr?restype=share&comp=snapshot", "")
	}
	_, err := shDo(t, s, clk, "PUT", "/shr?restype=share&comp=snapshot", "")
	shErr(t, err, azerr.ShareSnapshotCountExceeded)
}

// TestSharePurgeBatches deletes a share larger than one purge batch, with
// handle records, and checks nothing is left.
func TestSharePurgeBatches(t *testing.T) {
	s, clk := shService(t)
	shOK(t, s, clk, 201, "PUT", "/big?restype=share", "")
	now := clk.Now()
	err := s.store.Update(context.Background(), func(tx kv.Tx) error {
		for i := range purgeBatch*2 + 7 {
			e := &entry{Name: "d" + FormatID(uint64(i)), ID: newID(), Parent: RootID, Dir: true, Created: now}
			touch(e, now)
			if err := putEntry(tx, shAcct, "big", "", e); err != nil {
				return err
			}
			if _, err := storePermission(tx, shAcct, "big", "O:BAG:BAD:(A;;FA;;;"+FormatID(uint64(i))+")"); err != nil {
				return err
			}
		}
		if err := handle.Heartbeat(tx, now, "test", now.Add(time.Hour)); err != nil {
			return err
		}
		_, err := handle.Open(tx, now, handle.OpenRequest{Account: shAcct, Share: "big", FileID: "0", Path: "", SessionID: "s1", Owner: "test", Access: handle.Read, ShareAccess: handle.ShareAll})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	shOK(t, s, clk, 202, "DELETE", "/big?restype=share", "")
	for _, pre := range [][]byte{kv.Key("fe", shAcct), kv.Key("fi", shAcct), kv.Key("fp", shAcct), kv.Key("fh", shAcct), kv.Key("fhf", shAcct), kv.Key("fhw"), kv.Key("fhs"), kv.Key("fsd")} {
		if n := shCount(t, s, pre); n != 0 {
			t.Errorf("%d records left under %q", n, pre)
		}
	}
}

// TestShareCreateFinishesPurge leaves a deletion half purged (as if the
// process stopped) and checks Create Share finishes it first.
func TestShareCreateFinishesPurge(t *testing.T) {
	s, clk := shService(t)
	shOK(t, s, clk, 201, "PUT", "/shr?restype=share", "")
	shPutFile(t, s, "shr", "f", "data")
	err := s.store.Update(context.Background(), func(tx kv.Tx) error {
		if err := tx.Delete(shareKey(shAcct, "shr", "")); err != nil {
			return err
		}
		return kv.PutJSON(tx, tombstoneKey(shAcct, "shr", ""), tombstone{Deleted: clk.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = shDo(t, s, clk, "HEAD", "/shr?restype=share", "")
	shErr(t, err, azerr.ShareNotFound)
	shOK(t, s, clk, 201, "PUT", "/shr?restype=share", "")
	if n := shCount(t, s, entriesPrefix(shAcct, "shr", "")); n != 1 {
		t.Errorf("recreated share has %d entries", n)
	}
	for id, n := range shRefs(t, s) {
		if n != 0 {
			t.Errorf("data item %s: %d references", id, n)
		}
	}
	if err := s.PurgeDeletedShares(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestShareLease(t *testing.T) {
	s, clk := shService(t)
	shOK(t, s, clk, 201, "PUT", "/shr?restype=share", "")
	const id = "11111111-2222-3333-4444-555555555555"
	w := shOK(t, s, clk, 201, "PUT", "/shr?restype=share&comp=lease", "", "x-ms-lease-action", "acquire", "x-ms-lease-duration", "15", "x-ms-proposed-lease-id", id)
	if w.Header().Get("x-ms-lease-id") != id {
		t.Fatalf("acquire: %v", w.Header())
	}
	_, err := shDo(t, s, clk, "PUT", "/shr?restype=share&comp=lease", "", "x-ms-lease-action", "acquire", "x-ms-lease-duration", "20")
	shErr(t, err, azerr.LeaseAlreadyPresent)
	_, err = shDo(t, s, clk, "PUT", "/shr?restype=share&comp=lease", "", "x-ms-lease-action", "acquire", "x-ms-lease-duration", "61")
	shErr(t, err, azerr.InvalidHeaderValue)

	h := shOK(t, s, clk, 200, "HEAD", "/shr?restype=share", "").Header()
	if h.Get("x-ms-lease-state") != "leased" || h.Get("x-ms-lease-duration") != "fixed" {
		t.Errorf("leased share: %v", h)
	}
	// Only Delete Share is gated; a wrong id is refused everywhere.
	shOK(t, s, clk, 200, "PUT", "/shr?restype=share&comp=metadata", "")
	_, err = shDo(t, s, clk, "PUT", "/shr?restype=share&comp=metadata", "", "x-ms-lease-id", "99999999-2222-3333-4444-555555555555")
	shErr(t, err, azerr.LeaseIDMismatchWithShareOperation)
	_, err = shDo(t, s, clk, "DELETE", "/shr?restype=share", "")
	shErr(t, err, azerr.LeaseIDMissing)
	_, err = shDo(t, s, clk, "DELETE", "/shr?restype=share", "", "x-ms-lease-id", "99999999-2222-3333-4444-555555555555")
	shErr(t, err, azerr.LeaseIDMismatchWithShareOperation)

	// A fixed lease expires by the clock.
	clk.Advance(16 * time.Second)
	h = shOK(t, s, clk, 200, "HEAD", "/shr?restype=share", "").Header()
	if h.Get("x-ms-lease-state") != "expired" {
		t.Errorf("expired lease: %v", h)
	}
	_, err = shDo(t, s, clk, "HEAD", "/shr?restype=share", "", "x-ms-lease-id", id)
	shErr(t, err, azerr.LeaseNotPresentWithShareOperation)
	shOK(t, s, clk, 200, "PUT", "/shr?restype=share&comp=lease", "", "x-ms-lease-action", "renew", "x-ms-lease-id", id)

	// Break with a period: breaking until it elapses.
	w = shOK(t, s, clk, 202, "PUT", "/shr?restype=share&comp=lease", "", "x-ms-lease-action", "break", "x-ms-lease-break-period", "5")
	if w.Header().Get("x-ms-lease-time") != "5" {
		t.Errorf("break: %v", w.Header())
	}
	_, err = shDo(t, s, clk, "DELETE", "/shr?restype=share", "")
	shErr(t, err, azerr.LeaseIDMissing)
	clk.Advance(5 * time.Second)
	shOK(t, s, clk, 202, "DELETE", "/shr?restype=share", "")
}

func TestShareLeasedSnapshots(t *testing.T) {
	s, clk := shService(t)
	shOK(t, s, clk, 201, "PUT", "/shr?restype=share", "")
	snap := shOK(t, s, clk, 201, "PUT", "/shr?restype=share&comp=snapshot", "").Header().Get("x-ms-snapshot")
	shOK(t, s, clk, 201, "PUT", "/shr?restype=share&comp=lease&sharesnapshot="+snap, "", "x-ms-lease-action", "acquire", "x-ms-lease-duration", "-1")
	h := shOK(t, s, clk, 200, "HEAD", "/shr?restype=share", "").Header()
	if h.Get("x-ms-lease-state") != "available" {
		t.Errorf("leasing the snapshot leased the share: %v", h)
	}
	_, err := shDo(t, s, clk, "DELETE", "/shr?restype=share", "", "x-ms-delete-snapshots", "include")
	shErr(t, err, azerr.LeaseIDMissing)
	shOK(t, s, clk, 202, "DELETE", "/shr?restype=share", "", "x-ms-delete-snapshots", "include-leased")
}

func TestShareACL(t *testing.T) {
	s, clk := shService(t)
	shOK(t, s, clk, 201, "PUT", "/shr?restype=share", "")
	body := `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers><SignedIdentifier><Id>p1</Id><AccessPolicy><Start>2030-01-01T00:00:00Z</Start><Expiry>2030-02-01T00:00:00.0000000Z</Expiry><Permission>rl</Permission></AccessPolicy></SignedIdentifier><SignedIdentifier><Id>p2</Id></SignedIdentifier></SignedIdentifiers>`
	shOK(t, s, clk, 200, "PUT", "/shr?restype=share&comp=acl", body)
	w := shOK(t, s, clk, 200, "GET", "/shr?restype=share&comp=acl", "")
	want := `<SignedIdentifiers><SignedIdentifier><Id>p1</Id><AccessPolicy><Start>2030-01-01T00:00:00Z</Start><Expiry>2030-02-01T00:00:00.0000000Z</Expiry><Permission>rl</Permission></AccessPolicy></SignedIdentifier><SignedIdentifier><Id>p2</Id><AccessPolicy></AccessPolicy></SignedIdentifier></SignedIdentifiers>`
	if got := w.Body.String(); !strings.HasSuffix(got, want) {
		t.Fatalf("ACL %s", got)
	}
	for _, tc := range []struct{ name, body, code string }{
		{"six", "<SignedIdentifiers>" + strings.Repeat("<SignedIdentifier><Id>x</Id></SignedIdentifier>", 6) + "</SignedIdentifiers>", azerr.InvalidXMLDocument},
		{"long id", "<SignedIdentifiers><SignedIdentifier><Id>" + strings.Repeat("a", 65) + "</Id></SignedIdentifier></SignedIdentifiers>", azerr.InvalidXMLDocument},
		{"malformed", "<SignedIdentifiers>", azerr.InvalidXMLDocument},
		{"bad time", "<SignedIdentifiers><SignedIdentifier><Id>x</Id><AccessPolicy><Start>soon</Start></AccessPolicy></SignedIdentifier></SignedIdentifiers>", azerr.InvalidXMLNodeValue},
		{"bad permission", "<SignedIdentifiers><SignedIdentifier><Id>x</Id><AccessPolicy><Permission>rx</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>", azerr.InvalidXMLNodeValue},
	} {
		_, err := shDo(t, s, clk, "PUT", "/shr?restype=share&comp=acl", tc.body)
		if e, ok := azerr.As(err); !ok || e.Code != tc.code {
			t.Errorf("%s: got %v, want %s", tc.name, err, tc.code)
		}
	}
	shOK(t, s, clk, 200, "PUT", "/shr?restype=share&comp=acl", "")
	if got := shOK(t, s, clk, 200, "GET", "/shr?restype=share&comp=acl", "").Body.String(); !strings.HasSuffix(got, "<SignedIdentifiers></SignedIdentifiers>") {
		t.Errorf("cleared ACL %s", got)
	}
}

func TestSharePermissions(t *testing.T) {
	s, clk := shService(t)
	shOK(t, s, clk, 201, "PUT", "/shr?restype=share", "")
	const sddl = "O:S-1-5-32-548G:S-1-5-21-397955417-626881126-188441444-512D:(A;;RPWPCCDCLCSWRCWDWOGA;;;S-1-0-0)"
	w := shOK(t, s, clk, 201, "PUT", "/shr?restype=share&comp=filepermission", `{"permission":"`+sddl+`"}`)
	key := w.Header().Get("x-ms-file-permission-key")
	if key == "" {
		t.Fatal("no key")
	}
	w2 := shOK(t, s, clk, 201, "PUT", "/shr?restype=share&comp=filepermission", `{"permission":"`+sddl+`","format":"sddl"}`)
	if w2.Header().Get("x-ms-file-permission-key") != key {
		t.Error("the same SDDL got another key")
	}
	w = shOK(t, s, clk, 200, "GET", "/shr?restype=share&comp=filepermission", "", "x-ms-file-permission-key", key)
	if got := w.Body.String(); got != `{"permission":"`+sddl+`"}` || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		t.Errorf("get permission %s %v", got, w.Header())
	}
	for _, tc := range []struct{ name, body, code string }{
		{"not json", "O:BA", azerr.FileInvalidPermission},
		{"empty", `{"permission":""}`, azerr.FileInvalidPermission},
		{"not sddl", `{"permission":"hello"}`, azerr.FileInvalidPermission},
		{"binary", `{"permission":"AQAEgA==","format":"binary"}`, azerr.FileInvalidPermission},
		{"too large", `{"permission":"O:BA` + strings.Repeat("A", maxPermission) + `"}`, azerr.FileInvalidPermission},
		{"far too large", strings.Repeat(" ", maxPermission+2000), azerr.RequestBodyTooLarge},
	} {
		_, err := shDo(t, s, clk, "PUT", "/shr?restype=share&comp=filepermission", tc.body)
		if e, ok := azerr.As(err); !ok || e.Code != tc.code {
			t.Errorf("%s: got %v, want %s", tc.name, err, tc.code)
		}
	}
	_, err := shDo(t, s, clk, "GET", "/shr?restype=share&comp=filepermission", "", "x-ms-file-permission-key", "1*2")
	shErr(t, err, azerr.FileInvalidPermissionKey)
	_, err = shDo(t, s, clk, "GET", "/shr?restype=share&comp=filepermission", "")
	shErr(t, err, azerr.MissingRequiredHeader)
	_, err = shDo(t, s, clk, "GET", "/nosuch?restype=share&comp=filepermission", "", "x-ms-file-permission-key", key)
	shErr(t, err, azerr.ShareNotFound)
}

func TestShareStats(t *testing.T) {
	s, clk := shService(t)
	shOK(t, s, clk, 201, "PUT", "/shr?restype=share", "")
	shPutFile(t, s, "shr", "a", "12345")
	shPutFile(t, s, "shr", "b", "123")
	err := s.store.Update(context.Background(), func(tx kv.Tx) error {
		e := &entry{Name: "sparse", ID: newID(), Parent: RootID, Size: 1 << 40} // size without data
		return putEntry(tx, shAcct, "shr", "", e)
	})
	if err != nil {
		t.Fatal(err)
	}
	w := shOK(t, s, clk, 200, "GET", "/shr?restype=share&comp=stats", "")
	if got, want := w.Body.String(), "<ShareStats><ShareUsageBytes>1099511627784</ShareUsageBytes></ShareStats>"; !strings.HasSuffix(got, want) {
		t.Errorf("stats %s", got)
	}
	// Snapshots do not count.
	shOK(t, s, clk, 201, "PUT", "/shr?restype=share&comp=snapshot", "")
	err = s.store.View(context.Background(), func(tx kv.Tx) error {
		n, err := shareUsage(tx, shAcct, "shr")
		if n != 1<<40+8 {
			t.Errorf("usage %d", n)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestListShares(t *testing.T) {
	s, clk := shService(t)
	for _, n := range []string{"aa1", "bb1", "bb2", "bb3", "cc1"} {
		shOK(t, s, clk, 201, "PUT", "/"+n+"?restype=share", "", "x-ms-meta-n", n)
	}
	snap := shOK(t, s, clk, 201, "PUT", "/bb2?restype=share&comp=snapshot", "").Header().Get("x-ms-snapshot")

	body := shOK(t, s, clk, 200, "GET", "/?comp=list&prefix=bb", "").Body.String()
	if strings.Count(body, "<Share>") != 3 || strings.Contains(body, "<Metadata>") || strings.Contains(body, "<Snapshot>") {
		t.Errorf("prefix b: %s", body)
	}
	if !strings.Contains(body, `ServiceEndpoint="http://127.0.0.1:10003/acct/"`) || !strings.Contains(body, "<NextMarker></NextMarker>") {
		t.Errorf("envelope: %s", body)
	}
	// Pages of two with snapshots and metadata.
	var names []string
	marker := ""
	for page := 0; ; page++ {
		if page > 5 {
			t.Fatal("too many pages")
		}
		body = shOK(t, s, clk, 200, "GET", "/?comp=list&maxresults=2&include=snapshots,metadata&marker="+marker, "").Body.String()
		if !strings.Contains(body, "<MaxResults>2</MaxResults>") || !strings.Contains(body, "<Metadata><n>") {
			t.Errorf("page %d: %s", page, body)
		}
		for _, part := range strings.Split(body, "<Share>")[1:] {
			name := part[len("<Name>"):strings.Index(part, "</Name>")]
			if strings.Contains(part, "<Snapshot>"+snap+"</Snapshot>") {
				name += "@"
			}
			names = append(names, name)
		}
		i := strings.Index(body, "<NextMarker>")
		marker = body[i+len("<NextMarker>") : strings.Index(body, "</NextMarker>")]
		if marker == "" {
			break
		}
	}
	if got := strings.Join(names, ","); got != "aa1,bb1,bb2,bb2@,bb3,cc1" {
		t.Errorf("listed %s", got)
	}
	for _, q := range []string{"include=bogus", "maxresults=0", "maxresults=x"} {
		if _, err := shDo(t, s, clk, "GET", "/?comp=list&"+q, ""); err == nil {
			t.Errorf("%s accepted", q)
		}
	}
	body = shOK(t, s, clk, 200, "GET", "/?comp=list&include=deleted&maxresults=9000", "").Body.String()
	if strings.Count(body, "<Share>") != 5 {
		t.Errorf("include=deleted: %s", body)
	}
}

func TestFileServiceProperties(t *testing.T) {
	s, clk := shService(t)
	body := shOK(t, s, clk, 200, "GET", "/?restype=service&comp=properties", "").Body.String()
	if strings.Contains(body, "<Logging>") || !strings.Contains(body, "<ShareDeleteRetentionPolicy><Enabled>false</Enabled></ShareDeleteRetentionPolicy>") ||
		!strings.Contains(body, "<ProtocolSettings><SMB><Multichannel><Enabled>false</Enabled></Multichannel></SMB></ProtocolSettings>") {
		t.Errorf("defaults: %s", body)
	}
	set := `<StorageServiceProperties><HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>true</IncludeAPIs><RetentionPolicy><Enabled>true</Enabled><Days>2</Days></RetentionPolicy></HourMetrics>` +
		`<ShareDeleteRetentionPolicy><Enabled>true</Enabled><Days>7</Days></ShareDeleteRetentionPolicy>` +
		`<ProtocolSettings><SMB><Versions>SMB3.0;SMB3.1.1</Versions><Multichannel><Enabled>true</Enabled></Multichannel></SMB></ProtocolSettings></StorageServiceProperties>`
	shOK(t, s, clk, 202, "PUT", "/?restype=service&comp=properties", set)
	body = shOK(t, s, clk, 200, "GET", "/?restype=service&comp=properties", "").Body.String()
	for _, want := range []string{
		"<HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>true</IncludeAPIs><RetentionPolicy><Enabled>true</Enabled><Days>2</Days></RetentionPolicy></HourMetrics>",
		"<ShareDeleteRetentionPolicy><Enabled>true</Enabled><Days>7</Days></ShareDeleteRetentionPolicy>",
		"<ProtocolSettings><SMB><Versions>SMB3.0;SMB3.1.1</Versions><Multichannel><Enabled>true</Enabled></Multichannel></SMB></ProtocolSettings>",
		"<MinuteMetrics><Version>1.0</Version>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("missing %s in %s", want, body)
		}
	}
	_, err := shDo(t, s, clk, "PUT", "/?restype=service&comp=properties", `<StorageServiceProperties><ShareDeleteRetentionPolicy><Enabled>true</Enabled><Days>400</Days></ShareDeleteRetentionPolicy></StorageServiceProperties>`)
	shErr(t, err, azerr.InvalidXMLDocument)
	rules, err := s.CORSRules(context.Background(), shAcct)
	if err != nil || len(rules) != 0 {
		t.Errorf("CORS rules %v %v", rules, err)
	}
}

func TestShareNotFound(t *testing.T) {
	s, clk := shService(t)
	for _, c := range []struct{ method, target, body string }{
		{"HEAD", "/nosuch?restype=share", ""},
		{"PUT", "/nosuch?restype=share&comp=metadata", ""},
		{"PUT", "/nosuch?restype=share&comp=properties", ""},
		{"GET", "/nosuch?restype=share&comp=acl", ""},
		{"PUT", "/nosuch?restype=share&comp=acl", ""},
		{"GET", "/nosuch?restype=share&comp=stats", ""},
		{"PUT", "/nosuch?restype=share&comp=snapshot", ""},
		{"PUT", "/nosuch?restype=share&comp=filepermission", `{"permission":"O:BA"}`},
		{"DELETE", "/nosuch?restype=share", ""},
	} {
		_, err := shDo(t, s, clk, c.method, c.target, c.body, "x-ms-lease-action", "acquire", "x-ms-lease-duration", "-1")
		if !errors.Is(err, azerr.New(azerr.ShareNotFound)) {
			t.Errorf("%s %s: %v", c.method, c.target, err)
		}
	}
	_, err := shDo(t, s, clk, "PUT", "/nosuch?restype=share&comp=lease", "", "x-ms-lease-action", "acquire", "x-ms-lease-duration", "-1")
	shErr(t, err, azerr.ShareNotFound)
}
