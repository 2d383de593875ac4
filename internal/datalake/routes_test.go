package datalake

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/server/routetest"
)

// TestRoutes: the table is well formed, no entry is shadowed, and every
// entry's example request, with each of its methods, is one IsDFS sends
// to the table rather than to the Blob service.
func TestRoutes(t *testing.T) {
	for _, err := range dfsRoutes.Verify() {
		t.Error(err)
	}
	// x-ms-structured-body: Path - Update's append takes it for the body.
	routetest.Rules(t, dfsRoutes, map[string]server.Structured{"appendData": server.StructuredRequest})
	methods := []struct {
		m    server.Method
		name string
	}{{server.GET, http.MethodGet}, {server.HEAD, http.MethodHead}, {server.PUT, http.MethodPut}, {server.POST, http.MethodPost}, {server.DELETE, http.MethodDelete}, {server.PATCH, http.MethodPatch}}
	for i := range routeList {
		rt := &routeList[i]
		sel, h, q := rt.Example()
		for _, kv := range [][2]string{{"comp", sel.Comp}, {"restype", sel.Restype}, {"resource", sel.Resource}, {"action", sel.Action}} {
			if kv[1] != "" {
				q.Set(kv[0], kv[1])
			}
		}
		for _, m := range methods {
			if rt.Methods&m.m == 0 {
				continue
			}
			hr := &http.Request{Method: m.name, URL: &url.URL{Path: "/acct/fs/p", RawQuery: q.Encode()}, Header: h}
			if !IsDFS(hr) {
				t.Errorf("%s %s ?%s: not classified as a dfs request", rt.Name, m.name, q.Encode())
			}
		}
	}
}

// TestIsDFS: Blob API requests the datalake SDKs send to the dfs port
// stay with the Blob service.
func TestIsDFS(t *testing.T) {
	for _, c := range []struct {
		method, query string
		header        map[string]string
		want          bool
	}{
		{"PUT", "restype=container", nil, false},           // Create Container (filesystem Create through the SDK)
		{"HEAD", "", nil, false},                           // Get Blob Properties (path GetProperties)
		{"GET", "", nil, false},                            // Get Blob (file Download)
		{"PUT", "comp=metadata", nil, false},               // Set Blob Metadata
		{"PUT", "comp=expiry", nil, false},                 // Set Blob Expiry
		{"GET", "restype=container&comp=list", nil, false}, // List Blobs (ListDirectoryPaths)
		{"DELETE", "", nil, false},                         // Delete Blob
		{"PUT", "comp=undelete", nil, false},               // Undelete Blob
		{"POST", "restype=service&comp=userdelegationkey", nil, false},
		{"PUT", "comp=lease", map[string]string{"x-ms-lease-action": "acquire"}, false},
		{"PUT", "resource=file", nil, true},
		{"PUT", "mode=legacy", map[string]string{"x-ms-rename-source": "/fs/a"}, true},
		{"PATCH", "action=append&position=0", nil, true},
		{"HEAD", "action=getAccessControl", nil, true},
		{"DELETE", "recursive=true", nil, true},
		{"POST", "", map[string]string{"x-ms-lease-action": "acquire"}, true},
		{"PUT", "comp=undelete", map[string]string{"x-ms-undelete-source": "a?deletionid=1"}, false}, // Path - Undelete: the Blob API
		{"GET", "resource=account", nil, true},
	} {
		h := http.Header{}
		for k, v := range c.header {
			h.Set(k, v)
		}
		hr := &http.Request{Method: c.method, URL: &url.URL{Path: "/acct/fs/p", RawQuery: c.query}, Header: h}
		if got := IsDFS(hr); got != c.want {
			t.Errorf("%s ?%s %v: IsDFS %v, want %v", c.method, c.query, c.header, got, c.want)
		}
	}
}
