// Blob versioning through @azure/storage-blob against a server started
// with --blob-versioning (VERSIONING_PORT, default ${PORT_BASE}8). Each
// step drives the SDK's versioning surface as Azure's "Blob versioning"
// page describes it: upload's versionId, listBlobsFlat includeVersions,
// withVersion() reads, tags, tier and deletes, a version SAS with the x
// (delete version) permission, batch deletes of versions, restore by
// copying a version onto the base. Each step prints PASS/FAIL.
const { BlobServiceClient, StorageSharedKeyCredential, BlobSASPermissions, generateBlobSASQueryParameters, BlobClient } = require("@azure/storage-blob");
const { step, same, refused, failed } = require("./check.js");
const KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const A = "devstoreaccount1";
const P = process.env.VERSIONING_PORT || `${process.env.PORT_BASE || "2460"}8`;
const U = `http://127.0.0.1:${P}/` + A;
async function text(client) { return (await client.downloadToBuffer()).toString(); }
// [versionId, isCurrentVersion] of name in listing order. Azure writes
// IsCurrentVersion for the current version only (azure-sdk-for-js's
// recordings of listBlobsFlat with includeVersions), so the others read
// undefined.
async function versionsOf(cc, name) {
  const out = [];
  for await (const b of cc.listBlobsFlat({ prefix: name, includeVersions: true })) if (b.name === name) out.push([b.versionId, b.isCurrentVersion === true]);
  return out;
}
(async () => {
  const cred = new StorageSharedKeyCredential(A, KEY);
  const svc = new BlobServiceClient(U, cred);

  await step("versioning: writes make versions, reads by version", async () => {
    const cc = svc.getContainerClient("jsver-writes");
    await cc.create();
    const b = cc.getBlockBlobClient("a.txt");
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await b.upload(`v${i}`, 2)).versionId);
    same(ids.every(Boolean) && new Set(ids).size === 3 && [...ids].sort().join() === ids.join(), true, "three increasing version ids");
    const md = await b.setMetadata({ k: "v" });
    if (!(md.versionId > ids[2])) throw new Error(`Set Blob Metadata version ${md.versionId}`);
    ids.push(md.versionId);
    await b.setTags({ t: "1" });
    await b.setAccessTier("Cool");
    const p = await b.getProperties();
    same([p.versionId, p.isCurrentVersion], [ids[3], true], "tags and tier made no version; the base is current");
    same(await versionsOf(cc, "a.txt"), ids.map(v => [v, v === ids[3]]), "listBlobsFlat includeVersions");
    for (let i = 0; i < 3; i++) same(await text(b.withVersion(ids[i])), `v${i}`, `version ${i}`);
    const old = await b.withVersion(ids[0]).getProperties();
    same([old.versionId, old.isCurrentVersion], [ids[0], false], "an old version's properties");
    await refused(() => b.upload("no", 2, { conditions: { ifMatch: '"0x1"' } }), 412, "ConditionNotMet", "a refused overwrite");
    same((await versionsOf(cc, "a.txt")).length, 4, "no version from the refused write");
    return ids.length;
  });

  await step("versioning: tags and tier per version", async () => {
    const cc = svc.getContainerClient("jsver-tags");
    await cc.create();
    const b = cc.getBlockBlobClient("t.txt");
    const v1 = (await b.upload("one", 3)).versionId;
    await b.upload("two", 3);
    await b.withVersion(v1).setTags({ v: "old" });
    same((await b.withVersion(v1).getTags()).tags, { v: "old" }, "the old version's tags");
    same((await b.getTags()).tags, {}, "the current version's tags");
    await b.withVersion(v1).setAccessTier("Cool");
    same([(await b.withVersion(v1).getProperties()).accessTier, (await b.getProperties()).accessTier], ["Cool", "Hot"], "tiers");
  });

  await step("versioning: delete the base, restore a version", async () => {
    const cc = svc.getContainerClient("jsver-delete");
    await cc.create();
    const b = cc.getBlockBlobClient("d.txt");
    const v1 = (await b.upload("first", 5)).versionId;
    const v2 = (await b.upload("second", 6)).versionId;
    await b.delete();
    same(await versionsOf(cc, "d.txt"), [[v1, false], [v2, false]], "versions kept, none current");
    await refused(() => b.getProperties(), 404, "", "the deleted base");
    const poller = await b.beginCopyFromURL(b.withVersion(v1).url);
    const r = await poller.pollUntilDone();
    same(r.copyStatus, "success", "copy of a version onto the base");
    same(await text(b), "first", "the restored content");
    const vs = await versionsOf(cc, "d.txt");
    same([vs.length, vs[2][1]], [3, true], "the restore is a new, current version");
    await b.withVersion(v2).delete();
    same((await versionsOf(cc, "d.txt")).map(v => v[0]), [v1, vs[2][0]], "Delete Blob of one version");
    await refused(() => b.withVersion(v2).getProperties(), 404, "", "the deleted version");
  });

  await step("versioning: a version SAS needs x to delete", async () => {
    const cc = svc.getContainerClient("jsver-sas");
    await cc.create();
    const b = cc.getBlockBlobClient("s.txt");
    const v1 = (await b.upload("one", 3)).versionId;
    await b.upload("two", 3);
    const sas = perms => generateBlobSASQueryParameters({ containerName: "jsver-sas", blobName: "s.txt", versionId: v1,
      permissions: BlobSASPermissions.parse(perms), expiresOn: new Date(Date.now() + 3600e3) }, cred).toString();
    const url = perms => `${U}/jsver-sas/s.txt?versionid=${encodeURIComponent(v1)}&${sas(perms)}`;
    same(await text(new BlobClient(url("r"))), "one", "a read SAS for the version (sr=bv)");
    await refused(() => new BlobClient(url("r")).delete(), 403, "AuthorizationPermissionMismatch", "delete with r");
    await refused(() => new BlobClient(url("d")).delete(), 403, "AuthorizationPermissionMismatch", "delete with d but not x");
    await new BlobClient(url("x")).delete();
    same((await versionsOf(cc, "s.txt")).length, 1, "deleted with x");
  });

  await step("versioning: batch deletes and tiers versions", async () => {
    const cc = svc.getContainerClient("jsver-batch");
    await cc.create();
    const ids = {};
    for (const n of ["x", "y"]) {
      ids[n] = [];
      for (let i = 0; i < 3; i++) ids[n].push((await cc.getBlockBlobClient(n).upload(`${n}${i}`, 2)).versionId);
    }
    const batch = cc.getBlobBatchClient();
    const t = await batch.setBlobsAccessTier([cc.getBlobClient("x").withVersion(ids.x[0]), cc.getBlobClient("y").withVersion(ids.y[0])], "Cool");
    same([t.subResponsesSucceededCount, t.subResponsesFailedCount], [2, 0], "Set Blob Tier of two versions");
    same((await cc.getBlobClient("x").withVersion(ids.x[0]).getProperties()).accessTier, "Cool", "a version's tier from the batch");
    const d = await batch.deleteBlobs([cc.getBlobClient("x").withVersion(ids.x[0]), cc.getBlobClient("y").withVersion(ids.y[1])]);
    same([d.subResponsesSucceededCount, d.subResponsesFailedCount], [2, 0], "delete two versions");
    same((await versionsOf(cc, "x")).map(v => v[0]), ids.x.slice(1), "x after the batch");
    same((await versionsOf(cc, "y")).map(v => v[0]), [ids.y[0], ids.y[2]], "y after the batch");
  });

  await step("versioning: snapshots and versions side by side", async () => {
    const cc = svc.getContainerClient("jsver-snap");
    await cc.create();
    const b = cc.getBlockBlobClient("n.txt");
    const v1 = (await b.upload("one", 3)).versionId;
    const snap = await b.createSnapshot();
    same(snap.versionId, v1, "Snapshot Blob answers the current version's id");
    const v2 = (await b.upload("two", 3)).versionId;
    const items = [];
    for await (const x of cc.listBlobsFlat({ includeVersions: true, includeSnapshots: true })) items.push([x.snapshot || null, x.versionId || null, x.isCurrentVersion === true]);
    same(items, [[snap.snapshot, null, false], [null, v1, false], [null, v2, true]], "include snapshots and versions");
    await b.delete({ deleteSnapshots: "include" });
    same(await versionsOf(cc, "n.txt"), [[v1, false], [v2, false]], "versions after deleting the base and its snapshots");
  });

  process.exit(failed() ? 1 : 0);
})();
