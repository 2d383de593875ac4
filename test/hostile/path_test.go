package hostile

import (
	"net/http"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestPathTricks: request targets that try to climb out of the account or
// container (dot segments, encoded dots and slashes, backslashes), carry
// NUL bytes, overlong names or another account's name are refused or
// resolve inside the signer's own account: the other account's blob is
// never served, and the server stays responsive.
func TestPathTricks(t *testing.T) {
	s := start(t, nil)
	dev, other := "/"+app.DevAccount, "/"+otherAccount
	for _, tc := range []struct {
		name   string
		svc    string
		target string
		status int
		code   string
	}{
		// Dot segments are not resolved: ".." is a container name, which
		// no container has (a read does not check the name's form, it
		// finds nothing; a create refuses it, below).
		{"dot-dot to another account", "blob", dev + "/../" + otherAccount + "/cont/b", 404, "ContainerNotFound"},
		{"encoded dot-dot", "blob", dev + "/%2e%2e/" + otherAccount + "/cont/b", 404, "ContainerNotFound"},
		{"dot-dot inside the blob name", "blob", dev + "/cont/../../" + otherAccount + "/cont/b", 404, "BlobNotFound"},
		{"backslash climb", "blob", dev + "/cont/..\\..\\" + otherAccount + "\\cont\\b", 404, "BlobNotFound"},
		{"NUL in the blob name", "blob", dev + "/cont/b%00", 404, "BlobNotFound"},
		{"NUL in the container name", "blob", dev + "/co%00nt/b", 404, "ContainerNotFound"},
		{"overlong container name", "blob", dev + "/" + strings.Repeat("c", 64) + "/b", 404, "ContainerNotFound"},
		{"overlong blob name", "blob", dev + "/cont/" + strings.Repeat("b", 1025), 404, "BlobNotFound"},
		// The account named in the path must be the signer's: a known
		// other account is refused ...
		{"another account's path, signed by this one", "blob", other + "/cont/b", 403, "AuthenticationFailed"},
		// ... and an unknown first segment is a container of the
		// signer's own account (the account-in-host form), none here.
		{"an unknown account", "blob", "/nosuchaccount/cont/b", 404, "ContainerNotFound"},
		{"dot-dot in a share path", "file", dev + "/share/../../" + otherAccount + "/share/f", 400, "InvalidResourceName"},
		{"encoded dot-dot on dfs", "dfs", dev + "/%2e%2e/" + otherAccount + "/cont/b", 404, "ContainerNotFound"},
	} {
		r := s.do(tc.svc, "GET", tc.target, nil, nil, app.DevAccount)
		if strings.Contains(r.body, "secret of "+otherAccount) {
			t.Fatalf("%s: served the other account's blob: %v", tc.name, r)
		}
		want(t, tc.name, r, tc.status, tc.code)
	}
	// Anonymous reads of a private container get nothing either.
	for _, target := range []string{other + "/cont/b", dev + "/../" + otherAccount + "/cont/b", other + "/cont/%2e%2e/cont/b"} {
		r := s.do("blob", "GET", target, nil, nil, "")
		if strings.Contains(r.body, "secret of") {
			t.Fatalf("anonymous %s served a blob: %v", target, r)
		}
		want(t, "anonymous "+target, r, 401, "NoAuthenticationInformation")
	}
	// An encoded slash is a slash (Azure decodes the path): it stays in
	// the signer's account.
	if r := s.do("blob", "GET", dev+"/cont%2fb", nil, nil, app.DevAccount); r.status != 200 || r.body != "secret of "+app.DevAccount {
		t.Errorf("encoded slash: %v", r)
	}
	// Creating what the names above would name is refused by form.
	for _, tc := range []struct {
		name, svc, target string
		hdr               http.Header
		status            int
		code              string
	}{
		// ".." is too short for a name (3 to 63 characters): OutOfRangeInput
		// before its characters are looked at.
		{"create container ..", "blob", dev + "/..?restype=container", nil, 400, "OutOfRangeInput"},
		{"create container %2e%2e%2e", "blob", dev + "/%2e%2e%2e?restype=container", nil, 400, "InvalidResourceName"},
		{"create container with NUL", "blob", dev + "/co%00nt?restype=container", nil, 400, "InvalidResourceName"},
		{"create 64-character container", "blob", dev + "/" + strings.Repeat("c", 64) + "?restype=container", nil, 400, "OutOfRangeInput"},
		{"create 1025-character blob name", "blob", dev + "/cont/" + strings.Repeat("b", 1025), http.Header{"X-Ms-Blob-Type": {"BlockBlob"}}, 400, "OutOfRangeInput"},
		{"create 64-character queue", "queue", dev + "/" + strings.Repeat("q", 64), nil, 400, "OutOfRangeInput"},
		{"create share ...", "file", dev + "/...?restype=share", nil, 400, "InvalidResourceName"},
	} {
		want(t, tc.name, s.do(tc.svc, "PUT", tc.target, tc.hdr, nil, app.DevAccount), tc.status, tc.code)
	}
	// A write through dot segments lands in the signer's own container,
	// under that literal name; the other account's blob is unchanged
	// (alive reads it back).
	s.must(s.do("blob", "PUT", dev+"/cont/../../"+otherAccount+"/cont/b", http.Header{"X-Ms-Blob-Type": {"BlockBlob"}}, []byte("overwrite?"), app.DevAccount), 201)
	// Raw bytes net/http refuses before any handler: a request line with
	// a NUL or a space in the target.
	for _, raw := range []string{
		"GET " + dev + "/cont/b\x00 HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET " + dev + "/cont/a b HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET ../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n",
	} {
		r := s.send("blob", []byte(raw), false)
		if r.status != 400 {
			t.Errorf("request line %q: want 400, got %v", raw, r)
		}
	}
	s.alive()
}
