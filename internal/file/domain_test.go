package file

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
)

// Tests of the domain (domain*.go): the same conflict driven through both
// front doors — REST (ServeAzure) and SMB (the VFS) — must be refused by
// the same domain check, each answering in its own protocol.

const allShare = 0x7 // FILE_SHARE_READ|WRITE|DELETE

// refusedRESTBy asserts that err, a REST handler's error, is the domain's
// refusal by check with the Azure error code.
func refusedRESTBy(t *testing.T, what string, err error, by check, code string) {
	t.Helper()
	if got := refusedBy(err); got != by || !azerr.Has(err, code) {
		t.Fatalf("REST %s: got %v (refused by %v), want %s refused by %v", what, err, got, code, by)
	}
}

// refusedSMBBy asserts that err, a VFS call's error, is the domain's
// refusal by check with the VFS sentinel want.
func refusedSMBBy(t *testing.T, what string, err error, by check, want error) {
	t.Helper()
	if got := refusedBy(err); got != by || !errors.Is(err, want) {
		t.Fatalf("SMB %s: got %v (refused by %v), want %v refused by %v", what, err, got, want, by)
	}
}

func TestDomainByteRangeLockBothDoors(t *testing.T) {
	e := newVT(t)
	e.mkfile("f", 4096)
	a := e.open(e.req("f", AccessReadData|AccessWriteData, allShare, DispOpen, 0))
	if err := e.v.Lock(e.ctx, a, []LockRange{{Offset: 0, Length: 100, Exclusive: true}}); err != nil {
		t.Fatal(err)
	}
	b := e.open(e.req("f", AccessReadData|AccessWriteData, allShare, DispOpen, 0))

	// Reads of the locked range.
	_, err := e.rest("GET", "/vfs/f", nil, "x-ms-range", "bytes=50-60")
	refusedRESTBy(t, "Get File", err, byLock, azerr.FileLockConflict)
	_, err = e.v.Read(e.ctx, b, 50, 10)
	refusedSMBBy(t, "READ", err, byLock, ErrFileLockConflict)

	// Writes of it: Put Range update and clear, SMB WRITE.
	_, err = e.rest("PUT", "/vfs/f?comp=range", []byte("xy"), "x-ms-range", "bytes=98-99", "x-ms-write", "update")
	refusedRESTBy(t, "Put Range", err, byLock, azerr.FileLockConflict)
	_, err = e.rest("PUT", "/vfs/f?comp=range", nil, "x-ms-range", "bytes=0-511", "x-ms-write", "clear")
	refusedRESTBy(t, "Put Range clear", err, byLock, azerr.FileLockConflict)
	refusedSMBBy(t, "WRITE", e.v.Write(e.ctx, b, 99, []byte("xy")), byLock, ErrFileLockConflict)

	// The same calls made to the domain directly with each kind of caller.
	rc := caller{acct: vtAcct, share: e.sh, path: []string{"f"}, at: e.clk.Now()}
	sc := smbCaller(b)
	for _, c := range []*caller{&rc, &sc} {
		_, err := e.s.dom().readRange(e.ctx, c, &readIn{rng: nil, off: 0, n: 10})
		if refusedBy(err) != byLock {
			t.Fatalf("readRange by %+v: %v, want a byte-range lock refusal", c.open != nil, err)
		}
	}

	// Outside the locked range both doors go through; both see each
	// other's bytes.
	e.putRange("f", 200, []byte("rest"))
	e.write(b, 300, []byte("smb"))
	if got := e.read(b, 200, 4); string(got) != "rest" {
		t.Fatalf("SMB read of REST's write: %q", got)
	}
	if got := e.restOK(http.StatusPartialContent, "GET", "/vfs/f", nil, "x-ms-range", "bytes=300-302").Body.String(); got != "smb" {
		t.Fatalf("REST read of SMB's write: %q", got)
	}
	// The lock's own open writes through it.
	e.write(a, 0, []byte("own"))
}

