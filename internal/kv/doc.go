// Package kv is Cerulean's storage contract: transactions over ordered byte
// keys. Domain packages (blob, queue, table, file) are written against this
// interface only; backends (embedded bbolt, PostgreSQL) live in subpackages
// and must pass the conformance suite in kv/kvtest.
//
// # Transactions and concurrency
//
// Every request's checks (existence, conditional headers, lease, append
// position, sequence number) and its write happen inside one `Update`
// (serializable) transaction; reads use one `View` (snapshot). The embedded
// backend runs all writers through one goroutine that applies a group of
// transactions, one after the other, in a long-lived bbolt read-write
// transaction. A transaction that fails a precondition is rolled back from its
// undo log without disturbing the rest of the group. N clients racing with the
// same `If-Match` therefore produce exactly one success.
//
// An `Update` function may run more than once (PostgreSQL re-runs it after a
// serialization failure), so it must change nothing outside its
// transaction. The embedded and in-memory stores run it once; the test mode
// `CERULEAN_TEST_UPDATE_TWICE=1` (`kv.Twice`) runs every function first
// against a scratch transaction that reads its own writes and discards
// them, then for real, and `.ci/run` passes the domain packages and both
// SDK suites through it.
//
// Durability comes from a write-ahead log next to the bbolt file
// (`meta.db.wal`, zero-filled so appends never change its size; a new log
// starts at 1 MiB, and a checkpoint forced by the log filling up doubles
// it, zero-filled and synced while it holds no record, up to 64 MiB, so an
// empty store takes about 1 MiB on disk and a busy one gets the full log
// after a few checkpoints):
// each group's net writes become one checksummed record, and a second
// goroutine writes the records (one write for all those queued meanwhile)
// and fdatasyncs the log while the writer already runs the next group,
// then publishes each group to readers and answers its callers, in order. Readers
// see the bbolt state of the last checkpoint plus the published groups, kept
// in memory as immutable sorted layers, so a read sees exactly the
// acknowledged writes. A checkpoint (every 8,192 writes, 2 s under load,
// 50 ms after the last write, when the log is half full, and on shutdown)
// commits the bbolt transaction with bbolt's own fsyncs together with the
// sequence number of the last record it holds; start-up replays the records
// after it (consecutive sequence numbers, checksums seeded with a per-database
// id, stopping at the first torn or stale record). A failed log write or sync
// fails every group not yet answered with 503 and rebuilds the transaction
// from the published groups. Compared with one bbolt commit per group (every
// dirty B+tree page written, two fdatasyncs), this took the store alone from
// 9,300 to 26,000 durable 1.5 KiB writes/s with 16 writers.
//
// A crash can only tear records written after the last fdatasync, so each
// record also carries the sequence number of the last record known synced
// when it was written. Where the replay stops, a whole record further on
// that says the missing record had been synced proves damage rather than a
// torn tail: start-up then refuses, naming the file and offset, and leaves
// the log as it is instead of starting it again over acknowledged writes
// (damage to the very last synced records, with nothing after them, cannot
// be told from a torn tail). Creating `meta.db` or its log syncs their
// directory, as the chunk store does for its directories and each chunk's
// rename. All these files go through `internal/vfs`; tests swap in
// `internal/vfs/errorfs`, which fails or shortens a chosen write, fsync or
// rename and simulates a power cut by keeping only what file and directory
// syncs made durable, optionally plus some unsynced pages with their latest
// bytes (a failed sync loses its writes for good, as a failed fsync may on
// Linux; bbolt, which maps its file, is cut off at the crash instead).
// `test/e2e/durability_test.go` walks such a crash, and separately a single
// failed write, sync or rename, over every such point of a workload on all
// four services and restarts on what is left; a full disk answers 503
// `ServerBusy` and the store resumes once space returns.
//
// [durability.md](durability.md) describes the trials that check this with
// real processes: SIGKILL of `cerulean serve` under load on all four
// services (`scripts/crash-test.sh`), and, on PostgreSQL, the loss of the
// primary under three front ends with a synchronous standby promoted
// (`TestPrimaryFailover`), the deployment recommended for production.
//
// `--in-memory` replaces both stores. The kv store (`internal/kv/mem`) is
// a persistent treap: `View` reads the root published last, an immutable
// tree, so a snapshot costs one atomic load and never waits; `Update` takes
// the one writer lock and path-copies the nodes it changes into a private
// root that it publishes atomically when fn succeeds (a failing fn leaves
// nothing behind; nodes the transaction already copied are changed in
// place). The chunk store (`internal/chunk/memchunk`) keeps each chunk as
// segments of at most 1 MiB and counts every byte written against
// `--extent-memory-limit` from the `Write` on, so an upload past it fails
// before the body is read to its end (409 `MemoryExtentStoreAtSizeLimit`,
// Azurite's answer); a staged body that fails removes the chunks it had
// already committed. Deleted and overwritten bodies go through the same
// `g/…` collector and orphan sweep as on disk; `Remove` gives the room back
// at once.
//
// The write path looks keys up exactly (`Bucket.Get`), never with a cursor
// `Seek`: in the long-lived bbolt transaction the leaves emptied by a run
// of deletes stay in the tree until the checkpoint rebalances it, and a
// `Seek` steps over every one of them, which made a large adjacent delete
// quadratic (`kvtest` BigAdjacentDelete checks every store for it).
//
// # Records that do not decode
//
// A stored record that does not decode (a JSON record, a queue index
// entry, a handle whose file id is not a number) is an error naming its
// key: the request fails with 500 `InternalError` and its transaction
// rolls back. Scans never skip such a record, because what it references
// would leak: a deleted block record whose chunk references were never
// released, a snapshot that outlives its blob, a message no listing shows,
// a handle that no longer blocks a rename. The one exception is the
// handle reaper's owner records: an undecodable one is treated as expired
// (it references nothing, its owner rewrites it at the next heartbeat, and
// an error would stop the reaper). `kv.DecodeJSON` gives the error its
// form.
package kv
