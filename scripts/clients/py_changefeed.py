"""py_changefeed.py: azure-storage-blob-changefeed reads Cerulean's change feed.

Run by scripts/clients-python.sh, which starts server D (`cerulean serve
--blob-change-feed`: Blob on port PORT_BASE+4). A workload of blob writes is
made with azure-storage-blob, then read back with the change feed client
library, which walks $blobchangefeed (idx/segments/, the segments'
meta.json, the shards' Avro chunk files) as it does on Azure. Prints one
PASS/FAIL line per area.
"""
import datetime, os
from importlib.metadata import version

from probe import area as _area, check, eq, error, finish

P = os.environ.get("PORT_BASE", "2490")
A = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
CRED = {"account_name": A, "account_key": KEY}
URL = f"http://127.0.0.1:{P}4/{A}"
UTC = datetime.timezone.utc
LABEL = ", ".join(f"{p} {version(p)}" for p in ("azure-storage-blob-changefeed", "azure-storage-blob"))


def area(name):
    return _area(LABEL, name)


from azure.core import MatchConditions
from azure.storage.blob import BlobServiceClient, ContentSettings, StandardBlobTier
from azure.storage.blob.changefeed import ChangeFeedClient

bs = BlobServiceClient(URL, credential=CRED)
cf = ChangeFeedClient(URL, credential=CRED)
SUBJ = "/blobServices/default/containers/pyfeed/blobs/"
WANT = [
    ("BlobCreated", "PutBlob", "a.txt"),
    ("BlobCreated", "PutBlob", "a.txt"),
    ("BlobPropertiesUpdated", "SetBlobMetadata", "a.txt"),
    ("BlobPropertiesUpdated", "SetBlobProperties", "a.txt"),
    ("BlobSnapshotCreated", "SnapshotBlob", "a.txt"),
    ("BlobTierChanged", "SetBlobTier", "a.txt"),
    ("BlobCreated", "PutBlockList", "blocks"),
    ("BlobCreated", "CopyBlob", "copy"),
    ("BlobDeleted", "DeleteBlob", "copy"),
]
made = {}


@area("change feed: every committed write once, in order (list_changes)")
def _():
    cc = bs.create_container("pyfeed")
    b = cc.get_blob_client("a.txt")
    made["put"] = b.upload_blob(b"hello", content_settings=ContentSettings(content_type="text/plain"))
    error(lambda: b.upload_blob(b"refused", overwrite=True, etag='"0x1"', match_condition=MatchConditions.IfNotModified),
          412, "ConditionNotMet", "a refused overwrite")
    b.upload_blob(b"hello again", overwrite=True)
    b.set_blob_metadata({"k": "v"})
    b.set_http_headers(ContentSettings(content_type="text/html"))
    b.create_snapshot()
    b.set_standard_blob_tier(StandardBlobTier.COOL)
    bb = cc.get_blob_client("blocks")
    bb.stage_block("MDAwMQ==", b"blk")
    bb.commit_block_list(["MDAwMQ=="])
    cp = cc.get_blob_client("copy")
    cp.start_copy_from_url(b.url)
    cp.delete_blob(raw_response_hook=lambda r: made.__setitem__("del", r.http_response.headers["x-ms-request-id"]))
    events = list(cf.list_changes())
    got = [(e["eventType"], e["data"]["api"], e["subject"]) for e in events]
    eq(got, [(t, a, SUBJ + n) for t, a, n in WANT], "events")
    seqs = [e["data"]["sequencer"] for e in events]
    eq(seqs, sorted(seqs), "sequencers in order")
    eq(len(set(e["id"] for e in events)), len(events), "distinct ids")
    d = events[0]["data"]
    eq(d["etag"], made["put"]["etag"].strip('"'), "the first event's etag")
    eq(d["requestId"], made["put"]["request_id"], "the first event's request id")
    eq((d["contentLength"], d["contentType"], d["blobType"]), (5, "text/plain", "BlockBlob"), "the first event's blob")
    eq(events[-1]["data"]["requestId"], made["del"], "the delete's request id")
    eq(events[5]["data"]["blobTier"], "Cool", "the tier event's tier")
    eq(events[5]["data"]["previousInfo"]["PreviousTier"], "Hot", "the tier event's previous tier")


@area("change feed: resume from a continuation token, filter by time")
def _():
    pages = cf.list_changes(results_per_page=4).by_page()
    first = list(next(pages))
    eq(len(first), 4, "the first page")
    token = pages.continuation_token
    rest = [e["data"]["api"] for p in cf.list_changes(results_per_page=4).by_page(continuation_token=token) for e in p]
    eq(rest, [a for _, a, _ in WANT[4:]], "the events after the token")
    now = datetime.datetime.now(UTC)
    inside = list(cf.list_changes(start_time=now - datetime.timedelta(hours=2), end_time=now + datetime.timedelta(hours=2)))
    eq(len(inside), len(WANT), "events within the hours around now")
    later = list(cf.list_changes(start_time=now + datetime.timedelta(hours=3)))
    eq(later, [], "events from three hours on")


@area("$blobchangefeed is read-only")
def _():
    feed = bs.get_container_client("$blobchangefeed")
    names = [b.name for b in feed.list_blobs()]
    check("meta/segments.json" in names, "meta/segments.json listed", names)
    check(any(n.startswith("log/00/") and n.endswith("/00000.avro") for n in names), "a chunk listed", names)
    error(lambda: feed.upload_blob("meta/segments.json", b"{}", overwrite=True), 403, "InsufficientAccountPermissions", "overwrite")
    error(lambda: feed.delete_blob("meta/segments.json"), 403, "InsufficientAccountPermissions", "delete")


finish()
