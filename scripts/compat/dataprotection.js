// Container and share soft delete and version-level immutability through
// the newest @azure/storage-blob and @azure/storage-file-share, against the
// server scripts/clients-js.sh starts as D (Blob on VERSIONING_PORT, File
// on the port after it; --blob-versioning --container-soft-delete 7
// --share-soft-delete 7, and a second account, wormacct, marked
// :versioning:immutability). Each step drives what Azure's "Soft delete for
// containers", "Soft delete for Azure file shares" and "Configure
// immutability policies for blob versions" pages describe and prints
// PASS/FAIL; then container-level WORM (a legal hold, an Unlocked and a
// Locked time-based retention policy on a container of the dev account,
// set through Cerulean's admin endpoint, see wormAdmin below).
const { BlobServiceClient, StorageSharedKeyCredential } = require("@azure/storage-blob");
const { ShareServiceClient, StorageSharedKeyCredential: FileCredential } = require("@azure/storage-file-share");
const { step, same, refused, all, failed } = require("./check.js");
const http = require("http");
const KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const A = "devstoreaccount1";
const P = Number(process.env.VERSIONING_PORT || `${process.env.PORT_BASE || "2460"}8`);
(async () => {
  const blobs = new BlobServiceClient(`http://127.0.0.1:${P}/${A}`, new StorageSharedKeyCredential(A, KEY));
  const files = new ShareServiceClient(`http://127.0.0.1:${P + 1}/${A}`, new FileCredential(A, KEY));
  const worm = new BlobServiceClient(`http://127.0.0.1:${P}/wormacct`, new StorageSharedKeyCredential("wormacct", KEY));

  await step("data protection: container soft delete and restore", async () => {
    const cc = blobs.getContainerClient("jsdp-cont");
    await cc.create({ metadata: { m: "1" } });
    for (let i = 0; i < 4; i++) await cc.getBlockBlobClient(`b${i}`).upload(`blob ${i}`, 6);
    await cc.delete();
    same((await all(blobs.listContainers({ prefix: "jsdp-cont" }))).length, 0, "a deleted container is not listed");
    const deleted = (await all(blobs.listContainers({ prefix: "jsdp-cont", includeDeleted: true }))).filter(c => c.deleted);
    same(deleted.length, 1, "includeDeleted lists it");
    const d = deleted[0];
    // Right after a delete under a 7-day policy Azure answers 6 whole days
    // left (azure-sdk-for-js's recorded container listings with
    // includeDeleted).
    same([!!d.version, d.properties.remainingRetentionDays, d.properties.deletedOn instanceof Date], [true, 6, true], "its version, days left, deletion time");
    await cc.create();
    await refused(() => blobs.undeleteContainer("jsdp-cont", d.version), 409, "ContainerAlreadyExists", "restore onto a taken name");
    await cc.delete();
    await refused(() => blobs.undeleteContainer("jsdp-cont", "0000000000000001"), 404, "ContainerNotFound", "an unknown version");
    const { containerClient } = await blobs.undeleteContainer("jsdp-cont", d.version);
    same((await all(containerClient.listBlobsFlat())).map(b => b.name), ["b0", "b1", "b2", "b3"], "the restored blobs");
    same((await containerClient.getBlockBlobClient("b2").downloadToBuffer()).toString(), "blob 2", "a restored blob's content");
    same((await containerClient.getProperties()).metadata, { m: "1" }, "the restored metadata");
  });

  await step("data protection: share soft delete and restore", async () => {
    const sc = files.getShareClient("jsdp-share");
    await sc.create();
    await sc.getDirectoryClient("dir").create();
    await sc.getDirectoryClient("dir").getFileClient("f.txt").uploadData(Buffer.from("kept"));
    await sc.delete();
    const deleted = (await all(files.listShares({ prefix: "jsdp-share", includeDeleted: true }))).filter(s => s.deleted);
    same(deleted.length, 1, "includeDeleted lists it");
    const d = deleted[0];
    await sc.create();
    await refused(() => files.undeleteShare("jsdp-share", d.version), 409, "ShareAlreadyExists", "restore onto a taken name");
    await sc.delete();
    const restored = await files.undeleteShare("jsdp-share", d.version);
    same((await restored.getDirectoryClient("dir").getFileClient("f.txt").downloadToBuffer()).toString(), "kept", "a restored file");
  });

  await step("data protection: version-level immutability and legal hold", async () => {
    const cc = worm.getContainerClient("jsdp-worm");
    await cc.create();
    same((await cc.getProperties()).isImmutableStorageWithVersioningEnabled, true, "the container's support");
    const b = cc.getBlockBlobClient("kept.txt");
    await b.upload("kept", 4);
    const until = new Date(Math.floor(Date.now() / 1000) * 1000 + 3600e3);
    await b.setImmutabilityPolicy({ expiriesOn: until, policyMode: "Unlocked" });
    const p = await b.getProperties();
    same([p.immutabilityPolicyExpiresOn.getTime(), p.immutabilityPolicyMode], [until.getTime(), "unlocked"], "the policy read back");
    await refused(() => b.delete(), 409, "BlobImmutableDueToPolicy", "delete under a policy");
    await b.deleteImmutabilityPolicy();
    await b.setLegalHold(true);
    same((await b.getProperties()).legalHold, true, "the legal hold read back");
    await refused(() => b.delete(), 409, "BlobImmutableDueToLegalHold", "delete under a legal hold");
    await b.setLegalHold(false);
    await b.setImmutabilityPolicy({ expiriesOn: until, policyMode: "Locked" });
    await refused(() => b.deleteImmutabilityPolicy(), 409, "ImmutabilityPolicyDeleteOnLockedPolicy", "delete a locked policy");
    await refused(() => cc.delete(), 409, "ContainerImmutableStorageWithVersioningEnabled", "delete a container holding protected data");
    same((await b.downloadToBuffer()).toString(), "kept", "the protected content");
  });

  // Container-level WORM: a legal hold and a time-based retention policy
  // set through the admin endpoint (wormAdmin), and the SDK's writes and
  // deletes refused by status and code, then allowed once the hold is
  // cleared or the Unlocked policy deleted.
  const newWORM = async name => {
    const cc = blobs.getContainerClient(name);
    await cc.create();
    const b = cc.getBlockBlobClient("b.txt");
    await b.upload("first", 5);
    const log = cc.getAppendBlobClient("log");
    await log.create();
    await log.appendBlock("line 1\n", 7);
    return { cc, b, log };
  };
  // Every change and delete the container-level WORM page's scenarios
  // table prohibits, refused with 409 and code; new blobs and reads pass.
  const refusals = async ({ cc, b }, code, contCode) => {
    await refused(() => b.upload("second", 6), 409, code, "upload over a protected blob");
    await refused(() => b.delete(), 409, code, "delete a protected blob");
    await refused(() => b.setMetadata({ k: "v" }), 409, code, "set metadata of a protected blob");
    await refused(() => cc.delete(), 409, contCode, "delete the container");
    same((await b.downloadToBuffer()).toString(), "first", "the protected content");
    await cc.getBlockBlobClient("new.txt").upload("new", 3);
  };
  const admOK = async (method, path, body, ifMatch) => {
    const r = await wormAdmin(method, path, body, ifMatch);
    same([r.status, r.code], [200, ""], `${method} ${path}`);
    return r;
  };

  await step("container-level WORM: the admin endpoint's Shared Key", async () => {
    await blobs.getContainerClient("jsworm-auth").create();
    const forged = await wormAdmin("GET", "jsworm-auth", undefined, undefined, new StorageSharedKeyCredential(A, Buffer.from("not the account key").toString("base64")));
    same([forged.status, forged.code], [403, "AuthenticationFailed"], "signed with another key");
    same((await admOK("GET", "jsworm-auth")).json.legalHold.hasLegalHold, false, "a new container has no legal hold");
    const none = await wormAdmin("GET", "jsworm-auth/immutabilityPolicies/default");
    same([none.status, none.code], [404, "ResourceNotFound"], "nor a policy");
  });

  await step("container-level WORM: legal hold refusals", async () => {
    const w = await newWORM("jsworm-hold");
    same((await admOK("POST", "jsworm-hold/setLegalHold", { tags: ["jsprobe"] })).json.hasLegalHold, true, "setLegalHold's answer");
    const p = await w.cc.getProperties();
    same([p.hasLegalHold, p.hasImmutabilityPolicy], [true, false], "x-ms-has-legal-hold, x-ms-has-immutability-policy");
    await refusals(w, "BlobImmutableDueToLegalHold", "ContainerHasLegalHold");
    await refused(() => w.log.appendBlock("line 2\n", 7), 409, "BlobImmutableDueToLegalHold", "append under a hold");
  });

  await step("container-level WORM: legal hold with allowProtectedAppendWritesAll", async () => {
    const cc = blobs.getContainerClient("jsworm-hold");
    await admOK("POST", "jsworm-hold/setLegalHold", { tags: ["jsprobe"], allowProtectedAppendWritesAll: true });
    await cc.getAppendBlobClient("log").appendBlock("line 2\n", 7);
    await refused(() => cc.getBlockBlobClient("b.txt").delete(), 409, "BlobImmutableDueToLegalHold", "delete while appends are allowed");
  });

  await step("container-level WORM: all allowed once the hold is cleared", async () => {
    const cc = blobs.getContainerClient("jsworm-hold");
    same((await admOK("POST", "jsworm-hold/clearLegalHold", { tags: ["jsprobe"] })).json.hasLegalHold, false, "clearLegalHold's answer");
    same((await cc.getProperties()).hasLegalHold, false, "the hold cleared");
    const b = cc.getBlockBlobClient("b.txt"), log = cc.getAppendBlobClient("log");
    await b.upload("second", 6);
    await b.setMetadata({ k: "v" });
    await log.appendBlock("line 3\n", 7);
    same((await log.downloadToBuffer()).toString(), "line 1\nline 2\nline 3\n", "the appended blob");
    await b.delete();
    await cc.delete();
    same(await cc.exists(), false, "the container deleted");
  });

  let etag;
  await step("container-level WORM: Unlocked policy refusals", async () => {
    const w = await newWORM("jsworm-pol");
    const r = await admOK("PUT", "jsworm-pol/immutabilityPolicies/default", policy(1));
    etag = r.etag;
    same([r.json.properties.state, r.json.properties.immutabilityPeriodSinceCreationInDays], ["Unlocked", 1], "the policy");
    const p = await w.cc.getProperties();
    same([p.hasImmutabilityPolicy, p.hasLegalHold], [true, false], "x-ms-has-immutability-policy, x-ms-has-legal-hold");
    await refusals(w, "BlobImmutableDueToPolicy", "BlobImmutableDueToPolicy");
    await refused(() => w.log.appendBlock("line 2\n", 7), 409, "BlobImmutableDueToPolicy", "append without allowProtectedAppendWrites");
  });

  await step("container-level WORM: Unlocked policy with allowProtectedAppendWrites", async () => {
    const cc = blobs.getContainerClient("jsworm-pol");
    const bare = await wormAdmin("PUT", "jsworm-pol/immutabilityPolicies/default", policy(1, { allowProtectedAppendWrites: true }));
    same([bare.status, bare.code], [400, "MissingRequiredHeader"], "a change without If-Match");
    const r = await admOK("PUT", "jsworm-pol/immutabilityPolicies/default", policy(1, { allowProtectedAppendWrites: true }), etag);
    etag = r.etag;
    same(r.json.properties.allowProtectedAppendWrites, true, "allowProtectedAppendWrites set");
    await cc.getAppendBlobClient("log").appendBlock("line 2\n", 7);
    await refused(() => cc.getAppendBlobClient("log").setMetadata({ k: "v" }), 409, "BlobImmutableDueToPolicy", "metadata while appends are allowed");
    await refused(() => cc.getBlockBlobClient("b.txt").upload("second", 6), 409, "BlobImmutableDueToPolicy", "overwrite while appends are allowed");
  });

  await step("container-level WORM: all allowed once the Unlocked policy is deleted", async () => {
    const cc = blobs.getContainerClient("jsworm-pol");
    const stale = await wormAdmin("DELETE", "jsworm-pol/immutabilityPolicies/default", undefined, '"0x0"');
    same([stale.status, stale.code], [412, "ConditionNotMet"], "delete with another ETag");
    await admOK("DELETE", "jsworm-pol/immutabilityPolicies/default", undefined, etag);
    same((await cc.getProperties()).hasImmutabilityPolicy, false, "the policy deleted");
    const b = cc.getBlockBlobClient("b.txt");
    await b.upload("second", 6);
    await b.setMetadata({ k: "v" });
    await cc.getAppendBlobClient("log").appendBlock("line 3\n", 7);
    await b.delete();
    await cc.delete();
    same(await cc.exists(), false, "the container deleted");
  });

  await step("container-level WORM: Locked policy", async () => {
    const w = await newWORM("jsworm-lock");
    const r = await admOK("PUT", "jsworm-lock/immutabilityPolicies/default", policy(1));
    const locked = await admOK("POST", "jsworm-lock/immutabilityPolicies/default/lock", undefined, r.etag);
    same(locked.json.properties.state, "Locked", "the policy locked");
    await refusals(w, "BlobImmutableDueToPolicy", "ContainerImmutabilityPolicyLocked");
    const del = await wormAdmin("DELETE", "jsworm-lock/immutabilityPolicies/default", undefined, locked.etag);
    same([del.status, del.code], [409, "InvalidOperation"], "delete a Locked policy");
    const cdel = await wormAdmin("DELETE", "jsworm-lock");
    same([cdel.status, cdel.code], [409, "ContainerImmutabilityPolicyLocked"], "the control plane's delete of a container holding blobs");
    same((await w.cc.getProperties()).hasImmutabilityPolicy, true, "the policy stays");
  });

  process.exit(failed() ? 1 : 0);
})();

