package filerest

import (
	"errors"
	"net/http"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/server/routetest"
)

// TestRoutesTable checks the route table's invariants: a SAS rule or
// Shared Key only for every entry, names shared only by variants of one
// operation, and no entry shadowed by an earlier one.
func TestRoutesTable(t *testing.T) {
	for _, err := range fileRoutes.Verify() {
		t.Error(err)
	}
	// x-ms-structured-body: Put Range's request body, Get File's response
	// (their REST reference pages).
	routetest.Rules(t, fileRoutes, map[string]server.Structured{
		"putRange": server.StructuredRequest, "getFile": server.StructuredResponse,
	}, "getUserDelegationKey")
}

// routeDispatch checks the cases against the File route table.
func routeDispatch(t *testing.T, cases []routetest.Case) {
	routetest.Dispatch(t, "127.0.0.1:10003", Operations(), func(hr *http.Request) (string, error) {
		r := parseReq(&server.Request{Request: hr})
		rt, err := (*Service)(nil).prepare(r)
		if err != nil {
			return "", err
		}
		if r.Op != rt.Name || r.route != rt {
			return "", errors.New("operation not recorded")
		}
		return rt.Name, nil
	}, cases)
}

// TestRoutesDispatch: a representative request of every operation
// dispatches to it, and the URLs no operation takes keep their errors.
func TestRoutesDispatch(t *testing.T) {
	const a = "/devstoreaccount1"
	const snap = "sharesnapshot=2024-01-01T00:00:00.0000000Z"
	src := map[string]string{"x-ms-copy-source": "http://127.0.0.1:10003/devstoreaccount1/s/src"}
	c := routetest.C
	cases := []routetest.Case{
		c("GET", a+"/?comp=list", nil, "listShares", ""),
		c("GET", a+"/?restype=service&comp=properties", nil, "getServiceProperties", ""),
		c("PUT", a+"/?restype=service&comp=properties", nil, "setServiceProperties", ""),
		c("POST", a+"/?restype=service&comp=userdelegationkey", nil, "getUserDelegationKey", ""),
		c("PUT", a+"/sh1?restype=share", nil, "createShare", ""),
		c("PUT", a+"/sh1?restype=share&comp=undelete", nil, "restoreShare", ""),
		c("GET", a+"/sh1?restype=share", nil, "getShareProperties", ""),
		c("HEAD", a+"/sh1?restype=share&"+snap, nil, "getShareProperties", ""),
		c("GET", a+"/sh1?restype=share&comp=metadata", nil, "getShareProperties", ""),
		c("DELETE", a+"/sh1?restype=share", nil, "deleteShare", ""),
		c("DELETE", a+"/sh1?restype=share&"+snap, nil, "deleteShare", ""),
		c("PUT", a+"/sh1?restype=share&comp=metadata", nil, "setShareMetadata", ""),
		c("PUT", a+"/sh1?restype=share&comp=properties", nil, "setShareProperties", ""),
		c("PUT", a+"/sh1?restype=share&comp=snapshot", nil, "snapshotShare", ""),
		c("PUT", a+"/sh1?restype=share&comp=snapshot&"+snap, nil, "snapshotShare", ""),
		c("GET", a+"/sh1?restype=share&comp=acl", nil, "getShareACL", ""),
		c("PUT", a+"/sh1?restype=share&comp=acl", nil, "setShareACL", ""),
		c("GET", a+"/sh1?restype=share&comp=stats", nil, "getShareStats", ""),
		c("PUT", a+"/sh1?restype=share&comp=filepermission", nil, "createPermission", ""),
		c("GET", a+"/sh1?restype=share&comp=filepermission", nil, "getPermission", ""),
		c("PUT", a+"/sh1?restype=share&comp=lease", nil, "leaseShare", ""),
		c("PUT", a+"/sh1?restype=share&comp=lease&"+snap, nil, "leaseShare", ""),
		c("PUT", a+"/sh1/d?restype=directory", nil, "createDirectory", ""),
		c("GET", a+"/sh1?restype=directory", nil, "getDirectoryProperties", ""),
		c("HEAD", a+"/sh1/d?restype=directory&comp=metadata", nil, "getDirectoryProperties", ""),
		c("DELETE", a+"/sh1/d?restype=directory", nil, "deleteDirectory", ""),
		c("PUT", a+"/sh1/d?restype=directory&comp=properties", nil, "setDirectoryProperties", ""),
		c("PUT", a+"/sh1/d?restype=directory&comp=metadata", nil, "setDirectoryMetadata", ""),
		c("GET", a+"/sh1?restype=directory&comp=list&"+snap, nil, "listFilesAndDirectories", ""),
		c("GET", a+"/sh1/d?restype=directory&comp=listhandles", nil, "listHandles", ""),
		c("GET", a+"/sh1?comp=listhandles", nil, "listHandles", ""),
		c("GET", a+"/sh1/f?comp=listhandles", nil, "listHandles", ""),
		c("PUT", a+"/sh1/d?restype=directory&comp=forceclosehandles", nil, "forceCloseHandles", ""),
		c("PUT", a+"/sh1?comp=forceclosehandles", nil, "forceCloseHandles", ""),
		c("PUT", a+"/sh1/f?comp=forceclosehandles", nil, "forceCloseHandles", ""),
		c("PUT", a+"/sh1/d?restype=directory&comp=rename", nil, "renameDirectory", ""),
		c("PUT", a+"/sh1/f", src, "copyFile", ""),
		c("PUT", a+"/sh1/f", nil, "createFile", ""),
		c("GET", a+"/sh1/f", nil, "getFile", ""),
		c("GET", a+"/sh1/f?"+snap, nil, "getFile", ""),
		c("HEAD", a+"/sh1/f", nil, "getFileProperties", ""),
		c("GET", a+"/sh1/f?comp=metadata", nil, "getFileProperties", ""),
		c("DELETE", a+"/sh1/f", nil, "deleteFile", ""),
		c("PUT", a+"/sh1/f?comp=properties", nil, "setFileProperties", ""),
		c("PUT", a+"/sh1/f?comp=metadata", nil, "setFileMetadata", ""),
		c("PUT", a+"/sh1/f?comp=range", src, "putRangeFromURL", ""),
		c("PUT", a+"/sh1/f?comp=range", nil, "putRange", ""),
		c("GET", a+"/sh1/f?comp=rangelist", nil, "listRanges", ""),
		c("PUT", a+"/sh1/f?comp=copy&copyid=x", nil, "abortCopyFile", ""),
		c("PUT", a+"/sh1/f?comp=lease", nil, "leaseFile", ""),
		c("PUT", a+"/sh1/f?comp=rename", nil, "renameFile", ""),

		// No operation: the errors of the URL.
		c("GET", a+"/", nil, "", azerr.UnsupportedHTTPVerb),
		c("GET", a+"/?restype=share", nil, "", azerr.InvalidQueryParameterValue),
		c("GET", a+"/sh1", nil, "", azerr.InvalidURI),
		c("POST", a+"/sh1?restype=share", nil, "", azerr.UnsupportedHTTPVerb),
		c("GET", a+"/sh1?restype=share&comp=list", nil, "", azerr.InvalidQueryParameterValue),
		c("POST", a+"/sh1/d?restype=directory", nil, "", azerr.UnsupportedHTTPVerb),
		c("GET", a+"/sh1/d?restype=share", nil, "", azerr.InvalidQueryParameterValue),
		c("GET", a+"/sh1/d?restype=file", nil, "", azerr.InvalidQueryParameterValue),
		c("POST", a+"/sh1/f", nil, "", azerr.UnsupportedHTTPVerb),
		c("GET", a+"/sh1/f", map[string]string{"If-Match": "*"}, "", azerr.ConditionHeadersNotSupported),
		c("GET", a+"/sh1/f?comp=nothing", nil, "", azerr.InvalidQueryParameterValue),
		c("PUT", a+"/sh1/f?"+snap, nil, "", azerr.ShareSnapshotOperationNotSupported),
		c("PUT", a+"/sh1?restype=share&comp=metadata&"+snap, nil, "", azerr.ShareSnapshotOperationNotSupported),
		c("GET", a+"/sh1/f?sharesnapshot=bad", nil, "", azerr.InvalidQueryParameterValue),
		c("PUT", a+"/Bad_Share?restype=share", nil, "", azerr.InvalidResourceName),
		c("GET", a+"/sh1/a:b", nil, "", azerr.InvalidResourceName),
	}
	routeDispatch(t, cases)
}

// Every File operation Azure has and this server does not serve answers
// 501 NotImplemented naming it.
func TestUnsupportedOperationsNamed(t *testing.T) {
	var cases []routetest.Case
	routetest.NotSupported(t, "127.0.0.1:10003", func(hr *http.Request) (string, error) {
		rt, err := (*Service)(nil).prepare(parseReq(&server.Request{Request: hr}))
		if err != nil {
			return "", err
		}
		return rt.Name, nil
	}, cases)
	if len(cases) != len(fileUnsupported) {
		t.Errorf("%d cases for %d unsupported operations", len(cases), len(fileUnsupported))
	}
}

// parseReq parses sr as fileDoor does.
func parseReq(sr *server.Request) *req { return newReq(sr, filePaths.Split(sr)) }
