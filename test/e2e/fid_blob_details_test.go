package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestFidBlobBackslashName: a '\' in a blob name is a '/', as Azure
// takes it: the blob is stored, read, listed (and split by the '/'
// delimiter) under the name with '/', a service SAS signed for that name
// reads it through either spelling, and a copy source may use either.
func TestFidBlobBackslashName(t *testing.T) {
	b := newBlobT(t)
	b.put(`dir\sub\a.txt`, []byte("back"), nil)
	if got := string(b.read(b.bb("dir/sub/a.txt"))); got != "back" {
		t.Fatalf("read through '/': %q", got)
	}
	if got := string(b.read(b.bb(`dir\sub/a.txt`))); got != "back" {
		t.Fatalf("read through a mixed name: %q", got)
	}
	cc := b.cli.ServiceClient().NewContainerClient(b.cont)
	page, err := cc.NewListBlobsFlatPager(nil).NextPage(b.ctx)
	must(t, err)
	if len(page.Segment.BlobItems) != 1 || *page.Segment.BlobItems[0].Name != "dir/sub/a.txt" {
		t.Fatalf("listed %v", page.Segment.BlobItems)
	}
	hp, err := cc.NewListBlobsHierarchyPager("/", nil).NextPage(b.ctx)
	must(t, err)
	if len(hp.Segment.BlobPrefixes) != 1 || *hp.Segment.BlobPrefixes[0].Name != "dir/" {
		t.Fatalf("prefixes %v", hp.Segment.BlobPrefixes)
	}
	// Overwriting through '/' replaces the same blob.
	b.put("dir/sub/a.txt", []byte("slash"), nil)
	if got := string(b.read(b.bb(`dir\sub\a.txt`))); got != "slash" {
		t.Fatalf("after overwrite: %q", got)
	}

	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	qp, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ContainerName: b.cont, BlobName: "dir/sub/a.txt",
		Permissions: "r", ExpiryTime: time.Now().Add(time.Hour)}.SignWithSharedKey(cred)
	must(t, err)
	for _, name := range []string{"dir/sub/a.txt", `dir\sub\a.txt`} {
		bc, err := blob.NewClientWithNoCredential(cc.NewBlobClient(name).URL()+"?"+qp.Encode(), &blob.ClientOptions{ClientOptions: clientOptions().ClientOptions})
		must(t, err)
		r, err := bc.DownloadStream(b.ctx, nil)
		must(t, err)
		data, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if string(data) != "slash" {
			t.Fatalf("SAS read of %s: %q", name, data)
		}
	}
	// A copy source spelled with '\'.
	_, err = b.bb("copy").CopyFromURL(b.ctx, cc.NewBlobClient(`dir\sub\a.txt`).URL(), nil)
	must(t, err)
	if got := string(b.read(b.bb("copy"))); got != "slash" {
		t.Fatalf("copy: %q", got)
	}
	// Deleting through '\' deletes it.
	_, err = b.bb(`dir\sub\a.txt`).Delete(b.ctx, nil)
	must(t, err)
	_, err = b.bb("dir/sub/a.txt").GetProperties(b.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
}

// TestFidBlobAppendSealed: every append blob reports x-ms-blob-sealed
// (false until sealed) on Get Blob Properties, Get Blob and List Blobs;
// once sealed, Append Block and Append Block From URL are 409
// BlobIsSealed with the message the Append Blob Seal reference's Remarks
// give.
func TestFidBlobAppendSealed(t *testing.T) {
	b := newBlobT(t)
	cc := b.cli.ServiceClient().NewContainerClient(b.cont)
	ab := cc.NewAppendBlobClient("ap")
	_, err := ab.Create(b.ctx, nil)
	must(t, err)
	_, err = ab.AppendBlock(b.ctx, bxBody([]byte("abc")), nil)
	must(t, err)
	sealed := func() string {
		t.Helper()
		p, err := ab.GetProperties(b.ctx, nil)
		must(t, err)
		d, err := ab.DownloadStream(b.ctx, nil)
		must(t, err)
		d.Body.Close()
		lp, err := cc.NewListBlobsFlatPager(nil).NextPage(b.ctx)
		must(t, err)
		show := func(v *bool) string {
			if v == nil {
				return "absent"
			}
			return fmt.Sprint(*v)
		}
		return show(p.IsSealed) + "," + show(d.IsSealed) + "," + show(lp.Segment.BlobItems[0].Properties.IsSealed)
	}
	if got := sealed(); got != "false,false,false" {
		t.Fatalf("unsealed: %s", got)
	}
	_, err = ab.Seal(b.ctx, nil)
	must(t, err)
	if got := sealed(); got != "true,true,true" {
		t.Fatalf("sealed: %s", got)
	}
	_, err = ab.AppendBlock(b.ctx, bxBody([]byte("more")), nil)
	wantCode(t, err, http.StatusConflict, "BlobIsSealed")
	if msg := fmt.Sprint(err); !strings.Contains(msg, "The specified blob is sealed, and its contents can't be modified unless the blob is re-created after a delete.") {
		t.Fatalf("message: %s", msg)
	}
	b.put("src", []byte("from url"), nil)
	_, err = ab.AppendBlockFromURL(b.ctx, b.bb("src").URL(), nil)
	wantCode(t, err, http.StatusConflict, "BlobIsSealed")
	if p, err := ab.GetProperties(b.ctx, nil); err != nil || *p.ContentLength != 3 {
		t.Fatalf("sealed blob changed: %v %v", p.ContentLength, err)
	}
	// Re-created, it is unsealed again.
	_, err = ab.Create(b.ctx, &appendblob.CreateOptions{})
	must(t, err)
	if got := sealed(); got != "false,false,false" {
		t.Fatalf("re-created: %s", got)
	}
}

