package blobrest

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
	for _, err := range blobRoutes.Verify() {
		t.Error(err)
	}
	// x-ms-structured-body: the REST reference pages of Put Blob, Put
	// Block, Put Page and Append Block list it for the request body, Get
	// Blob for the response; Get User Delegation Key takes bearer tokens
	// only.
	routetest.Rules(t, blobRoutes, map[string]server.Structured{
		"putBlob": server.StructuredRequest, "putBlock": server.StructuredRequest, "putPage": server.StructuredRequest,
		"appendBlock": server.StructuredRequest, "getBlob": server.StructuredResponse,
	}, "getUserDelegationKey")
}

// routeDispatch checks the cases against the Blob route table.
func routeDispatch(t *testing.T, cases []routetest.Case) {
	routetest.Dispatch(t, "127.0.0.1:10000", Operations(), func(hr *http.Request) (string, error) {
		r := parseReq(&server.Request{Request: hr})
		rt, err := (*Service)(nil).route(r)
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
	src := map[string]string{"x-ms-copy-source": "http://127.0.0.1:10000/devstoreaccount1/c/src"}
	c := routetest.C
	cases := []routetest.Case{
		c("GET", a+"/?restype=account&comp=properties", nil, "getAccountInfo", ""),
		c("HEAD", a+"/c?restype=account&comp=properties", nil, "getAccountInfo", ""),
		c("GET", a+"/c/b?restype=account&comp=properties", nil, "getAccountInfo", ""),
		c("GET", a+"/?comp=list", nil, "listContainers", ""),
		c("GET", a+"/?comp=list&restype=container", nil, "listContainers", ""),
		c("GET", a+"/?restype=service&comp=properties", nil, "getServiceProperties", ""),
		c("PUT", a+"/?restype=service&comp=properties", nil, "setServiceProperties", ""),
		c("GET", a+"/?restype=service&comp=stats", nil, "getServiceStats", ""),
		c("POST", a+"/?restype=service&comp=userdelegationkey", nil, "getUserDelegationKey", ""),
		c("GET", a+"/?comp=blobs&where=x", nil, "findBlobsByTagsAccount", ""),
		c("POST", a+"/?comp=batch", nil, "submitBatchAccount", ""),
		c("PUT", a+"/c?restype=container", nil, "createContainer", ""),
		c("GET", a+"/c?restype=container", nil, "getContainerProperties", ""),
		c("HEAD", a+"/c?restype=container", nil, "getContainerProperties", ""),
		c("DELETE", a+"/c?restype=container", nil, "deleteContainer", ""),
		c("PUT", a+"/c?restype=container&comp=undelete", nil, "restoreContainer", ""),
		c("PUT", a+"/c?restype=container&comp=metadata", nil, "setContainerMetadata", ""),
		c("GET", a+"/c?restype=container&comp=metadata", nil, "getContainerProperties", ""),
		c("GET", a+"/c?restype=container&comp=acl", nil, "getContainerACL", ""),
		c("HEAD", a+"/c?restype=container&comp=acl", nil, "getContainerACL", ""),
		c("PUT", a+"/c?restype=container&comp=acl", nil, "setContainerACL", ""),
		c("PUT", a+"/c?restype=container&comp=lease", map[string]string{"x-ms-lease-action": "acquire"}, "leaseContainer", ""),
		c("PUT", a+"/c?restype=container&comp=lease", map[string]string{"x-ms-lease-action": "break"}, "leaseContainer", ""),
		c("GET", a+"/c?restype=container&comp=list", nil, "listBlobs", ""),
		c("GET", a+"/c?restype=container&comp=blobs", nil, "findBlobsByTags", ""),
		c("POST", a+"/c?restype=container&comp=batch", nil, "submitBatch", ""),
		c("PUT", a+"/c/b?comp=tier", nil, "setBlobTier", ""),
		c("PUT", a+"/c/b?comp=tier&snapshot=2024-01-01T00:00:00.0000000Z", nil, "setBlobTier", ""),
		c("GET", a+"/c/b?comp=tags", nil, "getBlobTags", ""),
		c("GET", a+"/c/b?comp=tags&snapshot=2024-01-01T00:00:00.0000000Z", nil, "getBlobTags", ""),
		c("PUT", a+"/c/b?comp=tags", nil, "setBlobTags", ""),
		c("PUT", a+"/c/b?comp=immutabilityPolicies", nil, "setImmutabilityPolicy", ""),
		c("PUT", a+"/c/b?comp=immutabilityPolicies&snapshot=2024-01-01T00:00:00.0000000Z", nil, "setImmutabilityPolicy", ""),
		c("DELETE", a+"/c/b?comp=immutabilityPolicies", nil, "deleteImmutabilityPolicy", ""),
		c("PUT", a+"/c/b?comp=legalhold", nil, "setLegalHold", ""),
		c("PUT", a+"/c/b", map[string]string{"x-ms-copy-source": "u", "x-ms-blob-type": "BlockBlob"}, "putBlobFromURL", ""),
		c("PUT", a+"/c/b", src, "copyBlob", ""),
		c("PUT", a+"/c/b", map[string]string{"x-ms-blob-type": "BlockBlob"}, "putBlob", ""),
		c("PUT", a+"/c/dir\\b", nil, "putBlob", ""),
		c("GET", a+"/c/b", nil, "getBlob", ""),
		c("GET", a+"/c/b?snapshot=2024-01-01T00:00:00.0000000Z", nil, "getBlob", ""),
		c("HEAD", a+"/c/b", nil, "getBlobProperties", ""),
		c("DELETE", a+"/c/b", nil, "deleteBlob", ""),
		c("DELETE", a+"/c/b?snapshot=2024-01-01T00:00:00.0000000Z", nil, "deleteBlob", ""),
		c("PUT", a+"/c/b?comp=properties", nil, "setBlobProperties", ""),
		c("PUT", a+"/c/b?comp=metadata", nil, "setBlobMetadata", ""),
		c("GET", a+"/c/b?comp=metadata", nil, "getBlobProperties", ""),
		c("HEAD", a+"/c/b?comp=metadata", nil, "getBlobProperties", ""),
		c("PUT", a+"/c/b?comp=lease", map[string]string{"x-ms-lease-action": "acquire"}, "leaseBlob", ""),
		c("PUT", a+"/c/b?comp=lease", map[string]string{"x-ms-lease-action": "Break"}, "leaseBlob", ""),
		c("PUT", a+"/c/b?comp=snapshot", nil, "snapshotBlob", ""),
		c("PUT", a+"/c/b?comp=undelete", nil, "undeleteBlob", ""),
		c("PUT", a+"/c/b?comp=copy&copyid=x", nil, "abortCopyBlob", ""),
		c("PUT", a+"/c/b?comp=block&blockid=x", src, "putBlockFromURL", ""),
		c("PUT", a+"/c/b?comp=block&blockid=x", nil, "putBlock", ""),
		c("PUT", a+"/c/b?comp=blocklist", nil, "putBlockList", ""),
		c("GET", a+"/c/b?comp=blocklist", nil, "getBlockList", ""),
		c("PUT", a+"/c/b?comp=page", src, "putPageFromURL", ""),
		c("PUT", a+"/c/b?comp=page", nil, "putPage", ""),
		c("GET", a+"/c/b?comp=pagelist", nil, "getPageRanges", ""),
		c("PUT", a+"/c/b?comp=appendblock", src, "appendBlockFromURL", ""),
		c("PUT", a+"/c/b?comp=appendblock", nil, "appendBlock", ""),
		c("PUT", a+"/c/b?comp=seal", nil, "sealBlob", ""),
		c("PUT", a+"/c/b?comp=expiry", nil, "setBlobExpiry", ""),
		c("GET", a+"/c/b?restype=container", nil, "getBlob", ""),

		// No operation: the errors of the URL.
		c("GET", a+"/", nil, "", azerr.UnsupportedHTTPVerb),
		c("GET", a+"/?restype=container", nil, "", azerr.InvalidQueryParameterValue),
		c("GET", a+"/c", nil, "", azerr.InvalidURI),
		c("GET", a+"/c?restype=directory", nil, "", azerr.InvalidQueryParameterValue),
		c("PUT", a+"/c?restype=account&comp=properties", nil, "", azerr.InvalidQueryParameterValue),
		c("PUT", a+"/c?restype=container&comp=list", nil, "", azerr.InvalidQueryParameterValue),
		c("PATCH", a+"/c?restype=container", nil, "", azerr.UnsupportedHTTPVerb),
		c("PUT", a+"/c/b?snapshot=2024-01-01T00:00:00.0000000Z", nil, "", azerr.InvalidQueryParameterValue),
		c("PUT", a+"/c/b?comp=tags&snapshot=2024-01-01T00:00:00.0000000Z", nil, "", azerr.InvalidQueryParameterValue),
		c("POST", a+"/c/b?comp=nothing&snapshot=2024-01-01T00:00:00.0000000Z", nil, "", azerr.InvalidQueryParameterValue),
		c("POST", a+"/c/b", nil, "", azerr.UnsupportedHTTPVerb),
		c("GET", a+"/c/b?comp=nothing", nil, "", azerr.InvalidQueryParameterValue),
	}
	routeDispatch(t, cases)
}

// Every Blob operation Azure has and this server does not serve answers
// 501 NotImplemented naming it, not a generic InvalidQueryParameterValue.
func TestUnsupportedOperationsNamed(t *testing.T) {
	const a = "/devstoreaccount1"
	c := routetest.C
	cases := []routetest.Case{
		c("POST", a+"/c/b?comp=query", nil, "Query Blob Contents", ""),
		c("PUT", a+"/c/b?comp=incrementalcopy", map[string]string{"x-ms-copy-source": "http://127.0.0.1:10000/devstoreaccount1/c/p?snapshot=x"}, "Incremental Copy Blob", ""),
		c("PUT", a+"/c?restype=container&comp=rename", nil, "Rename Container", ""),
	}
	routetest.NotSupported(t, "127.0.0.1:10000", func(hr *http.Request) (string, error) {
		rt, err := (*Service)(nil).route(parseReq(&server.Request{Request: hr}))
		if err != nil {
			return "", err
		}
		return rt.Name, nil
	}, cases)
	if len(cases) != len(blobUnsupported) {
		t.Errorf("%d cases for %d unsupported operations", len(cases), len(blobUnsupported))
	}
}

// parseReq parses sr as blobDoor does.
func parseReq(sr *server.Request) *req { return newReq(sr, blobPaths.Split(sr)) }
