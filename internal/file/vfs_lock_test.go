package file

import (
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

func TestVFSLocks(t *testing.T) {
	e := newVT(t)
	e.mkfile("f", 1000)
	a := e.open(e.req("f", vtRW, vtRWD, DispOpen, 0))
	b := e.open(e.req("f", vtRW, vtRWD, DispOpen, 0))
	lock := func(o *Open, rs ...LockRange) error { return e.v.Lock(e.ctx, o, rs) }
	unlock := func(o *Open, rs ...LockRange) error { return e.v.Unlock(e.ctx, o, rs) }
	ex := func(off, n uint64) LockRange { return LockRange{Offset: off, Length: n, Exclusive: true} }
	sh := func(off, n uint64) LockRange { return LockRange{Offset: off, Length: n} }
	// Each error's NTSTATUS is internal/smb's (TestFileStatus there).

	if err := lock(a, ex(0, 100), sh(500, 100)); err != nil {
		t.Fatal(err)
	}
	if err := lock(b, ex(50, 1)); !errors.Is(err, ErrLockNotGranted) {
		t.Fatalf("conflicting lock: %v", err)
	}
	if err := lock(b, ex(2, ^uint64(0))); !errors.Is(err, ErrInvalidLockRange) {
		t.Fatalf("overflowing lock: %v", err)
	}
	if err := unlock(b, sh(0, 100)); !errors.Is(err, ErrRangeNotLocked) {
		t.Fatalf("unlock of another open's lock: %v", err)
	}
	if err := lock(a); !errors.Is(err, ErrInvalidParameter) {
		t.Fatalf("empty lock: %v", err)
	}
	got, err := e.v.Locks(e.ctx, a)
	if err != nil || len(got) != 2 || got[0] != ex(0, 100) || got[1] != sh(500, 100) {
		t.Fatalf("Locks: %+v, %v", got, err)
	}

	// Reads and writes through the VFS.
	if _, err := e.v.Read(e.ctx, b, 90, 20); !errors.Is(err, ErrFileLockConflict) {
		t.Fatalf("read of a's exclusive range: %v", err)
	}
	if _, err := e.v.Read(e.ctx, b, 2000, 10); !errors.Is(err, io.EOF) {
		t.Fatalf("read past the end, clear of locks: %v", err)
	}
	e.read(a, 90, 20)
	e.read(b, 500, 100)
	e.write(a, 0, []byte("mine"))
	if err := e.v.Write(e.ctx, a, 599, []byte("x")); !errors.Is(err, ErrFileLockConflict) {
		t.Fatalf("write through a's own shared lock: %v", err)
	}
	if err := e.v.Write(e.ctx, b, 550, []byte("x")); !errors.Is(err, ErrFileLockConflict) {
		t.Fatalf("write into a's shared range: %v", err)
	}
	// An append lands at the end of file: checked there.
	if err := lock(a, ex(1000, 10)); err != nil {
		t.Fatal(err)
	}
	c := e.open(e.req("f", AccessAppendData|AccessReadAttributes, vtRWD, DispOpen, 0))
	if err := e.v.Write(e.ctx, c, WriteToEOF, []byte("tail")); !errors.Is(err, ErrFileLockConflict) {
		t.Fatalf("append into a lock at the end of file: %v", err)
	}
	// Truncation is not checked against locks (MS-FSA 2.1.5.14.4).
	if err := e.v.SetEndOfFile(e.ctx, b, 800); err != nil {
		t.Fatalf("truncating a locked file: %v", err)
	}

	// REST: Get File, Put Range, Copy File from the file.
	e.restFails(azerr.FileLockConflict, "GET", "/vfs/f", nil, "x-ms-range", "bytes=99-99")
	e.restOK(http.StatusPartialContent, "GET", "/vfs/f", nil, "x-ms-range", "bytes=100-499")
	e.restFails(azerr.FileLockConflict, "PUT", "/vfs/f?comp=range", []byte("zz"), "x-ms-range", "bytes=598-599", "x-ms-write", "update")
	e.restFails(azerr.FileLockConflict, "PUT", "/vfs/f?comp=range", nil, "x-ms-range", "bytes=0-511", "x-ms-write", "clear")
	e.restFails(azerr.FileLockConflict, "PUT", "/vfs/copy", nil, "x-ms-copy-source", "http://127.0.0.1:10003/"+vtAcct+"/vfs/f")
	e.putRange("f", 200, []byte("free"))

	// Locks go with their open, and a dead owner's at once.
	e.close(a)
	e.restOK(http.StatusOK, "GET", "/vfs/f", nil)
	if err := lock(b, ex(0, 1000)); err != nil {
		t.Fatalf("lock after the holder closed: %v", err)
	}
	other := e.s.VFS("smb-other")
	if err := other.Heartbeat(e.ctx, e.clk.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	o2 := e.openWith(other, e.req("f", vtRW, vtRWD, DispOpen, 0))
	if err := unlock(b, sh(0, 1000)); err != nil {
		t.Fatal(err)
	}
	if err := other.Lock(e.ctx, o2, []LockRange{ex(0, 10)}); err != nil {
		t.Fatal(err)
	}
	e.restFails(azerr.FileLockConflict, "GET", "/vfs/f", nil)
	e.clk.Advance(2 * time.Minute)
	if err := e.v.Heartbeat(e.ctx, e.clk.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	e.restOK(http.StatusOK, "GET", "/vfs/f", nil)
	e.write(b, 0, []byte("after"))
	if err := other.Lock(e.ctx, o2, []LockRange{ex(0, 10)}); !errors.Is(err, ErrFileClosed) {
		t.Fatalf("lock through a dead owner's open: %v", err)
	}

	// Directories cannot be locked; attribute-only opens cannot lock.
	e.mkdir("d")
	d := e.open(e.req("d", AccessReadData, vtRWD, DispOpen, vtDir))
	if err := lock(d, ex(0, 1)); !errors.Is(err, ErrInvalidParameter) {
		t.Fatalf("lock on a directory: %v", err)
	}
	attr := e.open(e.req("f", AccessReadAttributes, vtRWD, DispOpen, 0))
	if err := lock(attr, ex(0, 1)); !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("lock on an attribute-only open: %v", err)
	}
	e.close(b)
	if _, err := e.v.Locks(e.ctx, b); !errors.Is(err, ErrFileClosed) {
		t.Fatalf("Locks of a closed open: %v", err)
	}
}

// openWith opens r through another VFS (another front end).
func (e *vtEnv) openWith(v VFS, r OpenRequest) *Open {
	e.t.Helper()
	o, err := v.Open(e.ctx, r)
	if err != nil {
		e.t.Fatalf("open %v: %v", r.Path, err)
	}
	return o
}
