package blobrest

import (
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcpropsrest"
)

// blobPaths splits a Blob URL into its level and names.
var blobPaths = &server.Paths{Account: lAccount, First: lContainer, Rest: lBlob}

// blobUnsupported lists the Blob operations Azure has and this server
// does not serve (yet), by restype/comp: each answers 501 NotImplemented
// naming it (server.NotSupported).
var blobUnsupported = server.Unsupported{
	// Query Blob Contents: POST {blob}?comp=query.
	"/query": "Query Blob Contents",
	// Incremental Copy Blob: PUT {page blob}?comp=incrementalcopy.
	"/incrementalcopy": "Incremental Copy Blob",
	// Rename Container: PUT ?restype=container&comp=rename.
	"container/rename": "Rename Container",
}

// blobRoutes is the Blob service's route table (Blob service REST API,
// https://learn.microsoft.com/en-us/rest/api/storageservices/blob-service-rest-api).
// Entries are tried in order. Built in init, then handed to the batch
// handler (batchRoutes), which routes a batch's parts through it.
var blobRoutes *server.Routes[handler]

func init() {
	const (
		get, head, put, post, del = server.GET, server.HEAD, server.PUT, server.POST, server.DELETE
		star                      = server.Any
	)
	blobRoutes = server.NewRoutes([]route{
		// Get Account Information is valid on every level, with any SAS
		// valid for what the URL addresses (Get Account Information,
		// https://learn.microsoft.com/en-us/rest/api/storageservices/get-account-information).
		{Methods: get | head, Levels: lAll, Restype: "account", Comp: "properties", Name: "getAccountInfo", Handler: (*Service).getAccountInfo,
			SAS: server.SASRule{Resource: auth.ServiceLevel}, Flags: fSASAtLevel},

		// Account.
		{Methods: get, Levels: lAccount, Restype: star, Comp: "list", Name: "listContainers", Handler: (*Service).listContainers,
			SAS: server.SASRule{Resource: auth.ServiceLevel, AnyOf: "l"}},
		{Methods: get, Levels: lAccount, Restype: "service", Comp: "properties", Name: "getServiceProperties", Handler: svcpropsrest.GetProperties[*Service, *req], SAS: sasSvcRead},
		{Methods: put, Levels: lAccount, Restype: "service", Comp: "properties", Name: "setServiceProperties", Handler: svcpropsrest.SetProperties[*Service, *req], SAS: sasSvcWrite},
		{Methods: get, Levels: lAccount, Restype: "service", Comp: "stats", Name: "getServiceStats", Handler: svcpropsrest.GetStats[*Service, *req], SAS: sasSvcRead},
		// No SAS reaches it: the key is for bearer-token callers.
		{Methods: post, Levels: lAccount, Restype: "service", Comp: "userdelegationkey", Name: "getUserDelegationKey", Handler: (*Service).getUserDelegationKey, SharedKeyOnly: true, BearerOnly: true},
		{Methods: get, Levels: lAccount, Restype: star, Comp: "blobs", Name: "findBlobsByTagsAccount", Handler: (*Service).findBlobsByTags,
			SAS: server.SASRule{Resource: auth.ServiceLevel, AnyOf: "f"}},
		// A batch needs no permission of its own: each sub-request is
		// authorized by its own signature.
		{Methods: post, Levels: lAccount, Restype: star, Comp: "batch", Name: "submitBatchAccount", Handler: (*Service).submitBatch,
			SAS: server.SASRule{Resource: auth.ServiceLevel}},

		// Container (restype=container, checked before the table).
		{Methods: put, Levels: lContainer, Restype: "container", Name: "createContainer", Handler: (*Service).createContainer,
			SAS: server.SASRule{Resource: auth.ContainerLevel, AnyOf: "cw", AccountOnly: true}},
		{Methods: get | head, Levels: lContainer, Restype: "container", Name: "getContainerProperties", Handler: (*Service).getContainerProperties, SAS: sasContRead, Flags: fPublicContainer},
		// Restore Container: the container is created again, as Create
		// Container does (account SAS, c or w).
		{Methods: put, Levels: lContainer, Restype: "container", Comp: "undelete", Name: "restoreContainer", Handler: (*Service).restoreContainer,
			SAS: server.SASRule{Resource: auth.ContainerLevel, AnyOf: "cw", AccountOnly: true}},
		{Methods: del, Levels: lContainer, Restype: "container", Name: "deleteContainer", Handler: (*Service).deleteContainer,
			SAS: server.SASRule{Resource: auth.ContainerLevel, AnyOf: "d", AccountOnly: true}},
		{Methods: put, Levels: lContainer, Restype: "container", Comp: "metadata", Name: "setContainerMetadata", Handler: (*Service).setContainerMetadata, SAS: sasContW},
		{Methods: get | head, Levels: lContainer, Restype: "container", Comp: "metadata", Name: "getContainerProperties", Handler: (*Service).getContainerProperties, SAS: sasContRead, Flags: fPublicContainer},
		// Container ACLs are Shared Key only (Create an account SAS: an
		// account SAS does not reach Get or Set Container ACL).
		{Methods: get | head, Levels: lContainer, Restype: "container", Comp: "acl", Name: "getContainerACL", Handler: (*Service).getContainerACL, SharedKeyOnly: true},
		{Methods: put, Levels: lContainer, Restype: "container", Comp: "acl", Name: "setContainerACL", Handler: (*Service).setContainerACL, SharedKeyOnly: true},
		{Methods: put, Levels: lContainer, Restype: "container", Comp: "lease", Headers: []server.Cond{server.Is(hLeaseAction, "break")}, Name: "leaseContainer", Handler: (*Service).leaseContainer,
			SAS: server.SASRule{Resource: auth.ContainerLevel, AnyOf: "w", SinceAnyOf: "d", Since: "2017-07-29", AccountOnly: true}},
		{Methods: put, Levels: lContainer, Restype: "container", Comp: "lease", Name: "leaseContainer", Handler: (*Service).leaseContainer, SAS: sasContW},
		{Methods: get, Levels: lContainer, Restype: "container", Comp: "list", Name: "listBlobs", Handler: (*Service).listBlobs,
			SAS: server.SASRule{Resource: auth.ContainerLevel, AnyOf: "l"}, Flags: fPublicContainer},
		{Methods: get, Levels: lContainer, Restype: "container", Comp: "blobs", Name: "findBlobsByTags", Handler: (*Service).findBlobsByTags,
			SAS: server.SASRule{Resource: auth.ContainerLevel, AnyOf: "f"}},
		{Methods: post, Levels: lContainer, Restype: "container", Comp: "batch", Name: "submitBatch", Handler: (*Service).submitBatch,
			SAS: server.SASRule{Resource: auth.ContainerLevel}},

		// Blob (restype is not consulted).
		{Methods: put, Levels: lBlob, Restype: star, Comp: "tier", Name: "setBlobTier", Handler: (*Service).setBlobTier, SAS: sasWrite, Flags: fOnSnapshot | fBatchable | fOnVersion},
		{Methods: get | head, Levels: lBlob, Restype: star, Comp: "tags", Name: "getBlobTags", Handler: (*Service).getBlobTags, SAS: sasTags},
		{Methods: put, Levels: lBlob, Restype: star, Comp: "tags", Name: "setBlobTags", Handler: (*Service).setBlobTags, SAS: sasTags, Flags: fOnVersion},
		{Methods: put, Levels: lBlob, Restype: star, Headers: []server.Cond{server.Has(hCopySource), server.Has(hBlobType)}, Name: "putBlobFromURL", Handler: (*Service).putBlobFromURL, SAS: sasCreate},
		{Methods: put, Levels: lBlob, Restype: star, Headers: []server.Cond{server.Has(hCopySource), server.Lacks(hBlobType)}, Name: "copyBlob", Handler: (*Service).copyBlob, SAS: sasCreate, Flags: fNoCPK},
		{Methods: put, Levels: lBlob, Restype: star, Headers: []server.Cond{server.Lacks(hCopySource)}, Name: "putBlob", Handler: (*Service).putBlob, SAS: sasCreate, Structured: server.StructuredRequest},
		{Methods: get, Levels: lBlob, Restype: star, Name: "getBlob", Handler: (*Service).getBlob, SAS: sasRead, Flags: fPublicBlob, Structured: server.StructuredResponse},
		{Methods: head, Levels: lBlob, Restype: star, Name: "getBlobProperties", Handler: (*Service).getBlobProperties, SAS: sasRead, Flags: fPublicBlob},
		// Delete Blob of a version takes the delete-version permission,
		// x, instead of d (Create a service SAS and Create an account
		// SAS, "Delete version (x)": "Permits deletion of a blob
		// version").
		{Methods: del, Levels: lBlob, Restype: star, Query: []server.Cond{server.Has("versionid")}, Name: "deleteBlob", Handler: (*Service).deleteBlob,
			SAS: server.SASRule{Resource: auth.ObjectLevel, AnyOf: "x"}, Flags: fBatchable},
		{Methods: del, Levels: lBlob, Restype: star, Name: "deleteBlob", Handler: (*Service).deleteBlob,
			SAS: server.SASRule{Resource: auth.ObjectLevel, AnyOf: "d"}, Flags: fBatchable},
		{Methods: put, Levels: lBlob, Restype: star, Comp: "properties", Name: "setBlobProperties", Handler: (*Service).setBlobProperties, SAS: sasWrite},
		{Methods: put, Levels: lBlob, Restype: star, Comp: "metadata", Name: "setBlobMetadata", Handler: (*Service).setBlobMetadata, SAS: sasWrite},
		{Methods: get | head, Levels: lBlob, Restype: star, Comp: "metadata", Name: "getBlobProperties", Handler: (*Service).getBlobProperties, SAS: sasRead, Flags: fPublicBlob},
		{Methods: put, Levels: lBlob, Restype: star, Comp: "lease", Headers: []server.Cond{server.Is(hLeaseAction, "break")}, Name: "leaseBlob", Handler: (*Service).leaseBlob,
			SAS: server.SASRule{Resource: auth.ObjectLevel, AnyOf: "w", SinceAnyOf: "d", Since: "2017-07-29"}},
		{Methods: put, Levels: lBlob, Restype: star, Comp: "lease", Name: "leaseBlob", Handler: (*Service).leaseBlob, SAS: sasWrite},
		{Methods: put, Levels: lBlob, Restype: star, Comp: "snapshot", Name: "snapshotBlob", Handler: (*Service).snapshotBlob, SAS: sasCreate},
		{Methods: put, Levels: lBlob, Restype: star, Comp: "undelete", Name: "undeleteBlob", Handler: (*Service).undeleteBlob, SAS: sasWrite},
		{Methods: put, Levels: lBlob, Restype: star, Comp: "copy", Name: "abortCopyBlob", Handler: (*Service).abortCopyBlob, SAS: sasWrite},
		{Methods: put, Levels: lBlob, Restype: star, Comp: "block", Headers: []server.Cond{server.Has(hCopySource)}, Name: "putBlockFromURL", Handler: (*Service).putBlockFromURL, SAS: sasCreate},
		{Methods: put, Levels: lBlob, Restype: star, Comp: "block", Headers: []server.Cond{server.Lacks(hCopySource)}, Name: "putBlock", Handler: (*Service).putBlock, SAS: sasCreate, Structured: server.StructuredRequest},
		{Methods: put, Levels: lBlob, Restype: star, Comp: "blocklist", Name: "putBlockList", Handler: (*Service).putBlockList, SAS: sasCreate},
		{Methods: get, Levels: lBlob, Restype: star, Comp: "blocklist", Name: "getBlockList", Handler: (*Service).getBlockList, SAS: sasRead, Flags: fPublicBlob},
		{Methods: put, Levels: lBlob, Restype: star, Comp: "page", Headers: []server.Cond{server.Has(hCopySource)}, Name: "putPageFromURL", Handler: (*Service).putPageFromURL, SAS: sasWrite},
		{Methods: put, Levels: lBlob, Restype: star, Comp: "page", Headers: []server.Cond{server.Lacks(hCopySource)}, Name: "putPage", Handler: (*Service).putPage, SAS: sasWrite, Structured: server.StructuredRequest},
		{Methods: get, Levels: lBlob, Restype: star, Comp: "pagelist", Name: "getPageRanges", Handler: (*Service).getPageRanges, SAS: sasRead, Flags: fPublicBlob},
		{Methods: put, Levels: lBlob, Restype: star, Comp: "appendblock", Headers: []server.Cond{server.Has(hCopySource)}, Name: "appendBlockFromURL", Handler: (*Service).appendBlockFromURL, SAS: sasAppend},
		{Methods: put, Levels: lBlob, Restype: star, Comp: "appendblock", Headers: []server.Cond{server.Lacks(hCopySource)}, Name: "appendBlock", Handler: (*Service).appendBlock, SAS: sasAppend, Structured: server.StructuredRequest},
		{Methods: put, Levels: lBlob, Restype: star, Comp: "seal", Name: "sealBlob", Handler: (*Service).sealBlob, SAS: sasWrite},
		{Methods: put, Levels: lBlob, Restype: star, Comp: "expiry", Name: "setBlobExpiry", Handler: (*Service).setBlobExpiry, SAS: sasWrite},
		// Version-level immutability (immutability.go), on a blob, a
		// snapshot or a version.
		{Methods: put, Levels: lBlob, Restype: star, Comp: "immutabilityPolicies", Name: "setImmutabilityPolicy", Handler: (*Service).setImmutabilityPolicy, SAS: sasImmutability, Flags: fOnSnapshot | fOnVersion},
		{Methods: del, Levels: lBlob, Restype: star, Comp: "immutabilityPolicies", Name: "deleteImmutabilityPolicy", Handler: (*Service).deleteImmutabilityPolicy, SAS: sasImmutability},
		{Methods: put, Levels: lBlob, Restype: star, Comp: "legalhold", Name: "setLegalHold", Handler: (*Service).setLegalHold, SAS: sasImmutability, Flags: fOnSnapshot | fOnVersion},
	})
	batchRoutes = blobRoutes
}