func TestDomainReadOnlyBothDoors(t *testing.T) {
	e := newVT(t)
	e.mkfile("ro", 10)
	e.restOK(http.StatusOK, "PUT", "/vfs/ro?comp=properties", nil, "x-ms-file-attributes", "ReadOnly")

	// Deleting: REST Delete File, an SMB delete disposition.
	_, err := e.rest("DELETE", "/vfs/ro", nil)
	refusedRESTBy(t, "Delete File", err, byReadOnly, azerr.ReadOnlyAttribute)
	o := e.open(e.req("ro", AccessDelete|AccessReadAttributes, allShare, DispOpen, 0))
	refusedSMBBy(t, "delete disposition", e.v.SetDisposition(e.ctx, o, true), byReadOnly, ErrCannotDelete)
	// Clearing a disposition is never refused.
	if err := e.v.SetDisposition(e.ctx, o, false); err != nil {
		t.Fatal(err)
	}
	e.close(o)

	// Content changes over REST: Put Range, a resize.
	_, err = e.rest("PUT", "/vfs/ro?comp=range", []byte("x"), "x-ms-range", "bytes=0-0", "x-ms-write", "update")
	refusedRESTBy(t, "Put Range", err, byReadOnly, azerr.ReadOnlyAttribute)
	_, err = e.rest("PUT", "/vfs/ro?comp=properties", nil, "x-ms-content-length", "5")
	refusedRESTBy(t, "resize", err, byReadOnly, azerr.ReadOnlyAttribute)
	// Over SMB the attribute refuses the open for writing (MS-FSA
	// 2.1.5.1.2.1), before any domain operation.
	_, err = e.v.Open(e.ctx, e.req("ro", AccessWriteData, allShare, DispOpen, 0))
	refusedSMBBy(t, "open for writing", err, byReadOnly, ErrAccessDenied)

	// Cleared over REST, the file is deletable through either door.
	e.restOK(http.StatusOK, "PUT", "/vfs/ro?comp=properties", nil, "x-ms-file-attributes", "None")
	o = e.open(e.req("ro", AccessDelete, allShare, DispOpen, 0))
	if err := e.v.SetDisposition(e.ctx, o, true); err != nil {
		t.Fatal(err)
	}
	e.close(o)
	e.restFails(azerr.ResourceNotFound, "GET", "/vfs/ro", nil)
}

func TestDomainQuotaBothDoors(t *testing.T) {
	e := newVT(t)
	e.restOK(http.StatusOK, "PUT", "/vfs?restype=share&comp=properties", nil, "x-ms-share-quota", "1")
	e.mkfile("q", 10)
	const over = 1<<30 + 1

	_, err := e.rest("PUT", "/vfs/q?comp=properties", nil, "x-ms-content-length", fmt.Sprint(over))
	refusedRESTBy(t, "resize", err, byQuota, azerr.ShareSizeLimitReached)
	o := e.open(e.req("q", AccessReadData|AccessWriteData, allShare, DispOpen, 0))
	refusedSMBBy(t, "set end of file", e.v.SetEndOfFile(e.ctx, o, over), byQuota, ErrDiskFull)
	refusedSMBBy(t, "WRITE", e.v.Write(e.ctx, o, over-1, []byte("xy")), byQuota, ErrDiskFull)
	// Nothing changed.
	if in, err := e.v.Info(e.ctx, o); err != nil || in.Size != 10 {
		t.Fatalf("size after refusals: %+v, %v", in, err)
	}
	// Within the quota both resize.
	if err := e.v.SetEndOfFile(e.ctx, o, 1<<30); err != nil {
		t.Fatal(err)
	}
	e.restOK(http.StatusOK, "PUT", "/vfs/q?comp=properties", nil, "x-ms-content-length", "20")
	if in, err := e.v.Info(e.ctx, o); err != nil || in.Size != 20 {
		t.Fatalf("size after the REST resize: %+v, %v", in, err)
	}
}

