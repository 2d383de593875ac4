package e2e

import (
	"io"
	"net/http"
	"testing"
)

// TestDLMethodOverridePatch: a PUT carrying X-HTTP-Method-Override: PATCH
// is Path Update. Hadoop's ABFS driver sends append, flush and
// setAccessControl that way (hadoop-azure AbfsDfsClient.append, flush,
// setAcl: its HttpURLConnection has no PATCH), signed over the verb it
// sends, PUT. Without the header a PUT with action= stays 400
// InvalidQueryParameterValue.
func TestDLMethodOverridePatch(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("override")
	f := fs.NewFileClient("f")
	_, err := f.Create(e.ctx, nil)
	must(t, err)
	patch := map[string]string{"X-Http-Method-Override": "PATCH"}

	resp, out := e.raw(http.MethodPut, "/override/f?action=append&position=0", patch, []byte("hello"))
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("append by PUT with the override: %d %s", resp.StatusCode, out)
	}
	resp, out = e.raw(http.MethodPut, "/override/f?action=flush&position=5", patch, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("flush by PUT with the override: %d %s", resp.StatusCode, out)
	}
	dl, err := f.DownloadStream(e.ctx, nil)
	must(t, err)
	got, err := io.ReadAll(dl.Body)
	must(t, err)
	if string(got) != "hello" {
		t.Fatalf("content %q, want hello", got)
	}
	resp, out = e.raw(http.MethodPut, "/override/f?action=setAccessControl", map[string]string{
		"X-Http-Method-Override": "PATCH", "x-ms-permissions": "rwxr-x---"}, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("setAccessControl by PUT with the override: %d %s", resp.StatusCode, out)
	}
	acl, err := f.GetAccessControl(e.ctx, nil)
	must(t, err)
	if acl.Permissions == nil || *acl.Permissions != "rwxr-x---" {
		t.Fatalf("permissions %v, want rwxr-x---", acl.Permissions)
	}

	resp, out = e.raw(http.MethodPut, "/override/f?action=append&position=5", nil, []byte("x"))
	if code, _ := dfsError(t, out); resp.StatusCode != http.StatusBadRequest || code != "InvalidQueryParameterValue" {
		t.Fatalf("append by PUT without the override: %d %s", resp.StatusCode, out)
	}
}
