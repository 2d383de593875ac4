"""py_versioning.py: azure-storage-blob against blob versioning.

Run by scripts/clients-python.sh, which starts server E (`cerulean serve
--blob-versioning`: Blob on port VERSIONING_PORT). Each area drives the
SDK's versioning surface as Azure's "Blob versioning" page and the Python
SDK's own versioning tests use it (upload_blob's version_id, list_blobs
include=["versions"], version_id= on reads, tags, tier and deletes,
generate_blob_sas(version_id=) with delete_previous_version, batch deletes
of versions) and prints one PASS/FAIL line per area.
"""
import datetime, os
from importlib.metadata import version

from probe import area as _area, check, eq, error, finish

PORT = os.environ.get("VERSIONING_PORT", "24910")
A = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
CRED = {"account_name": A, "account_key": KEY}
URL = f"http://127.0.0.1:{PORT}/{A}"
UTC = datetime.timezone.utc
LABEL = f"azure-storage-blob {version('azure-storage-blob')}"


def area(name):
    return _area(LABEL, name)


from azure.storage.blob import (BlobClient, BlobSasPermissions, BlobServiceClient,
                                generate_blob_sas)

svc = BlobServiceClient(URL, credential=CRED)


def versions_of(cc, name):
    """[(version_id, is_current_version)] of name, as List Blobs orders them.
    Azure writes IsCurrentVersion for the current version only (its
    recorded listings, e.g. azure-sdk-for-js's recordings of
    listBlobsFlat with includeVersions), so the SDK reads None for the
    others."""
    return [(b.version_id, b.is_current_version) for b in cc.list_blobs(name_starts_with=name, include=["versions"])
            if b.name == name]


def content(cc, name, vid):
    return cc.get_blob_client(name, version_id=vid).download_blob().readall()


@area("writes make versions")
def _():
    cc = svc.create_container("pyver-writes")
    b = cc.get_blob_client("a.txt")
    ids = [b.upload_blob(f"v{i}".encode(), overwrite=True)["version_id"] for i in range(3)]
    check(all(ids) and ids == sorted(ids) and len(set(ids)) == 3, "three increasing version ids", ids)
    p = b.get_blob_properties()
    eq((p.version_id, p.is_current_version), (ids[2], True), "the base blob is the newest version")
    md = b.set_blob_metadata({"k": "v"})
    check(md.get("version_id") and md["version_id"] > ids[2], "Set Blob Metadata makes a version", md.get("version_id"))
    ids.append(md["version_id"])
    # Tags and tier change the current version in place (Azure's list of
    # operations that make no version).
    b.set_blob_tags({"t": "1"})
    b.set_standard_blob_tier("Cool")
    eq(b.get_blob_properties().version_id, ids[3], "tags and tier made no version")
    eq(versions_of(cc, "a.txt"), [(v, True if v == ids[3] else None) for v in ids], "List Blobs include=versions")
    for i in range(3):
        eq(content(cc, "a.txt", ids[i]), f"v{i}".encode(), f"version {i} reads its own content")
    old = cc.get_blob_client("a.txt", version_id=ids[0]).get_blob_properties()
    eq((old.version_id, old.is_current_version, old.metadata), (ids[0], False, {}), "an old version's properties")
    eq(cc.get_blob_client("a.txt", version_id=ids[3]).get_blob_properties().metadata, {"k": "v"}, "metadata per version")
    # A failed conditional write makes no version.
    error(lambda: b.upload_blob(b"no", overwrite=True, etag='"0x1"', match_condition=__import__("azure.core").core.MatchConditions.IfNotModified),
          412, "ConditionNotMet", "a refused overwrite")
    eq(len(versions_of(cc, "a.txt")), 4, "no version from the refused write")


@area("tags and tier per version")
def _():
    cc = svc.create_container("pyver-tags")
    b = cc.get_blob_client("t.txt")
    v1 = b.upload_blob(b"one")["version_id"]
    b.upload_blob(b"two", overwrite=True)
    b.set_blob_tags({"v": "old"}, version_id=v1)
    eq(b.get_blob_tags(version_id=v1), {"v": "old"}, "the old version's tags")
    eq(b.get_blob_tags(), {}, "the current version's tags")
    cc.get_blob_client("t.txt", version_id=v1).set_standard_blob_tier("Cool")
    eq(str(cc.get_blob_client("t.txt", version_id=v1).get_blob_properties().blob_tier), "Cool", "the old version's tier")
    eq(str(b.get_blob_properties().blob_tier), "Hot", "the current version's tier")


