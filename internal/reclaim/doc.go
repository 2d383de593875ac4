// Package reclaim runs the deletes that return at once and reclaim in the
// background, as Azure documents them (Delete Container: "the container
// is immediately marked for deletion ... and is later deleted during
// garbage collection"): the request's transaction replaces the record it
// deletes by a tombstone, so the thing is gone for every operation and
// every listing at once, and a Reclaimer removes what the tombstone names
// in bounded transactions, each removing a bounded batch of records
// (Batch, or adapted to hold the store about StepTarget), the last one
// removing the tombstone too. Whatever runs in the meantime sees a
// consistent state; a crash between two steps leaves the tombstone, and
// the next Reclaimer (on any process sharing the store) carries on from
// there. The Data Lake namespace's collector (internal/hns/ns) works the
// same way for detached directory trees and runs from the same loop.
//
// Tombstones are keys ("rcl", kind, parts...): a Kind registered under
// its name removes one bounded batch per call of its Step. While a
// tombstone exists its name is being reclaimed: Pending tells the
// operations that must refuse to reuse it (Create Container answers 409
// ContainerBeingDeleted).
//
// # Deletes that reclaim in the background (internal/reclaim)
//
// A delete whose work grows with what it removes does not do that work in
// the request. Its transaction replaces the record it deletes by a
// tombstone `("rcl", kind, name...)`: every operation loads that record in
// its own transaction, so the thing is gone at once for all of them and
// for every listing, and the request costs the same for an empty container
// as for one of a million blobs. The `Reclaimer` of the process (started
// by `internal/app`, run once at start so a stopped process's work
// resumes, then on `Kick` after each delete and every GC interval) takes
// the first tombstone and calls its kind's `Step` inside one transaction,
// which removes a bounded batch of records (256 to start with, then
// adapted between 16 and 1,024 so the step holds the store about a
// millisecond on a single writer, the embedded and in-memory stores, and
// takes about 20 ms on PostgreSQL, where a step holds up nobody but each
// commit costs a WAL flush), releasing their data references;
// the step that finds nothing left deletes the tombstone in the same
// transaction. A crash between two steps leaves a consistent state that
// the next step continues. After each step it rests as long as the step
// took, three times as long when others wrote since the step before
// (`BusyRest`, from the store's count of Update calls, `kv.Writes`), so it
// never holds more than half of a single writer, and a quarter while
// clients write; it stops between two steps when the process shuts down.
// While the tombstone exists the name is being reclaimed: a create of it
// answers Azure's 409 (Delete Container: `ContainerBeingDeleted`); every
// other operation finds no record and answers 404, as Azure's "all other
// operations … fail with 404 while the container is being deleted".
// Before it answers, the delete itself runs one such step
// (`reclaim.Inline`; Delete Share and Delete Queue/Clear Messages run one
// of their own bounded transactions): a container, table, share or queue
// that fits in it is gone when the delete returns and its name can be
// created again at once, as clients written against Azurite expect of
// their setup and teardown; only larger ones are left to the background
// and answer 409 meanwhile.
//
// Kinds: Delete Container (`internal/blob/container_reclaim.go`: blob,
// soft-deleted, version and uncommitted-block records of the container; `findBlob`
// treats a blob record whose container record is gone as missing, and Find
// Blobs by Tags skips them; Delete Filesystem is the same call) and Delete
// Table (the record's `deleting` state, 409 `TableBeingDeleted`). Services
// with tombstones of their own run from the same loop as sweeps, one
// bounded transaction per call with the same rest: the Data Lake
// namespace's collector (detached trees, `internal/hns/ns/collect.go`,
// which worked this way first), Delete Share's (`fsd` tombstones, 409
// `ShareBeingDeleted`) and Delete Queue's and Clear Messages' (graveyard
// entries, 409 `QueueBeingDeleted`). The crash trials
// (`scripts/crash-test.sh`) kill the server while containers are deleted
// and check after each restart that the reclaim resumed and nothing else
// was lost.
//
// Leases are stored as `{id, state, duration, expiry, break time}` and their
// effective state (available, leased, expired, breaking, broken) is computed
// from the request's time, which comes from the injected clock.
//
// ETags are `"0x<FILETIME ticks><random>"`: unique for two writes in the same
// clock tick and never reused after delete and recreate. Lease operations do
// not change ETag or Last-Modified.
package reclaim
