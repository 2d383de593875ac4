package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// dlACL is an access ACL with n named users and, with def, a default ACL
// of the same shape; n = 28 is the largest Azure accepts (32 entries per
// access and per default ACL, "Access control lists (ACLs) in Azure Data
// Lake Storage").
func dlACL(n int, def bool) string {
	var b strings.Builder
	b.WriteString("user::rwx,group::r-x,mask::rwx,other::---")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, ",user:%08x-0000-4000-8000-%012x:r-x", i, i)
	}
	if def {
		b.WriteString(",default:user::rwx,default:group::r-x,default:mask::rwx,default:other::---")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, ",default:user:%08x-0000-4000-8000-%012x:r-x", i, i)
		}
	}
	return b.String()
}

// wantRawDL checks a raw dfs answer: status, x-ms-error-code and the
// code in the JSON error body.
func wantRawDL(t *testing.T, what string, resp *http.Response, body []byte, status int, code string) {
	t.Helper()
	if resp.StatusCode != status || resp.Header.Get("x-ms-error-code") != code || !strings.Contains(string(body), `"code":"`+code+`"`) {
		t.Fatalf("%s: %d %s %.300s, want %d %s", what, resp.StatusCode, resp.Header.Get("x-ms-error-code"), body, status, code)
	}
}

// TestDLACLLimits checks that every operation taking an ACL refuses one
// over 32 access or 32 default entries with 400 InvaldAccessControlList
// and changes nothing, accepts the largest allowed, and refuses a
// 16,000-entry header quickly (it used to be stored, after seconds of
// parsing, and slowed every later read of the path).
func TestDLACLLimits(t *testing.T) {
	e := startDL(t, true)
	e.mkfs("lim")
	bad := "InvaldAccessControlList"
	over := dlACL(29, false)
	named33 := strings.TrimPrefix(dlACL(33, false), "user::rwx,group::r-x,mask::rwx,other::---,")
	overDef := dlACL(28, false) + strings.TrimPrefix(dlACL(29, true), dlACL(29, false))

	// Path Create with x-ms-acl: refused, nothing created.
	for _, v := range []string{over, overDef} {
		resp, body := e.raw(http.MethodPut, "/lim/d?resource=directory", map[string]string{"x-ms-acl": v}, nil)
		wantRawDL(t, "create", resp, body, 400, bad)
		resp, _ = e.raw(http.MethodHead, "/lim/d?action=getStatus", nil, nil)
		if resp.StatusCode != 404 {
			t.Fatalf("create refused but the path exists: %d", resp.StatusCode)
		}
	}
	maxACL := dlACL(28, true)
	resp, body := e.raw(http.MethodPut, "/lim/d?resource=directory", map[string]string{"x-ms-acl": maxACL}, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("create with 32+32 entries: %d %s", resp.StatusCode, body)
	}
	resp, _ = e.raw(http.MethodHead, "/lim/d?action=getAccessControl", nil, nil)
	stored := resp.Header.Get("x-ms-acl")
	if n := strings.Count(stored, ",") + 1; n != 64 {
		t.Fatalf("stored ACL of %d entries, want 64: %q", n, stored)
	}

	// setAccessControl and setAccessControlRecursive (set, modify,
	// remove): refused, the ACL unchanged.
	for _, c := range []struct{ what, query, acl string }{
		{"setAccessControl", "action=setAccessControl", over},
		{"setAccessControl default", "action=setAccessControl", overDef},
		{"recursive set", "action=setAccessControlRecursive&mode=set", over},
		// 33 entries in the request itself.
		{"recursive modify", "action=setAccessControlRecursive&mode=modify", named33},
		{"recursive remove", "action=setAccessControlRecursive&mode=remove", strings.ReplaceAll(named33, ":r-x", "")},
		// Adding a 29th named user to the 28 the path has: the merged
		// ACL is over, the request well-formed.
		{"recursive modify merged", "action=setAccessControlRecursive&mode=modify", "user:another:r--"},
	} {
		resp, body := e.raw(http.MethodPatch, "/lim/d?"+c.query, map[string]string{"x-ms-acl": c.acl}, nil)
		wantRawDL(t, c.what, resp, body, 400, bad)
		resp, _ = e.raw(http.MethodHead, "/lim/d?action=getAccessControl", nil, nil)
		if got := resp.Header.Get("x-ms-acl"); got != stored {
			t.Fatalf("%s: ACL changed to %q", c.what, got)
		}
	}
	// A modify within the limits still works.
	resp, body = e.raw(http.MethodPatch, "/lim/d?action=setAccessControlRecursive&mode=modify", map[string]string{"x-ms-acl": "user:00000000-0000-4000-8000-000000000000:rwx"}, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"directoriesSuccessful":1`) {
		t.Fatalf("modify within the limits: %d %s", resp.StatusCode, body)
	}

	// An id longer than a user principal name can be.
	resp, body = e.raw(http.MethodPatch, "/lim/d?action=setAccessControl", map[string]string{"x-ms-acl": "user::rwx,group::r-x,other::---,user:" + strings.Repeat("u", 114) + ":r--"}, nil)
	wantRawDL(t, "long id", resp, body, 400, bad)

	// x-ms-owner and x-ms-group name ids too: at most 113 characters.
	upn := strings.Repeat("u", 64) + "@" + strings.Repeat("d", 44) + ".com"
	for _, h := range []string{"x-ms-owner", "x-ms-group"} {
		resp, body = e.raw(http.MethodPatch, "/lim/d?action=setAccessControl", map[string]string{h: upn + "x"}, nil)
		wantRawDL(t, "long "+h, resp, body, 400, "InvalidHeaderValue")
		resp, body = e.raw(http.MethodPut, "/lim/o?resource=file", map[string]string{h: upn + "x"}, nil)
		wantRawDL(t, "create with a long "+h, resp, body, 400, "InvalidHeaderValue")
		if resp, body = e.raw(http.MethodPatch, "/lim/d?action=setAccessControl", map[string]string{h: upn}, nil); resp.StatusCode != 200 {
			t.Fatalf("%s of 113 characters: %d %s", h, resp.StatusCode, body)
		}
	}
	resp, _ = e.raw(http.MethodHead, "/lim/o?action=getStatus", nil, nil)
	if resp.StatusCode != 404 {
		t.Fatalf("create with a long owner refused but the path exists: %d", resp.StatusCode)
	}

	// 16,000 entries (about 740 KB): refused, and quickly.
	huge := dlACL(7996, true)
	start := time.Now()
	resp, body = e.raw(http.MethodPatch, "/lim/d?action=setAccessControl", map[string]string{"x-ms-acl": huge}, nil)
	wantRawDL(t, "16,000 entries", resp, body, 400, bad)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("16,000 entries took %v to refuse", d)
	}
}
