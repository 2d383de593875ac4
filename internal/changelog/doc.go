// Package changelog is the durable, ordered log of an account's blob
// changes: the one source the change feed ($blobchangefeed) is served
// from, and the one blob events can be delivered from.
//
// A change is appended by the transaction that makes it (Append takes the
// caller's kv.Tx), so a committed change always has its record and a
// change that did not commit never has one: there is no window between
// the two for a crash to fall into.
//
// Order. Append reads the account's last record (a reverse scan of one
// key: its key is the sequence number) and writes the record under the
// next number, all in the caller's transaction. The sequence numbers are
// therefore dense (1, 2, 3, ... with no gap: a transaction that does not
// commit takes no number) and one total order per account, the commit
// order, on every store:
//
//   - embedded (bbolt) and in-memory stores have a single writer, so
//     transactions that append are serialised anyway;
//   - on PostgreSQL (several front ends on one database, serializable
//     transactions) two concurrent appends to one account both read the
//     log's end and insert the same next record key, so one of them
//     fails to commit with a serialization failure and the backend runs
//     it again, after the other committed, with the next number.
//
// (A counter key held the last number until records were numbered from
// the log's end; a log that has one goes on from it, and Append retires
// it, so that an older Cerulean on the same store fails to append rather
// than numbering a record twice.)
//
// The cost of that: with the feed on, the writes of one account are
// serialised at the log's end on PostgreSQL — concurrent writers of
// different blobs that would otherwise commit in parallel conflict and
// retry (each retry re-runs the whole transaction). It is why the feed
// is opt-in, as on Azure, where it is an account setting. Accounts do
// not conflict with one another.
//
// Records are stored in a compact binary form (record.go); those stored
// as JSON before it are read as well.
//
// Reading: After returns the records after a position, in order, a
// bounded page at a time. Retention (dropping old records) is not done
// yet.
//
// # Change feed (internal/changelog, internal/avro)
//
// With the feed on for an account (`--blob-change-feed`, or `:changefeed` on
// the account in `--accounts`), every committed blob change appends one
// record to the account's change log **in the change's own transaction**
// (`blob/domain_changes.go`: each write path names its change with one
// call that wraps its transaction function), so a crash can neither lose
// a committed change's record nor record one that did not commit. The log
// is one total order per account: `changelog.Append` reads the log's
// last record and writes the next in the same transaction. On the
// embedded and in-memory stores writers are serialised anyway; on
// PostgreSQL two front ends appending to one account conflict on the
// log's end and one retries, so with the feed on an account's blob writes commit one at a
// time (the feed is opt-in, as on Azure). Hierarchical accounts are not
// hooked (Azure's change feed does not support them either).
//
// `$blobchangefeed` is not stored: List Blobs, Get Blob and Get Blob
// Properties of it are answered from the log (`blob/domain_changefeed.go`):
// `meta/segments.json`, one `idx/segments/YYYY/MM/DD/HH00/meta.json` per
// hour with records and one Avro chunk `log/00/YYYY/MM/DD/HH00/00000.avro`
// (`internal/avro`, one block per record, so a chunk only grows at its
// end and readers' cursors stay valid); writes to it are refused
// (`blobrest/changefeed.go`). docs/change-feed.md has the details.
//
// Blob events (internal/events, internal/events/webhook) are read from
// the same log: each subscription's deliverer reads after its durable
// position, sends one event (webhook POST, or a Put Message through the
// Queue domain) and advances the position in a transaction only after the
// endpoint accepted it, holding a lease row so one front end delivers a
// subscription at a time. internal/events is below the HTTP line; the
// HTTP sending and the /.cerulean/events admin endpoint are in webhook.
// docs/events.md has the details.
package changelog