// Azure sets a container's time-based retention policy and legal hold on
// the management plane (ARM BlobContainers CreateOrUpdateImmutabilityPolicy,
// LockImmutabilityPolicy, DeleteImmutabilityPolicy, SetLegalHold,
// ClearLegalHold), which no data-plane SDK reaches; Cerulean serves them
// with ARM's JSON under /.cerulean/worm/{account}/{container} on the Blob
// port (README, "Container-level immutability (WORM)"), signed with Shared
// Key over the path without /.cerulean/worm. wormAdmin builds the string to
// sign of "Authorize with Shared Key" (Blob service, version 2009-09-19 and
// later: the verb, the twelve standard headers with Content-Length empty
// when zero, the x-ms- headers lower-cased and sorted, and "/{account}" +
// the request's path, /{account}/{container}/... on a path-style URL;
// https://learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key)
// and has the SDK's StorageSharedKeyCredential compute its HMAC-SHA256.
function wormAdmin(method, path, body, ifMatch, cred = new StorageSharedKeyCredential(A, KEY)) {
  const raw = body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(body));
  const headers = { "x-ms-date": new Date().toUTCString(), "x-ms-version": "2021-12-02" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (ifMatch) headers["If-Match"] = ifMatch;
  const std = [method, "", "", raw.length ? String(raw.length) : "", "", headers["Content-Type"] || "", "", "", ifMatch || "", "", "", ""];
  const xms = Object.keys(headers).filter(k => k.toLowerCase().startsWith("x-ms-")).map(k => [k.toLowerCase(), headers[k].trim()]).sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const sts = std.join("\n") + "\n" + xms.map(([k, v]) => `${k}:${v}\n`).join("") + `/${A}/${A}/${path}`;
  headers.Authorization = `SharedKey ${A}:${cred.computeHMACSHA256(sts)}`;
  if (raw.length) headers["Content-Length"] = String(raw.length);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port: P, method, path: `/.cerulean/worm/${A}/${path}`, headers }, res => {
      const chunks = [];
      res.on("data", c => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString();
        resolve({ status: res.statusCode, code: res.headers["x-ms-error-code"] || "", etag: res.headers.etag, json: text ? JSON.parse(text) : {} });
      });
    });
    req.on("error", reject);
    req.end(raw);
  });
}

function policy(days, flags = {}) {
  return { properties: { immutabilityPeriodSinceCreationInDays: days, ...flags } };
}
