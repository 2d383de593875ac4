// Package server is Cerulean's HTTP front end: one listener per service,
// the middleware every Azure Storage response needs (request id, version,
// date, authentication, error rendering) and graceful shutdown. Domain
// logic lives in the service packages; this package only wires them.
//
// # Front end (internal/server)
//
// `Server.Wrap` is a pipeline of named stages over one request's
// `exchange` (`internal/server/pipeline.go`), in order: observe (metrics,
// debug log), prepare (metadata-name case, Expect tracking), syncClock,
// stamp (request id, Date, Server), version, checkVersion, address (the
// account, production-style and secondary URLs), authenticate, admit
// (known account, read-only secondary), cors (preflight answered here),
// dispatch; the first stage that refuses renders its error (`fail`).
//
// Dispatch is one order for every REST front end, `Door.Serve`
// (`internal/server/door.go`): a service fills one `server.Door` value
// (how it parses its URLs, routes, names the SAS target of an unrouted
// request, checks a SAS, decides an anonymous request, and its own extra
// checks) and its `ServeAzure` is one call of it. The order: a service
// without anonymous access (Door.Anonymous nil: Queue, Table, File)
// refuses a request without credentials, 401 `NoAuthenticationInformation`,
// before its URL is read; parse; route; an `x-ms-structured-body` the
// entry does not take is refused as a routing error; a routing error is
// answered after `SASFirst` (a forged SAS first); then the SAS against the
// entry's rule (any SAS refused as authentication on a `BearerOnly`
// entry, Get User Delegation Key), or the anonymous rule (Blob: the
// container's public access; dfs: refused once routed); the extras (Blob:
// the change feed's read-only container, customer-provided keys; dfs:
// names, hierarchical namespace, keys); a structured request body
// decoded (`StructuredRequest` entries); the handler; and `Answer` (File's
// refusals to Azure codes). Generic over the service's types, it adds no
// allocation per request (`BenchmarkDispatch` in blobrest).
//
// Every request gets `x-ms-request-id`, `Date` and `x-ms-version` (the one
// sent; 2009-09-19 when none was, as Azure does for anonymous requests). A
// malformed version is 400 `InvalidHeaderValue`; any well-formed version is
// accepted, newer ones included. Shared Key / Shared Key Lite are verified
// for every service before a handler runs (403 `AuthenticationFailed` with
// `AuthenticationErrorDetail`, nothing read or written). Errors are rendered
// in one place: XML for Blob/Queue, OData JSON for Table, the dfs
// endpoint's `{"error":{…}}` JSON for Data Lake Storage requests on the dfs
// port (`Service.DFS` tells them from the Blob requests the same port
// answers), no body on HEAD or 304, `x-ms-error-code` always; anything that is not an Azure error becomes
// 500 `InternalError` (logged), a store outage 503 `ServerBusy`. Before an
// error the rest of the request body is read and discarded (up to 64 MiB, 10
// s), so a client uploading a large body sees the error instead of a reset. A
// request sent with `Expect: 100-continue` whose body was never asked for
// gets its error at once, without `100 Continue`, and the connection
// closes (`server/expect.go`); so the writes that take a body apply their
// own checks once before reading it and again in their transaction
// (`internal/blob/checkfirst.go`, File `checkWriteFirst`).
//
// Plain listeners run connServer (`internal/server/conn.go`,
// `--http-engine cerulean`, the default): it reads each request with
// `http.ReadRequest` on the connection's own goroutine and writes the
// response head from the handler's header map, as net/http's server
// would write it, for requests of the shape the SDKs send (HTTP/1.1, a
// head within 16 KiB, one valid Host, a body framed by Content-Length or
// none, no Expect, Transfer-Encoding or Upgrade). At the first request of
// another shape the connection, with the bytes read so far, goes to
// net/http's server under the tap for the rest of its life; metadata
// names of the requests connServer serves come from the head it holds.
// `--http-engine go` runs net/http's server for every connection, as TLS
// listeners always do.
//
// HTTPS (`--tls-cert`/`--tls-key`): `crypto/tls` sits under the
// metadata-name tap (the tap must read the plaintext request), so net/http
// sees a plain connection and leaves `Request.TLS` nil; the front end sets
// `server.Request.HTTPS` from the connection instead, which SAS `spr=https`
// checks and the endpoint URLs in listings use. Only HTTP/1.1 is offered
// (ALPN), as the tap parses HTTP/1.1 framing.
//
// Resource limits (`server.Limits`, `internal/server/limits.go`;
// docs/security.md lists them all): one counter caps the connections of all
// HTTP listeners, taken under TLS so that the tap still finds the
// `*tls.Conn`; past the cap a connection is accepted, answered 503
// `ServerBusy` in the service's format (over TLS on HTTPS) and closed. A
// handler wrapped around every listener's enforces the body progress rule
// by moving the connection's read deadline as body bytes arrive; only time
// blocked in a body read counts, so a slow store never fails an upload, and
// the deadline is cleared at the body's end (net/http's background read
// would take its expiry for a client gone and cancel the request).
//
// Bearer tokens (`--oauth basic`, `auth.VerifyBearer`): checked before
// Shared Key when the mode is on; issuer, audience and lifetime are
// verified, the signature is not (there is no Entra ID tenant to take keys
// from), and a valid token authenticates for the URL's account exactly as
// Shared Key does. Over plain HTTP, or with the mode off, a bearer token is
// refused.
//
// Operations (`internal/metrics`, `--metrics-port`): a `server.Observer`
// sees every request a listener answers (not a batch's sub-requests) with
// the operation its service routed it to (`server.Request.Op`, the name
// of the route-table entry it matched) and the status sent, captured by a
// ResponseWriter wrapper that passes `ReadFrom` and `Unwrap` through, so
// downloads keep net/http's copy path; counting costs 129 ns per request
// (`BenchmarkObserve`). Every operation of the route tables is listed in
// `cerulean_operation_info` from the start (`Metrics.Operations`, fed by
// each service's `Operations()`), so a dashboard sees operations that have
// not been requested yet. The SMB server reports each answered request's
// command and NTSTATUS to an `smb.Observer` the same way (an asynchronous
// operation counts with its interim STATUS_PENDING). `/readyz` reads one key of the store with a 2 s
// bound, so a front end whose database is unreachable drops out of a load
// balancer, and turns 503 as soon as shutdown begins, before the listeners
// stop accepting; `TestDatabaseRestart` checks both on PostgreSQL.
//
// Clock control (`--clock-control`, `internal/clockctl`): the injected
// clock becomes the wall clock plus an offset kept in the kv store (one
// record, so it survives a restart and PostgreSQL front ends share it).
// Its admin endpoint is an `http.Handler` that every listener serves under
// `server.ReservedPrefix` (`/.cerulean/`, which no Azure URL can begin
// with) ahead of the Azure middleware (`server.Config.Reserved`); a console
// can mount the same handler. On a shared store the middleware calls the
// clock's `Sync` before it reads a request's time, outside any transaction
// (re-reading the record once it is 200 ms old), and an advance waits
// 200 ms before answering, so the next request anywhere sees it. An
// advance runs `Shift` hooks in its transaction to extend deadlines that
// stand for real durations (SMB heartbeat leases, the collector's grace);
// `clock.Wall` gives the real time to what must not move (Shared Key's
// date skew, chunk ages and pin leases in `internal/extent`).
//
// Web console (`--console-port`, `internal/console`, docs/console.md): a
// listener of its own beside the metrics one, serving an embedded
// single-page app. It adds no path to the service ports: the page signs
// Shared Key in the browser and the console reverse-proxies
// `/api/{service}/…` to the service listener with only that prefix taken
// off (the signature covers the path the service sees), so the requests go
// through the whole pipeline as any client's. What REST cannot show comes
// from read-only endpoints under `/x/{account}/` (Shared Key checked with
// `auth.Authenticate`), answered by `console.Inspector`, which
// `internal/app/console.go` implements over small read-only domain methods
// (`queue.Service.InspectMessages`, `blob.Service.InspectLease`,
// `file.Service.ListHandles`, and package `handle`'s `Locks` and
// `DeletePendingIn` in a view transaction). The activity list is a ring of the last 500
// requests fed by `server.Config.Requests`, called where the Observer is
// (`observed`).
//
// CORS: services implement `server.CORSRuler` (their Set Service Properties
// rules, `internal/svcprops`); the front end answers `OPTIONS` preflights
// without authentication (200 with `Access-Control-Allow-*`, 403
// `CorsPreflightFailure` when no rule matches, 400 `InvalidHeaderValue`
// without `Origin` or `Access-Control-Request-Method`) and adds
// `Access-Control-Allow-Origin` / `-Expose-Headers` / `-Allow-Credentials`
// to requests from an allowed origin (`*`, exact, or a wildcard subdomain
// such as `http://*.contoso.com`), errors included. GET and HEAD of a
// service with rules carry `Vary: Origin` unless a `*` rule matched, so
// every GET and HEAD needs the rules, not only those with an `Origin`:
// `svcprops.CORSRules` keeps each account's for a second (Set Service
// Properties on the same process drops the copy at once; another front end
// sees a change within the second) rather than reading the properties
// record in a transaction per request.
//
// Service Properties and Stats are one implementation for Blob, Queue,
// Table and File, parameterised by `svcprops.Kind`: the domain
// `svcprops.Service` (the document, which elements a kind has, the
// validation, the stored record under the service's key, Get Service
// Stats for the kinds that have it, the CORS rules) and one set of
// handlers, `svcpropsrest.GetProperties` / `SetProperties` / `GetStats`,
// returning their answer (`Response`) as every handler does, that each
// route table names instantiated for its own types
// (`svcpropsrest.GetProperties[*Service, *req]`; a front end offers
// `ServiceProperties()`, a request `server.Request.Base()`). The dfs port
// hands these requests to the Blob service.
//
// # Route tables
//
// Each service lists its operations once, in a route table
// (`server.Routes[H]`, built in the service's `routes.go`). One entry is
// one operation, and dispatch, the SAS check and the metrics label all
// read it:
//
//   - `Methods`: a set of `GET`, `HEAD`, `PUT`, `POST`, `DELETE`, `MERGE`,
//     `PATCH` (Data Lake Storage's Path Update)
//     (GET and HEAD are distinct bits: Get Blob is GET, Get Blob Properties
//     HEAD);
//   - `Levels`: the resource levels the URL may address, each service's own
//     (Blob: account, container, blob; Queue: account, queue, messages,
//     message; Table: service, `$batch`, `Tables`, `Tables('t')`, entities,
//     entities `()`, one entity; File: account, share, path);
//   - selectors `Comp` and `Restype` (exact, `""` for absent, `server.Any`
//     for any value), `Resource` and `Action` (Data Lake Storage's,
//     consulted only when set);
//   - `Headers` and `Query` conditions that tell operations on one URL apart
//     (`x-ms-copy-source` present: Copy Blob; with `x-ms-blob-type` too: Put
//     Blob From URL; `peekonly=true`: Peek Messages);
//   - `Name` (the operation's name: `server.Request.Op`, the metrics
//     label; no handler chooses by it), `Handler` (a method expression such as
//     `(*Service).putBlob`, called as `rt.Handler(s, r)`: no closure per
//     request; it returns its answer, a `Response`, which `Door.Serve`
//     renders with `RenderFor`: headers in order, a body or a read's
//     streamed `Content`);
//   - `SAS`, a `server.SASRule`, or `SharedKeyOnly` (403 AuthorizationFailure
//     for any SAS): exactly one, which `NewRoutes` enforces at start;
//     `BearerOnly` (with `SharedKeyOnly`) refuses any SAS as failed
//     authentication, as Get User Delegation Key does;
//   - `Structured`: whether the operation takes `x-ms-structured-body`, for
//     its request body (Put Blob, Put Block, Put Page, Append Block, Put
//     Range, Path - Update append) or its response (Get Blob, Get File);
//     every other refuses it (`routetest.Rules` checks the tables);
//   - `Flags`, the service's own facts: a Blob PUT allowed on a snapshot, a
//     File operation allowed on a share snapshot, Get Account Information's
//     SAS resource type taken from the URL's level, the Blob reads an
//     anonymous request may make under each public access level, the Blob
//     operations a batch may carry, Copy Blob's refusal of a
//     customer-provided key (`TestRouteFlagsMatchReference`), a Table
//     batch's SAS checked for the token's table.
//
// Entries are tried in order, among those of the request's level and
// method (`Match` indexes them so; Put Blob routes in about 70 ns without
// allocating, `BenchmarkRouteLookup`). What is not a route stays in the
// service's `route()` around the table, with its own error: Blob's
// restype checks and its refusal of writes to a snapshot, Queue and Table
// name checks, `peekonly` values, File's unknown `restype` and
// `InvalidURI`. One operation may have several entries (Get Container
// Properties with and without `comp=metadata`); entries of one name share
// handler, flags and structured-body and bearer-only rules, and differ in
// SAS rule only as variants told apart by a header or a query parameter
// (Lease Blob's break, which Delete may do; Update Entity without
// `If-Match`, an upsert that takes Add and Update; Delete Blob of a
// `versionid`, which takes `x`). `Routes.Verify`, run
// by each service's `TestRoutesTable`, checks those rules and that no
// entry is shadowed by an earlier one; `TestRoutesDispatch` routes a
// request of every operation. `Operations()` gives each service's names
// to the metrics (`cerulean_operation_info`).
//
// SAS tokens are verified by `internal/auth/sas.go` (pure functions: layout
// by `sv`, signature, time window, IP, protocol, stored policies, and the
// service / resource-type / permission checks). Stored policies are
// `policy.Stored` values (`internal/policy`, free of HTTP): the domains keep
// them in their ACLs and `server.Policies` resolves a token's `si` against
// them. Each service checks the
// token after routing, against the `server.SASRule` of the route-table
// entry it matched (see "Route tables"); an error found before that check (no such
// operation, a malformed name or parameter) is answered only after the
// token is verified against what the URL names (`server.Request.SASFirst`),
// so a forged or expired token is always 403 AuthenticationFailed. A `sig`
// the query parser drops (a bad escape, a `;`) is a malformed token, 403
// AuthenticationFailed, never an anonymous request. An operation that names
// a second resource authorizes it on its own: a copy source by its own SAS
// (or public access, or Shared Key within the account), a File or Data
// Lake rename source by the SAS on its header, each batch part by its own
// credentials (`TestSecondResourceAuthorization`). Service
// SAS response-header overrides (`rscc` … `rsct`) apply to Get Blob, Get
// File and their properties. Error codes chosen without a recording of the
// service: 403 AuthorizationFailure for a SAS on a Shared Key only operation
// (ACLs), for a table entity outside the token's key range and for a batch
// part naming another table than the token's; 403
// AuthorizationResourceTypeMismatch for a service SAS on an operation only
// an account SAS reaches (a container's own properties, metadata, lease,
// create and delete; queue, table and share operations). The rules follow
// the reference's: an account SAS's `w` creates containers, queues,
// tables and shares as `c` does, and `srt=s` with `r`/`w` reads and writes
// service properties (and stats); Query Tables takes `l` at `srt=c`; a
// token with `c` but not `w` creates blobs and files but does not replace
// them (checked where the write finds the existing blob or file); `d`
// breaks a blob lease (and, with an account SAS, a container lease) for a
// token of `sv` 2017-07-29 or later (`SASRule.SinceAnyOf`), the break
// being its own entry of the route table (`x-ms-lease-action: break`);
// Clear Messages takes `d`, which only an account SAS grants
// (`SASRule.AccountPermission`: a queue's service SAS signed with `d` is
// 403 AuthorizationPermissionMismatch). `TestFidSvcSASPermissionTable`
// walks them for the four services.
//
// User delegation SAS (`internal/auth/delegation.go`): Get User Delegation
// Key (`server.UserDelegationKey`, on the Blob endpoint with `sks`
// `b`, on the File endpoint with `sks` `f` and on the Queue endpoint with
// `sks` `q`) answers bearer-token
// callers only (`server.Request.Principal`, the token's `oid` and `tid`). The key it returns is an HMAC, under the
// account's first key, of the key's signed fields (`skoid`, `sktid`, `skt`,
// `ske`, `sks`, `skv`, `skdutid`), so a token signed with it carries all
// that verification needs: the verifier derives the key again from each of
// the account's keys and checks the signature laid out by `sv` (2018-11-09
// up to 2026-04-06: `saoid`/`suoid`/`scid`, `ses`, `skdutid`/`sduoid`,
// `srh`/`srq`; an Azure Files one, from sv 2025-07-05, in its own
// shorter layout, `FileDelegationSASStringToSign`; a queue one, from sv
// 2026-02-06, in another, `QueueDelegationSASStringToSign`). Nothing is stored, every front end verifies alike, and
// rotating the account key away revokes every key derived from it, as on
// Azure. A token naming a delegated user (`sduoid`) needs that user's
// bearer token beside it: the front end verifies the bearer token, and when
// the query's SAS names a delegated user the SAS authorizes the request and
// the token's principal only goes to the check (`auth.SASRequest.Bearer`:
// its `oid` must be `sduoid`, its `tid` the key's `skdutid` when there is
// one); alone, or with another user's token, it is 403
// `AuthenticationFailed`.
//
// Production-style URLs: a host of two or more labels, not an IP address,
// whose first label is an account (`devstoreaccount1.blob.localhost`) is
// that account; the request is routed as if the account led its path and
// its Shared Key signature is checked over the path as sent
// (`Server.productStyle`, the same rewrite as `accountInHost`). Listings
// then name the endpoint without the account. `--disableProductStyleUrl`
// (Azurite mode) turns it off.
//
// Beside each route table, `server.Unsupported` (blob and file
// `routes.go`) names the Azure operations not served, by restype/comp: a
// request no route matches that selects one answers 501 NotImplemented
// naming it (README "Not supported yet") instead of a generic 400.
//
// The commands (`cmd/cerulean/commands.go`): one table feeds dispatch and
// `--help`. With `CERULEAN_HEALTH_FILE` set, every command line form writes
// its process id and the addresses it opened there once up and removes it
// on a clean stop (`healthfile.go`); `cerulean health` probes exactly those
// with requests it signs itself. The server's binary links no Azure SDK: the
// load generator is `cmd/cerulean-bench` (`internal/bench`), and a test
// (`TestServerLinksNoClientSDK`) keeps it so.
//
// Azurite's command line (`cmd/cerulean/azurite.go`): the program names
// `azurite`, `azurite-blob`, `azurite-queue`, `azurite-table` (links) or the
// `cerulean azurite` subcommand parse Azurite 3.x's flags into the same
// `app.Config` as `cerulean serve` and print Azurite's start lines on
// standard output, which Testcontainers and scripts wait for. Per-service
// hosts and keep-alive timeouts reach the listeners (`app.Config.BlobHost`
// …, `server.Service.IdleTimeout`); every failure before the listeners are
// up exits 2 with one line.
package server
