package e2e

// End-to-end tests of Copy File, Abort Copy File and Put Range from URL
// through azfile. Comments cite the REST reference pages, azfile v1.7.1's
// own tests (github.com/Azure/azure-sdk-for-go,
// sdk/storage/azfile/file/client_test.go) and real-service responses
// reported in GitHub issues; "(inferred)" marks Cerulean's reading where
// no source says.

import (
	"bytes"
	"encoding/binary"
	"hash/crc64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// fiCRC64 is the storage CRC64 of b (the SDK's table).
func fiCRC64(b []byte) uint64 {
	return crc64.Checksum(b, crc64.MakeTable(0x9A6C9329AC4BC9B5))
}

// fiSourceSAS returns the URL of the file at path in share s with a
// service SAS granting perms, built with azfile's sas package.
func fiSourceSAS(t *testing.T, s *share.Client, path string, perms sas.FilePermissions) string {
	t.Helper()
	cred, err := service.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	qp, err := sas.SignatureValues{
		Protocol:    sas.ProtocolHTTPSandHTTP,
		ExpiryTime:  time.Now().UTC().Add(time.Hour),
		ShareName:   fiShareName(t, s),
		FilePath:    path,
		Permissions: perms.String(),
	}.SignWithSharedKey(cred)
	must(t, err)
	return fileAt(s, path).URL() + "?" + qp.Encode()
}

func TestFileCopyWithinShare(t *testing.T) {
	e := startFile(t)
	s := e.share()
	data := fiRand(300 << 10)
	src, err := func() (*file.Client, error) {
		f := fileAt(s, "src.bin")
		_, err := f.Create(e.ctx, int64(len(data)), &file.CreateOptions{
			HTTPHeaders: &file.HTTPHeaders{ContentType: to.Ptr("application/x-test"), ContentMD5: fiMD5(data)},
			Metadata:    map[string]*string{"origin": to.Ptr("src")},
		})
		return f, err
	}()
	must(t, err)
	e.put(src, 0, data[:200<<10])
	e.put(src, 200<<10, data[200<<10:])
	dst := fileAt(s, "dst.bin")
	var raw *http.Response
	cr, err := dst.StartCopyFromURL(fiCapture(e.ctx, &raw), src.URL(), nil)
	must(t, err)
	if raw.StatusCode != http.StatusAccepted || cr.CopyStatus == nil || *cr.CopyStatus != file.CopyStatusTypeSuccess || cr.CopyID == nil || cr.ETag == nil || cr.LastModified == nil {
		t.Fatalf("copy: %d %+v", raw.StatusCode, cr)
	}
	p := e.props(dst)
	if fiStr(p.CopyID) != *cr.CopyID || *p.CopyStatus != file.CopyStatusTypeSuccess || fiStr(p.CopySource) != src.URL() ||
		fiStr(p.CopyProgress) != "307200/307200" || p.CopyCompletionTime == nil || *p.ETag != *cr.ETag {
		t.Fatalf("copy properties: id %s status %v source %s progress %s", fiStr(p.CopyID), p.CopyStatus, fiStr(p.CopySource), fiStr(p.CopyProgress))
	}
	if fiStr(p.ContentType) != "application/x-test" || !bytes.Equal(p.ContentMD5, fiMD5(data)) || fiStr(p.Metadata["Origin"]) != "src" || *p.ContentLength != int64(len(data)) {
		t.Fatalf("copied properties: %s md5 %x meta %v len %d", fiStr(p.ContentType), p.ContentMD5, p.Metadata, *p.ContentLength)
	}
	if got := e.read(dst, 0, 0); !bytes.Equal(got, data) {
		t.Fatal("copied content differs")
	}
	// The copy is independent of later writes to the source.
	e.put(src, 0, []byte("changed"))
	if got := e.read(dst, 0, 7); !bytes.Equal(got, data[:7]) {
		t.Fatal("a write to the source reached the copy")
	}
	// Abort after completion: 409 (azfile TestStartCopyDefault; D).
	_, err = dst.AbortCopy(e.ctx, *cr.CopyID, nil)
	wantFileCode(t, err, http.StatusConflict, "NoPendingCopyOperation")

	// Explicit metadata replaces the source's; none copies the source's
	// (here: none) (Copy File; azfile TestFileStartCopyMetadataNil).
	_, err = dst.StartCopyFromURL(e.ctx, src.URL(), &file.StartCopyFromURLOptions{Metadata: map[string]*string{"Foo": to.Ptr("bar")}})
	must(t, err)
	if m := e.props(dst).Metadata; len(m) != 1 || fiStr(m["Foo"]) != "bar" {
		t.Fatalf("metadata %v", m)
	}
	empty := e.mkfile(s, "empty", 0)
	_, err = dst.StartCopyFromURL(e.ctx, empty.URL(), nil)
	must(t, err)
	if p := e.props(dst); len(p.Metadata) != 0 || *p.ContentLength != 0 {
		t.Fatalf("copy of an empty file: meta %v len %d", p.Metadata, *p.ContentLength)
	}

	// A missing source is 404 ResourceNotFound (azfile
	// TestFileStartCopySourceNonExistent).
	_, err = fileAt(s, "d2").StartCopyFromURL(e.ctx, fileAt(s, "missing").URL(), nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
	// A copy ID that is not one is 400 (azfile TestFileAbortCopyNoCopyStarted).
	_, err = fileAt(s, "nothing").AbortCopy(e.ctx, "copynotstarted", nil)
	wantFileCode(t, err, http.StatusBadRequest, fileerror.InvalidQueryParameterValue)
}

func TestFileCopyAcrossSharesAndFromSnapshot(t *testing.T) {
	e := startFile(t)
	a, b := e.share(), e.share()
	e.mkdir(a, "dir")
	src := e.mkfile(a, "dir/f", 11)
	e.put(src, 0, []byte("version one"))
	snap, err := a.CreateSnapshot(e.ctx, nil)
	must(t, err)
	e.put(src, 8, []byte("TWO"))

	e.mkdir(b, "in")
	live := fileAt(b, "in/live")
	_, err = live.StartCopyFromURL(e.ctx, src.URL(), &file.StartCopyFromURLOptions{CopyFileSMBInfo: &file.CopyFileSMBInfo{PermissionCopyMode: to.Ptr(file.PermissionCopyModeTypeSource)}})
	must(t, err)
	if got := e.read(live, 0, 0); string(got) != "version TWO" {
		t.Fatalf("cross-share copy %q", got)
	}
	// The source's permission, copied into the other share, resolves there.
	key := e.props(live).FilePermissionKey
	if *key != *e.props(src).FilePermissionKey {
		t.Fatalf("permission key %s, source %s", *key, *e.props(src).FilePermissionKey)
	}
	_, err = b.GetPermission(e.ctx, *key, nil)
	must(t, err)

	as, err := a.WithSnapshot(*snap.Snapshot)
	must(t, err)
	old := fileAt(b, "in/old")
	_, err = old.StartCopyFromURL(e.ctx, fileAt(as, "dir/f").URL(), nil)
	must(t, err)
	if got := e.read(old, 0, 0); string(got) != "version one" {
		t.Fatalf("snapshot copy %q", got)
	}
	// A missing parent directory of the destination.
	_, err = fileAt(b, "nodir/x").StartCopyFromURL(e.ctx, src.URL(), nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ParentNotFound)
}

func TestFileCopyOntoLeasedFile(t *testing.T) {
	e := startFile(t)
	s := e.share()
	src := e.mkfile(s, "src", 6)
	e.put(src, 0, []byte("source"))
	dst := e.mkfile(s, "dst", 3)
	lc := fiLease(t, dst, "")
	_, err := lc.Acquire(e.ctx, nil)
	must(t, err)
	_, err = dst.StartCopyFromURL(e.ctx, src.URL(), nil)
	wantFileCode(t, err, http.StatusPreconditionFailed, "LeaseIdMissing")
	_, err = dst.StartCopyFromURL(e.ctx, src.URL(), &file.StartCopyFromURLOptions{LeaseAccessConditions: fiLeaseOf("00000000-1111-2222-3333-444444444444")})
	wantFileCode(t, err, http.StatusPreconditionFailed, "LeaseIdMismatchWithFileOperation")
	_, err = dst.StartCopyFromURL(e.ctx, src.URL(), &file.StartCopyFromURLOptions{LeaseAccessConditions: fiLeaseOf(*lc.LeaseID())})
	must(t, err)
	p := e.props(dst)
	if *p.LeaseState != "leased" || string(e.read(dst, 0, 0)) != "source" {
		t.Fatalf("after copy: lease %s", *p.LeaseState)
	}
	// A lease on the source does not matter (Copy File,
	// https://learn.microsoft.com/en-us/rest/api/storageservices/copy-file).
	_, err = fileAt(s, "copy2").StartCopyFromURL(e.ctx, dst.URL(), nil)
	must(t, err)
	_, err = dst.AbortCopy(e.ctx, *p.CopyID, nil)
	wantFileCode(t, err, http.StatusPreconditionFailed, "LeaseIdMissing")
}

func TestFileCopySMBInfo(t *testing.T) {
	e := startFile(t)
	s := e.share()
	base := time.Date(2023, 3, 31, 20, 0, 0, 0, time.UTC)
	src := fileAt(s, "src")
	cr, err := src.Create(e.ctx, 0, &file.CreateOptions{SMBProperties: &file.SMBProperties{
		Attributes:    &file.NTFSFileAttributes{System: true},
		CreationTime:  to.Ptr(base.Add(time.Minute)),
		LastWriteTime: to.Ptr(base.Add(2 * time.Minute)),
		ChangeTime:    to.Ptr(base.Add(5 * time.Minute)),
	}, Permissions: &file.Permissions{Permission: to.Ptr(fiSDDL)}})
	must(t, err)

	// Everything from the source (azfile TestFileStartCopySourceProperties).
	all := fileAt(s, "all")
	_, err = all.StartCopyFromURL(e.ctx, src.URL(), &file.StartCopyFromURLOptions{CopyFileSMBInfo: &file.CopyFileSMBInfo{
		CreationTime: file.SourceCopyFileCreationTime{}, LastWriteTime: file.SourceCopyFileLastWriteTime{},
		ChangeTime: file.SourceCopyFileChangeTime{}, Attributes: file.SourceCopyFileAttributes{},
		PermissionCopyMode: to.Ptr(file.PermissionCopyModeTypeSource),
	}})
	must(t, err)
	p := e.props(all)
	if !p.FileCreationTime.Equal(*cr.FileCreationTime) || !p.FileLastWriteTime.Equal(*cr.FileLastWriteTime) ||
		!p.FileChangeTime.Equal(*cr.FileChangeTime) || *p.FileAttributes != *cr.FileAttributes || *p.FilePermissionKey != *cr.FilePermissionKey {
		t.Fatalf("source properties: %v %v %v %s %s", p.FileCreationTime, p.FileLastWriteTime, p.FileChangeTime, *p.FileAttributes, *p.FilePermissionKey)
	}

	// Only the creation time from the source (azfile
	// TestFileStartCopySourceCreationTime).
	one := fileAt(s, "one")
	_, err = one.StartCopyFromURL(e.ctx, src.URL(), &file.StartCopyFromURLOptions{CopyFileSMBInfo: &file.CopyFileSMBInfo{CreationTime: file.SourceCopyFileCreationTime{}}})
	must(t, err)
	p = e.props(one)
	if !p.FileCreationTime.Equal(*cr.FileCreationTime) || p.FileLastWriteTime.Equal(*cr.FileLastWriteTime) || *p.FileAttributes == *cr.FileAttributes {
		t.Fatalf("creation time only: %v %v %s", p.FileCreationTime, p.FileLastWriteTime, *p.FileAttributes)
	}

	// Explicit values (azfile TestFileStartCopyDifferentProperties) and the
	// Archive attribute (azfile TestFileStartCopySetArchiveAttribute*).
	expl := fileAt(s, "expl")
	ct := base.Add(7 * time.Minute)
	_, err = expl.StartCopyFromURL(e.ctx, src.URL(), &file.StartCopyFromURLOptions{CopyFileSMBInfo: &file.CopyFileSMBInfo{
		CreationTime: file.DestinationCopyFileCreationTime(ct), Attributes: file.DestinationCopyFileAttributes{ReadOnly: true, System: true},
		SetArchiveAttribute: to.Ptr(false),
	}})
	must(t, err)
	p = e.props(expl)
	if a := fiAttrs(t, p.FileAttributes); !p.FileCreationTime.Equal(ct) || !a.ReadOnly || !a.System || a.Archive {
		t.Fatalf("explicit: %v %s", p.FileCreationTime, *p.FileAttributes)
	}
	arch := fileAt(s, "arch")
	_, err = arch.StartCopyFromURL(e.ctx, src.URL(), &file.StartCopyFromURLOptions{CopyFileSMBInfo: &file.CopyFileSMBInfo{
		Attributes: file.DestinationCopyFileAttributes{System: true}, SetArchiveAttribute: to.Ptr(true)}})
	must(t, err)
	if a := fiAttrs(t, e.props(arch).FileAttributes); !a.Archive || !a.System {
		t.Fatalf("set archive: %+v", a)
	}

	// expl is read-only now: copying over it needs IgnoreReadOnly
	// (azfile Test(Negative)FileStartCopyDestReadOnly).
	_, err = expl.StartCopyFromURL(e.ctx, src.URL(), nil)
	wantFileCode(t, err, http.StatusConflict, fileerror.ReadOnlyAttribute)
	_, err = expl.StartCopyFromURL(e.ctx, src.URL(), &file.StartCopyFromURLOptions{CopyFileSMBInfo: &file.CopyFileSMBInfo{IgnoreReadOnly: to.Ptr(true)}})
	must(t, err)

	// Override needs a permission (azfile
	// TestNegativeFileStartCopyOverrideMode).
	ov := fileAt(s, "ov")
	_, err = ov.StartCopyFromURL(e.ctx, src.URL(), &file.StartCopyFromURLOptions{CopyFileSMBInfo: &file.CopyFileSMBInfo{PermissionCopyMode: to.Ptr(file.PermissionCopyModeTypeOverride)}})
	wantFileCode(t, err, http.StatusBadRequest, fileerror.MissingRequiredHeader)
	const sddl = "O:BAG:BAD:(A;;FA;;;SY)"
	_, err = ov.StartCopyFromURL(e.ctx, src.URL(), &file.StartCopyFromURLOptions{
		Permissions:     &file.Permissions{Permission: to.Ptr(sddl)},
		CopyFileSMBInfo: &file.CopyFileSMBInfo{PermissionCopyMode: to.Ptr(file.PermissionCopyModeTypeOverride)}})
	must(t, err)
	if k := *e.props(ov).FilePermissionKey; k == *cr.FilePermissionKey {
		t.Fatal("override kept the source's permission")
	}
}

func TestFileCopyWithSASDestination(t *testing.T) {
	e := startFile(t)
	s := e.share()
	src := e.mkfile(s, "src", 4)
	e.put(src, 0, []byte("data"))
	u, err := fileAt(s, "dst").GetSASURL(sas.FilePermissions{Create: true, Write: true}, time.Now().Add(time.Hour), nil)
	must(t, err)
	dst, err := file.NewClientWithNoCredential(u, (*file.ClientOptions)(fileClientOptions()))
	must(t, err)
	// The destination's SAS does not cover the source (Copy File,
	// https://learn.microsoft.com/en-us/rest/api/storageservices/copy-file,
	// Authorization): without a SAS of its own the source cannot be read.
	_, err = dst.StartCopyFromURL(e.ctx, src.URL(), nil)
	wantFileCode(t, err, http.StatusUnauthorized, "CannotVerifyCopySource")
	_, err = dst.StartCopyFromURL(e.ctx, fiSourceSAS(t, s, "src", sas.FilePermissions{Write: true}), nil)
	wantFileCode(t, err, http.StatusForbidden, "CannotVerifyCopySource")
	_, err = dst.StartCopyFromURL(e.ctx, fiSourceSAS(t, s, "src", sas.FilePermissions{Read: true}), nil)
	must(t, err)
	if got := e.read(fileAt(s, "dst"), 0, 0); string(got) != "data" {
		t.Fatalf("copy %q", got)
	}
}

func TestFileUploadRangeFromURL(t *testing.T) {
	e := startFile(t)
	s := e.share()
	const size = 20 << 10
	content := fiRand(8 << 10)
	src := e.mkfile(s, "src", size)
	e.put(src, 0, content)
	srcSAS := fiSourceSAS(t, s, "src", sas.FilePermissions{Read: true})

	dst := e.mkfile(s, "dst", size)
	var raw *http.Response
	ur, err := dst.UploadRangeFromURL(fiCapture(e.ctx, &raw), srcSAS, 0, 0, int64(len(content)), &file.UploadRangeFromURLOptions{
		SourceContentValidation: file.SourceContentValidationTypeCRC64(fiCRC64(content)),
	})
	must(t, err)
	if raw.StatusCode != http.StatusCreated || ur.ETag == nil || ur.LastModified == nil || ur.FileLastWriteTime == nil ||
		ur.XMSContentCRC64 == nil || binary.LittleEndian.Uint64(ur.XMSContentCRC64) != fiCRC64(content) {
		t.Fatalf("upload range from URL: %d %+v", raw.StatusCode, ur)
	}
	wantRanges(t, "after copy", e.ranges(dst, nil), fiRanges{{0, int64(len(content)) - 1}})
	if got := e.read(dst, 0, int64(len(content))); !bytes.Equal(got, content) {
		t.Fatal("content differs")
	}

	// A range in the middle, from a source range spanning written bytes
	// and a hole: the hole stays a hole.
	_, err = dst.UploadRangeFromURL(e.ctx, srcSAS, 6<<10, 12<<10, 4<<10, nil)
	must(t, err)
	wantRanges(t, "second copy", e.ranges(dst, nil), fiRanges{{0, 8<<10 - 1}, {12 << 10, 14<<10 - 1}})
	want := make([]byte, 4<<10)
	copy(want, content[6<<10:])
	if got := e.read(dst, 12<<10, 4<<10); !bytes.Equal(got, want) {
		t.Fatal("second copy content differs")
	}
	// The written range does not follow later writes of the source.
	e.put(src, 0, bytes.Repeat([]byte{'z'}, 16))
	if got := e.read(dst, 0, 16); !bytes.Equal(got, content[:16]) {
		t.Fatal("a source write reached the destination")
	}

	// Errors.
	_, err = dst.UploadRangeFromURL(e.ctx, src.URL(), 0, 0, 1024, nil)
	wantFileCode(t, err, http.StatusUnauthorized, "CannotVerifyCopySource") // Azure/azure-sdk-for-net#48992
	_, err = dst.UploadRangeFromURL(e.ctx, srcSAS, 0, size-100, 1024, nil)
	wantFileCode(t, err, http.StatusRequestedRangeNotSatisfiable, fileerror.InvalidRange)
	_, err = dst.UploadRangeFromURL(e.ctx, srcSAS, 0, 0, 1024, &file.UploadRangeFromURLOptions{SourceContentValidation: file.SourceContentValidationTypeCRC64(42)})
	wantFileCode(t, err, http.StatusBadRequest, "Crc64Mismatch")
	_, err = dst.UploadRangeFromURL(e.ctx, srcSAS, 0, 0, 1024, &file.UploadRangeFromURLOptions{
		SourceModifiedAccessConditions: &file.SourceModifiedAccessConditions{SourceIfMatchCRC64: binary.LittleEndian.AppendUint64(nil, 42)}})
	wantFileCode(t, err, http.StatusPreconditionFailed, "SourceConditionNotMet")
	_, err = fileAt(s, "none").UploadRangeFromURL(e.ctx, srcSAS, 0, 0, 1024, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.ResourceNotFound)
	other := strings.Replace(srcSAS, "/src?", "/dst?", 1) // a SAS for src used on dst
	_, err = dst.UploadRangeFromURL(e.ctx, other, 0, 0, 1024, nil)
	wantFileCode(t, err, http.StatusForbidden, "CannotVerifyCopySource")

	// A leased destination needs its lease ID.
	lc := fiLease(t, dst, "")
	_, err = lc.Acquire(e.ctx, nil)
	must(t, err)
	_, err = dst.UploadRangeFromURL(e.ctx, srcSAS, 0, 0, 512, nil)
	wantFileCode(t, err, http.StatusPreconditionFailed, "LeaseIdMissing")
	_, err = dst.UploadRangeFromURL(e.ctx, srcSAS, 0, 0, 512, &file.UploadRangeFromURLOptions{LeaseAccessConditions: fiLeaseOf(*lc.LeaseID())})
	must(t, err)

	// Preserve the last write time.
	before := e.props(dst).FileLastWriteTime
	e.clock.Advance(time.Minute)
	ur, err = dst.UploadRangeFromURL(e.ctx, srcSAS, 0, 0, 512, &file.UploadRangeFromURLOptions{
		LeaseAccessConditions: fiLeaseOf(*lc.LeaseID()), LastWrittenMode: to.Ptr(file.LastWrittenModePreserve)})
	must(t, err)
	if !ur.FileLastWriteTime.Equal(*before) {
		t.Fatalf("preserve: last write %v, was %v", ur.FileLastWriteTime, before)
	}
}

// Put Range from URL returns the CRC64 of exactly the bytes it wrote
// while the source range is rewritten concurrently: the range is read,
// then written only if unchanged, else read again. Writers flip the first
// byte of the source, so each version is all 'x' but for that byte.
func TestFileUploadRangeFromURLConcurrentSourceWrites(t *testing.T) {
	e := startFile(t)
	s := e.share()
	const n = 256 << 10
	src := e.mkfile(s, "src", n)
	dst := e.mkfile(s, "dst", n)
	srcSAS := fiSourceSAS(t, s, "src", sas.FilePermissions{Read: true})
	e.put(src, 0, bytes.Repeat([]byte{'x'}, n))
	stop := make(chan struct{})
	const writers = 4
	done := make(chan error, writers)
	for w := 0; w < writers; w++ {
		go func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					done <- nil
					return
				default:
				}
				if _, err := src.UploadRange(e.ctx, 0, fiBody([]byte{"xy"[i%2]}), nil); err != nil {
					done <- err
					return
				}
			}
		}()
	}
	defer func() {
		close(stop)
		for w := 0; w < writers; w++ {
			must(t, <-done)
		}
	}()
	for i := 0; i < 12; i++ {
		ur, err := dst.UploadRangeFromURL(e.ctx, srcSAS, 0, 0, n, nil)
		must(t, err)
		got := e.read(dst, 0, n)
		if !bytes.Equal(got[1:], bytes.Repeat([]byte{'x'}, n-1)) || got[0] != 'x' && got[0] != 'y' {
			t.Fatalf("copy %d: unexpected content", i)
		}
		if binary.LittleEndian.Uint64(ur.XMSContentCRC64) != fiCRC64(got) {
			t.Fatalf("copy %d: returned CRC64 is not the written bytes'", i)
		}
	}
}