// TestFidBlobSetPropertiesClearsAll: Set Blob Properties with no content
// header at all clears every one, Content-Type and Content-MD5 included,
// and reads then carry no Content-Type (azure-sdk-for-js recording
// "setHTTPHeaders with default parameters"); one that only resizes a
// page blob leaves them alone (Set Blob Properties reference).
func TestFidBlobSetPropertiesClearsAll(t *testing.T) {
	b := newBlobT(t)
	b.put("h", []byte("Hello World"), nil)
	_, err := b.bb("h").SetHTTPHeaders(b.ctx, blob.HTTPHeaders{
		BlobContentType: to.Ptr("text/plain"), BlobContentLanguage: to.Ptr("en"), BlobCacheControl: to.Ptr("no-cache"),
		BlobContentDisposition: to.Ptr("inline"), BlobContentEncoding: to.Ptr("identity"), BlobContentMD5: []byte{1, 2, 3, 4},
	}, nil)
	must(t, err)
	_, err = b.bb("h").SetHTTPHeaders(b.ctx, blob.HTTPHeaders{}, nil)
	must(t, err)
	p := b.props(b.bb("h"))
	if p.ContentType != nil || p.ContentLanguage != nil || p.CacheControl != nil || p.ContentDisposition != nil || p.ContentEncoding != nil || p.ContentMD5 != nil {
		t.Fatalf("not cleared: type %v lang %v cache %v disp %v enc %v md5 %x", p.ContentType, p.ContentLanguage, p.CacheControl, p.ContentDisposition, p.ContentEncoding, p.ContentMD5)
	}
	// On the wire: no Content-Type on HEAD or GET (nothing sniffed).
	for _, m := range []string{http.MethodHead, http.MethodGet} {
		req, err := http.NewRequest(m, b.bb("h").URL(), nil)
		must(t, err)
		req.Header.Set("x-ms-version", "2025-01-05")
		req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
		signRaw(req)
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Values("Content-Type") != nil {
			t.Fatalf("%s: %d Content-Type %q", m, resp.StatusCode, resp.Header.Values("Content-Type"))
		}
		if m == http.MethodGet && string(body) != "Hello World" {
			t.Fatalf("body %q", body)
		}
	}
	// Listed with an empty Content-Type.
	lp, err := b.cli.ServiceClient().NewContainerClient(b.cont).NewListBlobsFlatPager(&container.ListBlobsFlatOptions{}).NextPage(b.ctx)
	must(t, err)
	if ct := lp.Segment.BlobItems[0].Properties.ContentType; ct != nil && *ct != "" {
		t.Fatalf("listed Content-Type %q", *ct)
	}
	// A page blob resize keeps the headers.
	pb := b.cli.ServiceClient().NewContainerClient(b.cont).NewPageBlobClient("pg")
	_, err = pb.Create(b.ctx, 512, nil)
	must(t, err)
	_, err = pb.SetHTTPHeaders(b.ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("image/png")}, nil)
	must(t, err)
	_, err = pb.Resize(b.ctx, 1024, nil)
	must(t, err)
	pp, err := pb.GetProperties(b.ctx, nil)
	must(t, err)
	if pp.ContentType == nil || *pp.ContentType != "image/png" || *pp.ContentLength != 1024 {
		t.Fatalf("after resize: %v %v", pp.ContentType, pp.ContentLength)
	}
}
