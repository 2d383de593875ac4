package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/sas"
)

// dlSAS signs a Data Lake service SAS for fs (and path, a file SAS
// sr=b, when not ""; a filesystem SAS sr=c otherwise) with letters perms.
func (e *dlEnv) dlSAS(fs, path, perms string) string {
	e.t.Helper()
	q, err := sas.DatalakeSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().UTC().Add(time.Hour),
		FileSystemName: fs, FilePath: path, Permissions: perms}.SignWithSharedKey(e.cred)
	must(e.t, err)
	return q.Encode()
}

// sasRaw sends a request authorized by nothing but the SAS in path's
// query (path is the part after the account) to the dfs endpoint and
// returns its status, x-ms-error-code and body.
func (e *dlEnv) sasRaw(method, path string, hdr map[string]string) (int, string, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.app.DFSURL+path, nil)
	must(e.t, err)
	req.Header.Set("x-ms-version", "2023-11-03")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := e.hc.Do(req)
	must(e.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(e.t, err)
	return resp.StatusCode, resp.Header.Get("x-ms-error-code"), string(b)
}

// wantDLJSON checks a dfs error answer: status, code, and the JSON body
// of the dfs endpoint naming the same code.
func wantDLJSON(t *testing.T, what string, status int, code, body string, wantStatus int, wantCode string) {
	t.Helper()
	if status != wantStatus || code != wantCode {
		t.Fatalf("%s: %d %s, want %d %s (%s)", what, status, code, wantStatus, wantCode, body)
	}
	var v struct {
		Error struct{ Code string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil || v.Error.Code != wantCode {
		t.Fatalf("%s: body %q is not the dfs JSON error %s", what, body, wantCode)
	}
}

// TestDLRenameSourceAuthorization: a rename authorized by a SAS needs the
// source authorized too. A file SAS for fs/attacker.txt with every letter
// used to be enough to move fs/victim.txt, a directory, or a path of
// another filesystem onto attacker.txt (where the same SAS reads it),
// the source gone: the SAS was checked against the destination only.
// Now the source needs a SAS of its own in x-ms-rename-source: none is
// 403 AuthorizationPermissionMismatch, the attacker's SAS replayed for
// the victim fails its signature (403 AuthenticationFailed), and a SAS
// of the source without m or w is 403 AuthorizationPermissionMismatch;
// nothing moves. A source SAS that grants the move still works, and a
// Shared Key rename needs none. Failed before the fix (the first rename
// answered 201 and victim.txt was gone).
func TestDLRenameSourceAuthorization(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("victims")
	other := e.mkfs("otherfs")
	for _, p := range []string{"victim.txt", "dir/inner.txt"} {
		_, err := fs.NewFileClient(p).Create(e.ctx, nil)
		must(t, err)
	}
	_, err := other.NewFileClient("secret.txt").Create(e.ctx, nil)
	must(t, err)

	atk := e.dlSAS("victims", "attacker.txt", "racwdlmeop")
	dst := "/victims/attacker.txt?" + atk
	exists := func(c string, p string) bool {
		_, err := e.fs(c).NewFileClient(p).GetProperties(e.ctx, nil)
		return err == nil
	}
	for _, tc := range []struct {
		name, source string
		code         string
	}{
		{"file, no source SAS", "/victims/victim.txt", "AuthorizationPermissionMismatch"},
		{"directory, no source SAS", "/victims/dir", "AuthorizationPermissionMismatch"},
		{"other filesystem, no source SAS", "/otherfs/secret.txt", "AuthorizationPermissionMismatch"},
		{"account-first source", "/" + "devstoreaccount1" + "/victims/victim.txt", "AuthorizationPermissionMismatch"},
		{"attacker's SAS replayed for the source", "/victims/victim.txt?" + atk, "AuthenticationFailed"},
		{"source SAS without m or w", "/victims/victim.txt?" + e.dlSAS("victims", "victim.txt", "rcdl"), "AuthorizationPermissionMismatch"},
		{"malformed source sig", "/victims/victim.txt?sv=2023-11-03&sr=b&sp=rw&se=2099-01-01&sig=%zz", "AuthenticationFailed"},
	} {
		st, code, body := e.sasRaw(http.MethodPut, dst, map[string]string{"x-ms-rename-source": tc.source})
		wantDLJSON(t, tc.name, st, code, body, http.StatusForbidden, tc.code)
	}
	// The same attack through the SDK: a client of the victim's path
	// without credentials, renamed onto the attacker's path with the
	// attacker's SAS.
	victim, err := file.NewClientWithNoCredential(fs.NewFileClient("victim.txt").DFSURL(),
		&file.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: e.hc}})
	must(t, err)
	_, err = victim.Rename(e.ctx, "attacker.txt?"+atk, nil)
	wantDL(t, err, 403, "AuthorizationPermissionMismatch")
	for _, p := range [][2]string{{"victims", "victim.txt"}, {"victims", "dir/inner.txt"}, {"otherfs", "secret.txt"}} {
		if !exists(p[0], p[1]) {
			t.Fatalf("%s/%s was moved by an unauthorized rename", p[0], p[1])
		}
	}
	if exists("victims", "attacker.txt") {
		t.Fatal("an unauthorized rename created its destination")
	}

	// The source's own SAS with m authorizes it, in another filesystem too.
	st, code, body := e.sasRaw(http.MethodPut, dst, map[string]string{"x-ms-rename-source": "/otherfs/secret.txt?" + e.dlSAS("otherfs", "secret.txt", "m")})
	if st != http.StatusCreated {
		t.Fatalf("rename with a source SAS: %d %s %s", st, code, body)
	}
	if exists("otherfs", "secret.txt") || !exists("victims", "attacker.txt") {
		t.Fatal("the authorized rename did not move the file")
	}
	// A filesystem SAS on the source covers a directory below it.
	st, code, body = e.sasRaw(http.MethodPut, "/victims/moved?"+e.dlSAS("victims", "", "w"),
		map[string]string{"x-ms-rename-source": "/victims/dir?" + e.dlSAS("victims", "", "mw")})
	if st != http.StatusCreated || !exists("victims", "moved/inner.txt") {
		t.Fatalf("directory rename with a filesystem SAS on the source: %d %s %s", st, code, body)
	}
	// Shared Key authorizes both ends.
	resp, b := e.raw(http.MethodPut, "/victims/back", map[string]string{"x-ms-rename-source": "/victims/" + url.PathEscape("victim.txt")}, nil)
	if resp.StatusCode != http.StatusCreated || strings.Contains(string(b), "error") {
		t.Fatalf("Shared Key rename: %d %s", resp.StatusCode, b)
	}
}

