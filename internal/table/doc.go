// Package table is the Azure Table service's domain: tables, entities
// with typed properties, OData filters over them (the $filter grammar
// lives in table/odata), optimistic concurrency by timestamps, entity
// group transactions applied in one kv transaction, and the purge of
// deleted tables. It knows no HTTP (it imports neither net/http nor
// internal/server; internal/archtest checks it): the REST front end,
// internal/table/tablerest, parses a request into one of the typed
// inputs of api.go, calls the method and renders its output as OData
// JSON or its azerr error.
//
// # Table
//
// The Table service is the domain `internal/table` (tables, entities,
// timestamps, batches, purge; no `net/http`, no `internal/server`, checked
// by `internal/archtest` as for Queue) and its REST front end
// `internal/table/tablerest`; `internal/table/odata` holds the `$filter`
// lexer, recursive-descent parser and evaluator (pure, golden tests in
// `testdata/filters.golden`, fuzzed), used by both.
//
// # Layers
//
//  1. **Parse** (`tablerest`: `service.go` routes and parses key
//     predicates, `tables.go`, `entities.go`, `query.go`, `batch.go`,
//     handlers, `json.go` OData JSON, `etag.go` ETags and
//     continuation tokens): the request becomes
//     typed values. An entity write is an `EntityWrite{Kind, Table,
//     PartitionKey, RowKey, Props []Property, If Condition}` built by
//     `buildWriteOp` from the OData JSON body and `If-Match`
//     (`parseIfMatch`: `Condition{Set, Any, ETag}`, required for deletes,
//     absent meaning insert-or-replace/merge); `$filter` is an
//     `*odata.Filter`, `$top` an int, `$select` a property list kept for
//     rendering, continuation tokens are decoded into `Continuation{PartitionKey,
//     RowKey}` or a table name; a SAS's key range becomes the `Allows`
//     predicate of a query.
//  2. **Decide** (`internal/table`, `api.go`): `CreateTable`, `DeleteTable`,
//     `GetTable`, `QueryTables`, `GetTableACL`, `SetTableACL`,
//     `WriteEntity` (insert, update, merge, delete and the upserts),
//     `WriteBatch`, `GetEntity`, `QueryEntities` (the service properties
//     are `ServiceProperties()`, the shared `svcprops.Service`), each
//     `(ctx, XxxInput) (XxxOutput, error)`. They run in `kv` transactions with
//     time from the injected clock, and return `*Entity` values, names,
//     timestamps (the ETag) and continuations, or `azerr` errors.
//     `WriteEntity` and `WriteBatch` apply their writes with the same
//     function (`applyWrites`): a batch operation is checked and applied
//     exactly as the single request would be.
//  3. **Render** (`tablerest`): `ETag`, `Location`, `Preference-Applied`,
//     continuation headers and the OData JSON (`jsonOut`, honouring
//     `$select` and the metadata level), or the multipart batch response.
//
// Insert Entity, for example: `insertEntity` checks the content type,
// reads the body, builds the `EntityWrite` (`buildWriteOp` validates keys,
// properties and size), checks a SAS key range, calls `WriteEntity`
// (which prefetches the table record, the entity and the partition mark in
// one round trip, then checks and writes in one `Update`) and renders the
// 201 entity or the 204 of `Prefer: return-no-content`.
//
// # Keys
//
//	| key | value |
//	|---|---|
//	| `tt / account / lower(table)` | table record (binary): state (active, deleting, deleted), generation, timestamp floor, creation time, the name as created, stored access policies |
//	| `t / account / lower(table) / PartitionKey / RowKey` | entity (binary): format byte, timestamp (.NET ticks), then `name, EDM type, value` per custom property |
//	| `tw / account / lower(table) / PartitionKey` | partition high-water mark: the latest timestamp retired by a delete in the partition |
//	| `tsp / account` | Table service properties (XML) |
//
// A partition is one contiguous range (`t/acct/table/pk/…`) and a table is
// the range `t/acct/table/…`, ordered by PartitionKey then RowKey (byte
// order of UTF-8, i.e. ordinal). Queries derive PartitionKey/RowKey bounds
// from the top-level `and` terms of `$filter` (`PartitionKey eq 'p' and
// RowKey ge 'a'`) and scan only that range; the filter is still evaluated
// on every scanned entity, reading properties straight from the stored
// bytes. Table names are case-insensitive (keys use the lower-cased name)
// and case-preserving (the record keeps the name as created).
//
// # Concurrency and ETags
//
// Every write (insert, update, merge, delete, upserts, and a whole batch)
// is one `Update` transaction that checks the table record, the entity and
// `If-Match`, and writes. The entity timestamp is the injected clock's time
// when the domain method starts (100 ns resolution) but strictly greater than the entity's current timestamp,
// the partition's high-water mark and the table's floor, so two writes in
// one clock tick, a clock stepping back, or a delete and re-insert never
// reuse an ETag. Only deletes raise the mark (to the timestamp they
// retire), so inserts and updates of different rows of one partition do
// not conflict on any key; both backends run `Update` serializably, so no
// extra guard key is needed. ETag = `W/"datetime'<timestamp with %3A>'"` =
// `Timestamp`. Reads use one `View`, so a query never sees part of a batch.
//
// An entity group transaction (`$batch`) is parsed and validated first (one
// changeset, ≤ 100 operations, one table and PartitionKey, each RowKey once,
// ≤ 4 MiB); then all operations run in order in one `Update` with one
// timestamp. The first failing operation aborts the transaction and the
// response (still 202) holds only that operation's error, its message
// prefixed with `index:`. A batch holding a single GET is a point query.
//
// Delete Table marks the record `deleting` (the table vanishes at once for
// every reader and writer) with a reclaim tombstone and answers; the
// background reclaimer deletes entities and partition marks in bounded
// transactions, folding their timestamps into the record's floor, then leaves
// the record as a `deleted` tombstone that carries the floor to a table
// re-created under the name. Until then Create Table of the name answers
// 409 `TableBeingDeleted`.
//
// # Behaviour choices
//
//   - Comparisons across EDM types never match, not even `ne` (`Int64Prop eq
//     5` needs `5L`; `DoubleProp eq 5` needs `5.0`); a missing property
//     matches nothing; `not` negates that false. NaN is unordered: only `ne`
//     holds. One side of a comparison must be a literal (either side).
//     Unsuffixed integer literals outside Int32 are 400, as in Azure.
//   - Keywords, literal prefixes (`datetime`, `guid`, `X`/`binary`) and
//     property names are case-sensitive; the boolean literals are not (`eq
//     True`). At most 15 comparisons per filter,
//     as documented ("no more than 15 discrete comparisons are permitted
//     within a $filter string"): the 16th is 400 `InvalidInput`; nesting is
//     limited to 100 levels.
//   - JSON values: integers in Int32 range are Int32, other numbers Double
//     (written back with a decimal point), Int64 as strings; Edm.Double accepts
//     `"NaN"`, `"Infinity"`, `"-Infinity"`; an annotated Edm.Boolean accepts
//     the strings `"true"`/`"false"` (any case); `null` properties are not stored;
//     DateTime keeps 100 ns; GUIDs are returned lower-case.
//   - Limits and codes: entity > 1 MiB (Azure's size formula) 400
//     `EntityTooLarge`; > 252 custom properties `TooManyProperties`; name >
//     255 `PropertyNameTooLong`, not a C# identifier `PropertyNameInvalid`;
//     string > 32 K UTF-16 units or binary > 64 KiB `PropertyValueTooLarge`;
//     keys > 1 KiB (UTF-16) `PropertyValueTooLarge`, containing `/ \ # ?` or a
//     control character `InvalidInput`; body > 4 MiB 413 `RequestBodyTooLarge`.
//     On PostgreSQL a kv key must stay under about 2.7 KB, which two
//     maximum-size keys of 3-byte UTF-8 characters (1.5 KB each) exceed; ASCII
//     keys of the maximum size fit.
//   - Missing table: 404 `TableNotFound` for entity operations and ACLs; Delete
//     Table and `GET Tables('x')` of a missing table: 404 `ResourceNotFound`
//     (Azure's answer). Delete Entity without `If-Match`: 400
//     `MissingRequiredHeader`. `$top` outside 1–1000: 400 `InvalidInput`.
//   - `$select` of a property an entity lacks returns it as `null`.
//   - `If-Match` with a weak ETag the service never issued (`W/"0x8D…"`, a
//     timestamp that is not the entity's) is a failed condition, 412
//     `UpdateConditionNotSatisfied` (404 without an entity); only a value
//     that is no ETag is 400 `InvalidInput`.
//   - Pages hold at most 1,000 entities and stop early after 5 s of scanning,
//     with continuation headers (`1!<n>!<base64url>` tokens, never empty).
//   - Batch failures carry no `x-ms-error-code` on the outer 202 (as Azure);
//     the aztables SDK reports them as a `*azcore.ResponseError` with status
//     202 whose body is the failing sub-response.
package table
