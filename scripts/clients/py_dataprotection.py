"""py_dataprotection.py: container and share soft delete through the Python SDKs.

Run by scripts/clients-python.sh, which starts server E with
`--container-soft-delete 7 --share-soft-delete 7` (Blob on VERSIONING_PORT,
File on the port after it) and a second account, wormacct, marked
`:versioning:immutability`. Each area drives what Azure's "Soft delete
for containers", "Soft delete for Azure file shares" and "Configure
immutability policies for blob versions" pages describe through the SDK
calls their samples use: list_containers/list_shares with
include_deleted=True, undelete_container/undelete_share,
set_immutability_policy/delete_immutability_policy/set_legal_hold, and
the refusals (a name in use, an unknown version, deleting protected data).
Prints one PASS/FAIL line per area.
"""
import datetime, os
from importlib.metadata import version

from probe import area as _area, check, eq, error, finish

PORT = int(os.environ.get("VERSIONING_PORT", "24910"))
A = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
CRED = {"account_name": A, "account_key": KEY}
def area(name, pkg):
    return _area(f"{pkg} {version(pkg)}", name)


from azure.storage.blob import BlobImmutabilityPolicyMode, BlobServiceClient, ImmutabilityPolicy
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


@area("version-level immutability and legal hold", "azure-storage-blob")
def _():
    worm = BlobServiceClient(f"http://127.0.0.1:{PORT}/wormacct", credential={"account_name": "wormacct", "account_key": KEY})
    cc = worm.create_container("pydp-worm")
    eq(cc.get_container_properties().immutable_storage_with_versioning_enabled, True, "the container's support")
    b = cc.get_blob_client("kept.txt")
    b.upload_blob(b"kept")
    until = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)).replace(microsecond=0)
    b.set_immutability_policy(ImmutabilityPolicy(expiry_time=until, policy_mode=BlobImmutabilityPolicyMode.Unlocked))
    p = b.get_blob_properties()
    eq((p.immutability_policy.expiry_time, str(p.immutability_policy.policy_mode).lower()), (until, "unlocked"), "the policy read back")
    error(lambda: b.delete_blob(), 409, "BlobImmutableDueToPolicy", "delete under a policy")
    error(lambda: b.set_blob_metadata({"k": "v"}), 409, "BlobImmutableDueToPolicy", "metadata under a policy")
    b.delete_immutability_policy()
    b.set_legal_hold(True)
    eq(b.get_blob_properties().has_legal_hold, True, "the legal hold read back")
    error(lambda: b.delete_blob(), 409, "BlobImmutableDueToLegalHold", "delete under a legal hold")
    b.set_legal_hold(False)
    b.set_immutability_policy(ImmutabilityPolicy(expiry_time=until, policy_mode=BlobImmutabilityPolicyMode.Locked))
    error(lambda: b.delete_immutability_policy(), 409, "ImmutabilityPolicyDeleteOnLockedPolicy", "delete a locked policy")
    shorter = until - datetime.timedelta(minutes=30)
    error(lambda: b.set_immutability_policy(ImmutabilityPolicy(expiry_time=shorter, policy_mode=BlobImmutabilityPolicyMode.Locked)),
          409, "", "shorten a locked policy")
    error(lambda: worm.delete_container("pydp-worm"), 409, "ContainerImmutableStorageWithVersioningEnabled",
          "delete a container holding protected data")
    eq(b.download_blob().readall(), b"kept", "the protected content")


finish()
