package file

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
	for _, err := range fileRoutes.Verify() {
		t.Error(err)
	}
}

// routeOf routes and prepares a request as ServeAzure does and returns
// the operation's name or the error code.
func routeOf(method, target string, h map[string]string) (string, string) {
	hr := httptest.NewRequest(method, "http://127.0.0.1:10003"+target, nil)
	for k, v := range h {
		hr.Header.Set(k, v)
	}
	r := newReq(&server.Request{Request: hr})
	rt, err := (*Service)(nil).prepare(r)
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
	const snap = "sharesnapshot=2024-01-01T00:00:00.0000000Z"
	src := map[string]string{"x-ms-copy-source": "http://127.0.0.1:10003/devstoreaccount1/s/src"}
	cases := []struct {
		method, target string
		h              map[string]string
		op, code       string
	}{
		{"GET", a + "/?comp=list", nil, "listShares", ""},
		{"GET", a + "/?restype=service&comp=properties", nil, "getServiceProperties", ""},
		{"PUT", a + "/?restype=service&comp=properties", nil, "setServiceProperties", ""},
		{"PUT", a + "/sh1?restype=share", nil, "createShare", ""},
		{"GET", a + "/sh1?restype=share", nil, "getShareProperties", ""},
		{"HEAD", a + "/sh1?restype=share&" + snap, nil, "getShareProperties", ""},
		{"GET", a + "/sh1?restype=share&comp=metadata", nil, "getShareProperties", ""},
		{"DELETE", a + "/sh1?restype=share", nil, "deleteShare", ""},
		{"DELETE", a + "/sh1?restype=share&" + snap, nil, "deleteShare", ""},
		{"PUT", a + "/sh1?restype=share&comp=metadata", nil, "setShareMetadata", ""},
		{"PUT", a + "/sh1?restype=share&comp=properties", nil, "setShareProperties", ""},
		{"PUT", a + "/sh1?restype=share&comp=snapshot", nil, "snapshotShare", ""},
		{"PUT", a + "/sh1?restype=share&comp=snapshot&" + snap, nil, "snapshotShare", ""},
		{"GET", a + "/sh1?restype=share&comp=acl", nil, "getShareACL", ""},
		{"PUT", a + "/sh1?restype=share&comp=acl", nil, "setShareACL", ""},
		{"GET", a + "/sh1?restype=share&comp=stats", nil, "getShareStats", ""},
		{"PUT", a + "/sh1?restype=share&comp=filepermission", nil, "createPermission", ""},
		{"GET", a + "/sh1?restype=share&comp=filepermission", nil, "getPermission", ""},
		{"PUT", a + "/sh1?restype=share&comp=lease", nil, "leaseShare", ""},
		{"PUT", a + "/sh1?restype=share&comp=lease&" + snap, nil, "leaseShare", ""},
		{"PUT", a + "/sh1/d?restype=directory", nil, "createDirectory", ""},
		{"GET", a + "/sh1?restype=directory", nil, "getDirectoryProperties", ""},
		{"HEAD", a + "/sh1/d?restype=directory&comp=metadata", nil, "getDirectoryProperties", ""},
		{"DELETE", a + "/sh1/d?restype=directory", nil, "deleteDirectory", ""},
		{"PUT", a + "/sh1/d?restype=directory&comp=properties", nil, "setDirectoryProperties", ""},
		{"PUT", a + "/sh1/d?restype=directory&comp=metadata", nil, "setDirectoryMetadata", ""},
		{"GET", a + "/sh1?restype=directory&comp=list&" + snap, nil, "listFilesAndDirectories", ""},
		{"GET", a + "/sh1/d?restype=directory&comp=listhandles", nil, "listHandles", ""},
		{"GET", a + "/sh1?comp=listhandles", nil, "listHandles", ""},
		{"GET", a + "/sh1/f?comp=listhandles", nil, "listHandles", ""},
		{"PUT", a + "/sh1/d?restype=directory&comp=forceclosehandles", nil, "forceCloseHandles", ""},
		{"PUT", a + "/sh1?comp=forceclosehandles", nil, "forceCloseHandles", ""},
		{"PUT", a + "/sh1/f?comp=forceclosehandles", nil, "forceCloseHandles", ""},
		{"PUT", a + "/sh1/d?restype=directory&comp=rename", nil, "renameDirectory", ""},
		{"PUT", a + "/sh1/f", src, "copyFile", ""},
		{"PUT", a + "/sh1/f", nil, "createFile", ""},
		{"GET", a + "/sh1/f", nil, "getFile", ""},
		{"GET", a + "/sh1/f?" + snap, nil, "getFile", ""},
		{"HEAD", a + "/sh1/f", nil, "getFileProperties", ""},
		{"GET", a + "/sh1/f?comp=metadata", nil, "getFileProperties", ""},
		{"DELETE", a + "/sh1/f", nil, "deleteFile", ""},
		{"PUT", a + "/sh1/f?comp=properties", nil, "setFileProperties", ""},
		{"PUT", a + "/sh1/f?comp=metadata", nil, "setFileMetadata", ""},
		{"PUT", a + "/sh1/f?comp=range", src, "putRangeFromURL", ""},
		{"PUT", a + "/sh1/f?comp=range", nil, "putRange", ""},
		{"GET", a + "/sh1/f?comp=rangelist", nil, "listRanges", ""},
		{"PUT", a + "/sh1/f?comp=copy&copyid=x", nil, "abortCopyFile", ""},
		{"PUT", a + "/sh1/f?comp=lease", nil, "leaseFile", ""},
		{"PUT", a + "/sh1/f?comp=rename", nil, "renameFile", ""},

		// No operation: the errors of the URL.
		{"GET", a + "/", nil, "", azerr.UnsupportedHTTPVerb},
		{"GET", a + "/?restype=share", nil, "", azerr.InvalidQueryParameterValue},
		{"GET", a + "/sh1", nil, "", azerr.InvalidURI},
		{"POST", a + "/sh1?restype=share", nil, "", azerr.UnsupportedHTTPVerb},
		{"GET", a + "/sh1?restype=share&comp=list", nil, "", azerr.InvalidQueryParameterValue},
		{"POST", a + "/sh1/d?restype=directory", nil, "", azerr.UnsupportedHTTPVerb},
		{"GET", a + "/sh1/d?restype=share", nil, "", azerr.InvalidQueryParameterValue},
		{"GET", a + "/sh1/d?restype=file", nil, "", azerr.InvalidQueryParameterValue},
		{"POST", a + "/sh1/f", nil, "", azerr.UnsupportedHTTPVerb},
		{"GET", a + "/sh1/f", map[string]string{"If-Match": "*"}, "", azerr.ConditionHeadersNotSupported},
		{"GET", a + "/sh1/f?comp=nothing", nil, "", azerr.InvalidQueryParameterValue},
		{"PUT", a + "/sh1/f?" + snap, nil, "", azerr.ShareSnapshotOperationNotSupported},
		{"PUT", a + "/sh1?restype=share&comp=metadata&" + snap, nil, "", azerr.ShareSnapshotOperationNotSupported},
		{"GET", a + "/sh1/f?sharesnapshot=bad", nil, "", azerr.InvalidQueryParameterValue},
		{"PUT", a + "/Bad_Share?restype=share", nil, "", azerr.InvalidResourceName},
		{"GET", a + "/sh1/a:b", nil, "", azerr.InvalidResourceName},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		op, code := routeOf(c.method, c.target, c.h)
		if op != c.op || code != c.code {
			t.Errorf("%s %s %v: got %q %q, want %q %q", c.method, c.target, c.h, op, code, c.op, c.code)
		}
		seen[c.op] = true
	}
	for _, name := range Operations() {
		if !seen[name] {
			t.Errorf("no dispatch case for %s", name)
		}
	}
}
