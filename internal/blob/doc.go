// Package blob is the Azure Blob service's domain: typed operations over
// the kv store and chunk store, with Azure's concurrency model (ETags and
// conditions, blob and container leases) decided inside one serializable
// transaction per operation. It imports no net/http: its REST front end
// is internal/blob/blobrest, and the dfs front end (internal/datalake)
// calls the same methods. An account's names are flat or hierarchical
// (Layout, model.go; layoutOf, layout.go): flat.go and hier.go implement
// it, and the hierarchical namespace's domain methods are the hns*.go
// files, over the tree of internal/hns/ns.
//
// # Keys (kv tuple encoding, internal/kv/key.go)
//
//	| key | value |
//	|---|---|
//	| `c / account / container` | container record (JSON): ETag, times, metadata, lease, public access, ACL |
//	| `b / account / container / blob / snapshot` | blob record; the base blob has snapshot `""` and sorts before its snapshots |
//	| `bd / account / container / blob / snapshot` | a soft-deleted blob (snapshot `""`) or snapshot: the record plus its deletion time and expiry |
//	| `bx / expiry / account / container / blob / snapshot` | expiry index of the `bd` records (and, with snapshot `v:<version id>`, of soft-deleted versions), for the collector |
//	| `bv / account / container / blob / versionid` | a previous version of a blob (accounts with versioning on): the record as it was, its data references, and its deletion time and expiry when soft-deleted |
//	| `u / account / container / blob / blockid` | an uncommitted block: size, data parts, upload sequence |
//	| `cx / account / container / version` | a soft-deleted container (`--container-soft-delete`): its record as it was, deletion time, expiry, whether its records are still moving |
//	| `cm / account / container` | a move of a container's records between its name and the alias of a deleted version, in progress |
//	| `x / dataid` | a data item: 4-byte reference count + inline bytes (ids `i…`) or a chunk marker (ids `c<chunk id>`) |
//	| `g / due-time / dataid` | a data item whose references dropped to zero, to be freed after the grace period |
//	| `sp / account / blob` | Blob service properties |
//	| `changelog / account / n` | the change log's counter: last sequence number and its hour (`internal/changelog`) |
//	| `changelog / account / r` + seq (8 bytes) | one change feed record (JSON), appended in the change's transaction |
//	| `changelog / account / h` + hour (8 bytes) | the first sequence number of an hour of the change feed |
//	| `events / subscription / pos`, `lease`, `validated` | an event subscription's delivery position, its delivery lease (holder and expiry) and its validated endpoint (`internal/events`) |
//
// Components are escaped and terminated, so `b/acct/c` never shares a prefix
// with `b/acct/cx`, and List Blobs with prefix/marker/delimiter is a range scan.
// The keys of a hierarchical account's namespace (`dl…`: nodes by parent,
// garbage, expiry, soft-deleted paths, the tag index, learned user names)
// and of its files' content and snapshots are listed in docs/datalake.md
// ("Key layout", "File content", "Snapshots of files").
//
// Container soft delete (`domain_containersd.go`, `--container-soft-delete
// DAYS`; Azure's "Soft delete for containers", Restore Container, List
// Containers `include=deleted`): Delete Container replaces the container
// record by a `cx` record (account, container, version) and a move job
// (`cm`) in one transaction; the job moves the container's `b`, `bd`,
// `bv` and `u` records (and the `bx` entries of the soft-deleted ones)
// in bounded transactions to an alias no container can have
// (`container/version`), values unchanged, so their data references go
// with them. The name is free once the move is over (until then Create
// Container and Restore Container of it answer 409
// `ContainerBeingDeleted`); a new container of the name is independent.
// Restore Container moves the records back and writes the container
// record in the last move transaction, so a container is either live with
// all its blobs or deleted with all of them, whatever stops the process.
// The Reclaimer's sweep finishes a move left over and, once the retention
// period is over on the injected clock, turns the deleted version into the
// container tombstone of its alias, which reclaims it as Delete Container
// does. The retention is the server's (on Azure a management-plane
// setting; the Blob Service Properties have no element for it).
// A hierarchical account's container is kept too: the delete's
// transaction moves its filesystem's root (`dlr`) to the alias, which
// carries the whole tree (keyed by node id), the job moves its
// soft-deleted paths (`dld`, with their `dly` entries) with the other
// records, and the restore's last transaction moves the root back with
// the container record (docs/datalake.md, "Deleted filesystems").
//
// # Behaviour choices
//
//   - Copy Blob within the account completes inside the request
//     (`x-ms-copy-status: success`), so Abort Copy always answers 409
//     `NoPendingCopyOperation`.
//   - A malformed `Range` on Get Blob is ignored (whole blob), as Azure does; a
//     range starting at or past the end is 416 `InvalidRange` with
//     `Content-Range: bytes */size`.
//   - Metadata names keep the case they were sent in and are compared
//     case-insensitively, as on Azure. Go's HTTP server canonicalises request
//     header names before a handler runs, so the listener taps its
//     connections (`internal/server/rawnames.go`): a parser follows the
//     HTTP/1.1 framing of the bytes read (header blocks; Content-Length and
//     chunked bodies skipped in place, about 0.6 µs per request) and records
//     each request's line and `x-ms-meta-*` names as sent; the front end
//     renames the canonical keys back before the service sees them. Where
//     it cannot (a batch sub-request, parsed from a body) names are
//     lower-cased. Responses send `x-ms-meta-{name}` as stored
//     (`wire.WriteMetadata`); Header.Set would canonicalise them, and the
//     Python SDKs only collect headers beginning with `x-ms-meta-` exactly.
//   - Source conditions on Copy Blob fail with 412 `SourceConditionNotMet`
//     (Azure's code; Azurite answers `ConditionNotMet`).
//   - The `*FromURL` writes (Put Blob, Put Block, Append Block and Put Page
//     From URL) and Copy Blob copy no bytes: the new blob or block lists the
//     source range's parts and takes references on their data items, in the
//     transaction that reads the source. With `x-ms-source-content-md5` or
//     `-crc64` the range is first hashed in a snapshot read, and the write
//     checks the source still maps the same data items (the third attempt
//     hashes inside the write), so the digest checked is the digest of what
//     was written. Sources are blobs of the same account, path-style or named
//     by Azure's host name (`{account}.blob.core.windows.net`, which the az
//     CLI sends whatever the endpoint).
//   - Access tiers: a block blob without an explicit tier reports Hot,
//     inferred. Archive makes the blob offline (409 `BlobArchived` on Get
//     Blob, property and metadata writes, snapshots, and overwrites, as the
//     real service answers rclone and azcopy); leaving Archive answers 202
//     and completes at once.
//   - Blob index tags are part of the blob record (`tg`), so a tag condition
//     (`x-ms-if-tags`) is decided in the same transaction as the write it
//     guards. Find Blobs by Tags scans the account's (or one container's) base
//     blob records in one snapshot; there is no secondary index to lag behind,
//     and no index to keep consistent across the many write paths. Its cost is
//     a scan of the blob records, acceptable at emulator scale; an index under
//     `t/account/key/value/…` would be the step if that changes.
//
// # Blob
//
// The Blob service is two packages: the domain `internal/blob` (no
// net/http, no `internal/server`: `internal/archtest` checks it) and its
// REST front end `internal/blob/blobrest`, whose `Service` embeds
// `*blob.Service`. Its layers:
//
//  1. **Front end** (`internal/server`, shared by the four services): the
//     request's id, `Date` and version, the account (path or host name),
//     Shared Key or bearer authentication, and `server.Request.Now`, the
//     request's time from the injected clock.
//  2. **Routing and authorization** (`blobrest`: `routes.go`,
//     `service.go`, `sas.go`):
//     `Service.ServeAzure` splits the path into container and blob, routes
//     by method, `comp`, `restype` and the distinguishing headers to an
//     operation handler, and checks a SAS or anonymous access against the
//     operation's rule.
//  3. **Handlers** (`blobrest`: `blob.go`, `block.go`, `page.go`,
//     `container.go`, `list.go`, `tags.go`, `tier.go`, `batch.go`, ...;
//     `request.go` for what they all read): parse headers and query into the typed input, call the domain
//     method, render its output as headers and XML. Validation that names a
//     header or query parameter (missing, malformed) happens here, before
//     anything is read.
//  4. **Domain methods** (`domain*.go`), one per data operation: Put Blob,
//     Get Blob, Get Blob Properties, Delete Blob, Undelete Blob, Set Blob
//     Properties, Set Blob Metadata, Lease Blob, Snapshot Blob, Put Block,
//     Put Block List, Get Block List, Put Page, Get Page Ranges, Append
//     Block, Seal, Copy Blob (and From URL), Abort Copy Blob, Put Blob /
//     Put Block / Append Block / Put Page From URL, Get and Set Blob Tags,
//     Set Blob Tier, Find Blobs by Tags, Create / Delete Container, Get
//     Container Properties, Set Container Metadata, Get / Set Container
//     ACL, Lease Container, List Containers and List Blobs
//     (`Service.PutBlob`, `Service.ListBlobs`, ...). Each takes `(ctx,
//     XxxInput)` and returns `(XxxOutput, error)`, the error an `azerr`
//     value as Azure defines it (some name the header Azure names, e.g. a
//     page blob size not a multiple of 512). Inputs name the blob (`BlobRef`) or container
//     (`ContainerRef`) and carry the access conditions as `Access`: the
//     ETag/date conditions (`cond.Conditions`), the blob-tags condition
//     (`TagCondition`, parsed) and the lease id held. Content comes as an
//     `io.Reader` with its length and the transactional `Checksums`;
//     properties as `HTTPHeaders`, metadata, tags and tier as values.
//     `Call.Now` is the operation's time: handlers pass the request's, so
//     `Date` and `Last-Modified` agree; a caller without one gets the
//     service's clock. A condition that did not parse keeps its error in
//     the input and is reported where it is evaluated, after the blob is
//     found, as the handlers always answered. Outputs carry what Azure
//     reports (`BlobProperties` with the lease state at the operation's
//     time, ETag, Last-Modified, digests, ...); Get Blob's output holds the
//     pinned body (`extent.Body`), streamed as the answer's `server.Response.Content`
//     or read through `Body.Reader`.
//  5. **Rules shared by the operations** (`internal/blob`: `domain.go`,
//     `blob.go`; the domain files keep the names of the front-end files
//     their helpers came from: `block.go`, `page.go`, `tier.go`, ...):
//     `Access.checkWrite` / `checkConds` / `checkUpdate` / `checkRead`,
//     `beginReplace`, `replaceBlob`, `updateBlob`, `dropUncommitted` and
//     the soft-delete steps, all on typed arguments, all inside the
//     caller's transaction.
//  6. **Stores**: `kv.Store.Update` / `View` and the byte layer
//     (`internal/extent`) over `chunk.Store`.
//
// What stays above the line: authorization (SAS rules, a container's
// public access, a copy source's SAS or bearer token, all decided before
// the domain call; the domain inputs carry the outcome where it matters,
// as `CreateOnly`), the service properties and Get Service Stats
// (`internal/svcprops`, shared with the other services, see below), Get
// Account Information (no stored data), Get User Delegation Key, and Blob Batch, whose
// sub-requests go through the handlers above. A copy or From URL source
// that is a file is resolved by the File front end through the file peer
// (`internal/xcopy`, `blobrest/xcopy.go`) into the File domain's reader
// (`copysrc.Reader`), which the handler puts in the input
// (`CopySource.File`, `FromURLSource.File`) and the domain call runs
// inside its transaction; the File service's copies of a blob read it
// through `Service.SourceReader` the same way.
//
// Customer-provided keys (`cpk.go`; the header parsing in
// `blobrest/cpk.go`): `ServeAzure` parses
// `x-ms-encryption-key` into `Call.CPK` (an `extent.Cipher` for the
// request only, and the key's SHA-256). Writes stage their bytes through
// the cipher (AES-256-CTR per data item, the counter derived from the
// item's random id, so a range read decrypts only its range); the blob
// record and each uncommitted block keep only the SHA-256, which every
// read and write of the blob's content or metadata must match (409
// `BlobUsesCustomerSpecifiedEncryption` / `...Mismatch` /
// `BlobDoesNotUseCustomerSpecifiedEncryption`). A From URL write shares
// the source's items when both have the same key, and otherwise copies
// the range, decrypted with `x-ms-source-encryption-key` and encrypted
// with the destination's key (`fromSourceCopied`); Copy Blob refuses an
// encrypted source (409 `CannotVerifyCopySource`). On a hierarchical
// account the key's SHA-256 is the namespace node's (`ns.Node.CPK`, so a
// rename keeps it); the Blob view (`pathRec`) and the dfs append and flush
// (`open`) check it by the same rules, and the dfs front end parses the key
// for Path - Create, append and flush (docs/datalake.md).
//
// # Version-level immutability
//
// With `--blob-immutability` every container of the accounts with blob
// versioning has version-level immutability support (Azure's
// ImmutableStorageWithVersioning, which only the management plane enables;
// Create Container has no header for it): Get Container Properties answers
// `x-ms-immutable-storage-with-versioning-enabled: true` and List Containers
// `ImmutableStorageWithVersioningEnabled`. A version (current, previous by
// `versionid`, or a snapshot) carries at most one time-based retention
// policy and one legal hold in its own record (`blobRec.Imm`,
// `blobRec.Hold`), set by Set Blob Immutability Policy
// (`PUT ?comp=immutabilityPolicies`), Delete Blob Immutability Policy and
// Set Blob Legal Hold (`PUT ?comp=legalhold`), all under SAS permission `i`,
// or by the `x-ms-immutability-policy-until-date`/`-mode` and
// `x-ms-legal-hold` headers of Put Blob, Put Block List and Copy Blob (a copy
// or a snapshot never takes its source's). The rules, from
// "Version-level WORM policies for immutable blob data" (scenarios table),
// the REST pages and azblob's recorded tests, are in `immutability.go`:
// Unlocked policies move freely, Locked ones only forward (`nextPolicy`);
// an unexpired policy (injected clock) or a hold refuses Delete Blob (409
// `BlobImmutableDueToPolicy` / `BlobImmutableDueToLegalHold`); any policy or
// hold refuses Set Blob Metadata and Put Page; overwrites make a new
// version without a policy; Delete Container needs an empty container (409
// `ContainerImmutableStorageWithVersioningEnabled`). Without support the
// operations answer 400 `InvalidOperation` (no Azure page names the code
// for this case). Reads, Set Blob Tags, Set Blob Tier and leases are not
// affected, and a write without the headers reads nothing more.
//
// # Put Blob, from the socket to the transaction
//
//  1. The listener's connections (`server.tapListener`) follow the HTTP/1.1
//     framing to record the `x-ms-meta-*` names as sent; net/http parses
//     the request; `Server.Wrap`'s handler restores those names' case, sets `x-ms-request-id`, `Date` and
//     `x-ms-version`, finds the account and verifies the Shared Key
//     signature, all at `now` from the injected clock, and calls
//     `blobrest.Service.ServeAzure` with a `server.Request`.
//  2. `ServeAzure` splits `/account/container/blob`, routes `PUT` without
//     `comp` and without `x-ms-copy-source` to `putBlob`, and checks a SAS
//     against Put Blob's rule.
//  3. `putBlob` validates the name and `x-ms-blob-type`, parses metadata,
//     content properties, conditions, tier and tags (`parseNewBlob`), the
//     checksums (`x-ms-blob-content-md5` in place of `Content-MD5` when
//     sent) and the declared length into a `PutBlobInput`, with `Access`
//     from the conditions, `x-ms-if-tags` and `x-ms-lease-id`, and
//     `CreateOnly` when the SAS grants create but not write.
//  4. `Service.PutBlob` stores the body before any transaction:
//     `extent.StageEmbedded` keeps up to 64 KiB in the record itself and
//     writes larger bodies to fsynced, pinned chunk files, computing MD5 and
//     CRC64; a digest that does not match is 400 and the chunks are removed.
//  5. One `kv.Store.Update` then runs `Staged.Write` (the data items) and
//     `replaceBlob`: `beginReplace` prefetches the container, blob,
//     soft-deleted base, service properties and uncommitted blocks, checks
//     the container, the create-only rule, `Access.checkWrite` (conditions,
//     tags, lease) and the archive tier; the new record gets its ETag and
//     times (and the old lease, if active); `beforeOverwrite` keeps the old
//     blob as a soft-deleted snapshot when retention is on;
//     `extent.AdjustRefs` moves the data references; the uncommitted blocks
//     are dropped; the record is written. `Staged.Finish` then ends the
//     pins (or removes the chunks of a refused write).
//  6. `putBlob` renders `ETag`, `Last-Modified`, `Content-MD5`,
//     `x-ms-content-crc64` and `x-ms-request-server-encrypted` with 201; an
//     error is rendered by the front end as XML with `x-ms-error-code`.
//
// # Files
//
// The files use each other one way (internal/archtest checks it): each
// uses only files below it. From the ground up:
//   - api.go, model.go: the exported types the operations share, the
//     Service, the stored records and their keys; record.go encodes a
//     blob's record.
//   - load.go and the rules every operation applies: domain.go (the access
//     conditions), tier.go, cpk.go, tagcond.go, list.go (list markers and
//     scans), page.go, layout.go (which layout an account has).
//   - The record rules in order of use: immutability.go, containerworm.go,
//     softdelete.go, domain_versions.go, blob.go and block.go (replacing a
//     blob, staging a block), domain_changes.go (the change log).
//   - The namespace's files (hns*.go) and the flat layout (flat.go), then
//     hier.go, the hierarchical layout over the hns files.
//   - The operations (domain_*.go, hns_dfs*.go, flat_dfs.go), each above
//     the layouts it reaches through layoutOf; service.go's New.
//
// `BenchmarkPutBlob1K` and `BenchmarkGetBlob1K` (`internal/blob/blobrest`) measure
// these paths through the handlers without the network.
package blob
