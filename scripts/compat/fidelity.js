// fidelity.js: probes of behaviour the JavaScript SDKs' own tests (recorded
// against Azure) depend on: Blob Batch as the SDK frames it, tag
// expressions with bare names and conditional tags, CORS preflights, and
// SAS permission letters on every service. Run by clients-js.sh with the
// newest SDKs and with versions about two years older. A step that
// provokes an error passes only with Azure's error code (x-ms-error-code,
// which the SDK also reads from a HEAD response's headers).
const { BlobServiceClient, StorageSharedKeyCredential, generateAccountSASQueryParameters, generateBlobSASQueryParameters,
  AccountSASPermissions, AccountSASResourceTypes, AccountSASServices, BlobSASPermissions, ContainerSASPermissions } = require("@azure/storage-blob");
const { BlobClient } = require("@azure/storage-blob");
const { QueueServiceClient, StorageSharedKeyCredential: QueueKey } = require("@azure/storage-queue");
const { TableServiceClient, AzureNamedKeyCredential } = require("@azure/data-tables");
const KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const A = "devstoreaccount1";
const cred = new StorageSharedKeyCredential(A, KEY);
const P = process.env.PORT_BASE || "4500";
const B = `http://127.0.0.1:${P}0/` + A, Q = `http://127.0.0.1:${P}1/` + A, T = `http://127.0.0.1:${P}2/` + A;
let ok = 0, bad = 0;
async function expect(name, code, f) {
  try { await f(); bad++; console.log("FAIL", name, "succeeded, want", code); }
  catch (e) { const got = e.code || (e.details && e.details.errorCode); if (got === code) { ok++; console.log("PASS", name, "->", code); } else { bad++; console.log("FAIL", name, e.statusCode, got, (e.message || "").split("\n")[0].slice(0, 200)); } }
}
async function step(name, f) {
  try { const r = await f(); ok++; console.log("PASS", name, r === undefined ? "" : JSON.stringify(r).slice(0, 150)); }
  catch (e) { bad++; console.log("FAIL", name, e.statusCode, e.code || e.details?.errorCode, (e.message || "").split("\n")[0].slice(0, 200)); }
}
function accountSAS(perms, types, services) {
  return generateAccountSASQueryParameters({
    expiresOn: new Date(Date.now() + 3600e3), permissions: AccountSASPermissions.parse(perms),
    resourceTypes: AccountSASResourceTypes.parse(types).toString(), services: AccountSASServices.parse(services).toString(),
  }, cred).toString();
}
(async () => {
  const bs = new BlobServiceClient(B, cred);
  const cc = bs.getContainerClient("jsfidelity");
  await cc.createIfNotExists();
  const a = cc.getBlockBlobClient("a.txt"), b = cc.getBlockBlobClient("b.txt");
  await a.upload("aaa", 3, { tags: { tag1: "val1" } });
  await b.upload("bbb", 3, { tags: { tag1: "val2" } });

  // Blob Batch as this SDK version frames it.
  const batch = cc.getBlobBatchClient();
  await step("batch tier", () => batch.setBlobsAccessTier([a.url, b.url], cred, "Cool").then(r => { if (r.subResponsesFailedCount) throw new Error(JSON.stringify(r.subResponses.map(s => s.errorCode))); return r.subResponsesSucceededCount; }));
  const tmp = cc.getBlockBlobClient("tmp.txt");
  await tmp.upload("t", 1);
  await step("batch delete", () => batch.deleteBlobs([tmp.url], cred).then(r => { if (r.subResponsesFailedCount) throw new Error("failed"); return r.subResponsesSucceededCount; }));
  // A failed sub-request counts as failed: the SDK (BatchResponseParser)
  // matches the header name x-ms-error-code case-sensitively and takes the
  // status line's reason phrase as the message.
  await tmp.upload("t", 1);
  await step("batch delete counts a failure", () => batch.deleteBlobs([tmp.url, cc.getBlobClient("missing.txt").url], cred).then(r => {
    const s = r.subResponses;
    if (r.subResponsesSucceededCount !== 1 || r.subResponsesFailedCount !== 1 || s[1].status !== 404 || s[1].errorCode !== "BlobNotFound" || s[1].statusMessage !== "The specified blob does not exist.")
      throw new Error(JSON.stringify([r.subResponsesSucceededCount, r.subResponsesFailedCount, s.map(x => [x.status, x.errorCode, x.statusMessage])]));
    return [r.subResponsesSucceededCount, r.subResponsesFailedCount];
  }));
  const asas = accountSAS("rwdlacupt", "sco", "b");
  await step("batch account SAS", () => new BlobServiceClient(B + "?" + asas).getBlobBatchClient().setBlobsAccessTier([new BlobClient(a.url + "?" + asas)], "Hot").then(r => { if (r.subResponsesFailedCount) throw new Error(JSON.stringify(r.subResponses.map(s => s.errorCode))); return r.subResponsesSucceededCount; }));

  // Tags: bare names in where= and in x-ms-if-tags.
  await step("tags find bare name", async () => { const out = []; for await (const x of bs.findBlobsByTags("tag1='val1'")) out.push(x.name); if (!out.includes("a.txt") || out.includes("b.txt")) throw new Error(JSON.stringify(out)); return out; });
  await step("tags find in container", async () => { const out = []; for await (const x of cc.findBlobsByTags("tag1='val2'")) out.push(x.name); if (out.join() !== "b.txt") throw new Error(JSON.stringify(out)); return out; });
  await step("tags if-tags met", () => a.setMetadata({ k: "v" }, { conditions: { tagConditions: "tag1='val1'" } }).then(r => r._response.status));
  await expect("tags if-tags not met", "ConditionNotMet", () => a.setMetadata({ k: "v" }, { conditions: { tagConditions: "tag1='nope'" } }));

  // Checksums and properties as stored.
  await step("content-md5 stored as given", () => a.setHTTPHeaders({ blobContentMD5: new Uint8Array([1, 2, 3, 4]), blobContentType: "text/x" }).then(() => a.getProperties()).then(p => { if (Buffer.from(p.contentMD5).toString("hex") !== "01020304") throw new Error(Buffer.from(p.contentMD5 || []).toString("hex")); return p.contentType; }));
  await step("set properties clears content type", () => a.setHTTPHeaders({}).then(() => a.getProperties()).then(p => { if (p.contentType) throw new Error("kept " + p.contentType); return null; }));
  const app = cc.getAppendBlobClient("app");
  await step("append unsealed", () => app.createIfNotExists().then(() => app.getProperties()).then(p => { if (p.isSealed !== false) throw new Error(String(p.isSealed)); return p.isSealed; }));

  // CORS: rules set through Set Blob Service Properties drive preflights.
  await bs.setProperties({ cors: [{ allowedOrigins: "http://*.contoso.com", allowedMethods: "GET,PUT", allowedHeaders: "x-ms-meta-*", exposedHeaders: "x-ms-meta-*", maxAgeInSeconds: 60 }] });
  await step("cors subdomain preflight", () => fetch(a.url, { method: "OPTIONS", headers: { Origin: "http://www.contoso.com", "Access-Control-Request-Method": "GET" } }).then(r => { if (r.status !== 200 || r.headers.get("access-control-allow-origin") !== "http://www.contoso.com") throw new Error(r.status + " " + r.headers.get("access-control-allow-origin")); return r.status; }));
  await step("cors preflight without method is 400", () => fetch(a.url, { method: "OPTIONS", headers: { Origin: "http://www.contoso.com" } }).then(r => { if (r.status !== 400) throw new Error(String(r.status)); return r.status; }));
  await step("cors other origin is 403 CorsPreflightFailure", () => fetch(a.url, { method: "OPTIONS", headers: { Origin: "http://evil.example", "Access-Control-Request-Method": "GET" } }).then(r => { const code = r.headers.get("x-ms-error-code"); if (r.status !== 403 || code !== "CorsPreflightFailure") throw new Error(r.status + " " + code); return [r.status, code]; }));
  await bs.setProperties({ cors: [] });

  // SAS permission letters.
  await step("account SAS w+srt=c creates a container", () => new BlobServiceClient(B + "?" + accountSAS("w", "c", "b")).getContainerClient("jssascreated").create().then(r => r._response.status));
  await step("account SAS w+srt=c creates a queue", () => new QueueServiceClient(Q + "?" + accountSAS("w", "c", "q")).getQueueClient("jssasqueue").create().then(r => r._response.status));
  await step("account SAS w+srt=c creates a table", () => new TableServiceClient(T + "?" + accountSAS("w", "c", "t"), { allowInsecureConnection: true }).createTable("jssastable").then(() => "created"));
  await step("account SAS srt=s reads queue service properties", () => new QueueServiceClient(Q + "?" + accountSAS("r", "s", "q")).getProperties().then(r => r._response.status));
  const csas = generateBlobSASQueryParameters({ containerName: "jsfidelity", permissions: ContainerSASPermissions.parse("racwdl"), expiresOn: new Date(Date.now() + 3600e3) }, cred).toString();
  await expect("container SAS cannot read container properties", "AuthorizationResourceTypeMismatch", () => new BlobServiceClient(B + "?" + csas).getContainerClient("jsfidelity").getProperties());
  const createOnly = generateBlobSASQueryParameters({ containerName: "jsfidelity", blobName: "new.txt", permissions: BlobSASPermissions.parse("c"), expiresOn: new Date(Date.now() + 3600e3) }, cred).toString();
  const readSrc = generateBlobSASQueryParameters({ containerName: "jsfidelity", blobName: "b.txt", permissions: BlobSASPermissions.parse("r"), expiresOn: new Date(Date.now() + 3600e3) }, cred).toString();
  await step("service SAS c copies to a new blob", () => new BlobServiceClient(B + "?" + createOnly).getContainerClient("jsfidelity").getBlockBlobClient("new.txt").syncCopyFromURL(b.url + "?" + readSrc).then(r => r.copyStatus));
  const noRead = generateBlobSASQueryParameters({ containerName: "jsfidelity", blobName: "b.txt", permissions: BlobSASPermissions.parse("w"), expiresOn: new Date(Date.now() + 3600e3) }, cred).toString();
  await expect("copy source SAS without read", "CannotVerifyCopySource", () => cc.getBlockBlobClient("c.txt").syncCopyFromURL(b.url + "?" + noRead));

  await bs.getContainerClient("jssascreated").deleteIfExists();
  await new QueueServiceClient(Q, new QueueKey(A, KEY)).getQueueClient("jssasqueue").deleteIfExists();
  await new TableServiceClient(T, new AzureNamedKeyCredential(A, KEY), { allowInsecureConnection: true }).deleteTable("jssastable").catch(() => {});
  await cc.delete();
  console.log("ok", ok, "bad", bad);
})();
