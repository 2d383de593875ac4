package e2e

// The SMB view of the File service (file.VFS, what the SMB2 server
// calls) against the REST API through azfile: one copy of the data, the
// share modes of SMB opens against REST operations, delete-pending, and
// the liveness of front ends.

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"

	"github.com/cerulean-storage/cerulean/internal/app"
	cfile "github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/smb/smbfs"
)

// fvEnv is a File server with a live SMB view and one share.
type fvEnv struct {
	*fileEnv
	v     *smbfs.VFS
	name  string
	share *share.Client
}

func startFileVFS(t *testing.T) *fvEnv {
	t.Helper()
	e := startFile(t)
	v := smbfs.New(e.app.File, "e2e-smb")
	must(t, v.Heartbeat(e.ctx, e.clock.Now().Add(time.Hour)))
	name := fileName("vfs")
	s := e.svc.NewShareClient(name)
	if _, err := s.Create(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	return &fvEnv{fileEnv: e, v: v, name: name, share: s}
}

func (e *fvEnv) req(path string, access, shareAccess uint32, disp cfile.Disposition, opts uint32) cfile.OpenRequest {
	var comps []string
	if path != "" {
		comps = strings.Split(path, "/")
	}
	return cfile.OpenRequest{Account: app.DevAccount, Share: e.name, Path: comps, DesiredAccess: access,
		ShareAccess: shareAccess, Disposition: disp, Options: opts, SessionID: "e2e", ClientAddr: "127.0.0.1:445"}
}

func (e *fvEnv) open(r cfile.OpenRequest) *cfile.Open {
	e.t.Helper()
	o, err := e.v.Open(e.ctx, r)
	if err != nil {
		e.t.Fatalf("open %v: %v", r.Path, err)
	}
	return o
}

func (e *fvEnv) close(o *cfile.Open) {
	e.t.Helper()
	if _, err := e.v.Close(e.ctx, o); err != nil {
		e.t.Fatalf("close: %v", err)
	}
}

// TestFileVFSData: SMB writes read back byte-exact over REST and REST
// writes over SMB, with one ETag history.
func TestFileVFSData(t *testing.T) {
	e := startFileVFS(t)
	o := e.open(e.req("data.bin", cfile.AccessGenericRead|cfile.AccessGenericWrite, 3, cfile.DispCreate, cfile.OptNonDirectoryFile))
	want := fiRand(5<<20 + 77)
	for off := 0; off < len(want); off += 1 << 20 {
		must(t, e.v.Write(e.ctx, o, int64(off), want[off:min(off+1<<20, len(want))]))
	}
	f := fileAt(e.share, "data.bin")
	if got := e.read(f, 0, 0); !bytes.Equal(got, want) {
		t.Fatalf("REST read of an SMB-written file: %d bytes, want %d", len(got), len(want))
	}
	p := e.props(f)
	in, err := e.v.Info(e.ctx, o)
	must(t, err)
	if string(*p.ETag) != in.ETag || *p.ContentLength != int64(len(want)) || *p.ID != cfile.FormatID(o.FileID) {
		t.Fatalf("REST properties %s %d %s vs SMB %+v", *p.ETag, *p.ContentLength, *p.ID, in)
	}

	patch := fiRand(300 << 10)
	e.put(f, 4<<20-1000, patch)
	copy(want[4<<20-1000:], patch)
	got, err := e.v.Read(e.ctx, o, 4<<20-2000, 400<<10)
	must(t, err)
	if !bytes.Equal(got, want[4<<20-2000:4<<20-2000+400<<10]) {
		t.Fatal("SMB read of a REST-written range differs")
	}
	in2, err := e.v.Info(e.ctx, o)
	must(t, err)
	if in2.ETag == in.ETag {
		t.Fatal("Put Range did not change the ETag seen over SMB")
	}
	// SMB truncation is a REST resize.
	must(t, e.v.SetEndOfFile(e.ctx, o, 1000))
	if got := e.read(f, 0, 0); !bytes.Equal(got, want[:1000]) {
		t.Fatalf("after truncation: %d bytes", len(got))
	}
	if _, err := e.v.Read(e.ctx, o, 1000, 10); err != io.EOF {
		t.Fatalf("read at EOF: %v", err)
	}
	e.close(o)
}

// TestFileVFSShareModes holds the file open over SMB with full access and
// each share mode (as smbtorture smb2.hold-sharemode does) and runs the REST
// operations of the tables of Managing file locks
// (https://learn.microsoft.com/en-us/rest/api/storageservices/managing-file-locks)
// against it.
func TestFileVFSShareModes(t *testing.T) {
	e := startFileVFS(t)
	type restOp struct {
		name string
		need string // the share bits the holder must grant ("" never fails, "!" always fails)
		run  func(f *file.Client) error
	}
	ops := []restOp{
		{"GetProperties", "", func(f *file.Client) error { _, err := f.GetProperties(e.ctx, nil); return err }},
		{"Create", "WD", func(f *file.Client) error { _, err := f.Create(e.ctx, 8, nil); return err }},
		{"Get", "R", func(f *file.Client) error {
			r, err := f.DownloadStream(e.ctx, nil)
			if err == nil {
				r.Body.Close()
			}
			return err
		}},
		{"SetProperties", "W", func(f *file.Client) error { _, err := f.SetHTTPHeaders(e.ctx, nil); return err }},
		{"SetMetadata", "W", func(f *file.Client) error {
			_, err := f.SetMetadata(e.ctx, &file.SetMetadataOptions{Metadata: map[string]*string{"k": to.Ptr("v")}})
			return err
		}},
		{"PutRange", "W", func(f *file.Client) error { _, err := f.UploadRange(e.ctx, 0, fiBody([]byte("abcd")), nil); return err }},
		{"ListRanges", "R", func(f *file.Client) error { _, err := f.GetRangeList(e.ctx, nil); return err }},
		{"Delete", "!", func(f *file.Client) error { _, err := f.Delete(e.ctx, nil); return err }},
		// The holder has Write and Delete access: a lease is always
		// refused (Managing file locks, the lease table).
		{"Lease", "!", func(f *file.Client) error { _, err := fiLease(t, f, "").Acquire(e.ctx, nil); return err }},
	}
	modes := []string{"", "R", "W", "D", "RW", "RD", "WD", "RWD"}
	for _, mode := range modes {
		t.Run("hold-"+mode, func(t *testing.T) {
			name := "hold-" + mode
			e.mkfile(e.share, name, 8)
			var sh uint32
			for i, c := range "RWD" {
				if strings.ContainsRune(mode, c) {
					sh |= 1 << i
				}
			}
			o := e.open(e.req(name, cfile.FileAllAccess, sh, cfile.DispOpen, 0))
			f := fileAt(e.share, name)
			for _, op := range ops {
				fails := op.need == "!"
				if op.need != "" && !fails {
					for _, c := range op.need {
						fails = fails || !strings.ContainsRune(mode, c)
					}
				}
				err := op.run(f)
				if fails {
					wantFileCode(t, err, 409, fileerror.SharingViolation)
				} else if err != nil {
					t.Fatalf("%s under share mode %q: %v", op.name, mode, err)
				}
			}
			// SMB opens follow the same rule: get and put of smbclient
			// (share RW) against a holder with Delete access.
			if _, err := e.v.Open(e.ctx, e.req(name, cfile.AccessReadData, 3, cfile.DispOpen, 0)); !errors.Is(err, cfile.ErrSharingViolation) {
				t.Fatalf("smbclient-style open under %q: %v", mode, err)
			}
			e.close(o)
			if _, err := f.Delete(e.ctx, nil); err != nil {
				t.Fatalf("delete after close: %v", err)
			}
		})
	}
}

// TestFileVFSDeletePending: a delete-on-close open makes the file
// delete-pending at its close; REST gets 409 DeletePending and does not
// list it until the last handle closes, when it is gone.
func TestFileVFSDeletePending(t *testing.T) {
	e := startFileVFS(t)
	e.mkfile(e.share, "victim", 4)
	e.mkfile(e.share, "bystander", 4)
	doc := e.open(e.req("victim", cfile.AccessDelete|cfile.AccessReadAttributes, 7, cfile.DispOpen, cfile.OptDeleteOnClose))
	holder := e.open(e.req("victim", cfile.AccessReadData, 7, cfile.DispOpen, 0))
	f := fileAt(e.share, "victim")
	e.props(f) // not pending while the DOC open lives
	e.close(doc)
	_, err := f.GetProperties(e.ctx, nil)
	wantFileCode(t, err, 409, fileerror.DeletePending)
	_, err = f.Delete(e.ctx, nil)
	wantFileCode(t, err, 409, fileerror.DeletePending)
	root := e.share.NewRootDirectoryClient()
	if _, files, _ := e.fdList(root, nil); strings.Join(files, ",") != "bystander" {
		t.Fatalf("REST listing of a share with a delete-pending file: %v", files)
	}
	if _, err := e.v.Open(e.ctx, e.req("victim", cfile.AccessReadData, 7, cfile.DispOpen, 0)); !errors.Is(err, cfile.ErrDeletePending) {
		t.Fatalf("SMB open of a delete-pending file: %v", err)
	}
	// List Handles still shows the remaining open.
	lh, err := f.ListHandles(e.ctx, nil)
	must(t, err)
	if len(lh.Handles) != 1 || *lh.Handles[0].ID != holder.HandleID {
		t.Fatalf("handles of a delete-pending file: %+v", lh.Handles)
	}
	e.close(holder)
	_, err = f.GetProperties(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ResourceNotFound)
}

// TestFileVFSFrontEndCrash: the handles of a front end that stops
// heartbeating stop blocking REST when its liveness expires, and its
// delete-on-close opens are applied by the reaper.
func TestFileVFSFrontEndCrash(t *testing.T) {
	e := startFileVFS(t)
	e.mkfile(e.share, "locked", 4)
	e.mkfile(e.share, "temp", 4)
	crashed := smbfs.New(e.app.File, "crashed-smb")
	must(t, crashed.Heartbeat(e.ctx, e.clock.Now().Add(30*time.Second)))
	if _, err := crashed.Open(e.ctx, e.req("locked", cfile.FileAllAccess, 0, cfile.DispOpen, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := crashed.Open(e.ctx, e.req("temp", cfile.FileAllAccess, 7, cfile.DispOpen, cfile.OptDeleteOnClose)); err != nil {
		t.Fatal(err)
	}
	f := fileAt(e.share, "locked")
	_, err := f.DownloadStream(e.ctx, nil)
	wantFileCode(t, err, 409, fileerror.SharingViolation)
	lh, err := f.ListHandles(e.ctx, nil)
	must(t, err)
	if len(lh.Handles) != 1 || *lh.Handles[0].ClientIP != "127.0.0.1:445" {
		t.Fatalf("handles: %+v", lh.Handles)
	}

	e.clock.Advance(31 * time.Second)
	e.read(f, 0, 0)
	lh, err = f.ListHandles(e.ctx, nil)
	must(t, err)
	if len(lh.Handles) != 0 {
		t.Fatalf("a dead front end's handles are listed: %d", len(lh.Handles))
	}
	if _, err := e.app.File.ReapHandles(e.ctx); err != nil {
		t.Fatal(err)
	}
	_, err = fileAt(e.share, "temp").GetProperties(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ResourceNotFound)
}

// TestFileVFSForceClose: Force Close Handles through the SDK closes an
// SMB open; the front end sees ErrFileClosed.
func TestFileVFSForceClose(t *testing.T) {
	e := startFileVFS(t)
	e.mkfile(e.share, "f", 4)
	o := e.open(e.req("f", cfile.FileAllAccess, 0, cfile.DispOpen, 0))
	f := fileAt(e.share, "f")
	_, err := f.Delete(e.ctx, nil)
	wantFileCode(t, err, 409, fileerror.SharingViolation)
	r, err := f.ForceCloseHandles(e.ctx, o.HandleID, nil)
	must(t, err)
	if *r.NumberOfHandlesClosed != 1 {
		t.Fatalf("closed %d", *r.NumberOfHandlesClosed)
	}
	if err := e.v.Write(e.ctx, o, 0, []byte("x")); !errors.Is(err, cfile.ErrFileClosed) {
		t.Fatalf("write after force close: %v", err)
	}
	if _, err := f.Delete(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
}