// TestDLUndeleteSourceAuthorization: Path Undelete (Undelete Blob with
// x-ms-undelete-source on a hierarchical account) restores only the
// request's own path: a SAS for fs/attacker.txt naming the victim's
// deletion, with or without the victim's path, restores nothing (400
// InvalidHeaderValue for another path; 404 for the victim's deletion id
// under the attacker's path, which has no such deletion). The victim's
// own SAS restores it. Already safe: the source is checked to be the
// URL's path before anything is read.
func TestDLUndeleteSourceAuthorization(t *testing.T) {
	e := startDL(t, true)
	sd := newSoftDeleted(t, e, "soft")
	sd.put("victim.txt", "secret")
	sd.del("victim.txt")
	_, ids, _ := deletedPaths(t, e, e.fs("soft"), nil)
	id := ids["victim.txt"]
	if id == "" {
		t.Fatalf("no deletion id for victim.txt: %v", ids)
	}
	atk := "/soft/attacker.txt?comp=undelete&" + e.dlSAS("soft", "attacker.txt", "racwdlmeop")
	for _, tc := range []struct {
		name, src string
		status    int
	}{
		{"the victim's path", "/soft/victim.txt?deletionid=" + id, http.StatusBadRequest},
		{"the victim's path, no filesystem", "victim.txt?deletionid=" + id, http.StatusBadRequest},
		{"the victim's deletion id alone", "?deletionid=" + id, http.StatusNotFound},
	} {
		st, code, body := e.sasRaw(http.MethodPut, atk, map[string]string{"x-ms-undelete-source": tc.src})
		if st != tc.status {
			t.Fatalf("%s: %d %s %s, want %d", tc.name, st, code, body, tc.status)
		}
	}
	if _, err := e.fs("soft").NewFileClient("victim.txt").GetProperties(e.ctx, nil); err == nil {
		t.Fatal("an unauthorized undelete restored victim.txt")
	}
	if _, err := e.fs("soft").NewFileClient("attacker.txt").GetProperties(e.ctx, nil); err == nil {
		t.Fatal("an unauthorized undelete restored the victim at attacker.txt")
	}
	st, code, body := e.sasRaw(http.MethodPut, "/soft/victim.txt?comp=undelete&"+e.dlSAS("soft", "victim.txt", "w"),
		map[string]string{"x-ms-undelete-source": "?deletionid=" + id})
	if st != http.StatusOK {
		t.Fatalf("the victim's own SAS: %d %s %s", st, code, body)
	}
}
