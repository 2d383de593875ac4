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
the refusals (a name in use, an unknown version, deleting protected data);
and container-level WORM (a legal hold, an Unlocked and a Locked
time-based retention policy set through Cerulean's admin endpoint, the
SDK's writes and deletes refused by status and code, then allowed once
the hold is cleared or the Unlocked policy deleted).
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


# Container-level WORM. Azure sets a container's time-based retention
# policy and legal hold on the management plane (ARM BlobContainers
# CreateOrUpdateImmutabilityPolicy, LockImmutabilityPolicy,
# DeleteImmutabilityPolicy, SetLegalHold, ClearLegalHold), which no
# data-plane SDK reaches; Cerulean serves the same operations with ARM's
# JSON under /.cerulean/worm/{account}/{container} on the Blob port (README,
# "Container-level immutability (WORM)"), signed with Shared Key over the
# path without /.cerulean/worm. worm_admin signs by hand, with the string
# to sign of "Authorize with Shared Key" (Blob service, version 2009-09-19
# and later): the verb, the twelve standard headers (Content-Length empty
# when zero), the x-ms- headers lower-cased and sorted, and the
# canonicalized resource "/{account}" + the request's path (a path-style
# URL: /{account}/{container}/...),
# https://learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key.
import base64, email.utils, hashlib, hmac, http.client, json


