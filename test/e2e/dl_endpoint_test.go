package e2e

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/service"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// wantDL asserts err is an Azure response error with status and code.
func wantDL(t *testing.T, err error, status int, code string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("want %d %s, got %v", status, code, err)
	}
	if re.StatusCode != status || re.ErrorCode != code {
		t.Fatalf("want %d %s, got %d %s", status, code, re.StatusCode, re.ErrorCode)
	}
}

// meta is the value of metadata name, found ignoring case (the SDK
// reads names from canonicalised response headers).
func meta(md map[string]*string, name string) string {
	for k, v := range md {
		if strings.EqualFold(k, name) && v != nil {
			return *v
		}
	}
	return ""
}

// dfsError decodes the dfs endpoint's JSON error body.
func dfsError(t *testing.T, body []byte) (code, msg string) {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body %q: %v", body, err)
	}
	return e.Error.Code, e.Error.Message
}

// TestDLEndpointFilesystems: the datalake SDK's filesystem operations,
// which it sends to the Blob API of the dfs port (a path-style URL is
// its own Blob URL), and the dfs API's own Filesystem operations, with
// their JSON errors.
func TestDLEndpointFilesystems(t *testing.T) {
	e := startDL(t, true)
	if !strings.Contains(e.app.ConnectionString(app.DevKey), "DFSEndpoint="+e.app.DFSURL+";") {
		t.Fatalf("connection string %q lacks DFSEndpoint=%s", e.app.ConnectionString(app.DevKey), e.app.DFSURL)
	}
	// Through the SDK (Blob API on the dfs port).
	fs := e.fs("sdkfs")
	_, err := fs.Create(e.ctx, &filesystem.CreateOptions{Metadata: map[string]*string{"k": to.Ptr("v")}})
	must(t, err)
	_, err = fs.Create(e.ctx, nil)
	wantDL(t, err, 409, "FileSystemAlreadyExists") // the SDK renames the Blob code (exported.ConvertToDFSError)
	props, err := fs.GetProperties(e.ctx, nil)
	must(t, err)
	if v := meta(props.Metadata, "k"); v != "v" {
		t.Fatalf("metadata %v", props.Metadata)
	}
	pager := e.svc.NewListFileSystemsPager(&service.ListFileSystemsOptions{Include: service.ListFileSystemsInclude{Metadata: to.Ptr(true)}})
	var names []string
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		must(t, err)
		for _, it := range page.FileSystemItems {
			names = append(names, *it.Name)
		}
	}
	if strings.Join(names, ",") != "sdkfs" {
		t.Fatalf("listed %v", names)
	}

	// The dfs API: Filesystem - Create with x-ms-properties.
	p64 := base64.StdEncoding.EncodeToString([]byte("hello world"))
	resp, body := e.raw(http.MethodPut, "/dfsfs?resource=filesystem", map[string]string{"x-ms-properties": "greeting=" + p64}, nil)
	if resp.StatusCode != 201 || resp.Header.Get("ETag") == "" || resp.Header.Get("x-ms-namespace-enabled") != "true" {
		t.Fatalf("create: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	resp, body = e.raw(http.MethodPut, "/dfsfs?resource=filesystem", nil, nil)
	if code, msg := dfsError(t, body); resp.StatusCode != 409 || code != "FilesystemAlreadyExists" || resp.Header.Get("x-ms-error-code") != code ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || !strings.Contains(msg, "RequestId:") {
		t.Fatalf("create again: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	// The Blob API sees the decoded properties as metadata.
	gp, err := e.fs("dfsfs").GetProperties(e.ctx, nil)
	must(t, err)
	if v := meta(gp.Metadata, "greeting"); v != "hello world" {
		t.Fatalf("metadata %v", gp.Metadata)
	}
	// Get Properties gives them back encoded.
	resp, body = e.raw(http.MethodHead, "/dfsfs?resource=filesystem", nil, nil)
	if resp.StatusCode != 200 || resp.Header.Get("x-ms-properties") != "greeting="+p64 || len(body) != 0 {
		t.Fatalf("get properties: %d %v", resp.StatusCode, resp.Header)
	}
	// Set Properties replaces them.
	resp, _ = e.raw(http.MethodPatch, "/dfsfs?resource=filesystem", map[string]string{"x-ms-properties": "a=" + base64.StdEncoding.EncodeToString([]byte("1")) + ", b=" + base64.StdEncoding.EncodeToString([]byte("2"))}, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("set properties: %d", resp.StatusCode)
	}
	resp, _ = e.raw(http.MethodHead, "/dfsfs?resource=filesystem", nil, nil)
	if got := resp.Header.Get("x-ms-properties"); got != "a=MQ==,b=Mg==" {
		t.Fatalf("properties after set: %q", got)
	}
	// Malformed properties: 400 InvalidHeaderValue, nothing changed.
	for _, bad := range []string{"a", "a=!!", "1a=MQ==", "a=MQ==,A=Mg==", "a=AA=="} {
		resp, body = e.raw(http.MethodPatch, "/dfsfs?resource=filesystem", map[string]string{"x-ms-properties": bad}, nil)
		if code, _ := dfsError(t, body); resp.StatusCode != 400 || code != "InvalidHeaderValue" {
			t.Fatalf("properties %q: %d %s", bad, resp.StatusCode, body)
		}
	}
	// Filesystem - List: JSON, in name order, paged by x-ms-continuation.
	var listed []string
	cont := ""
	for pages := 0; ; pages++ {
		path := "/?resource=account&maxResults=1"
		if cont != "" {
			path += "&continuation=" + cont
		}
		resp, body = e.raw(http.MethodGet, path, nil, nil)
		var out struct {
			Filesystems []struct{ Name, LastModified, ETag string } `json:"filesystems"`
		}
		if resp.StatusCode != 200 || json.Unmarshal(body, &out) != nil || len(out.Filesystems) != 1 || out.Filesystems[0].ETag == "" {
			t.Fatalf("list: %d %s", resp.StatusCode, body)
		}
		listed = append(listed, out.Filesystems[0].Name)
		if cont = resp.Header.Get("x-ms-continuation"); cont == "" {
			break
		}
	}
	if strings.Join(listed, ",") != "dfsfs,sdkfs" {
		t.Fatalf("listed %v", listed)
	}
	resp, body = e.raw(http.MethodGet, "/?resource=account&maxResults=0", nil, nil)
	if code, _ := dfsError(t, body); resp.StatusCode != 400 || code != "InvalidQueryParameterValue" {
		t.Fatalf("maxResults=0: %d %s", resp.StatusCode, body)
	}
	// Delete: 202, then 404 FilesystemNotFound; HEAD errors have no body.
	resp, _ = e.raw(http.MethodDelete, "/dfsfs?resource=filesystem", nil, nil)
	if resp.StatusCode != 202 {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	resp, body = e.raw(http.MethodDelete, "/dfsfs?resource=filesystem", nil, nil)
	if code, _ := dfsError(t, body); resp.StatusCode != 404 || code != "FilesystemNotFound" {
		t.Fatalf("delete again: %d %s", resp.StatusCode, body)
	}
	resp, body = e.raw(http.MethodHead, "/dfsfs?resource=filesystem", nil, nil)
	if resp.StatusCode != 404 || resp.Header.Get("x-ms-error-code") != "FilesystemNotFound" || len(body) != 0 {
		t.Fatalf("head missing: %d %v %q", resp.StatusCode, resp.Header, body)
	}
	// A Blob API error on the dfs port stays XML.
	resp, body = e.raw(http.MethodGet, "/nofs?restype=container", nil, nil)
	if resp.StatusCode != 404 || !strings.Contains(string(body), "<Code>ContainerNotFound</Code>") {
		t.Fatalf("blob error: %d %s", resp.StatusCode, body)
	}
	// An unknown resource: 400 naming it, as JSON.
	resp, body = e.raw(http.MethodPut, "/x?resource=nonsense", nil, nil)
	if code, _ := dfsError(t, body); resp.StatusCode != 400 || code != "InvalidQueryParameterValue" {
		t.Fatalf("unknown resource: %d %s", resp.StatusCode, body)
	}
	// Authentication failures on a dfs request are JSON too.
	req, _ := http.NewRequest(http.MethodPut, e.app.DFSURL+"/y?resource=filesystem", nil)
	req.Header.Set("x-ms-date", "Mon, 02 Jan 2006 15:04:05 GMT")
	req.Header.Set("Authorization", "SharedKey "+app.DevAccount+":AAAA")
	r2, err := http.DefaultClient.Do(req)
	must(t, err)
	defer r2.Body.Close()
	if r2.StatusCode != 403 || !strings.HasPrefix(r2.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("bad signature: %d %v", r2.StatusCode, r2.Header)
	}
}

// TestDLEndpointHostStyle: {account}.dfs.localhost names the account in
// the host, as {account}.dfs.core.windows.net does.
func TestDLEndpointHostStyle(t *testing.T) {
	e := startDL(t, true)
	req, _ := http.NewRequest(http.MethodPut, strings.TrimSuffix(e.app.DFSURL, "/"+app.DevAccount)+"/hostfs?resource=filesystem", nil)
	req.Host = app.DevAccount + ".dfs.localhost"
	req.Header.Set("x-ms-date", strings.Replace(e.clock.Now().UTC().Format(http.TimeFormat), "UTC", "GMT", 1))
	req.Header.Set("x-ms-version", "2023-11-03")
	signRaw(req)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("host-style create: %d", resp.StatusCode)
	}
	if _, err := e.fs("hostfs").GetProperties(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
}

// TestDLEndpointFlatAccount: without a hierarchical namespace the
// filesystem operations work (they are container operations, which
// Azure serves on the dfs endpoint of every account) and say so in
// x-ms-namespace-enabled.
func TestDLEndpointFlatAccount(t *testing.T) {
	e := startDL(t, false)
	resp, _ := e.raw(http.MethodPut, "/flat?resource=filesystem", nil, nil)
	if resp.StatusCode != 201 || resp.Header.Get("x-ms-namespace-enabled") != "false" {
		t.Fatalf("create: %d %v", resp.StatusCode, resp.Header)
	}
}
