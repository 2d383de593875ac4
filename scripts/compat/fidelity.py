"""fidelity.py: the probes of fidelity.js through the Python SDKs (Blob
Batch, bare tag names and conditional tags, CORS preflights, SAS
permission letters on every service). Run by compat.sh."""
import datetime, os, urllib.request, urllib.error
from azure.storage.blob import (BlobServiceClient, BlobClient, generate_account_sas, generate_blob_sas, generate_container_sas,
    ResourceTypes, AccountSasPermissions, BlobSasPermissions, ContainerSasPermissions, CorsRule, StandardBlobTier)
from azure.storage.queue import QueueServiceClient
from azure.data.tables import TableServiceClient
from azure.core.credentials import AzureSasCredential

P = os.environ.get("PORT_BASE", "4400")
A = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
B, Q, T = (f"http://127.0.0.1:{P}{i}/{A}" for i in range(3))
CRED = {"account_name": A, "account_key": KEY}
EXP = datetime.datetime.utcnow() + datetime.timedelta(hours=1)
ok = bad = 0


def step(name, f):
    global ok, bad
    try:
        r = f(); ok += 1; print("PASS", name, "" if r is None else repr(r)[:150])
    except Exception as e:
        bad += 1; print("FAIL", name, type(e).__name__, getattr(e, "error_code", None), str(e).splitlines()[0][:200])


def refused(name, status, f):
    """A step that must fail with this HTTP status."""
    global ok, bad
    try:
        f(); bad += 1; print("FAIL", name, "succeeded, want", status)
    except Exception as e:
        got = getattr(e, "status_code", None)
        if got == status: ok += 1; print("PASS", name, "->", status, getattr(e, "error_code", ""))
        else: bad += 1; print("FAIL", name, type(e).__name__, got, str(e).splitlines()[0][:200])


def account_sas(services, perms, types):
    # generate_account_sas of the blob package signs ss=b; build others by hand through its
    # ResourceTypes/permissions and the services string.
    from azure.storage.blob._shared.shared_access_signature import SharedAccessSignature
    return SharedAccessSignature(A, KEY).generate_account(services, types, perms, EXP)


bs = BlobServiceClient(B, credential=CRED)
cc = bs.get_container_client("pyfidelity")
cc.create_container()
a, b = cc.get_blob_client("a.txt"), cc.get_blob_client("b.txt")
a.upload_blob(b"aaa", tags={"tag1": "val1"})
b.upload_blob(b"bbb", tags={"tag1": "val2"})

# Blob Batch as this SDK frames it.
step("batch tier", lambda: [r.status_code for r in cc.set_standard_blob_tier_blobs(StandardBlobTier.COOL, "a.txt", "b.txt")])
cc.get_blob_client("tmp.txt").upload_blob(b"t")
step("batch delete", lambda: [r.status_code for r in cc.delete_blobs("tmp.txt")])
cc.get_blob_client("tmp.txt").upload_blob(b"t")


def batch_counts():
    # A failed sub-request is reported as failed, with its status.
    got = [r.status_code for r in cc.delete_blobs("tmp.txt", "missing.txt", raise_on_any_failure=False)]
    if got != [202, 404]:
        raise AssertionError(got)
    return got


step("batch delete counts a failure", batch_counts)

# Tags: bare names.
def find(expr):
    names = [x.name for x in bs.find_blobs_by_tags(expr)]
    if names != ["a.txt"]: raise AssertionError(names)
    return names
step("tags find bare name", lambda: find("tag1='val1'"))
step("tags if-tags met", lambda: a.set_blob_metadata({"k": "v"}, if_tags_match_condition="tag1='val1'") and "ok")
refused("tags if-tags not met", 412, lambda: a.set_blob_metadata({"k": "v"}, if_tags_match_condition="tag1='nope'"))

# CORS preflights.
bs.set_service_properties(cors=[CorsRule(["http://*.contoso.com"], ["GET", "PUT"], allowed_headers=["x-ms-meta-*"], max_age_in_seconds=60)])
def preflight(origin, method):
    h = {"Origin": origin}
    if method: h["Access-Control-Request-Method"] = method
    req = urllib.request.Request(a.url, method="OPTIONS", headers=h)
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, r.headers.get("Access-Control-Allow-Origin")
    except urllib.error.HTTPError as e:
        return e.code, None
def want(got, status):
    if got[0] != status: raise AssertionError(got)
    return got
step("cors subdomain preflight", lambda: want(preflight("http://www.contoso.com", "GET"), 200))
step("cors preflight without method is 400", lambda: want(preflight("http://www.contoso.com", None), 400))
step("cors other origin is 403", lambda: want(preflight("http://evil.example", "GET"), 403))
bs.set_service_properties(cors=[])

# SAS permission letters.
step("account SAS w+srt=c creates a container", lambda: BlobServiceClient(B, credential=account_sas("b", "w", "c")).create_container("pysascreated") and "created")
step("account SAS w+srt=c creates a queue", lambda: QueueServiceClient(Q, credential=account_sas("q", "w", "c")).create_queue("pysasqueue") and "created")
step("account SAS w+srt=c creates a table", lambda: TableServiceClient(T, credential=AzureSasCredential(account_sas("t", "w", "c"))).create_table("pysastable") and "created")
step("account SAS srt=s reads queue service properties", lambda: QueueServiceClient(Q, credential=account_sas("q", "r", "s")).get_service_properties() and "read")
csas = generate_container_sas(A, "pyfidelity", account_key=KEY, permission=ContainerSasPermissions(read=True, add=True, create=True, write=True, delete=True, list=True), expiry=EXP)
refused("container SAS cannot read container properties", 403, lambda: BlobServiceClient(B, credential=csas).get_container_client("pyfidelity").get_container_properties())
create_only = generate_blob_sas(A, "pyfidelity", "new.txt", account_key=KEY, permission=BlobSasPermissions(create=True), expiry=EXP)
read_src = generate_blob_sas(A, "pyfidelity", "b.txt", account_key=KEY, permission=BlobSasPermissions(read=True), expiry=EXP)
step("service SAS c copies to a new blob", lambda: BlobClient(B, "pyfidelity", "new.txt", credential=create_only).start_copy_from_url(b.url + "?" + read_src)["copy_status"])
no_read = generate_blob_sas(A, "pyfidelity", "b.txt", account_key=KEY, permission=BlobSasPermissions(write=True), expiry=EXP)
refused("copy source SAS without read", 403, lambda: cc.get_blob_client("c.txt").start_copy_from_url(b.url + "?" + no_read, requires_sync=True))

bs.delete_container("pysascreated")
QueueServiceClient(Q, credential=CRED).delete_queue("pysasqueue")
TableServiceClient.from_connection_string(f"DefaultEndpointsProtocol=http;AccountName={A};AccountKey={KEY};TableEndpoint={T};").delete_table("pysastable")
cc.delete_container()
print("ok", ok, "bad", bad)
