package e2e

import (
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
)

// A file with the ReadOnly attribute refuses REST content changes and
// deletion with 409 ReadOnlyAttribute (the status the service sends,
// Azure/azure-storage-azcopy#3230) until Set File Properties clears the
// attribute; metadata and properties stay writable.
func TestFileReadOnlyAttribute(t *testing.T) {
	e := startFile(t)
	s := e.share()
	f := e.mkfile(s, "ro.txt", 1024)
	e.put(f, 0, []byte("before"))
	_, err := f.SetHTTPHeaders(e.ctx, &file.SetHTTPHeadersOptions{SMBProperties: &file.SMBProperties{Attributes: &file.NTFSFileAttributes{ReadOnly: true}}})
	must(t, err)
	if p := e.props(f); p.FileAttributes == nil || *p.FileAttributes != "ReadOnly" {
		t.Fatalf("attributes %q, want ReadOnly", fiStr(p.FileAttributes))
	}

	_, err = f.UploadRange(e.ctx, 0, fiBody([]byte("after!")), nil)
	wantFileCode(t, err, 409, fileerror.ReadOnlyAttribute)
	_, err = f.ClearRange(e.ctx, file.HTTPRange{Offset: 0, Count: 512}, nil)
	wantFileCode(t, err, 409, fileerror.ReadOnlyAttribute)
	_, err = f.Resize(e.ctx, 10, nil)
	wantFileCode(t, err, 409, fileerror.ReadOnlyAttribute)
	_, err = f.Delete(e.ctx, nil)
	wantFileCode(t, err, 409, fileerror.ReadOnlyAttribute)
	_, err = f.Create(e.ctx, 5, nil)
	wantFileCode(t, err, 409, fileerror.ReadOnlyAttribute)
	if got := e.read(f, 0, 6); string(got) != "before" {
		t.Fatalf("content changed to %q", got)
	}
	_, err = f.SetMetadata(e.ctx, &file.SetMetadataOptions{Metadata: map[string]*string{"k": fiPtr("v")}})
	must(t, err)

	// Clearing the attribute through Set File Properties re-enables writes.
	_, err = f.SetHTTPHeaders(e.ctx, &file.SetHTTPHeadersOptions{SMBProperties: &file.SMBProperties{Attributes: &file.NTFSFileAttributes{None: true}}})
	must(t, err)
	e.put(f, 0, []byte("after!"))
	_, err = f.Delete(e.ctx, nil)
	must(t, err)
}

func fiPtr(s string) *string { return &s }