// Share modes and leases are checked for a REST caller by every domain
// operation; an SMB caller met them when it opened (MS-FSA 2.1.5.1.2),
// and the opens and leases of each door refuse the other's.
func TestDomainShareModeAndLease(t *testing.T) {
	e := newVT(t)
	e.mkfile("s", 10)
	// An open that shares only reading refuses REST writes and deletes.
	o := e.open(e.req("s", AccessReadData|AccessWriteData, 0x1, DispOpen, 0))
	_, err := e.rest("PUT", "/vfs/s?comp=range", []byte("x"), "x-ms-range", "bytes=0-0", "x-ms-write", "update")
	refusedRESTBy(t, "Put Range", err, byShareMode, azerr.SharingViolation)
	_, err = e.rest("DELETE", "/vfs/s", nil)
	refusedRESTBy(t, "Delete File", err, byShareMode, azerr.SharingViolation)
	_, err = e.rest("PUT", "/vfs/s?comp=properties", nil, "x-ms-content-length", "5")
	refusedRESTBy(t, "resize", err, byShareMode, azerr.SharingViolation)
	// ... and a second SMB open for writing.
	_, err = e.v.Open(e.ctx, e.req("s", AccessWriteData, allShare, DispOpen, 0))
	refusedSMBBy(t, "open for writing", err, byShareMode, ErrSharingViolation)
	// Reads are shared.
	if got := e.getFile("s"); len(got) != 10 {
		t.Fatalf("Get File: %d bytes", len(got))
	}
	e.close(o)

	// A delete-pending file refuses REST operations.
	d := e.open(e.req("s", AccessDelete|AccessReadData, allShare, DispOpen, 0))
	if err := e.v.SetDisposition(e.ctx, d, true); err != nil {
		t.Fatal(err)
	}
	_, err = e.rest("GET", "/vfs/s", nil)
	refusedRESTBy(t, "Get File", err, byDeletePending, azerr.DeletePending)
	if err := e.v.SetDisposition(e.ctx, d, false); err != nil {
		t.Fatal(err)
	}
	e.close(d)

	// A REST lease: writes without its ID are refused by the domain; an SMB
	// open for writing is refused at open.
	const id = "a1b2c3d4-0000-0000-0000-000000000001"
	e.restOK(http.StatusCreated, "PUT", "/vfs/s?comp=lease", nil, "x-ms-lease-action", "acquire", "x-ms-lease-duration", "-1", "x-ms-proposed-lease-id", id)
	_, err = e.rest("PUT", "/vfs/s?comp=range", []byte("x"), "x-ms-range", "bytes=0-0", "x-ms-write", "update")
	refusedRESTBy(t, "Put Range", err, byLease, azerr.LeaseIDMissing)
	_, err = e.rest("DELETE", "/vfs/s", nil, lease.HeaderLeaseID, "a1b2c3d4-0000-0000-0000-000000000002")
	refusedRESTBy(t, "Delete File", err, byLease, azerr.LeaseIDMismatchWithFileOperation)
	e.restOK(http.StatusCreated, "PUT", "/vfs/s?comp=range", []byte("x"), "x-ms-range", "bytes=0-0", "x-ms-write", "update", lease.HeaderLeaseID, id)
	// A lease acts as an open sharing only reading (Managing file locks).
	_, err = e.v.Open(e.ctx, e.req("s", AccessWriteData, allShare, DispOpen, 0))
	refusedSMBBy(t, "open for writing", err, byShareMode, ErrSharingViolation)
	_, err = e.v.Open(e.ctx, e.req("s", AccessReadData, allShare, DispOverwrite, 0))
	refusedSMBBy(t, "overwriting open", err, byLease, ErrSharingViolation)
	if got := e.getFile("s"); !bytes.Equal(got[:1], []byte("x")) {
		t.Fatalf("Get File after the leased write: %q", got)
	}
}