// Operations returns the Blob service's operation names (the metrics
// labels), each once.
func Operations() []string { return blobRoutes.Names() }

// ServeAzure routes a Blob REST request to its operation (blobDoor).
func (s *Service) ServeAzure(w http.ResponseWriter, sr *server.Request) error {
	return blobDoor.Serve(s, w, sr)
}

// blobDoor is the Blob front end's part of the dispatch: an anonymous
// request is decided after routing, by the container's public access
// (authorizeAnonymous); the extras are the change feed's read-only
// container and the customer-provided key.
var blobDoor = &server.Door[*Service, *req]{
	Paths: blobPaths,
	Parse: newReq,
	Route: (*Service).route,
	Target: func(s *Service, r *req) (server.SASTarget, auth.PolicyLookup) {
		return server.SASTarget{Container: r.container, Path: r.name}, s.policies(r, r.container)
	},
	AuthorizeSAS: (*Service).authorizeSAS,
	Anonymous:    (*Service).authorizeAnonymous,
	Extras:       (*Service).extras,
}

// extras checks an authorized request against the change feed's
// read-only container and reads its customer-provided key, which an
// operation flagged fNoCPK refuses; with a key, the answer echoes its
// SHA-256 (cpkWriter).
func (s *Service) extras(w http.ResponseWriter, r *req) (http.ResponseWriter, error) {
	if err := feedReadOnly(r); err != nil {
		return nil, err
	}
	var err error
	if r.cpk, err = parseCPK(r.Header, r.HTTPS, &cpkBlob); err != nil {
		return nil, err
	}
	if r.cpk != nil {
		if r.route.Flags&fNoCPK != 0 {
			return nil, errCPKCopy()
		}
		w = &cpkWriter{ResponseWriter: w, sha: r.cpk.SHA}
	}
	return w, nil
}

