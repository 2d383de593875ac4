// Container and share soft delete and version-level immutability through
// the newest @azure/storage-blob and @azure/storage-file-share, against the
// server scripts/clients-js.sh starts as D (Blob on VERSIONING_PORT, File
// on the port after it; --blob-versioning --container-soft-delete 7
// --share-soft-delete 7, and a second account, wormacct, marked
// :versioning:immutability). Each step drives what Azure's "Soft delete for
// containers", "Soft delete for Azure file shares" and "Configure
// immutability policies for blob versions" pages describe and prints
// PASS/FAIL.
const { BlobServiceClient, StorageSharedKeyCredential } = require("@azure/storage-blob");
const { ShareServiceClient, StorageSharedKeyCredential: FileCredential } = require("@azure/storage-file-share");
const { step, same, refused, all, failed } = require("./check.js");
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

  process.exit(failed() ? 1 : 0);
})();