def worm_admin(method, path, body=None, if_match=None, key=KEY):
    """Sends method to /.cerulean/worm/devstoreaccount1/{path}; returns
    (status, x-ms-error-code, JSON answer, ETag)."""
    raw = json.dumps(body).encode() if body is not None else b""
    headers = {"x-ms-date": email.utils.formatdate(usegmt=True), "x-ms-version": "2021-12-02"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    if if_match:
        headers["If-Match"] = if_match
    std = [method, "", "", str(len(raw)) if raw else "", "", headers.get("Content-Type", ""), "",
           "", if_match or "", "", "", ""]
    xms = sorted((k.lower(), v.strip()) for k, v in headers.items() if k.lower().startswith("x-ms-"))
    sts = "\n".join(std) + "\n" + "".join(f"{k}:{v}\n" for k, v in xms) + f"/{A}/{A}/{path}"
    sig = base64.b64encode(hmac.new(base64.b64decode(key), sts.encode(), hashlib.sha256).digest()).decode()
    headers["Authorization"] = f"SharedKey {A}:{sig}"
    conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
    try:
        conn.request(method, f"/.cerulean/worm/{A}/{path}", body=raw or None, headers=headers)
        r = conn.getresponse()
        data = r.read()
        return r.status, r.getheader("x-ms-error-code") or "", json.loads(data) if data else {}, r.getheader("ETag")
    finally:
        conn.close()


def worm_ok(method, path, body=None, if_match=None):
    st, code, out, etag = worm_admin(method, path, body, if_match)
    eq((st, code), (200, ""), f"{method} {path}")
    return out, etag


def policy(days, **flags):
    return {"properties": {"immutabilityPeriodSinceCreationInDays": days, **flags}}


def worm_container(name):
    """A container with a block blob and an append blob holding a block."""
    cc = blobs.create_container(name)
    b = cc.get_blob_client("b.txt")
    b.upload_blob(b"first")
    log = cc.get_blob_client("log")
    log.create_append_blob()
    log.append_block(b"line 1\n")
    return cc, b, log


def refusals(cc, b, log, code, cont_code):
    """Every change and delete the container-level WORM page's scenarios
    table prohibits, refused with status 409 and code."""
    error(lambda: b.upload_blob(b"second", overwrite=True), 409, code, "upload over a protected blob")
    error(lambda: b.delete_blob(), 409, code, "delete a protected blob")
    error(lambda: b.set_blob_metadata({"k": "v"}), 409, code, "set metadata of a protected blob")
    error(lambda: blobs.delete_container(cc.container_name), 409, cont_code, "delete the container")
    eq(b.download_blob().readall(), b"first", "the protected content")
    # Allowed: new blobs and reads.
    cc.upload_blob("new.txt", b"new")


@area("container-level WORM: the admin endpoint's Shared Key", "azure-storage-blob")
def _():
    blobs.create_container("pyworm-auth")
    st, code, _, _ = worm_admin("GET", "pyworm-auth", key=base64.b64encode(b"not the account key").decode())
    eq((st, code), (403, "AuthenticationFailed"), "signed with another key")
    out, _ = worm_ok("GET", "pyworm-auth")
    eq(out.get("legalHold", {}).get("hasLegalHold"), False, "a new container has no legal hold")
    st, code, _, _ = worm_admin("GET", "pyworm-auth/immutabilityPolicies/default")
    eq((st, code), (404, "ResourceNotFound"), "nor a policy")


@area("container-level WORM: legal hold", "azure-storage-blob")
def _():
    cc, b, log = worm_container("pyworm-hold")
    out, _ = worm_ok("POST", "pyworm-hold/setLegalHold", {"tags": ["pyprobe"]})
    eq(out.get("hasLegalHold"), True, "setLegalHold's answer")
    p = cc.get_container_properties()
    eq((p.has_legal_hold, p.has_immutability_policy), (True, False), "x-ms-has-legal-hold, x-ms-has-immutability-policy")
    refusals(cc, b, log, "BlobImmutableDueToLegalHold", "ContainerHasLegalHold")
    error(lambda: log.append_block(b"line 2\n"), 409, "BlobImmutableDueToLegalHold", "append under a hold")
    # The hold's allowProtectedAppendWritesAll lets appends through,
    # nothing else.
    worm_ok("POST", "pyworm-hold/setLegalHold", {"tags": ["pyprobe"], "allowProtectedAppendWritesAll": True})
    log.append_block(b"line 2\n")
    error(lambda: b.delete_blob(), 409, "BlobImmutableDueToLegalHold", "delete while appends are allowed")
    out, _ = worm_ok("POST", "pyworm-hold/clearLegalHold", {"tags": ["pyprobe"]})
    eq(out.get("hasLegalHold"), False, "clearLegalHold's answer")
    eq(cc.get_container_properties().has_legal_hold, False, "the hold cleared")
    # Cleared: everything is allowed again.
    b.upload_blob(b"second", overwrite=True)
    b.set_blob_metadata({"k": "v"})
    log.append_block(b"line 3\n")
    eq(log.download_blob().readall(), b"line 1\nline 2\nline 3\n", "the appended blob")
    b.delete_blob()
    blobs.delete_container("pyworm-hold")
    eq([c.name for c in blobs.list_containers(name_starts_with="pyworm-hold")], [], "the container deleted")


@area("container-level WORM: Unlocked time-based retention policy", "azure-storage-blob")
def _():
    cc, b, log = worm_container("pyworm-pol")
    out, etag = worm_ok("PUT", "pyworm-pol/immutabilityPolicies/default", policy(1))
    eq((out["properties"]["state"], out["properties"]["immutabilityPeriodSinceCreationInDays"]), ("Unlocked", 1), "the policy")
    p = cc.get_container_properties()
    eq((p.has_immutability_policy, p.has_legal_hold), (True, False), "x-ms-has-immutability-policy, x-ms-has-legal-hold")
    refusals(cc, b, log, "BlobImmutableDueToPolicy", "BlobImmutableDueToPolicy")
    error(lambda: log.append_block(b"line 2\n"), 409, "BlobImmutableDueToPolicy", "append without allowProtectedAppendWrites")
    # A change needs If-Match on the policy's ETag.
    st, code, _, _ = worm_admin("PUT", "pyworm-pol/immutabilityPolicies/default", policy(1, allowProtectedAppendWrites=True))
    eq((st, code), (400, "MissingRequiredHeader"), "a change without If-Match")
    out, etag = worm_ok("PUT", "pyworm-pol/immutabilityPolicies/default", policy(1, allowProtectedAppendWrites=True), etag)
    eq(out["properties"].get("allowProtectedAppendWrites"), True, "allowProtectedAppendWrites set")
    log.append_block(b"line 2\n")
    error(lambda: log.set_blob_metadata({"k": "v"}), 409, "BlobImmutableDueToPolicy", "metadata while appends are allowed")
    error(lambda: b.upload_blob(b"second", overwrite=True), 409, "BlobImmutableDueToPolicy", "overwrite while appends are allowed")
    st, code, _, _ = worm_admin("DELETE", "pyworm-pol/immutabilityPolicies/default", if_match='"0x0"')
    eq((st, code), (412, "ConditionNotMet"), "delete with another ETag")
    worm_ok("DELETE", "pyworm-pol/immutabilityPolicies/default", if_match=etag)
    eq(cc.get_container_properties().has_immutability_policy, False, "the policy deleted")
    b.upload_blob(b"second", overwrite=True)
    b.set_blob_metadata({"k": "v"})
    log.append_block(b"line 3\n")
    b.delete_blob()
    blobs.delete_container("pyworm-pol")
    eq([c.name for c in blobs.list_containers(name_starts_with="pyworm-pol")], [], "the container deleted")


@area("container-level WORM: Locked time-based retention policy", "azure-storage-blob")
def _():
    cc, b, log = worm_container("pyworm-lock")
    _, etag = worm_ok("PUT", "pyworm-lock/immutabilityPolicies/default", policy(1))
    out, etag = worm_ok("POST", "pyworm-lock/immutabilityPolicies/default/lock", if_match=etag)
    eq(out["properties"]["state"], "Locked", "the policy locked")
    refusals(cc, b, log, "BlobImmutableDueToPolicy", "ContainerImmutabilityPolicyLocked")
    st, code, _, _ = worm_admin("DELETE", "pyworm-lock/immutabilityPolicies/default", if_match=etag)
    eq((st, code), (409, "InvalidOperation"), "delete a Locked policy")
    st, code, _, _ = worm_admin("DELETE", "pyworm-lock")
    eq((st, code), (409, "ContainerImmutabilityPolicyLocked"), "the control plane's delete of a container holding blobs")
    eq(cc.get_container_properties().has_immutability_policy, True, "the policy stays")


finish()