@area("delete and restore")
def _():
    cc = svc.create_container("pyver-delete")
    b = cc.get_blob_client("d.txt")
    v1 = b.upload_blob(b"first")["version_id"]
    v2 = b.upload_blob(b"second", overwrite=True)["version_id"]
    b.delete_blob()
    eq(versions_of(cc, "d.txt"), [(v1, None), (v2, None)], "after deleting the base: versions kept, none current")
    error(lambda: b.download_blob(), 404, "BlobNotFound", "the base blob after its delete")
    eq(content(cc, "d.txt", v1), b"first", "a version after the base's delete")
    # Restoring is copying a version onto the base (Azure's documented way).
    # (BlobClient.url leaves version_id out, so the source names it.)
    src = f"{b.url}?versionid={v1}"
    r = b.start_copy_from_url(src)
    eq(r["copy_status"], "success", "copy of a version onto the base")
    eq(b.download_blob().readall(), b"first", "the restored content")
    vs = versions_of(cc, "d.txt")
    eq(len(vs), 3, "the restore is a new version")
    eq(vs[-1][1], True, "the restore is current")
    cc.get_blob_client("d.txt", version_id=v2).delete_blob()
    eq([v for v, _ in versions_of(cc, "d.txt")], [v1, vs[-1][0]], "Delete Blob of one version")
    error(lambda: content(cc, "d.txt", v2), 404, "BlobNotFound", "the deleted version")


@area("version SAS")
def _():
    cc = svc.create_container("pyver-sas")
    b = cc.get_blob_client("s.txt")
    v1 = b.upload_blob(b"one")["version_id"]
    b.upload_blob(b"two", overwrite=True)
    exp = datetime.datetime.now(UTC) + datetime.timedelta(hours=1)

    def sas(**perm):
        return generate_blob_sas(A, "pyver-sas", "s.txt", account_key=KEY, version_id=v1,
                                 permission=BlobSasPermissions(**perm), expiry=exp)

    reader = BlobClient(URL, "pyver-sas", "s.txt", version_id=v1, credential=sas(read=True))
    eq(reader.download_blob().readall(), b"one", "a read SAS for the version (sr=bv)")
    error(lambda: reader.delete_blob(), 403, "AuthorizationPermissionMismatch", "delete with a read-only version SAS")
    error(lambda: BlobClient(URL, "pyver-sas", "s.txt", version_id=v1, credential=sas(delete=True)).delete_blob(),
          403, "AuthorizationPermissionMismatch", "delete of a version with d but without x")
    BlobClient(URL, "pyver-sas", "s.txt", version_id=v1, credential=sas(delete_previous_version=True)).delete_blob()
    eq(len(versions_of(cc, "s.txt")), 1, "deleted with x (delete_previous_version)")


@area("batch deletes and tiers versions")
def _():
    cc = svc.create_container("pyver-batch")
    ids = {}
    for n in ("x", "y"):
        ids[n] = [cc.get_blob_client(n).upload_blob(f"{n}{i}".encode(), overwrite=True)["version_id"] for i in range(3)]
    cc.set_standard_blob_tier_blobs("Cool", {"name": "x", "version_id": ids["x"][0]}, {"name": "y", "version_id": ids["y"][0]})
    eq([str(cc.get_blob_client(n, version_id=ids[n][0]).get_blob_properties().blob_tier) for n in ("x", "y")],
       ["Cool", "Cool"], "Set Blob Tier of versions in a batch")
    res = list(cc.delete_blobs({"name": "x", "version_id": ids["x"][0]}, {"name": "y", "version_id": ids["y"][1]}))
    eq([r.status_code for r in res], [202, 202], "batch delete of two versions")
    eq([v for v, _ in versions_of(cc, "x")], ids["x"][1:], "x's versions after the batch")
    eq([v for v, _ in versions_of(cc, "y")], [ids["y"][0], ids["y"][2]], "y's versions after the batch")


@area("versions with snapshots")
def _():
    cc = svc.create_container("pyver-snap")
    b = cc.get_blob_client("n.txt")
    v1 = b.upload_blob(b"one")["version_id"]
    snap = b.create_snapshot()
    check(snap.get("snapshot"), "a snapshot time", snap)
    eq(snap.get("version_id"), v1, "Snapshot Blob answers the current version's id")
    v2 = b.upload_blob(b"two", overwrite=True)["version_id"]
    items = [(x.name, x.snapshot, x.version_id, x.is_current_version)
             for x in cc.list_blobs(include=["versions", "snapshots"])]
    eq(items, [("n.txt", snap["snapshot"], None, None), ("n.txt", None, v1, None), ("n.txt", None, v2, True)],
       "List Blobs include=snapshots,versions")
    eq(cc.get_blob_client("n.txt", snapshot=snap["snapshot"]).download_blob().readall(), b"one", "the snapshot reads")
    # Deleting the base with its snapshots keeps the versions.
    b.delete_blob(delete_snapshots="include")
    eq(versions_of(cc, "n.txt"), [(v1, None), (v2, None)], "versions after deleting the base and its snapshots")


finish()