func TestDomainRenameBothDoors(t *testing.T) {
	e := newVT(t)
	e.mkfile("a", 1)
	e.mkfile("b", 1)
	e.mkfile("ro", 1)
	e.restOK(http.StatusOK, "PUT", "/vfs/ro?comp=properties", nil, "x-ms-file-attributes", "ReadOnly")
	rename := func(src, dst string, hdr ...string) error {
		_, err := e.rest("PUT", "/vfs/"+dst+"?comp=rename", nil, append([]string{"x-ms-file-rename-source", "/" + vtAcct + "/vfs/" + src, "x-ms-file-rename-replace-if-exists", "true"}, hdr...)...)
		return err
	}
	o := e.open(e.req("a", AccessDelete, allShare, DispOpen, 0))

	// Replacing a read-only file.
	refusedRESTBy(t, "Rename File onto a read-only file", rename("b", "ro"), byReadOnly, azerr.ReadOnlyAttribute)
	refusedSMBBy(t, "rename onto a read-only file", e.v.Rename(e.ctx, o, []string{"ro"}, true), byReadOnly, ErrAccessDenied)

	// Replacing a leased file.
	const id = "a1b2c3d4-0000-0000-0000-000000000003"
	e.mkfile("leased", 1)
	e.restOK(http.StatusCreated, "PUT", "/vfs/leased?comp=lease", nil, "x-ms-lease-action", "acquire", "x-ms-lease-duration", "-1", "x-ms-proposed-lease-id", id)
	_, err := e.rest("PUT", "/vfs/leased?comp=rename", nil, "x-ms-file-rename-source", "/"+vtAcct+"/vfs/b", "x-ms-file-rename-replace-if-exists", "true")
	refusedRESTBy(t, "Rename File onto a leased file", err, byLease, azerr.LeaseIDMissing)
	refusedSMBBy(t, "rename onto a leased file", e.v.Rename(e.ctx, o, []string{"leased"}, true), byLease, ErrSharingViolation)

	// Replacing an open file: REST by its open's share mode (the open shares
	// nothing), SMB whenever it is open.
	held := e.open(e.req("b", AccessReadData, 0, DispOpen, 0))
	_, err = e.rest("PUT", "/vfs/b?comp=rename", nil, "x-ms-file-rename-source", "/"+vtAcct+"/vfs/ro", "x-ms-file-rename-replace-if-exists", "true", "x-ms-file-rename-ignore-readonly", "true")
	refusedRESTBy(t, "Rename File onto an open file", err, byShareMode, azerr.SharingViolation)
	refusedSMBBy(t, "rename onto an open file", e.v.Rename(e.ctx, o, []string{"b"}, true), byShareMode, ErrAccessDenied)
	e.close(held)

	// Allowed, both ways; the open follows its file.
	if err := e.v.Rename(e.ctx, o, []string{"b"}, true); err != nil {
		t.Fatal(err)
	}
	if p, err := e.v.Path(e.ctx, o); err != nil || len(p) != 1 || p[0] != "b" {
		t.Fatalf("path after the SMB rename: %v, %v", p, err)
	}
	e.close(o)
	if err := rename("b", "c"); err != nil {
		t.Fatal(err)
	}
	e.restFails(azerr.ResourceNotFound, "GET", "/vfs/b", nil)
	e.getFile("c")
}

