// Data Lake Storage Gen2 through the JavaScript SDK
// (@azure/storage-file-datalake) against the dfs port of a server started
// with --hierarchical-namespace (PORT_BASE: dfs on ${PORT_BASE}6). Each
// step prints PASS/FAIL; the expect steps provoke the error they name.
const { DataLakeServiceClient, StorageSharedKeyCredential } = require("@azure/storage-file-datalake");
const KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const A = "devstoreaccount1";
const P = process.env.PORT_BASE || "4500";
const D = `http://127.0.0.1:${P}6/` + A;
let ok = 0, bad = 0;
async function expect(name, code, f) {
  try { await f(); bad++; console.log("FAIL", name, "succeeded, want", code); }
  catch (e) { const got = e.code || (e.details && e.details.errorCode); if (got === code) { ok++; console.log("PASS", name, "->", code); } else { bad++; console.log("FAIL", name, e.statusCode, got, (e.message || "").split("\n")[0].slice(0, 200)); } }
}
async function step(name, f) {
  try { const r = await f(); ok++; console.log("PASS", name, r === undefined ? "" : JSON.stringify(r).slice(0, 150)); }
  catch (e) { bad++; console.log("FAIL", name, e.statusCode, e.code || e.details?.errorCode, (e.message || "").split("\n")[0].slice(0, 200)); }
}
async function names(fs, recursive) { const out = []; for await (const p of fs.listPaths({ recursive })) out.push(p.name + (p.isDirectory ? "/" : "")); return out; }
(async () => {
  const svc = new DataLakeServiceClient(D, new StorageSharedKeyCredential(A, KEY));
  const fs = svc.getFileSystemClient("jslake");
  await step("dl create filesystem", () => fs.create().then(r => r._response.status));
  await step("dl list filesystems", async () => { const out = []; for await (const f of svc.listFileSystems()) out.push(f.name); if (!out.includes("jslake")) throw new Error("listed " + out); return out; });
  await step("dl create directory", () => fs.getDirectoryClient("raw").create().then(r => r._response.status));
  await step("dl create subdirectory", () => fs.getDirectoryClient("raw/2026").create().then(r => r._response.status));
  await step("dl create file", () => fs.getFileClient("raw/2026/a.csv").create().then(r => r._response.status));
  await expect("dl create file if absent", "PathAlreadyExists", () => fs.getFileClient("raw/2026/a.csv").create({ conditions: { ifNoneMatch: "*" } }));
  await step("dl list recursive", async () => { const got = (await names(fs, true)).join(","); if (got !== "raw/,raw/2026/,raw/2026/a.csv") throw new Error(got); return got; });
  await step("dl rename directory", () => fs.getDirectoryClient("raw").move("archive").then(r => r._response.status));
  await step("dl list after rename", async () => { const got = (await names(fs, true)).join(","); if (got !== "archive/,archive/2026/,archive/2026/a.csv") throw new Error(got); return got; });
  await expect("dl rename missing source", "SourcePathNotFound", () => fs.getDirectoryClient("raw").move("elsewhere"));
  await step("dl set permissions", () => fs.getDirectoryClient("archive").setPermissions({ owner: { read: true, write: true, execute: true }, group: { read: true, write: false, execute: true }, other: { read: false, write: false, execute: false }, stickyBit: true, extendedAcls: false }).then(r => r._response.status));
  await step("dl get access control", async () => { const r = await fs.getDirectoryClient("archive").getAccessControl(); if (r.permissions.stickyBit !== true || r.owner !== "$superuser") throw new Error(JSON.stringify(r.permissions)); return r.acl.length; });
  await step("dl set acl recursive", async () => { const r = await fs.getDirectoryClient("archive").setAccessControlRecursive([
    { accessControlType: "user", entityId: "", defaultScope: false, permissions: { read: true, write: true, execute: true } },
    { accessControlType: "group", entityId: "", defaultScope: false, permissions: { read: true, write: false, execute: true } },
    { accessControlType: "other", entityId: "", defaultScope: false, permissions: { read: false, write: false, execute: false } },
    { accessControlType: "user", entityId: "bob", defaultScope: false, permissions: { read: true, write: false, execute: false } }]);
    if (r.counters.changedDirectoriesCount !== 2 || r.counters.changedFilesCount !== 1) throw new Error(JSON.stringify(r.counters)); return r.counters; });
  await expect("dl delete non-empty", "DirectoryNotEmpty", () => fs.getDirectoryClient("archive").delete(false));
  await step("dl delete recursive", () => fs.getDirectoryClient("archive").delete(true).then(r => r._response.status));
  await step("dl list empty", async () => { const got = await names(fs, true); if (got.length) throw new Error(got); return got; });
  // Soft delete (the Blob service's DeleteRetentionPolicy, set through
  // the Blob API of the same port): listDeletedPaths and undeletePath.
  const { BlobServiceClient } = require("@azure/storage-blob");
  await step("dl enable soft delete", () => new BlobServiceClient(D, new StorageSharedKeyCredential(A, KEY)).setProperties({ deleteRetentionPolicy: { enabled: true, days: 7 } }).then(r => r._response.status));
  await step("dl create file with parents", () => fs.getFileClient("trash/sub/f.txt").create().then(r => r._response.status));
  await step("dl soft delete", () => fs.getDirectoryClient("trash").delete(true).then(r => r._response.status));
  let deleted = [];
  await step("dl list deleted paths", async () => { for await (const p of fs.listDeletedPaths()) deleted.push(p); const got = deleted.map(p => p.name + ":" + p.remainingRetentionDays).join(","); if (got !== "trash:6" || !deleted[0].deletionId) throw new Error(got); return got; });
  await step("dl undelete path", async () => { const r = await fs.undeletePath("trash", deleted[0] && deleted[0].deletionId); return r._response ? r._response.status : 200; });
  await step("dl list after undelete", async () => { const got = (await names(fs, true)).join(","); if (got !== "trash/,trash/sub/,trash/sub/f.txt") throw new Error(got); return got; });
  await step("dl delete filesystem", () => fs.delete().then(r => r._response.status));
  console.log(`datalake: ${ok} passed, ${bad} failed`);
})();
