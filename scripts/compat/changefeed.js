// The blob change feed through the JavaScript change feed client
// (@azure/storage-blob-changefeed) against a server started with
// --blob-change-feed (PORT_BASE: Blob on ${PORT_BASE}7). A workload of blob
// writes is made with @azure/storage-blob, then read back by the change
// feed client, which walks $blobchangefeed (segments.json, the years
// under idx/segments/, the segments' meta.json, the Avro chunks) as it
// does on Azure. Each step prints PASS/FAIL.
const { BlobServiceClient, StorageSharedKeyCredential } = require("@azure/storage-blob");
const { BlobChangeFeedClient } = require("@azure/storage-blob-changefeed");
const { step, same, failed } = require("./check.js");
const KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const A = "devstoreaccount1";
const P = process.env.PORT_BASE || "2460";
const U = `http://127.0.0.1:${P}7/` + A;
const SUBJ = "/blobServices/default/containers/jsfeed/blobs/";
(async () => {
  const cred = new StorageSharedKeyCredential(A, KEY);
  const svc = new BlobServiceClient(U, cred);
  const cf = new BlobChangeFeedClient(U, cred);
  const want = [["BlobCreated", "PutBlob", "a.txt"], ["BlobCreated", "PutBlob", "a.txt"], ["BlobPropertiesUpdated", "SetBlobMetadata", "a.txt"],
    ["BlobSnapshotCreated", "SnapshotBlob", "a.txt"], ["BlobTierChanged", "SetBlobTier", "a.txt"], ["BlobDeleted", "DeleteBlob", "a.txt"]];
  let put, del;
  await step("changefeed workload", async () => {
    const cc = svc.getContainerClient("jsfeed");
    await cc.create();
    const b = cc.getBlockBlobClient("a.txt");
    put = await b.upload("hello", 5, { blobHTTPHeaders: { blobContentType: "text/plain" } });
    try { await b.upload("no", 2, { conditions: { ifMatch: '"0x1"' } }); throw new Error("a refused overwrite succeeded"); }
    catch (e) { if (e.statusCode !== 412) throw e; }
    await b.upload("hello again", 11);
    await b.setMetadata({ k: "v" });
    const snap = await b.createSnapshot();
    await b.setAccessTier("Cool");
    del = await b.delete({ deleteSnapshots: "include" });
    return snap.snapshot;
  });
  let events = [];
  await step("changefeed listChanges: every committed write once, in order", async () => {
    for await (const e of cf.listChanges()) events.push(e);
    same(events.map(e => [e.eventType, e.data.blobOperationName || e.data.api, e.subject]), want.map(([t, a, n]) => [t, a, SUBJ + n]), "events");
    const seqs = events.map(e => e.data.sequencer);
    same(seqs, [...seqs].sort(), "sequencers in order");
    if (!(events[0].eventTime instanceof Date)) throw new Error("eventTime is not a date");
    same([events[0].data.requestId, events[0].data.etag || events[0].data.eTag, events[0].data.contentLength, events[0].data.contentType],
      [put.requestId, put.etag.replace(/"/g, ""), 5, "text/plain"], "the first event's data");
    same(events[5].data.requestId, del.requestId, "the delete's request id");
    same([events[4].data.blobAccessTier, events[4].data.previousInfo && events[4].data.previousInfo.previousTier], ["Cool", "Hot"], "the tier event");
    return events.length;
  });
  await step("changefeed resume from a continuation token", async () => {
    const first = (await cf.listChanges().byPage({ maxPageSize: 2 }).next()).value;
    same(first.events.length, 2, "the first page");
    const rest = [];
    for await (const p of cf.listChanges().byPage({ continuationToken: first.continuationToken })) for (const e of p.events) rest.push(e.eventType);
    same(rest, want.slice(2).map(w => w[0]), "the events after the token");
    return rest.length;
  });
  await step("changefeed time filter", async () => {
    const now = Date.now(), h = 3600e3;
    const inside = [];
    for await (const e of cf.listChanges({ start: new Date(now - 2 * h), end: new Date(now + 2 * h) })) inside.push(e);
    same(inside.length, want.length, "events within the hours around now");
    const later = [];
    for await (const e of cf.listChanges({ start: new Date(now + 3 * h) })) later.push(e);
    same(later.length, 0, "events from three hours on");
  });
  await step("changefeed container is read-only", async () => {
    try { await svc.getContainerClient("$blobchangefeed").getBlockBlobClient("meta/segments.json").upload("{}", 2); }
    catch (e) { if (e.statusCode === 403 && e.code === "InsufficientAccountPermissions") return e.code; throw e; }
    throw new Error("a write to $blobchangefeed succeeded");
  });
  process.exit(failed() ? 1 : 0);
})().catch(e => { console.log("FAIL changefeed probe crashed:", e.message); process.exit(1); });
