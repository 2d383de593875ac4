package file

import (
	"bytes"
	"net/http"
	"testing"
)

// BenchmarkPutRangeGetFile is one 1 KiB Put Range and one Get File of it
// through the REST handler, on the embedded store: the cost of the REST
// front door and the domain's write and read paths.
func BenchmarkPutRangeGetFile(b *testing.B) {
	e := newVT(b)
	e.mkfile("f", 1024)
	data := bytes.Repeat([]byte("x"), 1024)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		e.restOK(http.StatusCreated, "PUT", "/vfs/f?comp=range", data, "x-ms-range", "bytes=0-1023", "x-ms-write", "update")
		e.restOK(http.StatusOK, "GET", "/vfs/f", nil)
	}
}

// BenchmarkVFSWriteRead is one 1 KiB SMB write and read of it through the
// VFS.
func BenchmarkVFSWriteRead(b *testing.B) {
	e := newVT(b)
	e.mkfile("f", 1024)
	o := e.open(e.req("f", AccessReadData|AccessWriteData, allShare, DispOpen, 0))
	data := bytes.Repeat([]byte("x"), 1024)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		e.write(o, 0, data)
		e.read(o, 0, 1024)
	}
}

// BenchmarkVFSOpenClose is one SMB open of an existing file and its close
// through the VFS: the domain's open with its checks.
func BenchmarkVFSOpenClose(b *testing.B) {
	e := newVT(b)
	e.mkfile("f", 1024)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		e.close(e.open(e.req("f", AccessReadData|AccessWriteData, allShare, DispOpen, 0)))
	}
}

// BenchmarkCreateFileReplace is one Create File over an existing file
// through the REST handler: the domain's create with replaceContent.
func BenchmarkCreateFileReplace(b *testing.B) {
	e := newVT(b)
	e.mkfile("f", 1024)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		e.mkfile("f", 1024)
	}
}
