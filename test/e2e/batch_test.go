package e2e

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/auth"
)

func TestBlobBatchContainer(t *testing.T) {
	b := newBlobT(t)
	for i := 0; i < 5; i++ {
		b.put(fmt.Sprintf("b%d", i), []byte("x"), nil)
	}
	cc := b.cli.ServiceClient().NewContainerClient(b.cont)
	bb, err := cc.NewBatchBuilder()
	must(t, err)
	for _, n := range []string{"b0", "b1", "missing", "b2"} {
		must(t, bb.Delete(n, nil))
	}
	r, err := cc.SubmitBatch(b.ctx, bb, nil)
	must(t, err)
	if len(r.Responses) != 4 {
		t.Fatalf("%d sub-responses", len(r.Responses))
	}
	for i, it := range r.Responses {
		if i == 2 {
			wantCode(t, it.Error, http.StatusNotFound, bloberror.BlobNotFound)
			continue
		}
		if it.Error != nil || it.RequestID == nil {
			t.Fatalf("sub-response %d: %v", i, it.Error)
		}
	}
	for i, gone := range []bool{true, true, true, false, false} {
		_, err := b.bb(fmt.Sprintf("b%d", i)).GetProperties(b.ctx, nil)
		if (err != nil) != gone {
			t.Fatalf("b%d: gone %v, err %v", i, gone, err)
		}
	}

	// Set Blob Tier in a batch.
	bb, err = cc.NewBatchBuilder()
	must(t, err)
	must(t, bb.SetTier("b3", blob.AccessTierCool, nil))
	must(t, bb.SetTier("b4", blob.AccessTierArchive, nil))
	r, err = cc.SubmitBatch(b.ctx, bb, nil)
	must(t, err)
	for i, it := range r.Responses {
		if it.Error != nil {
			t.Fatalf("set tier %d: %v", i, it.Error)
		}
	}
	b.wantTier("b3", blob.AccessTierCool, false)
	b.wantTier("b4", blob.AccessTierArchive, false)
}

func TestBlobBatchAccount(t *testing.T) {
	b := newBlobT(t)
	svc := b.cli.ServiceClient()
	_, err := svc.CreateContainer(b.ctx, "second", nil)
	must(t, err)
	b.put("x", []byte("1"), nil)
	_, err = svc.NewContainerClient("second").NewBlockBlobClient("y").Upload(b.ctx, bxBody([]byte("2")), nil)
	must(t, err)
	bb, err := svc.NewBatchBuilder()
	must(t, err)
	must(t, bb.Delete(b.cont, "x", nil))
	must(t, bb.Delete("second", "y", &service.BatchDeleteOptions{}))
	r, err := svc.SubmitBatch(b.ctx, bb, nil)
	must(t, err)
	for i, it := range r.Responses {
		if it.Error != nil {
			t.Fatalf("sub-response %d: %v", i, it.Error)
		}
	}
	for _, c := range []string{b.cont, "second"} {
		page, err := svc.NewContainerClient(c).NewListBlobsFlatPager(nil).NextPage(b.ctx)
		must(t, err)
		if len(page.Segment.BlobItems) != 0 {
			t.Fatalf("%s still has %d blobs", c, len(page.Segment.BlobItems))
		}
	}
}

// rawBatch posts a batch body built by hand (what the SDK refuses to
// build), signed with Shared Key, and returns the sub-responses' status
// lines and error codes.
func rawBatch(t *testing.T, b *blobT, path string, subs []string) []string {
	t.Helper()
	ids, parts := rawBatchParts(t, b, path, subs)
	out := make([]string, len(parts))
	for i, raw := range parts {
		raw += "\n" // the part's last CRLF belongs to the delimiter (the SDK does the same)
		sr, err := http.ReadResponse(bufio.NewReader(strings.NewReader(raw)), nil)
		must(t, err)
		out[i] = fmt.Sprintf("%s:%d:%s", ids[i], sr.StatusCode, sr.Header.Get("x-ms-error-code"))
	}
	return out
}

func signRaw(r *http.Request) {
	key, _ := base64.StdEncoding.DecodeString(app.DevKey)
	sts := auth.StringToSign(r, auth.Blob, auth.SharedKey, app.DevAccount, auth.CultureOrder)
	r.Header.Set("Authorization", "SharedKey "+app.DevAccount+":"+auth.ComputeSignature(key, sts))
}