// newReq parses what routing needs from sr: the container, the blob
// name and the snapshot.
func newReq(sr *server.Request, p server.Path) *req {
	r := &req{Request: sr, q: sr.URL.Query(), level: p.Level, container: p.First, name: p.Rest}
	// Azure takes a '\' in a blob name for a '/': the blob is stored,
	// listed, authorized by SAS and answered under the name with '/'
	// (azure-sdk-for-js special-naming.spec.ts, recorded against Azure:
	// "Azure Storage Server will replace "\" with "/" in the blob names",
	// so its SAS is signed for, and its listing prefix given as, the '/'
	// form). Shared Key signatures cover the URL as sent and were checked
	// before this point.
	r.name = blobName(r.name)
	r.snapshot = r.q.Get("snapshot")
	r.versionID = r.q.Get("versionid")
	return r
}

// route finds r's operation in blobRoutes and records it on r. The
// checks around the table keep the errors of a URL no entry matches: a
// container URL without restype=container, and a write to a blob
// snapshot.
func (s *Service) route(r *req) (*route, error) {
	sel := blobRoutes.Selectors(r.q)
	level := r.level
	m := server.MethodOf(r.Method)
	rt := blobRoutes.Match(m, level, &sel, r.Header, r.q)
	switch level {
	case lAccount:
		if rt == nil && sel.Restype == "container" {
			// a container operation without a container name
			return nil, azerr.InvalidQuery("restype", sel.Restype)
		}
	case lContainer:
		// Every container entry but Get Account Information takes
		// restype=container.
		if rt == nil && sel.Restype != "container" {
			if sel.Restype != "" {
				return nil, azerr.InvalidQuery("restype", sel.Restype)
			}
			return nil, azerr.New(azerr.InvalidURI)
		}
	case lBlob:
		if r.snapshot != "" && m&(server.PUT|server.POST) != 0 && (rt == nil || rt.Flags&fOnSnapshot == 0) {
			return nil, azerr.Newf(azerr.InvalidQueryParameterValue, "Cannot perform this operation on a blob snapshot.").With("QueryParameterName", "snapshot").With("QueryParameterValue", r.snapshot)
		}
		if err := checkVersionTarget(r, m, rt); err != nil {
			return nil, err
		}
	}
	if rt == nil {
		return nil, blobUnsupported.NoRoute(sel)
	}
	r.route, r.Op = rt, rt.Name
	return rt, nil
}
