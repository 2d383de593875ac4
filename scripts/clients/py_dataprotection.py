"""py_dataprotection.py: container and share soft delete through the Python SDKs.

Run by scripts/clients-python.sh, which starts server E with
`--container-soft-delete 7 --share-soft-delete 7` (Blob on VERSIONING_PORT,
File on the port after it). Each area drives what Azure's "Soft delete
for containers" and "Soft delete for Azure file shares" pages describe
through the SDK calls their samples use: list_containers/list_shares
with include_deleted=True, undelete_container/undelete_share, and the
refusals (a name in use, an unknown version). Prints one PASS/FAIL line
per area.
"""
import os
from importlib.metadata import version

from probe import area as _area, check, eq, error, finish

PORT = int(os.environ.get("VERSIONING_PORT", "24910"))
A = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
CRED = {"account_name": A, "account_key": KEY}
def area(name, pkg):
    return _area(f"{pkg} {version(pkg)}", name)


from azure.storage.blob import BlobServiceClient
from azure.storage.fileshare import ShareServiceClient

blobs = BlobServiceClient(f"http://127.0.0.1:{PORT}/{A}", credential=CRED)
files = ShareServiceClient(f"http://127.0.0.1:{PORT + 1}/{A}", credential=CRED)


@area("container soft delete and restore", "azure-storage-blob")
def _():
    cc = blobs.create_container("pydp-cont", metadata={"m": "1"})
    for i in range(5):
        cc.upload_blob(f"b{i}", f"blob {i}".encode())
    cc.get_blob_client("b0").create_snapshot()
    cc.delete_container()
    eq([c.name for c in blobs.list_containers(name_starts_with="pydp-cont")], [], "a deleted container is not listed")
    deleted = [c for c in blobs.list_containers(name_starts_with="pydp-cont", include_deleted=True) if c.deleted]
    eq(len(deleted), 1, "include_deleted lists it")
    d = deleted[0]
    # (The SDK's ContainerProperties keeps the version of the listing's
    # deleted-container fields, not DeletedTime or RemainingRetentionDays.)
    check(d.version, "its version", d.version)
    # The name is free at once: a new container of that name, then the
    # restore refused while it exists.
    blobs.create_container("pydp-cont")
    error(lambda: blobs.undelete_container("pydp-cont", d.version), 409, "ContainerAlreadyExists", "restore onto a taken name")
    blobs.delete_container("pydp-cont")  # a second deleted version, empty
    error(lambda: blobs.undelete_container("pydp-cont", "0000000000000001"), 404, "ContainerNotFound", "an unknown version")
    restored = blobs.undelete_container("pydp-cont", d.version)
    eq(sorted(b.name for b in restored.list_blobs()), [f"b{i}" for i in range(5)], "the restored blobs")
    eq(restored.get_blob_client("b3").download_blob().readall(), b"blob 3", "a restored blob's content")
    eq(restored.get_container_properties().metadata, {"m": "1"}, "the restored container's metadata")
    eq(len([b for b in restored.list_blobs(include=["snapshots"]) if b.snapshot]), 1, "the snapshot came back")


@area("share soft delete and restore", "azure-storage-file-share")
def _():
    sc = files.create_share("pydp-share")
    sc.get_directory_client("dir").create_directory()
    sc.get_file_client("dir/f.txt").upload_file(b"kept")
    snap = sc.create_snapshot()
    sc.delete_share(delete_snapshots=True)
    eq([s.name for s in files.list_shares(name_starts_with="pydp-share")], [], "a deleted share is not listed")
    deleted = [s for s in files.list_shares(name_starts_with="pydp-share", include_deleted=True) if s.deleted]
    eq(len(deleted), 1, "include_deleted lists it")
    d = deleted[0]
    check(d.version and d.deleted_time is not None and d.remaining_retention_days == 7, "its version, deletion time, days left",
          (d.version, d.deleted_time, d.remaining_retention_days))
    files.create_share("pydp-share")
    error(lambda: files.undelete_share("pydp-share", d.version), 409, "ShareAlreadyExists", "restore onto a taken name")
    files.delete_share("pydp-share")
    restored = files.undelete_share("pydp-share", d.version)
    eq(restored.get_file_client("dir/f.txt").download_file().readall(), b"kept", "a restored file's content")
    snaps = [s for s in files.list_shares(name_starts_with="pydp-share", include_snapshots=True) if s.snapshot]
    eq([s.snapshot for s in snaps], [snap["snapshot"]], "the share's snapshot came back")


finish()
