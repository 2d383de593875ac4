package e2e

// End-to-end tests of Put Range (update and clear), List Ranges (also
// against share snapshots), large sparse files, and the ETag/Last-Modified
// rule for every write. Sources are cited as in file_file_test.go.

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
)

func TestFilePutRange(t *testing.T) {
	e := startFile(t)
	s := e.share()
	f := e.mkfile(s, "f", 10240)
	before := e.props(f)
	e.clock.Advance(time.Second)

	data := fiRand(2048)
	var raw *http.Response
	pr, err := f.UploadRange(fiCapture(e.ctx, &raw), 1024, fiBody(data), nil)
	must(t, err)
	if raw.StatusCode != http.StatusCreated {
		t.Fatalf("status %d, want 201", raw.StatusCode)
	}
	if *pr.ETag == *before.ETag || !pr.LastModified.After(*before.LastModified) || pr.IsServerEncrypted == nil {
		t.Fatalf("Put Range: ETag %s (was %s), Last-Modified %v (was %v)", *pr.ETag, *before.ETag, pr.LastModified, before.LastModified)
	}
	want := make([]byte, 10240)
	copy(want[1024:], data)
	if got := e.read(f, 0, 0); !bytes.Equal(got, want) {
		t.Fatal("content after Put Range differs")
	}
	// Put Range does not change the size or the HTTP properties.
	if p := e.props(f); *p.ContentLength != 10240 || *p.ETag != *pr.ETag {
		t.Fatalf("length %d ETag %s after Put Range", *p.ContentLength, *p.ETag)
	}
	wantRanges(t, "one write", e.ranges(f, nil), fiRanges{{1024, 3071}})

	// Overwrite a part, and write the last byte of the file.
	patch := fiRand(100)
	e.put(f, 2000, patch)
	copy(want[2000:], patch)
	e.put(f, 10239, []byte{0x5a})
	want[10239] = 0x5a
	if got := e.read(f, 0, 0); !bytes.Equal(got, want) {
		t.Fatal("content after overwrite differs")
	}

	// A correct transactional MD5 is accepted and echoed; a wrong one is
	// refused and writes nothing (azfile recorded test
	// TestFileUploadRangeTransactionalMD5,
	// TestFileUploadRangeIncorrectTransactionalMD5: Md5Mismatch).
	good := fiRand(512)
	pr, err = f.UploadRange(e.ctx, 0, fiBody(good), &file.UploadRangeOptions{TransactionalValidation: file.TransferValidationTypeMD5(fiMD5(good))})
	must(t, err)
	copy(want, good)
	if !bytes.Equal(pr.ContentMD5, fiMD5(good)) {
		t.Fatalf("echoed MD5 %x", pr.ContentMD5)
	}
	_, err = f.UploadRange(e.ctx, 0, fiBody(fiRand(512)), &file.UploadRangeOptions{TransactionalValidation: file.TransferValidationTypeMD5(fiMD5([]byte("other")))})
	wantFileCode(t, err, http.StatusBadRequest, fileerror.MD5Mismatch)
	if got := e.read(f, 0, 0); !bytes.Equal(got, want) {
		t.Fatal("a refused Put Range changed the file")
	}

	// Ranges must lie inside the file: files do not grow on write: 416
	// InvalidRange (Put Range,
	// https://learn.microsoft.com/en-us/rest/api/storageservices/put-range).
	for _, off := range []int64{10240, 10200, 1 << 40} {
		_, err = f.UploadRange(e.ctx, off, fiBody(fiRand(100)), nil)
		wantFileCode(t, err, http.StatusRequestedRangeNotSatisfiable, fileerror.InvalidRange)
	}
	if n := *e.props(f).ContentLength; n != 10240 {
		t.Fatalf("length %d after refused writes", n)
	}

	// At most 4 MiB per call (Put Range,
	// https://learn.microsoft.com/en-us/rest/api/storageservices/put-range;
	// RequestBodyTooLarge for the same limit on Create File with a body,
	// TestFileCreateDataExceedMaxSize).
	big := e.mkfile(s, "big", 8<<20)
	four := fiRand(4 << 20)
	e.put(big, 1, four)
	if got := e.read(big, 1, 4<<20); !bytes.Equal(got, four) {
		t.Fatal("4 MiB range differs")
	}
	_, err = big.UploadRange(e.ctx, 0, fiBody(fiRand(4<<20+1)), nil)
	wantFileCode(t, err, http.StatusRequestEntityTooLarge, fileerror.RequestBodyTooLarge)

	// Missing file (azfile recorded test TestFileUploadRangeNonExistentFile).
	_, err = fileAt(s, "nofile").UploadRange(e.ctx, 0, fiBody([]byte("abc")), nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
}

// Put Range answers with the MD5 of the body even when the request had no
// Content-MD5 (azfile recorded test TestUploadDownloadDefaultNonDefaultMD5 and
// TestFileUploadRangeTransactionalMD5 require pResp.ContentMD5 != nil for
// UploadRange without transactional validation).
func TestFilePutRangeContentMD5(t *testing.T) {
	e := startFile(t)
	s := e.share()
	f := e.mkfile(s, "f", 4096)
	data := fiRand(2048)
	pr := e.put(f, 1024, data)
	if !bytes.Equal(pr.ContentMD5, fiMD5(data)) {
		t.Fatalf("Content-MD5 %x, want %x", pr.ContentMD5, fiMD5(data))
	}
}

// x-ms-file-last-write-time on Put Range (azfile recorded test
// TestFileUploadRangeLastWrittenModePreserve / ...Now).
func TestFilePutRangeLastWriteTime(t *testing.T) {
	e := startFile(t)
	s := e.share()
	f := fileAt(s, "f")
	cr, err := f.Create(e.ctx, 2048, nil)
	must(t, err)
	e.clock.Advance(2 * time.Second)
	pr, err := f.UploadRange(e.ctx, 0, fiBody(fiRand(1024)), &file.UploadRangeOptions{LastWrittenMode: to.Ptr(file.LastWrittenModePreserve)})
	must(t, err)
	if pr.FileLastWriteTime == nil || !pr.FileLastWriteTime.Equal(*cr.FileLastWriteTime) {
		t.Fatalf("preserve: last write %v, want %v", pr.FileLastWriteTime, cr.FileLastWriteTime)
	}
	if p := e.props(f); !p.FileLastWriteTime.Equal(*cr.FileLastWriteTime) {
		t.Fatalf("preserve: stored last write %v", p.FileLastWriteTime)
	}
	e.clock.Advance(2 * time.Second)
	pr, err = f.UploadRange(e.ctx, 0, fiBody(fiRand(1024)), &file.UploadRangeOptions{LastWrittenMode: to.Ptr(file.LastWrittenModeNow)})
	must(t, err)
	if pr.FileLastWriteTime == nil || !pr.FileLastWriteTime.After(*cr.FileLastWriteTime) {
		t.Fatalf("now: last write %v, created %v", pr.FileLastWriteTime, cr.FileLastWriteTime)
	}
	// The default is "now" too.
	e.clock.Advance(2 * time.Second)
	last := *pr.FileLastWriteTime
	pr, err = f.UploadRange(e.ctx, 1024, fiBody(fiRand(1024)), nil)
	must(t, err)
	if pr.FileLastWriteTime == nil || !pr.FileLastWriteTime.After(last) {
		t.Fatalf("default: last write %v, previous %v", pr.FileLastWriteTime, last)
	}
}

func TestFileClearRange(t *testing.T) {
	e := startFile(t)
	s := e.share()
	data := fiRand(4096)
	f := e.mkfile(s, "f", 4096)
	e.put(f, 0, data)
	before := e.props(f)
	e.clock.Advance(time.Second)

	// Clear the second KiB: the data reads zero and the range leaves the list
	// (azfile recorded test TestClearRangeMultipleRanges).
	var raw *http.Response
	cr, err := f.ClearRange(fiCapture(e.ctx, &raw), file.HTTPRange{Offset: 1024, Count: 1024}, nil)
	must(t, err)
	if raw.StatusCode != http.StatusCreated {
		t.Fatalf("status %d, want 201", raw.StatusCode)
	}
	if cr.ContentMD5 != nil { // (azfile recorded test TestFileUploadClearListRange)
		t.Fatalf("clear returned Content-MD5 %x", cr.ContentMD5)
	}
	if *cr.ETag == *before.ETag || !cr.LastModified.After(*before.LastModified) {
		t.Fatal("Clear Range did not change ETag/Last-Modified")
	}
	want := append([]byte(nil), data...)
	copy(want[1024:2048], make([]byte, 1024))
	if got := e.read(f, 0, 0); !bytes.Equal(got, want) {
		t.Fatal("content after clear differs")
	}
	wantRanges(t, "after clear", e.ranges(f, nil), fiRanges{{0, 1023}, {2048, 4095}})
	if n := *e.props(f).ContentLength; n != 4096 {
		t.Fatalf("clear changed the length to %d", n)
	}
	// Clear everything (azfile recorded test TestClearRangeDefault).
	_, err = f.ClearRange(e.ctx, file.HTTPRange{Offset: 0, Count: 4096}, nil)
	must(t, err)
	wantRanges(t, "all cleared", e.ranges(f, nil), fiRanges{})
	if got := e.read(f, 0, 0); !bytes.Equal(got, make([]byte, 4096)) {
		t.Fatal("cleared file is not zero")
	}
	// Clearing a hole is fine; clearing past the end is not.
	_, err = f.ClearRange(e.ctx, file.HTTPRange{Offset: 512, Count: 512}, nil)
	must(t, err)
	_, err = f.ClearRange(e.ctx, file.HTTPRange{Offset: 4096, Count: 512}, nil)
	wantFileCode(t, err, http.StatusRequestedRangeNotSatisfiable, fileerror.InvalidRange)
	_, err = f.ClearRange(e.ctx, file.HTTPRange{Offset: 3584, Count: 1024}, nil)
	wantFileCode(t, err, http.StatusRequestedRangeNotSatisfiable, fileerror.InvalidRange)
	_, err = fileAt(s, "nofile").ClearRange(e.ctx, file.HTTPRange{Offset: 0, Count: 512}, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
}

// A clear that is not aligned to 512 bytes zeroes the bytes but keeps the
// range listed (azfile recorded test TestClearRangeNonDefaultCount: a 1-byte
// file, write 1 byte, clear 1 byte: List Ranges still shows 0-0 and the byte
// reads 0).
func TestFileClearRangeUnaligned(t *testing.T) {
	e := startFile(t)
	s := e.share()
	f := e.mkfile(s, "f", 1)
	e.put(f, 0, []byte{65})
	wantRanges(t, "one byte", e.ranges(f, &file.GetRangeListOptions{Range: file.HTTPRange{Offset: 0, Count: file.CountToEnd}}), fiRanges{{0, 0}})
	_, err := f.ClearRange(e.ctx, file.HTTPRange{Offset: 0, Count: 1}, nil)
	must(t, err)
	wantRanges(t, "after unaligned clear", e.ranges(f, nil), fiRanges{{0, 0}})
	if got := e.read(f, 0, 0); !bytes.Equal(got, []byte{0}) {
		t.Fatalf("byte reads %v after clear", got)
	}
}

func TestFileListRanges(t *testing.T) {
	e := startFile(t)
	s := e.share()
	// An empty file has no ranges (azfile recorded test
	// TestFileGetRangeListDefaultEmptyFile).
	empty := e.mkfile(s, "empty", 0)
	wantRanges(t, "empty file", e.ranges(empty, nil), fiRanges{})
	// Nor has a new sparse file.
	f := e.mkfile(s, "f", 512*3)
	r, err := f.GetRangeList(e.ctx, nil)
	must(t, err)
	if len(r.Ranges) != 0 || r.FileContentLength == nil || *r.FileContentLength != 1536 || r.ETag == nil || r.LastModified == nil {
		t.Fatalf("new file: %d ranges, x-ms-content-length %v", len(r.Ranges), r.FileContentLength)
	}
	// Non-contiguous writes list separately (azfile recorded test
	// TestFileGetRangeListNonContiguousRanges).
	e.put(f, 0, fiRand(512))
	e.put(f, 1024, fiRand(512))
	wantRanges(t, "two writes", e.ranges(f, nil), fiRanges{{0, 511}, {1024, 1535}})
	// Adjacent writes merge.
	e.put(f, 512, fiRand(512))
	wantRanges(t, "filled gap", e.ranges(f, nil), fiRanges{{0, 1535}})
	// A range limits the listing (azfile recorded test
	// TestFileGetRangeListNonContiguousRangesCountLess).
	g := e.mkfile(s, "g", 4096)
	e.put(g, 0, fiRand(512))
	e.put(g, 2048, fiRand(1024))
	wantRanges(t, "limited", e.ranges(g, &file.GetRangeListOptions{Range: file.HTTPRange{Offset: 0, Count: 512}}), fiRanges{{0, 511}})
	wantRanges(t, "second only", e.ranges(g, &file.GetRangeListOptions{Range: file.HTTPRange{Offset: 1024, Count: 3072}}), fiRanges{{2048, 3071}})
	// A range past the end lists what there is (...CountExceed).
	wantRanges(t, "past the end", e.ranges(g, &file.GetRangeListOptions{Range: file.HTTPRange{Offset: 0, Count: 4097}}), fiRanges{{0, 511}, {2048, 3071}})
	// Missing file.
	_, err = fileAt(s, "nofile").GetRangeList(e.ctx, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
}

// Share snapshots freeze a file: reads, properties and range lists at the
// snapshot stay as they were, writes to the snapshot are refused, and List
// Ranges with prevsharesnapshot returns the ranges changed since then (List
// Ranges,
// https://learn.microsoft.com/en-us/rest/api/storageservices/list-ranges,
// prevsharesnapshot (2020-02-10): "changed ranges include both updated and
// cleared ranges"; azfile recorded test TestFileGetRangeListSnapshot).
func TestFileSnapshotRanges(t *testing.T) {
	e := startFile(t)
	s := e.share()
	const size = 8192
	old := fiRand(size)
	f := e.mkfile(s, "f", size)
	e.put(f, 0, old[:4096])
	e.put(f, 6144, old[6144:])
	copy(old[4096:6144], make([]byte, 2048))
	_, err := f.SetMetadata(e.ctx, &file.SetMetadataOptions{Metadata: map[string]*string{"v": to.Ptr("1")}})
	must(t, err)
	sn, err := s.CreateSnapshot(e.ctx, nil)
	must(t, err)
	snap := *sn.Snapshot

	// Change the live file: update 4096-5119 (was a hole), overwrite
	// 0-511, clear 6144-7167.
	upd := fiRand(1024)
	e.put(f, 4096, upd)
	head := fiRand(512)
	e.put(f, 0, head)
	_, err = f.ClearRange(e.ctx, file.HTTPRange{Offset: 6144, Count: 1024}, nil)
	must(t, err)
	_, err = f.SetMetadata(e.ctx, &file.SetMetadataOptions{Metadata: map[string]*string{"v": to.Ptr("2")}})
	must(t, err)

	// The snapshot is unchanged.
	ss, err := s.WithSnapshot(snap)
	must(t, err)
	sf := fileAt(ss, "f")
	if got := e.read(sf, 0, 0); !bytes.Equal(got, old) {
		t.Fatal("snapshot content changed")
	}
	sp, err := f.GetProperties(e.ctx, &file.GetPropertiesOptions{ShareSnapshot: &snap})
	must(t, err)
	if *sp.Metadata["V"] != "1" || *sp.ContentLength != size {
		t.Fatalf("snapshot properties: metadata %v length %d", sp.Metadata, *sp.ContentLength)
	}
	wantRanges(t, "snapshot", e.ranges(f, &file.GetRangeListOptions{ShareSnapshot: &snap}), fiRanges{{0, 4095}, {6144, 8191}})
	wantRanges(t, "live", e.ranges(f, nil), fiRanges{{0, 5119}, {7168, 8191}})

	// The diff against the snapshot.
	d, err := f.GetRangeList(e.ctx, &file.GetRangeListOptions{PrevShareSnapshot: &snap})
	must(t, err)
	wantRanges(t, "changed since snapshot", fiRangeList(d.Ranges), fiRanges{{0, 511}, {4096, 5119}})
	wantRanges(t, "cleared since snapshot", fiClearList(d.ClearRanges), fiRanges{{6144, 7167}})
	// No change since a snapshot taken now.
	sn2, err := s.CreateSnapshot(e.ctx, nil)
	must(t, err)
	d, err = f.GetRangeList(e.ctx, &file.GetRangeListOptions{PrevShareSnapshot: sn2.Snapshot})
	must(t, err)
	if len(d.Ranges) != 0 || len(d.ClearRanges) != 0 {
		t.Fatalf("diff against a fresh snapshot: %v / %v", fiRangeList(d.Ranges), fiClearList(d.ClearRanges))
	}
	// Between two snapshots (sharesnapshot + prevsharesnapshot).
	d, err = f.GetRangeList(e.ctx, &file.GetRangeListOptions{PrevShareSnapshot: &snap, ShareSnapshot: sn2.Snapshot})
	must(t, err)
	wantRanges(t, "between snapshots", fiRangeList(d.Ranges), fiRanges{{0, 511}, {4096, 5119}})

	// Writes to a snapshot are refused: 400
	// ShareSnapshotOperationNotSupported (Azure Files error codes,
	// https://learn.microsoft.com/en-us/rest/api/storageservices/file-service-error-codes).
	_, err = sf.UploadRange(e.ctx, 0, fiBody([]byte("x")), nil)
	wantFileCode(t, err, http.StatusBadRequest, fileerror.ShareSnapshotOperationNotSupported)
	_, err = sf.SetMetadata(e.ctx, nil)
	wantFileCode(t, err, http.StatusBadRequest, fileerror.ShareSnapshotOperationNotSupported)
	_, err = sf.Delete(e.ctx, nil)
	wantFileCode(t, err, http.StatusBadRequest, fileerror.ShareSnapshotOperationNotSupported)
	_, err = fileAt(ss, "new").Create(e.ctx, 1, nil)
	wantFileCode(t, err, http.StatusBadRequest, fileerror.ShareSnapshotOperationNotSupported)

	// Deleting the live file leaves the snapshot's copy.
	_, err = f.Delete(e.ctx, nil)
	must(t, err)
	if got := e.read(sf, 0, 0); !bytes.Equal(got, old) {
		t.Fatal("snapshot content lost with the live file")
	}
	// A file created after the snapshot does not exist in it.
	e.mkfile(s, "later", 10)
	_, err = fileAt(s, "later").GetProperties(e.ctx, &file.GetPropertiesOptions{ShareSnapshot: &snap})
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)

	t.Cleanup(func() {
		_, _ = s.Delete(e.ctx, &share.DeleteOptions{DeleteSnapshots: to.Ptr(share.DeleteSnapshotsOptionTypeInclude)})
	})
}

// A 1 TiB sparse file: writes far apart, reads of data and holes, range
// list, shrink.
func TestFileLargeSparse(t *testing.T) {
	e := startFile(t)
	s := e.share()
	const size = int64(1) << 40
	f := e.mkfile(s, "sparse", size)
	type w struct {
		off  int64
		data []byte
	}
	writes := []w{
		{0, fiRand(64 << 10)},
		{4<<30 - 512, fiRand(1024)},     // across the 4 GiB (32-bit) boundary
		{512 << 30, fiRand(4 << 20)},    // 4 MiB in the middle
		{size - 4<<20, fiRand(4 << 20)}, // the last 4 MiB
	}
	for _, x := range writes {
		e.put(f, x.off, x.data)
	}
	for _, x := range writes {
		if got := e.read(f, x.off, int64(len(x.data))); !bytes.Equal(got, x.data) {
			t.Fatalf("data at %d differs", x.off)
		}
	}
	// Holes read as zeros, also around the written data.
	for _, off := range []int64{64 << 10, 100 << 30, 512<<30 - 4096, size - 4<<20 - 1024} {
		if got := e.read(f, off, 1024); !bytes.Equal(got, make([]byte, 1024)) {
			t.Fatalf("hole at %d is not zero", off)
		}
	}
	got := e.read(f, 4<<30-1024, 2048)
	if !bytes.Equal(got[:512], make([]byte, 512)) || !bytes.Equal(got[512:1536], writes[1].data) || !bytes.Equal(got[1536:], make([]byte, 512)) {
		t.Fatal("read across the 4 GiB write differs")
	}
	// The tail through an open range.
	if got := e.read(f, size-100, 0); !bytes.Equal(got, writes[3].data[4<<20-100:]) {
		t.Fatal("open-ended read of the tail differs")
	}
	if n := *e.props(f).ContentLength; n != size {
		t.Fatalf("length %d", n)
	}
	wantRanges(t, "sparse", e.ranges(f, nil), fiRanges{
		{0, 64<<10 - 1}, {4<<30 - 512, 4<<30 + 511}, {512 << 30, 512<<30 + 4<<20 - 1}, {size - 4<<20, size - 1},
	})
	wantRanges(t, "sparse window", e.ranges(f, &file.GetRangeListOptions{Range: file.HTTPRange{Offset: 1 << 30, Count: 600 << 30}}),
		fiRanges{{4<<30 - 512, 4<<30 + 511}, {512 << 30, 512<<30 + 4<<20 - 1}})
	// Clearing the middle write removes it from the list.
	_, err := f.ClearRange(e.ctx, file.HTTPRange{Offset: 512 << 30, Count: 4 << 20}, nil)
	must(t, err)
	if got := e.read(f, 512<<30, 4096); !bytes.Equal(got, make([]byte, 4096)) {
		t.Fatal("cleared range is not zero")
	}
	// Shrinking to 1 GiB keeps only the first write.
	_, err = f.Resize(e.ctx, 1<<30, nil)
	must(t, err)
	wantRanges(t, "shrunk", e.ranges(f, nil), fiRanges{{0, 64<<10 - 1}})
	_, err = f.DownloadStream(e.ctx, &file.DownloadStreamOptions{Range: file.HTTPRange{Offset: 4 << 30, Count: 10}})
	wantFileCode(t, err, http.StatusRequestedRangeNotSatisfiable, fileerror.InvalidRange)
	// And growing back does not resurrect the rest.
	_, err = f.Resize(e.ctx, size, nil)
	must(t, err)
	if got := e.read(f, size-4096, 0); !bytes.Equal(got, make([]byte, 4096)) {
		t.Fatal("tail data came back after shrink and grow")
	}
	wantRanges(t, "regrown", e.ranges(f, nil), fiRanges{{0, 64<<10 - 1}})
	_, err = f.Delete(e.ctx, nil)
	must(t, err)
}

// Every write changes the ETag and (one second later on the clock) the
// Last-Modified time; reads change neither.
func TestFileWritesChangeETag(t *testing.T) {
	e := startFile(t)
	s := e.share()
	f := e.mkfile(s, "f", 4096)
	prev := e.props(f)
	steps := []struct {
		name string
		do   func() error
	}{
		{"Put Range", func() error { _, err := f.UploadRange(e.ctx, 0, fiBody(fiRand(512)), nil); return err }},
		{"Put Range (same data twice)", func() error { _, err := f.UploadRange(e.ctx, 0, fiBody(make([]byte, 512)), nil); return err }},
		{"Put Range (same data again)", func() error { _, err := f.UploadRange(e.ctx, 0, fiBody(make([]byte, 512)), nil); return err }},
		{"Clear Range", func() error { _, err := f.ClearRange(e.ctx, file.HTTPRange{Offset: 0, Count: 512}, nil); return err }},
		{"Clear Range of a hole", func() error { _, err := f.ClearRange(e.ctx, file.HTTPRange{Offset: 1024, Count: 512}, nil); return err }},
		{"Set HTTP headers", func() error {
			_, err := f.SetHTTPHeaders(e.ctx, &file.SetHTTPHeadersOptions{HTTPHeaders: &file.HTTPHeaders{ContentType: to.Ptr("a/b")}})
			return err
		}},
		{"Set SMB attributes", func() error {
			_, err := f.SetHTTPHeaders(e.ctx, &file.SetHTTPHeadersOptions{SMBProperties: &file.SMBProperties{Attributes: &file.NTFSFileAttributes{Hidden: true}}})
			return err
		}},
		{"Resize up", func() error { _, err := f.Resize(e.ctx, 8192, nil); return err }},
		{"Resize down", func() error { _, err := f.Resize(e.ctx, 2048, nil); return err }},
		{"Set metadata", func() error {
			_, err := f.SetMetadata(e.ctx, &file.SetMetadataOptions{Metadata: map[string]*string{"a": to.Ptr("b")}})
			return err
		}},
		{"Set the same metadata", func() error {
			_, err := f.SetMetadata(e.ctx, &file.SetMetadataOptions{Metadata: map[string]*string{"a": to.Ptr("b")}})
			return err
		}},
		{"Create (replace)", func() error { _, err := f.Create(e.ctx, 2048, nil); return err }},
	}
	for _, st := range steps {
		e.clock.Advance(time.Second)
		must(t, st.do())
		p := e.props(f)
		if *p.ETag == *prev.ETag {
			t.Errorf("%s kept ETag %s", st.name, *p.ETag)
		}
		if !p.LastModified.After(*prev.LastModified) {
			t.Errorf("%s: Last-Modified %v not after %v", st.name, p.LastModified, prev.LastModified)
		}
		prev = p
	}
	// Reads change nothing.
	e.clock.Advance(time.Second)
	e.read(f, 0, 0)
	e.ranges(f, nil)
	_, err := f.DownloadStream(e.ctx, &file.DownloadStreamOptions{Range: file.HTTPRange{Offset: 0, Count: 10}})
	must(t, err)
	if p := e.props(f); *p.ETag != *prev.ETag || !p.LastModified.Equal(*prev.LastModified) {
		t.Fatalf("reads changed ETag %s→%s or Last-Modified", *prev.ETag, *p.ETag)
	}
	// Writes within the same second still change the ETag.
	a, err := f.UploadRange(e.ctx, 0, fiBody([]byte("a")), nil)
	must(t, err)
	b, err := f.UploadRange(e.ctx, 0, fiBody([]byte("a")), nil)
	must(t, err)
	if *a.ETag == *b.ETag {
		t.Fatalf("two writes in one second share ETag %s", *a.ETag)
	}
	// A refused write changes nothing.
	before := e.props(f)
	e.clock.Advance(time.Second)
	_, err = f.UploadRange(e.ctx, 4096, fiBody([]byte("a")), nil)
	wantFileCode(t, err, http.StatusRequestedRangeNotSatisfiable, fileerror.InvalidRange)
	if p := e.props(f); *p.ETag != *before.ETag || !p.LastModified.Equal(*before.LastModified) {
		t.Fatal("a refused Put Range changed ETag or Last-Modified")
	}
}