// subDelete is a Delete Blob sub-request signed on its own.
func subDelete(path string) string {
	r, _ := http.NewRequest(http.MethodDelete, "http://x"+path, nil)
	r.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	r.Header.Set("Content-Length", "0")
	signRaw(r)
	var b strings.Builder
	fmt.Fprintf(&b, "DELETE %s HTTP/1.1\r\n", path)
	for k, v := range r.Header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v[0])
	}
	b.WriteString("\r\n")
	return b.String()
}

func TestBlobBatchErrors(t *testing.T) {
	b := newBlobT(t)
	b.put("a", []byte("1"), nil)
	b.put("b", []byte("2"), nil)
	acct := "/" + app.DevAccount
	cont := acct + "/" + b.cont
	// A sub-request signed with a bad key fails alone.
	bad := strings.Replace(subDelete(cont+"/b"), "SharedKey "+app.DevAccount+":", "SharedKey "+app.DevAccount+":AAAA", 1)
	got := rawBatch(t, b, cont+"?restype=container&comp=batch", []string{subDelete(cont + "/a"), bad})
	if fmt.Sprint(got) != "[0:202: 1:403:AuthenticationFailed]" {
		t.Fatalf("bad signature: %v", got)
	}
	if _, err := b.bb("b").GetProperties(b.ctx, nil); err != nil {
		t.Fatal("the badly signed sub-request deleted its blob")
	}
	// Whole-batch failures: one part, no Content-ID, nothing done.
	b.put("a", []byte("1"), nil)
	tier := "PUT " + cont + "/b?comp=tier HTTP/1.1\r\nx-ms-access-tier: Cool\r\n\r\n"
	for _, c := range []struct {
		path string
		subs []string
		want string
	}{
		{cont + "?restype=container&comp=batch", []string{subDelete(cont + "/a"), tier}, "[:400:AllBatchSubRequestsShouldBeSameApi]"},
		{cont + "?restype=container&comp=batch", []string{subDelete(acct + "/other/a")}, "[:400:InvalidInput]"},
		{cont + "?restype=container&comp=batch", []string{"GET " + cont + "/a HTTP/1.1\r\n\r\n"}, "[:400:InvalidInput]"},
		{cont + "?restype=container&comp=batch", []string{"not http"}, "[:400:InvalidInput]"},
		{acct + "?comp=batch", make257(subDelete(cont + "/a")), "[:400:ExceedsMaxBatchRequestCount]"},
		// A batch holds blob operations: never a container's delete.
		{acct + "?comp=batch", []string{subDelete(cont)}, "[:400:InvalidInput]"},
		{acct + "?comp=batch", []string{subDelete(cont + "/")}, "[:400:InvalidInput]"},
	} {
		if got := rawBatch(t, b, c.path, c.subs); fmt.Sprint(got) != c.want {
			t.Fatalf("%s: %v, want %s", c.path, got, c.want)
		}
	}
	if _, err := b.bb("a").GetProperties(b.ctx, nil); err != nil {
		t.Fatal("a failed batch deleted a blob")
	}
	if _, err := b.cli.ServiceClient().NewContainerClient(b.cont).GetProperties(b.ctx, nil); err != nil {
		t.Fatal("a batch deleted the container")
	}
}

func make257(s string) []string {
	out := make([]string, 257)
	for i := range out {
		out[i] = s
	}
	return out
}

// The Python SDK addresses sub-requests as /container/blob (the
// virtual-host form) and signs them so; the Go SDK uses the path-style
// form. Both are this account's blobs.
func TestBlobBatchVirtualHostPaths(t *testing.T) {
	b := newBlobT(t)
	b.put("a", []byte("1"), nil)
	b.put("b", []byte("2"), nil)
	cont := "/" + app.DevAccount + "/" + b.cont
	got := rawBatch(t, b, cont+"?restype=container&comp=batch", []string{subDelete("/" + b.cont + "/a"), subDelete(cont + "/b")})
	if fmt.Sprint(got) != "[0:202: 1:202:]" {
		t.Fatalf("virtual-host and path-style sub-requests: %v", got)
	}
	for _, n := range []string{"a", "b"} {
		_, err := b.bb(n).GetProperties(b.ctx, nil)
		wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	}
	// A virtual-host form signed as path-style (or the reverse) fails.
	b.put("a", []byte("1"), nil)
	wrong := strings.Replace(subDelete(cont+"/a"), "DELETE "+cont+"/a", "DELETE /"+b.cont+"/a", 1)
	if got := rawBatch(t, b, cont+"?restype=container&comp=batch", []string{wrong}); fmt.Sprint(got) != "[0:403:AuthenticationFailed]" {
		t.Fatalf("mismatched form: %v", got)
	}
}
