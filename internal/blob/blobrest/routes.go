package blobrest

import (
	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcpropsrest"
)

// handler is one REST operation: a method of Service.
type handler = func(s *Service, r *req) (server.Response, error)

// route is one entry of the Blob route table.
type route = server.Route[handler]

// The resource levels of a Blob URL: /{account}, /{account}/{container},
// /{account}/{container}/{blob}.
const (
	lAccount server.Level = 1 << iota
	lContainer
	lBlob
	lAll = lAccount | lContainer | lBlob
)

// blobPaths splits a Blob URL into its level and names.
var blobPaths = &server.Paths{Account: lAccount, First: lContainer, Rest: lBlob}

// Route flags.
const (
	// fOnSnapshot: a PUT allowed on a blob snapshot (?snapshot=); every
	// other PUT or POST there is refused (400 InvalidQueryParameterValue).
	fOnSnapshot uint32 = 1 << iota
	// fSASAtLevel: the SAS rule's resource type is the level the URL
	// addresses (Get Account Information takes any SAS valid for it).
	fSASAtLevel
	// fPublicBlob: an anonymous request may call it when the container's
	// public access level is "blob" or "container"; fPublicContainer:
	// when it is "container" (Manage anonymous read access to containers
	// and blobs, "Features available to anonymous users": Get Blob, Get
	// Blob Properties, Get Blob Metadata, Get Block List and Get Page
	// Ranges for both levels; Get Container Properties, Get Container
	// Metadata and List Blobs for full public read access only).
	fPublicBlob
	fPublicContainer
	// fBatchable: a Blob Batch may carry it as a sub-request (Blob
	// Batch: "two types of subrequests: Set Blob Tier for block blobs
	// and Delete Blob"), all of one operation.
	fBatchable
	// fOnVersion: a PUT allowed on a blob version (?versionid=); every
	// other PUT or POST there is refused (versions.go).
	fOnVersion
	// fNoCPK: the operation refuses a customer-provided key (Copy Blob:
	// errCPKCopy).
	fNoCPK
)

const (
	hCopySource  = "x-ms-copy-source"
	hBlobType    = "x-ms-blob-type"
	hLeaseAction = "x-ms-lease-action"
)

// SAS rules (Create an account SAS, "Permissions by operation",
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-account-sas;
// Create a service SAS, "Permissions for a directory, container, or blob",
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas).
// An account SAS's w creates as c does (containers, blobs, snapshots,
// copies), and service-level reads and writes (service properties, stats)
// take r and w with srt=s. A service SAS reaches blobs and, for sr=c,
// listing them: the container itself (properties, metadata, lease, delete,
// create) is for an account SAS only; its Create (c) writes a new blob,
// snapshots a blob or copies to a new blob. From version 2017-07-29 Delete
// (d) also breaks a blob's lease, and (account SAS) a container's.
var (
	sasSvcRead  = server.SASRule{Resource: auth.ServiceLevel, AnyOf: "r", AccountOnly: true}
	sasSvcWrite = server.SASRule{Resource: auth.ServiceLevel, AnyOf: "w", AccountOnly: true}
	sasContRead = server.SASRule{Resource: auth.ContainerLevel, AnyOf: "r", AccountOnly: true}
	sasContW    = server.SASRule{Resource: auth.ContainerLevel, AnyOf: "w", AccountOnly: true}
	sasRead     = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "r"}
	sasCreate   = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "cw"}
	sasWrite    = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "w"}
	sasAppend   = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "aw"}
	sasTags     = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "t"}
	// sasImmutability is i, "Set or delete the immutability policy or
	// legal hold on a blob" (Create a service SAS; Create an account SAS).
	sasImmutability = server.SASRule{Resource: auth.ObjectLevel, AnyOf: "i"}
)

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
// Entries are tried in order. Built in init: the handlers' bodies reach
// the table again (a batch's parts are routed through it).
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
}

// Operations returns the Blob service's operation names (the metrics
// labels), each once.
func Operations() []string { return blobRoutes.Names() }
