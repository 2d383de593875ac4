package blob

import (
	"net/http/httptest"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// TestRoutesTable checks the route table's invariants: a SAS rule or
// Shared Key only for every entry, names shared only by variants of one
// operation, and no entry shadowed by an earlier one.
func TestRoutesTable(t *testing.T) {
	for _, err := range blobRoutes.Verify() {
		t.Error(err)
	}
}

// routeOf routes a request made of method, target (path and query after
// the host) and headers as ServeAzure does, and returns the operation's
// name or the error code.
func routeOf(method, target string, h map[string]string) (string, string) {
	hr := httptest.NewRequest(method, "http://127.0.0.1:10000"+target, nil)
	for k, v := range h {
		hr.Header.Set(k, v)
	}
	r := newReq(&server.Request{Request: hr})
	rt, err := (*Service)(nil).route(r)
	if err != nil {
		e, _ := azerr.As(err)
		if e == nil {
			return "", err.Error()
		}
		return "", e.Code
	}
	if r.Op != rt.Name || r.opName != rt.Name || r.route != rt {
		return "", "operation not recorded"
	}
	return rt.Name, ""
}

// TestRoutesDispatch: a representative request of every operation
// dispatches to it, and the URLs no operation takes keep their errors.
func TestRoutesDispatch(t *testing.T) {
	const a = "/devstoreaccount1"
	src := map[string]string{"x-ms-copy-source": "http://127.0.0.1:10000/devstoreaccount1/c/src"}
	cases := []struct {
		method, target string
		h              map[string]string
		op, code       string
	}{
		{"GET", a + "/?restype=account&comp=properties", nil, "getAccountInfo", ""},
		{"HEAD", a + "/c?restype=account&comp=properties", nil, "getAccountInfo", ""},
		{"GET", a + "/c/b?restype=account&comp=properties", nil, "getAccountInfo", ""},
		{"GET", a + "/?comp=list", nil, "listContainers", ""},
		{"GET", a + "/?comp=list&restype=container", nil, "listContainers", ""},
		{"GET", a + "/?restype=service&comp=properties", nil, "getServiceProperties", ""},
		{"PUT", a + "/?restype=service&comp=properties", nil, "setServiceProperties", ""},
		{"GET", a + "/?restype=service&comp=stats", nil, "getServiceStats", ""},
		{"POST", a + "/?restype=service&comp=userdelegationkey", nil, "getUserDelegationKey", ""},
		{"GET", a + "/?comp=blobs&where=x", nil, "findBlobsByTagsAccount", ""},
		{"POST", a + "/?comp=batch", nil, "submitBatchAccount", ""},
		{"PUT", a + "/c?restype=container", nil, "createContainer", ""},
		{"GET", a + "/c?restype=container", nil, "getContainerProperties", ""},
		{"HEAD", a + "/c?restype=container", nil, "getContainerProperties", ""},
		{"DELETE", a + "/c?restype=container", nil, "deleteContainer", ""},
		{"PUT", a + "/c?restype=container&comp=metadata", nil, "setContainerMetadata", ""},
		{"GET", a + "/c?restype=container&comp=metadata", nil, "getContainerProperties", ""},
		{"GET", a + "/c?restype=container&comp=acl", nil, "getContainerACL", ""},
		{"HEAD", a + "/c?restype=container&comp=acl", nil, "getContainerACL", ""},
		{"PUT", a + "/c?restype=container&comp=acl", nil, "setContainerACL", ""},
		{"PUT", a + "/c?restype=container&comp=lease", map[string]string{"x-ms-lease-action": "acquire"}, "leaseContainer", ""},
		{"PUT", a + "/c?restype=container&comp=lease", map[string]string{"x-ms-lease-action": "break"}, "leaseContainer", ""},
		{"GET", a + "/c?restype=container&comp=list", nil, "listBlobs", ""},
		{"GET", a + "/c?restype=container&comp=blobs", nil, "findBlobsByTags", ""},
		{"POST", a + "/c?restype=container&comp=batch", nil, "submitBatch", ""},
		{"PUT", a + "/c/b?comp=tier", nil, "setBlobTier", ""},
		{"PUT", a + "/c/b?comp=tier&snapshot=2024-01-01T00:00:00.0000000Z", nil, "setBlobTier", ""},
		{"GET", a + "/c/b?comp=tags", nil, "getBlobTags", ""},
		{"GET", a + "/c/b?comp=tags&snapshot=2024-01-01T00:00:00.0000000Z", nil, "getBlobTags", ""},
		{"PUT", a + "/c/b?comp=tags", nil, "setBlobTags", ""},
		{"PUT", a + "/c/b", map[string]string{"x-ms-copy-source": "u", "x-ms-blob-type": "BlockBlob"}, "putBlobFromURL", ""},
		{"PUT", a + "/c/b", src, "copyBlob", ""},
		{"PUT", a + "/c/b", map[string]string{"x-ms-blob-type": "BlockBlob"}, "putBlob", ""},
		{"PUT", a + "/c/dir\\b", nil, "putBlob", ""},
		{"GET", a + "/c/b", nil, "getBlob", ""},
		{"GET", a + "/c/b?snapshot=2024-01-01T00:00:00.0000000Z", nil, "getBlob", ""},
		{"HEAD", a + "/c/b", nil, "getBlobProperties", ""},
		{"DELETE", a + "/c/b", nil, "deleteBlob", ""},
		{"DELETE", a + "/c/b?snapshot=2024-01-01T00:00:00.0000000Z", nil, "deleteBlob", ""},
		{"PUT", a + "/c/b?comp=properties", nil, "setBlobProperties", ""},
		{"PUT", a + "/c/b?comp=metadata", nil, "setBlobMetadata", ""},
		{"GET", a + "/c/b?comp=metadata", nil, "getBlobProperties", ""},
		{"HEAD", a + "/c/b?comp=metadata", nil, "getBlobProperties", ""},
		{"PUT", a + "/c/b?comp=lease", map[string]string{"x-ms-lease-action": "acquire"}, "leaseBlob", ""},
		{"PUT", a + "/c/b?comp=lease", map[string]string{"x-ms-lease-action": "Break"}, "leaseBlob", ""},
		{"PUT", a + "/c/b?comp=snapshot", nil, "snapshotBlob", ""},
		{"PUT", a + "/c/b?comp=undelete", nil, "undeleteBlob", ""},
		{"PUT", a + "/c/b?comp=copy&copyid=x", nil, "abortCopyBlob", ""},
		{"PUT", a + "/c/b?comp=block&blockid=x", src, "putBlockFromURL", ""},
		{"PUT", a + "/c/b?comp=block&blockid=x", nil, "putBlock", ""},
		{"PUT", a + "/c/b?comp=blocklist", nil, "putBlockList", ""},
		{"GET", a + "/c/b?comp=blocklist", nil, "getBlockList", ""},
		{"PUT", a + "/c/b?comp=page", src, "putPageFromURL", ""},
		{"PUT", a + "/c/b?comp=page", nil, "putPage", ""},
		{"GET", a + "/c/b?comp=pagelist", nil, "getPageRanges", ""},
		{"PUT", a + "/c/b?comp=appendblock", src, "appendBlockFromURL", ""},
		{"PUT", a + "/c/b?comp=appendblock", nil, "appendBlock", ""},
		{"PUT", a + "/c/b?comp=seal", nil, "sealBlob", ""},
		{"PUT", a + "/c/b?comp=expiry", nil, "setBlobExpiry", ""},
		{"GET", a + "/c/b?restype=container", nil, "getBlob", ""},

		// No operation: the errors of the URL.
		{"GET", a + "/", nil, "", azerr.UnsupportedHTTPVerb},
		{"GET", a + "/?restype=container", nil, "", azerr.InvalidQueryParameterValue},
		{"GET", a + "/c", nil, "", azerr.InvalidURI},
		{"GET", a + "/c?restype=directory", nil, "", azerr.InvalidQueryParameterValue},
		{"PUT", a + "/c?restype=account&comp=properties", nil, "", azerr.InvalidQueryParameterValue},
		{"PUT", a + "/c?restype=container&comp=list", nil, "", azerr.InvalidQueryParameterValue},
		{"PATCH", a + "/c?restype=container", nil, "", azerr.UnsupportedHTTPVerb},
		{"PUT", a + "/c/b?snapshot=2024-01-01T00:00:00.0000000Z", nil, "", azerr.InvalidQueryParameterValue},
		{"PUT", a + "/c/b?comp=tags&snapshot=2024-01-01T00:00:00.0000000Z", nil, "", azerr.InvalidQueryParameterValue},
		{"POST", a + "/c/b?comp=nothing&snapshot=2024-01-01T00:00:00.0000000Z", nil, "", azerr.InvalidQueryParameterValue},
		{"POST", a + "/c/b", nil, "", azerr.UnsupportedHTTPVerb},
		{"GET", a + "/c/b?comp=nothing", nil, "", azerr.InvalidQueryParameterValue},
	}
	for _, c := range cases {
		op, code := routeOf(c.method, c.target, c.h)
		if op != c.op || code != c.code {
			t.Errorf("%s %s %v: got %q %q, want %q %q", c.method, c.target, c.h, op, code, c.op, c.code)
		}
	}
	// Every operation has a case.
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.op] = true
	}
	for _, name := range Operations() {
		if !seen[name] {
			t.Errorf("no dispatch case for %s", name)
		}
	}
}
