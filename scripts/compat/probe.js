const { BlobServiceClient, StorageSharedKeyCredential, BlobSASPermissions, generateBlobSASQueryParameters } = require("@azure/storage-blob");
const { QueueServiceClient, StorageSharedKeyCredential: QueueKey } = require("@azure/storage-queue");
const { TableClient, TableServiceClient, AzureNamedKeyCredential, odata } = require("@azure/data-tables");
const { ShareServiceClient, StorageSharedKeyCredential: FileKey } = require("@azure/storage-file-share");
const KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const A = "devstoreaccount1";
const cred = new StorageSharedKeyCredential(A, KEY);
const P = process.env.PORT_BASE || "4500";
const B = `http://127.0.0.1:${P}0/` + A, Q = `http://127.0.0.1:${P}1/` + A, T = `http://127.0.0.1:${P}2/` + A, F = `http://127.0.0.1:${P}3/` + A;
let ok = 0, bad = 0;
async function expect(name, code, f) {
  try { await f(); bad++; console.log("FAIL", name, "succeeded, want", code); }
  catch (e) { const got = e.code || (e.details && e.details.errorCode); if (got === code) { ok++; console.log("PASS", name, "->", code); } else { bad++; console.log("FAIL", name, e.statusCode, got, (e.message || "").split("\n")[0].slice(0, 200)); } }
}
async function step(name, f) {
  try { const r = await f(); ok++; console.log("PASS", name, r === undefined ? "" : JSON.stringify(r).slice(0, 150)); }
  catch (e) { bad++; console.log("FAIL", name, e.statusCode, e.code || e.details?.errorCode, (e.message || "").split("\n")[0].slice(0, 200)); }
}
(async () => {
  const bs = new BlobServiceClient(B, cred);
  const cc = bs.getContainerClient("jscont");
  await step("b create container", () => cc.createIfNotExists().then(r => r.succeeded));
  await step("b create again", () => cc.createIfNotExists().then(r => r.succeeded));
  const bb = cc.getBlockBlobClient("a.txt");
  await step("b upload", () => bb.upload("hello", 5, { tags: { k: "v" }, tier: "Cool" }).then(r => r.etag));
  await step("b big upload", () => cc.getBlockBlobClient("big").uploadData(Buffer.alloc(10 << 20, 7), { blockSize: 4 << 20 }).then(r => r.etag));
  await step("b download", () => bb.downloadToBuffer().then(b => b.toString()));
  await step("b range", () => bb.download(1, 3).then(r => r.contentLength));
  await step("b props", () => bb.getProperties().then(p => [p.accessTier, p.tagCount, p.contentType]));
  await step("b tags", () => bb.getTags().then(t => t.tags));
  await step("b find", () => (async () => { const out = []; for await (const b of bs.findBlobsByTags("\"k\"='v'")) out.push(b.name); return out; })());
  await step("b set tier", () => bb.setAccessTier("Hot").then(r => r._response.status));
  await step("b snapshot", () => bb.createSnapshot().then(r => r.snapshot));
  await step("b list", () => (async () => { const out = []; for await (const b of cc.listBlobsFlat({ includeSnapshots: true, includeTags: true })) out.push(b.name + (b.snapshot ? "@" : "")); return out; })());
  await step("b quoted names", async () => { const n = `it's "quoted" & <odd>.txt`; await cc.getBlockBlobClient(n).upload("q", 1, { metadata: { note: `say "hi", it's` } }); for await (const b of cc.listBlobsFlat({ includeMetadata: true, prefix: "it" })) { if (b.name !== n || b.metadata.note !== `say "hi", it's`) throw new Error("listed " + b.name + " " + JSON.stringify(b.metadata)); await cc.getBlockBlobClient(n).getProperties({ conditions: { ifMatch: b.properties.etag } }); await cc.getBlockBlobClient(n).delete(); return b.name; } throw new Error("not listed"); });
  await step("b hier", () => (async () => { const out = []; for await (const b of cc.listBlobsByHierarchy("/")) out.push(b.kind + ":" + b.name); return out; })());
  const lc = bb.getBlobLeaseClient();
  await step("b lease", () => lc.acquireLease(15).then(r => r.leaseId));
  await expect("b write leased", "LeaseIdMissing", () => bb.setMetadata({ a: "b" }));
  await step("b release", () => lc.releaseLease());
  await step("b copy sync", () => cc.getBlockBlobClient("copy").syncCopyFromURL(bb.url).then(r => r.copyStatus));
  await step("b copy async", () => cc.getBlockBlobClient("copy2").beginCopyFromURL(bb.url).then(p => p.pollUntilDone()).then(r => r.copyStatus));
  await step("b from url", () => cc.getBlockBlobClient("fromurl").syncUploadFromURL(bb.url).then(r => r._response.status));
  await step("b stage from url", () => cc.getBlockBlobClient("staged").stageBlockFromURL(Buffer.from("id1").toString("base64"), bb.url, 0, 3).then(r => r._response.status));
  const ab = cc.getAppendBlobClient("app");
  await step("b append", () => ab.createIfNotExists().then(() => ab.appendBlock("xyz", 3)).then(r => r.blobAppendOffset));
  await step("b seal", () => ab.seal().then(r => r.isSealed));
  const pb = cc.getPageBlobClient("page");
  await step("b page", () => pb.create(1024).then(() => pb.uploadPages(Buffer.alloc(512, 1), 0, 512)).then(r => r.blobSequenceNumber));
  await step("b page ranges", () => pb.getPageRanges().then(r => r.pageRange));
  const sas = generateBlobSASQueryParameters({ containerName: "jscont", blobName: "a.txt", permissions: BlobSASPermissions.parse("r"), expiresOn: new Date(Date.now() + 3600e3) }, cred).toString();
  await step("b sas read", () => fetch(bb.url + "?" + sas).then(r => r.status));
  const batch = cc.getBlobBatchClient();
  await step("b batch delete", () => batch.deleteBlobs([cc.getBlobClient("copy").url, cc.getBlobClient("copy2").url], cred).then(r => [r.subResponsesSucceededCount, r.subResponsesFailedCount]));
  await step("b batch tier", () => batch.setBlobsAccessTier([cc.getBlobClient("fromurl").url], cred, "Cool").then(r => [r.subResponsesSucceededCount, r.subResponsesFailedCount]));
  await step("b acct info", () => bs.getAccountInfo().then(r => [r.skuName, r.accountKind]));
  await step("b delete container", () => cc.delete());

  // Each package's own credential class: before the packages shared
  // @azure/storage-common, a client took another package's credential for
  // no credential at all and sent the request unsigned.
  const qs = new QueueServiceClient(Q, new QueueKey(A, KEY));
  const q = qs.getQueueClient("jsqueue");
  await step("q create", () => q.createIfNotExists().then(r => r.succeeded));
  await step("q json text", async () => { const t = '{"id":1,"who":"it\'s me"}'; await q.sendMessage(t); const got = (await q.peekMessages()).peekedMessageItems[0].messageText; await q.clearMessages(); if (got !== t) throw new Error("read back " + got); return got; });
  await step("q send", () => q.sendMessage("hi there").then(r => r.messageId));
  let m;
  await step("q receive", () => q.receiveMessages({ numberOfMessages: 2 }).then(r => { m = r.receivedMessageItems[0]; return r.receivedMessageItems.map(x => x.messageText); }));
  await step("q update", () => q.updateMessage(m.messageId, m.popReceipt, "changed", 0).then(r => { m.popReceipt = r.popReceipt; return r.nextVisibleOn; }));
  await step("q peek", () => q.peekMessages().then(r => r.peekedMessageItems.map(x => x.messageText)));
  await step("q delete", () => q.deleteMessage(m.messageId, m.popReceipt));
  await step("q props", () => q.getProperties().then(r => r.approximateMessagesCount));
  await step("q delete queue", () => q.delete());

  const tcred = new AzureNamedKeyCredential(A, KEY);
  const tc = new TableClient(T, "jstable", tcred, { allowInsecureConnection: true });
  await step("t create", () => tc.createTable());
  await step("t entity", () => tc.createEntity({ partitionKey: "p", rowKey: "1", n: 5, big: { value: "12345678901234", type: "Int64" }, d: new Date("2020-01-01T00:00:00Z"), bin: new Uint8Array([1, 2, 3]), g: { value: "12345678-1234-5678-1234-567812345678", type: "Guid" } }).then(r => r.etag));
  await step("t get", () => tc.getEntity("p", "1").then(e => Object.keys(e).sort()));
  await step("t query", () => (async () => { const out = []; for await (const e of tc.listEntities({ queryOptions: { filter: odata`n eq ${5} and PartitionKey eq ${"p"}`, select: ["n"] } })) out.push(e); return out; })());
  await step("t update etag", () => tc.getEntity("p", "1").then(e => tc.updateEntity({ partitionKey: "p", rowKey: "1", x: 1 }, "Merge", { etag: e.etag })).then(r => r.etag));
  await expect("t update stale", "UpdateConditionNotSatisfied", () => tc.updateEntity({ partitionKey: "p", rowKey: "1", x: 1 }, "Replace", { etag: 'W/"datetime\'2020-01-01T00%3A00%3A00.0000000Z\'"' }));
  await step("t tx", () => tc.submitTransaction([["create", { partitionKey: "p", rowKey: "2" }], ["upsert", { partitionKey: "p", rowKey: "3" }, "Replace"], ["delete", { partitionKey: "p", rowKey: "1" }]]).then(r => r.status));
  await expect("t tx fail", "EntityAlreadyExists", () => tc.submitTransaction([["create", { partitionKey: "p", rowKey: "4" }], ["create", { partitionKey: "p", rowKey: "2" }]]));
  const ts = new TableServiceClient(T, tcred, { allowInsecureConnection: true });
  await step("t list tables", () => (async () => { const out = []; for await (const t of ts.listTables({ queryOptions: { filter: odata`TableName eq ${"jstable"}` } })) out.push(t.name); return out; })());
  await step("t delete", () => tc.deleteTable());

  const fs = new ShareServiceClient(F, new FileKey(A, KEY));
  const sh = fs.getShareClient("jsshare");
  await step("f create", () => sh.createIfNotExists({ quota: 5 }).then(r => r.succeeded));
  const dir = sh.getDirectoryClient("d");
  await step("f dir", () => dir.createIfNotExists().then(r => r.succeeded));
  const fc = dir.getFileClient("f.txt");
  await step("f upload", () => fc.uploadData(Buffer.from("file data")));
  await step("f download", () => fc.downloadToBuffer().then(b => b.toString()));
  await step("f list", () => (async () => { const out = []; for await (const x of dir.listFilesAndDirectories()) out.push(x.kind + ":" + x.name); return out; })());
  await step("f rename", () => fc.rename("d/g.txt").then(r => r.destinationFileClient.name));
  await step("x blob to file", async () => {
    const xc = new BlobServiceClient(B, cred).getContainerClient("jsxcopy");
    await xc.createIfNotExists();
    const b = xc.getBlockBlobClient("src.txt");
    await b.upload("from a blob", 11);
    const dst = dir.getFileClient("fromblob.txt");
    const r = await dst.startCopyFromURL(b.url);
    const got = (await dst.downloadToBuffer()).toString();
    await xc.delete();
    if (got !== "from a blob") throw new Error("copied " + got);
    return r.copyStatus;
  });
  await step("f delete share", () => sh.delete({ deleteSnapshots: "include" }));
  console.log("ok", ok, "bad", bad);
})();
