// Package extent is the byte layer shared by the Blob and File services:
// immutable "data items" (inline in the kv store or chunk files in the
// chunk store) with reference counts and a background collector, sparse
// part lists that map a blob's or file's ranges onto them, readers over
// those lists, and request-body staging with MD5 and CRC64.
//
// Bytes are "data items": immutable byte strings with an id.
// Small items (≤ InlineMax) live inline in the kv store under
// ("x", id) so one group commit covers many small writes; larger ones are
// files in the chunk store, whose ("x", id) record only marks them live.
// A Part maps a range of a blob onto a data item. Items are shared by
// snapshots, copies and committed blocks, so each ("x", id) record carries
// a reference count maintained in the same transaction as the records that
// reference it. When it drops to zero the id is queued under ("g", due, id)
// and the background collector removes it after a grace period, so readers
// that looked up a part just before a delete still find its bytes; a
// reader pins the items it reads (pins.go), so it finds them however long
// it streams.
//
// # Bytes
//
// The byte layer is `internal/extent`, shared by Blob and File. A blob's (or
// file's) content is a list of parts `{offset, length, data id, data offset}`.
// Bodies up to 64 KiB are stored inline in the kv store (`x/i…`) so that one
// group commit covers many small writes; larger bodies are streamed into chunk
// files of at most 8 MiB, fsynced (file and directory) before the transaction
// that references them commits. Parts are shared by snapshots, copies and
// committed blocks; every part occurrence holds one reference on its data
// item, adjusted in the same transaction as the records. When a count reaches
// zero the item is queued under `g/…` and the background collector
// (`Service.CollectGarbage`, every minute) deletes it 10 minutes later, so a
// reader that looked up a part just before a delete still finds its bytes.
// Copies between Blob and Files (Copy File and Put Range From URL from a
// blob; Copy Blob and the blob FromURL writes from a file) go through
// `internal/xcopy`: each service implements `xcopy.Source` (authorize the
// source URL, resolve it inside a transaction) and `internal/app` hands each
// service the other as a `Peer`, recognised by its Azure host name or its
// port. The destination takes the source's parts in the writer's
// transaction, as a copy within one service does; no byte moves.
//
// Chunk files never referenced are removed by `Service.SweepOrphans` after
// 6 hours (a crash, or a write whose outcome is unknown). Neither runs in a
// request. A write refused after its upload (a failed precondition, a lease,
// a digest mismatch, an SMB byte-range lock or full share), through either
// door, removes the chunks it made itself (`extent.Staged.Finish(ctx,
// recorded)`): `extent.Recording` wraps the function that records them
// and reports whether its last run returned nil; if it returned an error,
// `Update` committed nothing and nothing refers to them.
//
// Requests that use chunks no committed record names yet, or any more, pin
// them (`internal/extent/pins.go`), and neither the collector nor the sweeper
// frees a pinned chunk, however old. Every writer of chunks goes through
// `extent.Stage` (Put Blob, Put Block, Append Block, Put Page, Put Range and
// Create File with a body, SMB writes; copies share the source's data items
// and write none): each chunk is pinned from its creation until the caller's
// `Staged.Finish`, after the transaction that records it, so an upload may
// stream for days. The sweeper decides on each candidate under a lock that
// chunk creation also takes, and reads the pins before the records, so a
// chunk just created or just recorded is never taken for an orphan. Every
// read of content (Get Blob, Get File, SMB reads, copies' digest checks) pins
// the data items of its range (chunks, and inline items it did not read in
// its transaction) when it opens its reader, right after the transaction
// that resolved the parts, until the body is closed: a download still
// streaming long after an overwrite or delete returns the version it
// started on (the collector keeps a pinned item and queues it again for 10
// minutes later), on both chunk stores. Pins are kept in memory, shared by
// the Blob and File services over one chunk store; for other processes
// sharing a PostgreSQL database, each collector or sweeper pass publishes
// them under `xp/<owner>/<data id>` with a lease `xo/<owner>` of an hour,
// renewed every pass, and honours the published pins of live owners. A pin is published at most one collector interval after it is
// taken, so that interval must stay well below the collector's 10 minutes;
// the pins of a process that stopped lapse with its lease and are reclaimed.
//
// Page blobs are sparse part lists: Put Page splices a new part in, Clear Page
// splices a hole; Get Page Ranges merges parts; the `prevsnapshot` diff
// compares *where each byte comes from* (data id and offset), so a rewritten
// page counts as changed even with equal bytes, and pages cleared since the
// snapshot are reported as `ClearRange`.
//
// Blob soft delete (Set Blob Service Properties `DeleteRetentionPolicy`)
// moves a deleted blob or snapshot from `b` to `bd`, and keeps the state a
// Put Blob, Put Block List or Copy Blob replaces as a `bd` snapshot; the
// record keeps its data references, so nothing is queued under `g` while it
// is retained. Reads and listings of live blobs never visit `bd`; List Blobs
// with `include=deleted` merges a second scan of it, and Undelete Blob moves
// the records back. Expiry is the deletion time plus the retention days in
// force then; a record is invisible from that instant (request time, injected
// clock), and `CollectGarbage` purges it through `bx` and releases its
// references. A write creating a blob over a soft-deleted one of the same
// type turns that into a soft-deleted snapshot; of another type, it purges
// the name's soft-deleted data (Azure's documented behaviour).
//
// Blob versioning (`--blob-versioning` or `:versioning` in `--accounts`;
// `domain_versions.go`, front end `blobrest/versions.go`) gives the base
// record a version id (its write time in the snapshot format, strictly
// increasing per name: a tie or a clock set back takes the last id plus
// 100 ns). A write that replaces the content or metadata (Put Blob, Put Block
// List, Copy Blob and its From URL forms, Set Blob Metadata) moves the replaced
// record to `bv` with its data references (Set Blob Metadata adds one
// reference per part, since both records keep them), instead of a `bd`
// snapshot; Delete Blob of the base moves it there too. Reads, Set Blob Tags
// and Set Blob Tier with `versionid=` resolve `bv` (or the base when the id is
// the current one); other writes to a version are refused before routing to
// the handler. A deleted version is removed (its references released) or,
// with soft delete on, marked deleted in place and indexed in `bx`. List
// Blobs with `include=versions` merges a scan of `bv`: per name the
// snapshots, then the versions oldest first, then the current version.
// Hierarchical accounts have no versions (refused at start).
package extent