// The az CLI names a copy source by the account's Azure host name
// (https://{account}.file.core.windows.net/{share}/{path}) even against a
// custom endpoint: that is this server's account. Another account's host
// is not.
func TestFileCopyFromAzureHostName(t *testing.T) {
	e := startFile(t)
	s := e.share()
	src := e.mkfile(s, "src", 0)
	data := fiRand(1000)
	_, err := src.Resize(e.ctx, int64(len(data)), nil)
	must(t, err)
	e.put(src, 0, data)
	path := strings.TrimPrefix(src.URL(), e.app.FileURL) // "/{share}/src"
	dst := fileAt(s, "dst")
	_, err = dst.StartCopyFromURL(e.ctx, "https://"+app.DevAccount+".file.core.windows.net"+path, nil)
	must(t, err)
	if got := e.read(dst, 0, 0); !bytes.Equal(got, data) {
		t.Fatal("copy from the Azure host name: content differs")
	}
	_, err = fileAt(s, "other").StartCopyFromURL(e.ctx, "https://someoneelse.file.core.windows.net"+path, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.Code("CannotVerifyCopySource"))
	_, err = fileAt(s, "other").StartCopyFromURL(e.ctx, "https://"+app.DevAccount+".blob.core.windows.net"+path, nil)
	wantFileCode(t, err, http.StatusNotFound, fileerror.Code("CannotVerifyCopySource"))
}
