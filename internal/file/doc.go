// Package file is the File service's domain: shares, directories and
// sparse files over the kv store and the shared byte layer
// (internal/extent), with file leases and the store-backed SMB handle
// records of internal/file/handle consulted by every operation. Its
// typed methods ((ctx, XxxInput) (XxxOutput, error)) each own their
// transaction; it imports no net/http (internal/archtest): the REST
// front end is internal/file/filerest.
//
// Concurrency model: File REST writes have no optimistic concurrency (no
// If-* headers; 400 ConditionHeadersNotSupported), so each write is one
// serializable transaction and the last writer wins; ETag and Last-Modified
// still change on every write. The only REST-side exclusion is the file
// lease; SMB opens exclude REST operations through their share modes.
//
// # File
//
// The Azure Files service over the same kv store and byte layer: the
// domain (`internal/file`, no `net/http`, checked by `internal/archtest`),
// its REST front end (`internal/file/filerest`: route table, parsing, SAS,
// copy sources, rendering) and the SMB view (`internal/smb/smbfs`, over
// the domain's open-based API `file.Opens`, `opens*.go`). The SMB handle
// records it consults live in `internal/file/handle`.
//
// # Keys
//
//	| key | value |
//	|---|---|
//	| `fs / account / share / snapshot` | share record (`""` = the live share): quota, tier, protocols, metadata, ACL, share lease |
//	| `fe / account / share / snapshot / parent id / FOLDED NAME` | a directory or file: name as created, file id, SMB properties (attributes, times, permission key), metadata; files also HTTP properties, size, parts, lease, last copy |
//	| `fi / account / share / snapshot / file id` | the id index: where the entry of a file id lives (parent id, folded name) |
//	| `fp / account / share / permission key` | a security descriptor (SDDL); the key is derived from the text |
//	| `fh`, `fhf`, `fhp`, `fhs`, `fhw`, `fho`, `fhl` | open handles, per-file handle state (delete-pending), the share's index of delete-pending files (read once per listing), the session and owner indexes, front-end liveness, byte-range locks (see `handle/doc.go`) |
//	| `sp / account / file` | File service properties |
//
// Entries are keyed by their parent's file id, not by path, so listing a
// directory is one range scan and renaming a directory rewrites one record
// (its children follow by id). Names are case-preserving and
// case-insensitive, as on NTFS: the key holds the upper-cased name, the
// record the name as created, and listings come in that case-insensitive
// order. The root directory of a share has file id 0. A path is resolved
// component by component inside the request's transaction.
//
// # One domain API for REST and SMB
//
// A file has two front doors, File REST (`filerest`: `file.go`, `dir.go`,
// `copy.go`) and SMB2 (`internal/smb`, through the VFS of `smbfs`, which it takes as the
// `smb.FileSystem` interface it defines: only the calls it makes; `internal/app`
// passes an `smbfs.VFS`), and one write path
// and one read path under them: the domain methods of `domain*.go`. A REST
// handler parses the request into a typed input and calls the domain; the
// VFS does the same for an SMB request; both render what the domain
// returns. Below that line there is no `*http.Request`, header name or
// `ResponseWriter`:
//
//	| domain method | REST | SMB (VFS) |
//	|---|---|---|
//	| `readRange` | Get File | `Read` (READ) |
//	| `writeRange` | Put Range (update, clear), Put Range From URL | `Write` (WRITE) |
//	| `setProperties` | Set File Properties (with or without `x-ms-content-length`), Set File Metadata, Set Directory Properties, Set Directory Metadata | `SetEndOfFile`, `SetAllocation`, `SetBasic` (SET_INFO) |
//	| `delete` | Delete File, Delete Directory | `SetDisposition` (SET_INFO, delete-on-close) |
//	| `rename` | Rename File, Rename Directory | `Rename` (SET_INFO FileRenameInformation) |
//	| `create` (and `newItem`) | Create File, Create Directory | `open` with a creating disposition makes its record with `newItem` |
//	| `replaceContent` (a step of `create` and `open`) | Create File over an existing file | `Open` with FILE_OVERWRITE, FILE_OVERWRITE_IF or FILE_SUPERSEDE |
//	| `open` (`domain_open.go`) | — (REST holds no open; its checks of the same rules are `admit`'s) | `Open` (CREATE) |
//	| `readable` (checks only) | Get File Properties, List Ranges, Get Directory Properties, List Directories and Files | — |
//	| `copyFile` | Copy File | — |
//	| `leaseFile`, `leaseShare` (`domain_lease.go`) | Lease File, Lease Share | — (an open meets a lease in `leaseAtOpen` and the sharing check) |
//
// The REST side reaches these through exported `Service` methods of the
// one shape `(ctx, XxxInput) (XxxOutput, error)`, one per File REST
// operation (shares in `domain_shares.go`, their purge in
// `domain_purge.go`, directories `domain_dirs.go`, files `domain_files.go`,
// listing `domain_list.go`, handles `domain_handles.go`, copies
// `domain_copy.go`). Each takes a `Ref` (account, share, snapshot, path,
// lease ID, request time) and typed values (copy sources, SMB properties,
// CRC64 conditions: `inputs.go`) and owns its transaction; the handler
// files of `filerest` (`share*.go`, `dir.go`, `file.go`, `list.go`,
// `handles_rest.go`, `copy.go`) parse the request and render the result.
// The SMB side sits on top: what the domain decides an SMB open with (the
// request, the granted `Open`, `Info`, access masks, dispositions and the
// NTSTATUS-named sentinels) is in `smbopen.go`; `file.Opens` (`opens*.go`)
// is the open-based API over the domain's operations, and no other file of
// the domain uses anything it declares (`TestFileDomainDoesNotCallUpIntoVFS`, internal/archtest);
// `smbfs.VFS` adapts it to `smb.FileSystem`.
//
// Each takes a *caller* — a REST request, which holds no open (every open is
// another's, MS-FSA 2.1.4.10), with its path, share snapshot and lease ID;
// or an SMB `*Open` — and runs in one kv transaction (a read in one
// read-only transaction) with the time of the injected clock. The checks a
// second write path would forget are made there, once, in this order:
// `precheck` (an SMB open's kind and granted access, before data is staged),
// `admit` (for REST: the lease, the read-only attribute as the operation's
// `fileOp` states it, then the share modes and delete-pending state of live
// opens, its `fileOp`'s row of package handle's table; an SMB open met those when it opened,
// MS-FSA 2.1.5.1.2, except a delete disposition of a read-only file),
// `checkRange` (byte-range locks, both callers) and `checkSize` (quota and
// 4 TiB). A refusal is a `*file.Refusal` naming the check (`file.Check`:
// `ByLock`, `ByQuota`, `ByReadOnly`, `ByShareMode`, …). Where both
// doors' rules agree (byte-range locks, quota, the read-only attribute of
// a write, an existing or missing rename target, a non-empty directory,
// the share root, a move into the own subtree) the domain leaves the
// answer to the door: `filerest.Answer` gives the Azure code (409
// FileLockConflict, 403 ShareSizeLimitReached, 409 ReadOnlyAttribute, …),
// `smbfs` the sentinel (`ErrFileLockConflict`, `ErrDiskFull`,
// `ErrAccessDenied`, …), which `internal/smb` maps to NTSTATUS codes
// (`ntstatus.go`). Where the rules differ the domain still wraps what the
// caller's protocol answers: 409 SharingViolation / DeletePending and 412
// lease errors for REST; `ErrSharingViolation`, `ErrCannotDelete` for
// SMB.
//
// An SMB CREATE is the domain's `open`: `Opens.Open` checks only the SMB
// request's parameters and the path's names, and `open` decides the rest
// in one transaction, in MS-FSA 2.1.5.1's order: the disposition against
// what exists and the kind, delete-pending (refused by the same check,
// `byDeletePending`, as a REST operation on a delete-pending item), the
// read-only attribute (`readOnlyAtOpen`, beside `admit`'s `readOnly`: one
// place decides the attribute for both doors), an overwrite's hidden and
// system attributes, a REST lease (`leaseAtOpen`: a lease denies an
// overwrite, as it denies a REST Create File without its ID), then the
// sharing check against every live open (`handle.Open`, the same open
// table and share-mode rules as REST's `handle.CheckRESTOp`), and only then
// an overwrite's truncation. That truncation and Create File's replacing
// of an existing file are one step, `replaceContent`: it releases the old
// content's data references, empties the file and makes a broken lease
// available. `domain_test.go` drives the same lock, read-only, quota,
// share-mode, lease, delete-pending, replace and rename conflicts through
// both doors and asserts that both are refused by the same check.
//
// Nothing of the HTTP request is read inside a File REST transaction: the
// handlers parse headers (the lease ID into the caller, `x-ms-recursive`,
// `x-ms-delete-snapshots`, the copy headers) before it. A copy source
// (Copy File, Put Range From URL, and a file read by Copy Blob) is parsed
// and authorized before the transaction; inside it the source is read
// with its names and the request's time only (`loadCopySource`, and
// `SourceReader`, the `copysrc.Reader` a Copy Blob of a file gets), its
// opens checked by `handlesAt` and its
// byte-range locks by `checkRange` for the source's account and share.
//
// An SMB WRITE from the socket to the transaction:
//
//  1. `conn.serve` (`internal/smb`) reads a frame; `handleSMB2` splits a
//     compound into its requests and `handlePDU` parses each header;
//     `dispatch` looks WRITE up in the command table, `resolve` finds its
//     session and tree connect and checks its signature, and the table's
//     handler `conn.write` runs.
//  2. `conn.write` decodes the WRITE request, charges its credits, finds the
//     open by its FileId, refuses a directory and offsets past NTFS's
//     largest file, and calls `VFS.Write(ctx, open, offset, data)`
//     (`internal/smb/smbfs`), which calls `file.Opens.Write` and answers a
//     refusal the domain leaves to it with its sentinel.
//  3. `Opens.Write` (`internal/file`) checks the open's access (`precheck`),
//     stages the bytes as data items outside any transaction
//     (`extent.Store.Stage`) and calls `domain.writeRange` with an SMB caller;
//     `Staged.Finish` frees them at once if the write is refused.
//  4. `domain.writeRange` runs one `kv.Store.Update`: it checks that the open
//     is live and loads the file by its ID, checks the byte-range locks of
//     the other opens and the quota, writes the staged items' records,
//     splices them into the file's parts, adjusts the data items' reference
//     counts, stamps the SMB times (unless frozen on the open), a new ETag and
//     Last-Modified, and stores the entry.
//  5. Back in `conn.write`, an error becomes its NTSTATUS (`fileStatus`, `internal/smb/ntstatus.go`),
//     success a WRITE response with the count written.
//
// REST Put Range takes the same path from step 3: the handler parses the
// range and `x-ms-write`, stages the body (checking its Content-MD5) and
// calls `domain.writeRange` with a REST caller.
//
// # Concurrency
//
// File REST has no optimistic concurrency: every `If-*` header is 400
// ConditionHeadersNotSupported, and each write is one serializable
// transaction, so the last writer wins (per byte for overlapping Put Range
// calls) while ETag and Last-Modified change on every write. The REST-side
// exclusion is the file lease (infinite only; `internal/lease` with the File
// rules). The SMB-side exclusion is the handle table: every REST operation on
// an existing item calls `handlesAt` (for the domain's operations, from
// `domain.admit`) in its transaction, which applies the
// "Managing file locks" access table (`handle.RESTAccess`) against the live
// opens' share modes — 409 SharingViolation — and answers 409 DeletePending
// for a delete-pending item, which listings omit. (The locks page says
// `SMBDeletePending`; the error-code table, the REST specification and every
// SDK's generated enum say `DeletePending`, which is what Cerulean sends.)
// A handle belongs to a front end with a liveness record; when that expires
// the handle is dead for every check at once, and `Service.ReapHandles`
// (background, every minute) removes it and deletes files that were
// delete-pending on it.
//
// Reads per operation: resolving a path names the share, the root and the
// first-level entry together (`kv.Prefetch`, one query on PostgreSQL); the
// deeper levels follow one by one, each keyed by the ID found above it. A
// byte-range check (`domain.checkRange`) first looks at the file's handle
// state, already read by `handlesAt`: without it the file has no handle
// and so no lock, and the lock scan is skipped.
//
// # Files, snapshots, deletes
//
// Files are sparse part lists like page blobs: Create File records only the
// size; Put Range splices a part in; clearing frees whole 512-byte pages and
// zeroes the rest of a partly covered page (the service keeps such pages
// listed); List Ranges merges parts, and its `prevsharesnapshot` diff finds
// the same file (by id) in the snapshot. A share snapshot copies every entry
// and id-index record under the snapshot component in one transaction and
// takes a reference on every data item, so later writes never change it.
// Delete Share removes the share records (and snapshots) in one transaction
// and leaves a tombstone; the background reclaimer then purges the entries,
// permissions and handles in bounded transactions (`PurgeStep`), releasing
// data references, and Create Share of the name answers 409
// `ShareBeingDeleted` until it is done.
// With a share delete retention period (`--share-soft-delete`, or the
// account's `ShareDeleteRetentionPolicy`) Delete Share keeps the share
// instead (domain_softdelete.go): its share and snapshot records become one
// `fsx` record (account, share, version), and a move job (`fsm`) moves its
// entries, ID index and permissions in bounded transactions to an alias
// name no share can have (`share/version`), so the name is free again;
// Restore Share moves them back and makes the share live in the last move
// transaction. The reclaimer's sweep finishes a move left over and, once
// the retention period is over on the injected clock, turns the deleted
// version into `fsd` tombstones of its alias, which the purge above
// reclaims.
// Copy File and Put Range From URL share the source's data items instead of
// copying bytes.
package file
