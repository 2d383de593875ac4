// Package queue is the Azure Queue service's domain: queues, messages,
// their kv transactions, expiry, and the purge of deleted and cleared
// incarnations. It knows no HTTP (it imports neither net/http nor
// internal/server; internal/archtest checks it): the REST front end,
// internal/queue/queuerest, parses a request into one of the typed
// inputs of api.go, calls the method and renders its output or its azerr
// error.
//
// Every operation's checks and writes happen in one kv transaction, and
// all expiry (visibility timeouts, message TTLs) is computed from the
// operation's time, taken from the injected clock. The service keeps no
// authoritative state in memory, so several processes may share one
// store; the only in-memory state is a hint that spreads concurrent Get
// Messages calls over different messages (see dequeue.go). The key layout
// is described in model.go and below.
//
// # Queue
//
// The Queue service is two packages: the domain `internal/queue` (queues,
// messages, their transactions, expiry and purge, over the same
// `kv.Store`) and its REST front end `internal/queue/queuerest` (route
// table, parsing, SAS, rendering). The domain imports neither `net/http`
// nor `internal/server`: `internal/archtest` fails the build if
// `go list -deps` of it says otherwise. It keeps no authoritative state in
// memory.
//
// # Layers
//
// Each operation is three steps, in two packages:
//
//  1. **Parse** (`queuerest`: `service.go` routes, `queues.go`,
//     `messages.go` handlers, `params.go` and `xml.go`
//     parsers): path, query parameters, `x-ms-meta-*` headers and the XML
//     body become a typed input: `QueueID{Account, Name}`,
//     `CreateQueueInput`, `ListQueuesInput`, `PutMessageInput{Text,
//     Visibility, TTL}`, `GetMessagesInput{Count, Visibility}`,
//     `MessageRef{MessageID, PopReceipt}`, `UpdateMessageInput`, a parsed
//     ACL or service properties. Invalid input fails here with its Azure
//     error before any transaction.
//  2. **Decide** (`internal/queue`, `api.go`): `CreateQueue`, `DeleteQueue`,
//     `GetQueueProperties`, `SetQueueMetadata`, `GetQueueACL`,
//     `SetQueueACL`, `ListQueues`, `PutMessage`, `GetMessages`,
//     `PeekMessages`, `DeleteMessage`, `UpdateMessage`, `ClearMessages`
//     (the service properties are `ServiceProperties()`, the shared
//     `svcprops.Service`). Each
//     is `(ctx, XxxInput) (XxxOutput, error)`, runs its checks and writes in
//     one `kv` transaction (Delete Queue and Clear Messages leave the purge
//     to the background reclaimer), reads time from the injected clock, and returns typed
//     values (`Message{ID, InsertionTime, ExpirationTime, TimeNextVisible,
//     PopReceipt, DequeueCount, Text}` inside the outputs) or an
//     `azerr` error. No `*http.Request`, header name or `ResponseWriter`
//     below this line.
//  3. **Render** (`queuerest`): status, headers (`x-ms-popreceipt`,
//     `x-ms-approximate-messages-count`, metadata) and the XML body
//     (`writeMessages` appends the three message documents without
//     reflection).
//
// Put Message, for example: `putMessage` reads `visibilitytimeout` and
// `messagettl` (`parsePutParams`) and the `<QueueMessage>` body
// (`readMessageBody`), calls `PutMessage`, which loads the queue record and
// writes the message record and its visibility index entry in one `Update`
// at the clock's time, and renders the returned `Message` as the 201
// `QueueMessagesList`.
//
// # Keys
//
//	| key | value |
//	|---|---|
//	| `q / account / queue` | queue record (JSON): incarnation id, metadata, stored access policies |
//	| `qm / account / queue / inc / msgid` | message record (binary): sequence number, insertion, expiry and visibility times, dequeue count, receipt generation, text |
//	| `qv / account / queue / inc / shard / visibleAt / seq / msgid` | visibility index in 16 shards (first hex digit of the id); value: expiry + message id |
//	| `qg / account / queue / inc` | graveyard: an incarnation whose keys are still to be purged |
//	| `sp / account / queue` | Queue service properties |
//
// `visibleAt` (Unix ns, sign bit flipped) and `seq` are 8-byte big-endian
// components, so each shard orders its messages by (visibility time,
// insertion sequence). `seq` is the put's time in ns, raised above the
// last number the process handed out, so one process's messages keep their
// order even within one clock tick.
//
// `inc` is the queue's incarnation, chosen at Create Queue and replaced by
// Clear Messages. Delete Queue (drop the record) and Clear Messages (new
// incarnation) are therefore one small atomic write however many messages
// there are: the old incarnation is unreachable as soon as it commits, a
// queue re-created under the same name starts empty, and old pop receipts
// fail with 404. The old keys are then purged by the background reclaimer
// (`PurgeStep`, transactions of 1,000 keys) from the graveyard entry the
// request wrote; until the entry is gone, Create Queue of a deleted name
// answers 409 `QueueBeingDeleted`. `Service.CollectGarbage` also finishes
// graveyard entries and deletes expired messages. Neither is needed for
// correctness, only for space.
//
// # Messages and time
//
// A message is visible when `visibleAt <= now < expiry`. Get Messages
// scans index shards from their start up to `now`, so it only reads
// visible entries, oldest first. Taking a message deletes its index entry
// and writes a new one at `now + visibilitytimeout`, with the dequeue
// count and the receipt generation bumped, all in one transaction with the
// record. Peek reads the same range in a snapshot. The index value carries
// the expiry, so expired messages are skipped without reading their
// records (Get Messages deletes those it meets, visiting at most 4,096
// index entries per call), and `x-ms-approximate-messages-count` counts
// unexpired index entries.
//
// The time of a message operation is the injected clock read when its
// transaction first runs (memoised for retries). Read at arrival instead, a Get Messages that waited
// behind a Put Message in the group commit could find that message still
// "in the future" and answer empty. With the fake clock both are the same.
// Several processes sharing a store compare their own clocks: a message put
// through a process whose clock runs ahead becomes visible to the others
// only when their clocks reach its time, so hosts need synchronised clocks
// (as for leases); skew shifts visibility by the skew, it never delivers a
// message twice inside a window on a serializable backend.
//
// # Pop receipts
//
// A receipt is `base64url(0x01 | message id (16 bytes) | generation (8))`.
// Put Message issues generation 0; every Get Messages or Update Message of
// the message bumps it. Only the current generation deletes or updates.
// Outcomes follow the real service (stale receipts as reported in
// Azure/azure-storage-net#285, Azure/azure-storage-python#300 and
// Azure/azure-storage-queue-go#20): a receipt that cannot be
// decoded is 400 `InvalidQueryParameterValue` (reason "Invalid pop receipt
// format", as a recorded Azure response shows); one for another message,
// or a generation never issued, is 400 `PopReceiptMismatch`; an older
// generation (the message was dequeued again or updated since) is 404
// `MessageNotFound` (Azurite answers 400 there). A receipt stays valid after
// the visibility timeout passes as long as nobody dequeued the message
// again.
//
// # Concurrent consumers
//
// Correctness comes from the transaction alone: two Get Messages calls can
// never both take a message inside its visibility window, because taking it
// rewrites the index entry and record both read. On the embedded backend
// writers run one after another, so there is no conflict at all; on a
// backend that checks serializability the second conflicts and is retried.
//
// Throughput on such a backend needs consumers that do not read what the
// others write. PostgreSQL's SERIALIZABLE tracks index reads by page, so
// consumers that all scan the head of one index range conflict whatever
// entry each then picks (they read the entries the others delete). Hence
// the 16 shards:
//
//   - A Get Messages that starts while no other one on the queue is in
//     flight in this process merges the heads of all shards and takes the
//     oldest visible messages: a lone consumer gets strict insertion order.
//     It names the 16 head ranges first (`kv.PrefetchRanges`), which
//     PostgreSQL reads in one query: 8 statements per call instead of 23.
//   - Otherwise it takes a slot among the calls in flight (in-memory, only a
//     hint, computed before the transaction so retries make the same choice)
//     and reads shard `(slot + offset) mod 16`, `offset` being random per
//     process, moving to the next shard only when short. Concurrent
//     consumers thus read and write different shards.
//   - Scans fetch only as many index rows as they need (growing the batch
//     only to skip expired entries), since the backend charges every row it
//     fetched.
//   - On such a backend a process also runs one Get Messages transaction
//     of a queue at a time (the queue's turn, held from the transaction's
//     start to its end; waiting calls keep their slot, so the shards they
//     read still differ). With 16 consumers of a nearly empty queue the
//     shards share index pages, and concurrent calls conflicted more often
//     than they committed: on PostgreSQL 15 (same two cores, 16 clients,
//     put, get, delete), 183–188 cycles/s with 3,300 rollbacks in 5 s
//     before, 326–370 cycles/s with about 400 after, p99 220–290 → 67–90 ms
//     (docs/benchmarks.md, 2026-11-29 13:23 UTC section). Front ends do not
//     share turns; their calls are still serialized by the transaction.
//
// Order under concurrency is best effort, as on Azure: oldest first within
// a shard. Measured with `kv/postgres` (PostgreSQL 15, SERIALIZABLE), 16
// consumers taking one message at a time from one queue, Update attempts
// per Get Messages beyond the first: one unsharded index 355 % (every call
// ran about 4.5 times); sharded, 1,000 messages queued 82 %, 6,000 queued
// 46 %; exactly-once delivery held in every run. A lone consumer in each of
// several processes still merges all shards and so conflicts with the
// others; the remaining conflicts at shallow depth come from shards sharing
// index and record pages.
//
// # Behaviour choices
//
//   - Anonymous requests are 401 `NoAuthenticationInformation` before
//     anything is read (queues have no public access).
//   - Queues have no ETags: Set Queue Metadata, Set Queue ACL, Set Queue
//     Service Properties and Update Message are last writer wins.
//   - Create Queue on an existing queue: 204 with identical metadata (names
//     compared case-insensitively, values exactly), 409 `QueueAlreadyExists`
//     otherwise.
//   - `messagettl`: any positive number of seconds, or -1 (never; reported
//     as `Fri, 31 Dec 9999 23:59:59 GMT`), from version 2017-07-29; earlier
//     versions 1 s–7 days. A TTL too long for an expiry instant (beyond
//     about 290 years, `int64` nanoseconds) is stored as never. `visibilitytimeout` must be smaller than a finite
//     `messagettl` (400 `InvalidQueryParameterValue`). Other range violations
//     are 400 `OutOfRangeQueryParameterValue`.
//   - Update Message refuses a visibility timeout that ends after the
//     message's expiry (400 `InvalidQueryParameterValue`); without a body it
//     keeps the text.
//   - Message text is stored and returned exactly as sent (no base64
//     requirement); over 64 KiB of UTF-8 is 413 `RequestBodyTooLarge` (what
//     the service answers in the JS SDK's recorded `messageid.spec.ts`, not
//     the listed 400 `MessageTooLarge`), a body
//     that is not `<QueueMessage><MessageText>…` is 400 `InvalidXmlDocument`.
//   - List Queues markers are queue names.
package queue