// fileParts returns the data items of p's parts and each one's reference
// count.
func (e *vtEnv) fileParts(p string) map[string]uint32 {
	e.t.Helper()
	refs := map[string]uint32{}
	err := e.s.store.View(e.ctx, func(tx kv.Tx) error {
		t, err := resolvePath(tx, vtAcct, e.sh, "", e.path(p))
		if err != nil {
			return err
		}
		for _, part := range t.e.Parts {
			if part.ID != "" {
				refs[part.ID] = 0
			}
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	for id := range refs {
		refs[id] = e.dataRefs(id)
	}
	return refs
}

// dataRefs is the reference count of data item id.
func (e *vtEnv) dataRefs(id string) uint32 {
	e.t.Helper()
	var n uint32
	err := e.s.store.View(e.ctx, func(tx kv.Tx) error {
		v, err := tx.Get(kv.Key("x", id))
		if err != nil {
			return err
		}
		n = binary.BigEndian.Uint32(v)
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// Create File over an existing file and an overwriting SMB open replace
// its content with the same domain step (replaceContent), after the same
// read-only, lease and share-mode checks, each door answering in its own
// protocol.
func TestDomainReplaceContentBothDoors(t *testing.T) {
	e := newVT(t)
	createFile := func(hdr ...string) error {
		_, err := e.rest("PUT", "/vfs/r", nil, append([]string{"x-ms-type", "file", "x-ms-content-length", "7"}, hdr...)...)
		return err
	}
	overwrite := func(disp Disposition) error {
		o, err := e.v.Open(e.ctx, e.req("r", AccessReadData|AccessWriteData, allShare, disp, 0))
		if err == nil {
			e.close(o)
		}
		return err
	}
	e.mkfile("r", 10)

	// The read-only attribute.
	e.restOK(http.StatusOK, "PUT", "/vfs/r?comp=properties", nil, "x-ms-file-attributes", "ReadOnly")
	refusedRESTBy(t, "Create File over a read-only file", createFile(), byReadOnly, azerr.ReadOnlyAttribute)
	_, err := e.v.Open(e.ctx, e.req("r", AccessReadData, allShare, DispOverwrite, 0))
	refusedSMBBy(t, "overwriting a read-only file", err, byReadOnly, ErrAccessDenied)
	_, err = e.v.Open(e.ctx, e.req("r", AccessReadData, allShare, DispSupersede, 0))
	refusedSMBBy(t, "superseding a read-only file", err, byReadOnly, ErrAccessDenied)
	e.restOK(http.StatusOK, "PUT", "/vfs/r?comp=properties", nil, "x-ms-file-attributes", "None")

	// A REST lease.
	const id = "a1b2c3d4-0000-0000-0000-000000000004"
	e.restOK(http.StatusCreated, "PUT", "/vfs/r?comp=lease", nil, "x-ms-lease-action", "acquire", "x-ms-lease-duration", "-1", "x-ms-proposed-lease-id", id)
	refusedRESTBy(t, "Create File over a leased file", createFile(), byLease, azerr.LeaseIDMissing)
	_, err = e.v.Open(e.ctx, e.req("r", AccessReadData, allShare, DispOverwriteIf, 0))
	refusedSMBBy(t, "overwriting a leased file", err, byLease, ErrSharingViolation)
	e.restOK(http.StatusOK, "PUT", "/vfs/r?comp=lease", nil, "x-ms-lease-action", "release", lease.HeaderLeaseID, id)

	// An open that shares nothing.
	held := e.open(e.req("r", AccessReadData, 0, DispOpen, 0))
	refusedRESTBy(t, "Create File over an open file", createFile(), byShareMode, azerr.SharingViolation)
	refusedSMBBy(t, "overwriting an open file", overwrite(DispOverwrite), byShareMode, ErrSharingViolation)
	e.close(held)

	// Allowed: each door releases the old content's data references.
	e.putRange("r", 0, bytes.Repeat([]byte("a"), 10))
	old := e.fileParts("r")
	if len(old) == 0 {
		t.Fatal("no data items after Put Range")
	}
	if err := createFile(); err != nil {
		t.Fatal(err)
	}
	for id, n := range old {
		if got := e.dataRefs(id); got != n-1 {
			t.Fatalf("Create File: data item %s has %d references, want %d", id, got, n-1)
		}
	}
	if got := e.getFile("r"); !bytes.Equal(got, make([]byte, 7)) {
		t.Fatalf("after Create File: %q", got)
	}
	e.putRange("r", 0, []byte("bbbbbbb"))
	old = e.fileParts("r")
	if err := overwrite(DispOverwrite); err != nil {
		t.Fatal(err)
	}
	for id, n := range old {
		if got := e.dataRefs(id); got != n-1 {
			t.Fatalf("overwrite: data item %s has %d references, want %d", id, got, n-1)
		}
	}
	if got := e.getFile("r"); len(got) != 0 {
		t.Fatalf("after the overwrite: %q", got)
	}
}

// A delete-pending file refuses REST operations and SMB opens by the same
// check.
func TestDomainDeletePendingBothDoors(t *testing.T) {
	e := newVT(t)
	e.mkfile("p", 10)
	d := e.open(e.req("p", AccessDelete|AccessReadData, allShare, DispOpen, 0))
	if err := e.v.SetDisposition(e.ctx, d, true); err != nil {
		t.Fatal(err)
	}
	_, err := e.rest("PUT", "/vfs/p?comp=range", []byte("x"), "x-ms-range", "bytes=0-0", "x-ms-write", "update")
	refusedRESTBy(t, "Put Range", err, byDeletePending, azerr.DeletePending)
	_, err = e.rest("PUT", "/vfs/p?comp=lease", nil, "x-ms-lease-action", "acquire", "x-ms-lease-duration", "-1")
	refusedRESTBy(t, "Lease File", err, byDeletePending, azerr.DeletePending)
	_, err = e.v.Open(e.ctx, e.req("p", AccessReadData, allShare, DispOpen, 0))
	refusedSMBBy(t, "open", err, byDeletePending, ErrDeletePending)

	// A create below a delete-pending directory.
	e.mkdir("dir")
	dd := e.open(e.req("dir", AccessDelete, allShare, DispOpen, OptDirectoryFile))
	if err := e.v.SetDisposition(e.ctx, dd, true); err != nil {
		t.Fatal(err)
	}
	_, err = e.v.Open(e.ctx, e.req("dir/new", AccessReadData|AccessWriteData, allShare, DispCreate, 0))
	refusedSMBBy(t, "create in a delete-pending directory", err, byDeletePending, ErrDeletePending)
}

// Lease File is refused by the live opens' share modes (an open with
// Write access denies acquiring, Managing file locks) and its lease then
// refuses the other door's writes.
func TestDomainLeaseFileBothDoors(t *testing.T) {
	e := newVT(t)
	e.mkfile("l", 10)
	const id = "a1b2c3d4-0000-0000-0000-000000000005"
	acquire := func() error {
		_, err := e.rest("PUT", "/vfs/l?comp=lease", nil, "x-ms-lease-action", "acquire", "x-ms-lease-duration", "-1", "x-ms-proposed-lease-id", id)
		return err
	}
	w := e.open(e.req("l", AccessWriteData, allShare, DispOpen, 0))
	refusedRESTBy(t, "Lease File acquire", acquire(), byShareMode, azerr.SharingViolation)
	e.close(w)
	if err := acquire(); err != nil {
		t.Fatal(err)
	}
	_, err := e.v.Open(e.ctx, e.req("l", AccessWriteData, allShare, DispOpen, 0))
	refusedSMBBy(t, "open for writing a leased file", err, byShareMode, ErrSharingViolation)
	// The domain call, directly: a change to a new ID, then a release.
	const id2 = "a1b2c3d4-0000-0000-0000-000000000006"
	c := caller{acct: vtAcct, share: e.sh, path: []string{"l"}, at: e.clk.Now()}
	out, err := e.s.dom().leaseFile(e.ctx, &c, lease.Request{Action: lease.ActionChange, LeaseID: id, ProposedID: id2})
	if err != nil || out.res.LeaseID != id2 || out.e == nil || out.e.Lease.ID != id2 {
		t.Fatalf("change: %+v, %v", out, err)
	}
	if _, err := e.s.dom().leaseFile(e.ctx, &c, lease.Request{Action: lease.ActionRelease, LeaseID: id2}); err != nil {
		t.Fatal(err)
	}
	e.close(e.open(e.req("l", AccessWriteData, allShare, DispOpen, 0)))
}

// The access an SMB open is granted is mapped by the domain's open with
// the read-only attribute (MAXIMUM_ALLOWED grants no write access to a
// read-only file, MS-FSA 2.1.5.1.2.1), so a write through such an open is
// refused by its access, as a REST Put Range is by the attribute.
func TestDomainAccessMappingReadOnly(t *testing.T) {
	e := newVT(t)
	e.mkfile("m", 10)
	e.restOK(http.StatusOK, "PUT", "/vfs/m?comp=properties", nil, "x-ms-file-attributes", "ReadOnly")
	o := e.open(e.req("m", AccessMaximumAllowed, allShare, DispOpen, 0))
	if o.GrantedAccess&accessWrite != 0 {
		t.Fatalf("MAXIMUM_ALLOWED on a read-only file granted %#x", o.GrantedAccess)
	}
	refusedSMBBy(t, "WRITE through a MAXIMUM_ALLOWED open", e.v.Write(e.ctx, o, 0, []byte("x")), byAccess, ErrAccessDenied)
	_, err := e.rest("PUT", "/vfs/m?comp=range", []byte("x"), "x-ms-range", "bytes=0-0", "x-ms-write", "update")
	refusedRESTBy(t, "Put Range", err, byReadOnly, azerr.ReadOnlyAttribute)
	e.close(o)

	// Without the attribute, MAXIMUM_ALLOWED grants writing.
	e.restOK(http.StatusOK, "PUT", "/vfs/m?comp=properties", nil, "x-ms-file-attributes", "None")
	o = e.open(e.req("m", AccessMaximumAllowed, allShare, DispOpen, 0))
	e.write(o, 0, []byte("y"))
	e.close(o)
}
