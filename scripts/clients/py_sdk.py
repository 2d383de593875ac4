"""py_sdk.py: the newest Azure Storage SDKs for Python against Cerulean.

Run by scripts/clients-python.sh, which starts the servers (ports from
PORT_BASE): A (`cerulean azurite`: Blob 0, Queue 1, Table 2, File 3),
B (`cerulean serve --hierarchical-namespace`: Blob 5, dfs 6) and C
(`cerulean azurite --cert --oauth basic`: Blob 7, Queue 8, Table 9
over HTTPS, the certificate in $CERT). Prints one PASS/FAIL line per package, version and
area; an area passes when every assertion in it holds.
"""
import base64, datetime, json, os, sys, time, traceback, urllib.error, urllib.request, uuid
from importlib.metadata import version

P = os.environ.get("PORT_BASE", "2490")
CERT = os.environ.get("CERT")
A = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
CRED = {"account_name": A, "account_key": KEY}
B, Q, T, F = (f"http://127.0.0.1:{P}{i}/{A}" for i in range(4))
HB, DFS = f"http://127.0.0.1:{P}5/{A}", f"http://127.0.0.1:{P}6/{A}"
TLSB, TLSQ, TLST = (f"https://127.0.0.1:{P}{i}/{A}" for i in (7, 8, 9))
CS = (f"DefaultEndpointsProtocol=http;AccountName={A};AccountKey={KEY};BlobEndpoint={B};"
      f"QueueEndpoint={Q};TableEndpoint={T};FileEndpoint={F};")
UTC = datetime.timezone.utc
def later(h=1): return datetime.datetime.now(UTC) + datetime.timedelta(hours=h)
failed = 0
checks = 0


class Fail(Exception):
    pass


def check(cond, what, got=None):
    global checks
    checks += 1
    if not cond:
        raise Fail(what + ("" if got is None else f": got {got!r}"))


def eq(got, want, what):
    return check(got == want, f"{what}: want {want!r}", got)


def error(f, status=None, code=None, what=""):
    """Runs f, which must fail with this HTTP status and/or Azure error code."""
    global checks
    checks += 1
    try:
        f()
    except Fail:
        raise
    except Exception as e:
        st = getattr(e, "status_code", None)
        ec = getattr(e, "error_code", None) or ""
        ec = str(getattr(ec, "value", ec))
        if status is not None and st != status:
            raise Fail(f"{what}: want status {status}, got {st} {type(e).__name__} {str(e).splitlines()[0][:150]}")
        if code is not None and code.lower() != ec.lower().replace("_", ""):
            raise Fail(f"{what}: want error code {code}, got {ec!r} ({st})")
        return e
    raise Fail(f"{what}: succeeded, want {status} {code}")


def area(pkg, name):
    pkgs = (pkg,) if isinstance(pkg, str) else pkg
    label = ", ".join(f"{p} {version(p)}" for p in pkgs)
    def run(fn):
        global failed, checks
        t0, checks = time.time(), 0
        try:
            fn()
            print(f"PASS {label} {name}: {checks} checks [{time.time()-t0:.1f}s]", flush=True)
        except Exception as e:
            failed += 1
            where = traceback.extract_tb(e.__traceback__)[-1]
            print(f"FAIL {label} {name}: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''} (line {where.lineno})", flush=True)
        return fn
    return run


# ---------------------------------------------------------------- Blob
from azure.core import MatchConditions
from azure.core.credentials import AccessToken, AzureNamedKeyCredential, AzureSasCredential
from azure.storage.blob import (BlobServiceClient, BlobClient, ContainerClient, BlobSasPermissions, ContainerSasPermissions,
    ResourceTypes, AccountSasPermissions, CorsRule, StandardBlobTier, generate_blob_sas, generate_container_sas, generate_account_sas)
from azure.storage.blob import PartialBatchErrorException

bs = BlobServiceClient(B, credential=CRED)


@area("azure-storage-blob", "blob basics (upload, download, ranges, metadata case, snapshot, list, lease, copy)")
def _():
    want = {"Author": "ann", "MixedCase": "v"}
    cc = bs.create_container("pyblob", metadata=want)
    data = os.urandom(3 * 1024 * 1024 + 17)
    b = cc.get_blob_client("dir/big.bin")
    b.upload_blob(data, metadata=want, max_concurrency=2)
    eq(b.download_blob().readall(), data, "download")
    eq(b.download_blob(offset=100, length=50).readall(), data[100:150], "range")
    p = b.get_blob_properties()
    eq(p.size, len(data), "size"); eq(p.metadata, want, "blob metadata case")
    eq(cc.get_container_properties().metadata, want, "container metadata case")
    snap = b.create_snapshot()["snapshot"]
    b.upload_blob(b"new", overwrite=True)
    eq(cc.get_blob_client("dir/big.bin", snapshot=snap).download_blob().readall(), data, "snapshot content")
    names = [(x.name, x.snapshot is not None) for x in cc.list_blobs(include=["snapshots"])]
    eq(sorted(names), [("dir/big.bin", False), ("dir/big.bin", True)], "list with snapshots")
    eq([x.name for x in cc.walk_blobs()], ["dir/"], "walk_blobs prefixes")
    lease = b.acquire_lease(lease_duration=15)
    error(lambda: b.upload_blob(b"x", overwrite=True), 412, "LeaseIdMissing", "write under lease")
    lease.release()
    c2 = cc.get_blob_client("copy.bin")
    eq(c2.start_copy_from_url(b.url)["copy_status"], "success", "copy status")
    eq(c2.download_blob().readall(), b"new", "copied content")
    error(lambda: cc.get_blob_client("nope").download_blob(), 404, "BlobNotFound", "missing blob")
    ab = cc.get_blob_client("append")
    ab.create_append_blob(); ab.append_block(b"one"); ab.append_block(b"two")
    eq(ab.download_blob().readall(), b"onetwo", "append blob")
    pb = cc.get_blob_client("page")
    pb.create_page_blob(1024); pb.upload_page(b"\x01" * 512, offset=512, length=512)
    eq([(r["start"], r["end"]) for r in pb.get_page_ranges()[0]], [(512, 1023)], "page ranges")
    bl = cc.get_blob_client("blocks")
    bl.stage_block("YQ==", b"aa"); bl.stage_block("Yg==", b"bb"); bl.commit_block_list(["Yg==", "YQ=="])
    eq(bl.download_blob().readall(), b"bbaa", "block list order")
    cc.delete_container()


@area("azure-storage-blob", "blob batch (delete_blobs, set_standard_blob_tier_blobs, one sub-request failing)")
def _():
    cc = bs.create_container("pybatch")
    for n in ("a", "b", "c"):
        cc.get_blob_client(n).upload_blob(n.encode())
    parts = cc.set_standard_blob_tier_blobs(StandardBlobTier.COOL, "a", "b")
    eq([r.status_code for r in parts], [200, 200], "tier all ok")
    eq([cc.get_blob_client(n).get_blob_properties().blob_tier for n in "ab"], ["Cool", "Cool"], "tiers set")
    parts = cc.delete_blobs("a")
    eq([r.status_code for r in parts], [202], "delete ok")
    # One sub-request failing: raise_on_any_failure (the default) raises
    # PartialBatchErrorException with every part; the failing part carries
    # Azure's error code.
    e = error(lambda: cc.delete_blobs("b", "missing"), what="delete with one missing blob")
    check(isinstance(e, PartialBatchErrorException), "PartialBatchErrorException raised", type(e).__name__)
    eq([p.status_code for p in e.parts], [202, 404], "part statuses")
    eq(e.parts[1].headers.get("x-ms-error-code"), "BlobNotFound", "failing part's x-ms-error-code")
    parts = list(cc.set_standard_blob_tier_blobs(StandardBlobTier.HOT, "c", "missing", raise_on_any_failure=False))
    eq([p.status_code for p in parts], [200, 404], "tier parts without raising")
    eq(parts[1].headers.get("x-ms-error-code"), "BlobNotFound", "tier failing part's x-ms-error-code")
    eq(cc.get_blob_client("c").get_blob_properties().blob_tier, "Hot", "tier of the good part applied")
    eq([x.name for x in cc.list_blobs()], ["c"], "b deleted by the partly failing batch, c kept")
    cc.delete_container()


@area("azure-storage-blob", "blob index tags (set/get, find_blobs_by_tags, if_tags conditions)")
def _():
    cc = bs.create_container("pytags")
    a, b = cc.get_blob_client("a.txt"), cc.get_blob_client("b.txt")
    a.upload_blob(b"aaa", tags={"tag1": "val1", "project": "x"})
    b.upload_blob(b"bbb", tags={"tag1": "val2", "project": "x"})
    eq(a.get_blob_tags(), {"tag1": "val1", "project": "x"}, "get tags")
    eq(sorted(x.name for x in bs.find_blobs_by_tags("tag1='val1'")), ["a.txt"], "find bare name")
    eq(sorted(x.name for x in bs.find_blobs_by_tags("\"project\"='x'")), ["a.txt", "b.txt"], "find quoted name")
    eq(sorted(x.name for x in cc.find_blobs_by_tags("project='x' AND tag1>'val1'")), ["b.txt"], "container find with range")
    b.set_blob_tags({"tag1": "val3"})
    eq(sorted(x.name for x in bs.find_blobs_by_tags("tag1='val3'")), ["b.txt"], "find after set")
    eq(sorted(x.name for x in bs.find_blobs_by_tags("project='x'")), ["a.txt"], "replaced tags gone from the index")
    a.set_blob_metadata({"k": "v"}, if_tags_match_condition="tag1='val1'")
    eq(a.get_blob_properties().metadata, {"k": "v"}, "if-tags met")
    error(lambda: a.set_blob_metadata({"k": "w"}, if_tags_match_condition="tag1='nope'"), 412, "ConditionNotMet", "if-tags not met")
    eq(a.get_blob_properties().tag_count, 2, "tag count")
    cc.delete_container()


def fake_jwt(exp):
    enc = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
    body = {"aud": "https://storage.azure.com", "iss": "https://sts.windows.net/72f988bf-86f1-41af-91ab-2d7cd011db47/",
            "tid": "72f988bf-86f1-41af-91ab-2d7cd011db47", "oid": "00000000-0000-0000-0000-000000000001",
            "nbf": int(time.time()) - 3600, "exp": int(exp)}
    return enc(json.dumps({"typ": "JWT", "alg": "RS256"}).encode()) + "." + enc(json.dumps(body).encode()) + "." + enc(b"sig")


class FakeToken:
    """A TokenCredential handing out an unsigned Entra ID token, which
    `--oauth basic` accepts (README, Connecting); ttl < 0: expired."""
    def __init__(self, ttl=3600):
        self.ttl = ttl
    def get_token(self, *scopes, **kw):
        exp = time.time() + self.ttl
        return AccessToken(fake_jwt(exp), int(time.time() + 3600))


@area("azure-storage-blob", "user delegation SAS (bearer token over HTTPS, --oauth basic)")
def _():
    svc = BlobServiceClient(TLSB, credential=FakeToken(), connection_verify=CERT)
    cc = svc.create_container("pyudk")
    cc.get_blob_client("doc.txt").upload_blob(b"delegated")
    udk = svc.get_user_delegation_key(datetime.datetime.now(UTC) - datetime.timedelta(minutes=5), later())
    eq(udk.signed_oid, "00000000-0000-0000-0000-000000000001", "key's signed oid")
    sas = generate_blob_sas(A, "pyudk", "doc.txt", user_delegation_key=udk, permission=BlobSasPermissions(read=True), expiry=later())
    check("skoid=" in sas, "SAS signed with the delegation key", sas)
    rb = BlobClient.from_blob_url(f"{TLSB}/pyudk/doc.txt?{sas}", connection_verify=CERT)
    eq(rb.download_blob().readall(), b"delegated", "read through the user delegation SAS")
    error(lambda: rb.upload_blob(b"x", overwrite=True), 403, "AuthorizationPermissionMismatch", "write with a read-only SAS")
    csas = generate_container_sas(A, "pyudk", user_delegation_key=udk, permission=ContainerSasPermissions(list=True, write=True, create=True), expiry=later())
    cs = ContainerClient.from_container_url(f"{TLSB}/pyudk?{csas}", connection_verify=CERT)
    cs.get_blob_client("new.txt").upload_blob(b"via container sas")
    eq(sorted(x.name for x in cs.list_blobs()), ["doc.txt", "new.txt"], "list through the container SAS")
    bad = sas.replace("sig=", "sig=AA")
    error(lambda: BlobClient.from_blob_url(f"{TLSB}/pyudk/doc.txt?{bad}", connection_verify=CERT).download_blob(), 403, what="tampered signature")
    sk = BlobServiceClient(TLSB, credential=CRED, connection_verify=CERT)
    error(lambda: sk.get_user_delegation_key(datetime.datetime.now(UTC), later()), 403, what="Shared Key cannot get a delegation key")
    error(lambda: svc.get_user_delegation_key(datetime.datetime.now(UTC), later(24 * 8)), 400, what="expiry beyond seven days")
    svc.delete_container("pyudk")


@area(("azure-storage-blob", "azure-storage-queue", "azure-data-tables"), "bearer tokens over HTTPS (--oauth basic): Blob, Queue, Table through a TokenCredential")
def _():
    from azure.storage.queue import QueueServiceClient as QSC
    from azure.data.tables import TableServiceClient as TSC
    tok = FakeToken()
    cc = BlobServiceClient(TLSB, credential=tok, connection_verify=CERT).create_container("pytoken")
    cc.get_blob_client("t.txt").upload_blob(b"token")
    eq(cc.get_blob_client("t.txt").download_blob().readall(), b"token", "blob with a token")
    q = QSC(TLSQ, credential=tok, connection_verify=CERT).create_queue("pytoken")
    q.send_message("m")
    eq([m.content for m in q.receive_messages()], ["m"], "queue with a token")
    t = TSC(TLST, credential=tok, connection_verify=CERT).create_table("pytoken")
    t.create_entity({"PartitionKey": "p", "RowKey": "r", "v": 1})
    eq(t.get_entity("p", "r")["v"], 1, "table with a token")
    expired = FakeToken(-600)
    e = error(lambda: BlobServiceClient(TLSB, credential=expired, connection_verify=CERT).get_container_client("pytoken").get_container_properties(),
              401, "InvalidAuthenticationInfo", "expired token")
    check("WWW-Authenticate" in e.response.headers, "challenge on 401", dict(e.response.headers))
    error(lambda: QSC(TLSQ, credential=expired, connection_verify=CERT).get_queue_client("pytoken").get_queue_properties(), 401, what="expired token on Queue")
    error(lambda: BlobServiceClient(TLSB.replace("https", "http"), credential=CRED).list_containers().next(), 400, what="plain HTTP to the HTTPS port")
    cc.delete_container(); q.delete_queue(); t.delete_table()


@area(("azure-storage-blob", "azure-storage-queue", "azure-data-tables"), "SAS letters and CORS (the fidelity probes)")
def _():
    cc = bs.create_container("pyfidelity")
    a = cc.get_blob_client("a.txt"); a.upload_blob(b"aaa")
    sas = generate_account_sas(A, KEY, ResourceTypes(container=True), AccountSasPermissions(write=True), later())
    BlobServiceClient(B, credential=sas).create_container("pysascreated")
    check(bs.get_container_client("pysascreated").exists(), "account SAS w+srt=c created a container")
    csas = generate_container_sas(A, "pyfidelity", account_key=KEY, permission=ContainerSasPermissions(read=True, list=True), expiry=later())
    sc = ContainerClient.from_container_url(f"{B}/pyfidelity?{csas}")
    eq([x.name for x in sc.list_blobs()], ["a.txt"], "container SAS lists")
    error(lambda: sc.get_blob_client("a.txt").upload_blob(b"x", overwrite=True), 403, "AuthorizationPermissionMismatch", "read/list container SAS writes")
    error(lambda: sc.get_container_properties(), 403, "AuthorizationResourceTypeMismatch", "container SAS on container properties")
    create_only = generate_blob_sas(A, "pyfidelity", "a.txt", account_key=KEY, permission=BlobSasPermissions(create=True), expiry=later())
    error(lambda: BlobClient.from_blob_url(f"{a.url}?{create_only}").upload_blob(b"x", overwrite=True), 403,
          "AuthorizationPermissionMismatch", "create-only SAS overwriting")
    from azure.storage.queue import QueueServiceClient as QSC, generate_account_sas as queue_account_sas
    from azure.storage.queue import ResourceTypes as QRT, AccountSasPermissions as QASP
    from azure.data.tables import TableServiceClient as TSC, generate_account_sas as table_account_sas
    from azure.data.tables import ResourceTypes as TRT, AccountSasPermissions as TASP
    QSC(Q, credential=queue_account_sas(A, KEY, QRT(container=True), QASP(write=True), later())).create_queue("pysasqueue")
    check(QSC(Q, credential=CRED).get_queue_client("pysasqueue").get_queue_properties() is not None, "account SAS w+srt=c created a queue")
    TSC(T, credential=AzureSasCredential(table_account_sas(AzureNamedKeyCredential(A, KEY), TRT(container=True), TASP(write=True), later()))).create_table("pysastable")
    eq([x.name for x in TSC.from_connection_string(CS).query_tables("TableName eq 'pysastable'")], ["pysastable"], "account SAS w+srt=c created a table")
    props = QSC(Q, credential=queue_account_sas(A, KEY, QRT(service=True), QASP(read=True), later())).get_service_properties()
    check("cors" in props, "account SAS srt=s reads queue service properties", props)
    b = cc.get_blob_client("b.txt"); b.upload_blob(b"bbb")
    new_only = generate_blob_sas(A, "pyfidelity", "new.txt", account_key=KEY, permission=BlobSasPermissions(create=True), expiry=later())
    read_src = generate_blob_sas(A, "pyfidelity", "b.txt", account_key=KEY, permission=BlobSasPermissions(read=True), expiry=later())
    eq(BlobClient(B, "pyfidelity", "new.txt", credential=new_only).start_copy_from_url(b.url + "?" + read_src)["copy_status"], "success", "service SAS c copies to a new blob")
    eq(cc.get_blob_client("new.txt").download_blob().readall(), b"bbb", "copied through a create-only SAS")
    no_read = generate_blob_sas(A, "pyfidelity", "b.txt", account_key=KEY, permission=BlobSasPermissions(write=True), expiry=later())
    error(lambda: cc.get_blob_client("c.txt").start_copy_from_url(b.url + "?" + no_read, requires_sync=True), 403, "CannotVerifyCopySource", "copy source SAS without read")
    QSC(Q, credential=CRED).delete_queue("pysasqueue"); TSC.from_connection_string(CS).delete_table("pysastable")
    bs.set_service_properties(cors=[CorsRule(["http://*.contoso.com"], ["GET", "PUT"], allowed_headers=["x-ms-meta-*"], max_age_in_seconds=60)])
    def preflight(origin, method):
        h = {"Origin": origin}
        if method: h["Access-Control-Request-Method"] = method
        try:
            with urllib.request.urlopen(urllib.request.Request(a.url, method="OPTIONS", headers=h)) as r:
                return r.status, r.headers.get("Access-Control-Allow-Origin")
        except urllib.error.HTTPError as e:
            return e.code, None
    eq(preflight("http://www.contoso.com", "GET"), (200, "http://www.contoso.com"), "subdomain preflight")
    eq(preflight("http://www.contoso.com", None)[0], 400, "preflight without method")
    eq(preflight("http://evil.example", "GET")[0], 403, "foreign origin")
    bs.set_service_properties(cors=[])
    bs.delete_container("pysascreated"); cc.delete_container()


# ---------------------------------------------------------------- Queue
from azure.storage.queue import (QueueServiceClient, QueueClient, TextBase64EncodePolicy, TextBase64DecodePolicy, AccessPolicy,
    QueueSasPermissions, generate_queue_sas)


@area("azure-storage-queue", "queue messages (pop receipts, visibility, dequeue count, SAS, base64)")
def _():
    qs = QueueServiceClient.from_connection_string(CS)
    q = qs.create_queue("pyqueue", metadata={"a": "1"})
    eq(q.get_queue_properties().metadata, {"a": "1"}, "queue metadata")
    q.send_message("hello", time_to_live=60)
    q.send_message("héllo <&> ünïcode")
    q.send_message("later", visibility_timeout=1)
    eq([m.content for m in q.peek_messages(max_messages=5)], ["hello", "héllo <&> ünïcode"], "peek skips the invisible message")
    got = list(q.receive_messages(messages_per_page=2, max_messages=2, visibility_timeout=30))
    eq([m.content for m in got], ["hello", "héllo <&> ünïcode"], "receive")
    eq([m.dequeue_count for m in got], [1, 1], "dequeue count")
    time.sleep(1.3)
    eq([m.content for m in q.receive_messages(visibility_timeout=30)], ["later"], "received messages hidden, delayed one visible")
    m = got[0]
    upd = q.update_message(m, content="updated", visibility_timeout=0)
    check(upd.pop_receipt and upd.pop_receipt != m.pop_receipt, "update gives a new pop receipt", upd.pop_receipt)
    error(lambda: q.delete_message(m), 404, "MessageNotFound", "delete with the stale pop receipt")
    again = list(q.receive_messages(visibility_timeout=30))
    eq([(x.content, x.dequeue_count) for x in again], [("updated", 2)], "updated message back, dequeued twice")
    q.delete_message(again[0])
    q.delete_message(got[1].id, got[1].pop_receipt)
    error(lambda: q.update_message(again[0].id, again[0].pop_receipt, content="x", visibility_timeout=0), 404, "MessageNotFound", "update a deleted message")
    q.set_queue_access_policy({"p1": AccessPolicy(permission=QueueSasPermissions(read=True, process=True), expiry=later())})
    eq(q.get_queue_access_policy()["p1"].permission, "rp", "stored access policy")
    sas = generate_queue_sas(A, "pyqueue", KEY, permission=QueueSasPermissions(add=True, read=True, process=True), expiry=later())
    qsas = QueueClient.from_queue_url(f"{Q}/pyqueue", credential=sas)
    qsas.send_message("via sas")
    eq([x.content for x in qsas.receive_messages()], ["via sas"], "SAS send/receive")
    error(lambda: qsas.clear_messages(), 403, "AuthorizationPermissionMismatch", "SAS without delete clears")
    qb = QueueClient.from_connection_string(CS, "pyqueue", message_encode_policy=TextBase64EncodePolicy(), message_decode_policy=TextBase64DecodePolicy())
    qb.clear_messages()
    qb.send_message("b64 text")
    eq([x.content for x in qb.receive_messages()], ["b64 text"], "base64 round trip")
    eq([x.name for x in qs.list_queues(name_starts_with="py", include_metadata=True)], ["pyqueue"], "list queues")
    error(lambda: q.send_message("x" * (65 * 1024)), 413, "RequestBodyTooLarge", "message over 64 KiB")
    q.delete_queue()


# ---------------------------------------------------------------- Table
from azure.data.tables import TableServiceClient, TableClient, UpdateMode, EdmType, EntityProperty, TableSasPermissions, generate_table_sas, TableTransactionError


@area("azure-data-tables", "tables (typed entities, queries, If-Match etags, batch transactions, SAS)")
def _():
    ts = TableServiceClient.from_connection_string(CS)
    t = ts.create_table("pytable")
    dt = datetime.datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC)
    g = uuid.UUID("12345678-1234-5678-1234-567812345678")
    t.create_entity({"PartitionKey": "p", "RowKey": "r1", "s": "str", "i": 5, "big": EntityProperty(2**40, EdmType.INT64), "d": 1.5,
                     "b": True, "dt": dt, "g": g, "bin": b"\x00\x01\xff"})
    e = t.get_entity("p", "r1")
    eq((e["s"], e["i"], e["big"].value if hasattr(e["big"], "value") else e["big"], e["d"], e["b"], e["dt"], e["g"], e["bin"]),
       ("str", 5, 2**40, 1.5, True, dt, g, b"\x00\x01\xff"), "typed round trip")
    eq([x["RowKey"] for x in t.query_entities("i eq @i and b eq true", parameters={"i": 5})], ["r1"], "parameterised query")
    eq([x["RowKey"] for x in t.query_entities("dt ge datetime'2020-01-01T00:00:00Z' and g eq guid'12345678-1234-5678-1234-567812345678'")], ["r1"], "datetime/guid filter")
    sel = [dict(x) for x in t.query_entities("PartitionKey eq 'p'", select=["s", "i"])]
    eq(sel, [{"s": "str", "i": 5}], "select")
    old = e.metadata["etag"]
    r = t.update_entity({"PartitionKey": "p", "RowKey": "r1", "x": 1}, mode=UpdateMode.MERGE, etag=old, match_condition=MatchConditions.IfNotModified)
    check(r["etag"] != old, "merge gives a new etag", r)
    eq(t.get_entity("p", "r1")["s"], "str", "merge keeps other properties")
    error(lambda: t.update_entity({"PartitionKey": "p", "RowKey": "r1", "x": 2}, mode=UpdateMode.REPLACE, etag=old, match_condition=MatchConditions.IfNotModified),
          412, "UpdateConditionNotSatisfied", "replace with a stale etag")
    error(lambda: t.delete_entity("p", "r1", etag=old, match_condition=MatchConditions.IfNotModified), 412, "UpdateConditionNotSatisfied", "delete with a stale etag")
    eq(t.get_entity("p", "r1")["x"], 1, "entity unchanged by the refused writes")
    t.upsert_entity({"PartitionKey": "p", "RowKey": "r2", "v": 1})
    t.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "r3"}), ("upsert", {"PartitionKey": "p", "RowKey": "r4", "v": 4}),
                          ("update", {"PartitionKey": "p", "RowKey": "r2", "v": 2}, {"mode": "replace"}), ("delete", {"PartitionKey": "p", "RowKey": "r1"})])
    eq(sorted((x["RowKey"], x.get("v")) for x in t.list_entities()), [("r2", 2), ("r3", None), ("r4", 4)], "transaction applied")
    try:
        t.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "r5"}), ("create", {"PartitionKey": "p", "RowKey": "r2"})])
        raise Fail("transaction with a duplicate create succeeded")
    except TableTransactionError as ex:
        eq((ex.index, ex.error_code), (1, "EntityAlreadyExists"), "failed operation index and code")
    r2 = t.get_entity("p", "r2")
    try:
        t.submit_transaction([("upsert", {"PartitionKey": "p", "RowKey": "r6"}),
                              ("update", {"PartitionKey": "p", "RowKey": "r2", "v": 9}, {"etag": old, "match_condition": MatchConditions.IfNotModified})])
        raise Fail("transaction with a stale etag succeeded")
    except TableTransactionError as ex:
        eq((ex.index, ex.error_code), (1, "UpdateConditionNotSatisfied"), "stale etag in a transaction")
    t.submit_transaction([("update", {"PartitionKey": "p", "RowKey": "r2", "v": 3}, {"etag": r2.metadata["etag"], "match_condition": MatchConditions.IfNotModified})])
    eq(sorted(x["RowKey"] for x in t.list_entities()), ["r2", "r3", "r4"], "failed transactions left nothing behind")
    eq(t.get_entity("p", "r2")["v"], 3, "conditional update in a transaction")
    error(lambda: t.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "x"}), ("create", {"PartitionKey": "q", "RowKey": "x"})]),
          what="two partitions in one transaction")
    eq(len(list(t.list_entities(results_per_page=2).by_page().__next__())), 2, "paging")
    sas = generate_table_sas(AzureNamedKeyCredential(A, KEY), "pytable", permission=TableSasPermissions(read=True), expiry=later())
    tsas = TableClient(endpoint=T, table_name="pytable", credential=AzureSasCredential(sas))
    eq(len(list(tsas.list_entities())), 3, "SAS read")
    error(lambda: tsas.upsert_entity({"PartitionKey": "p", "RowKey": "z"}), 403, what="read-only SAS writes")
    eq([x.name for x in ts.query_tables("TableName eq 'pytable'")], ["pytable"], "query tables")
    ts.delete_table("pytable")


# ---------------------------------------------------------------- File
from azure.storage.fileshare import ShareServiceClient, ContentSettings, generate_file_sas, FileSasPermissions


@area("azure-storage-file-share", "file shares (files, ranges, metadata, snapshot, copy, rename, lease, permissions, Blob<->File copy)")
def _():
    fs = ShareServiceClient.from_connection_string(CS)
    sh = fs.create_share("pyshare", quota=5)
    sh.create_directory("d1")
    f = sh.get_file_client("d1/f.bin")
    data = bytes(range(256)) * 4096
    f.upload_file(data, metadata={"Author": "ann"})
    eq(f.download_file().readall(), data, "download")
    eq(f.download_file(offset=10, length=10).readall(), data[10:20], "range")
    eq([(r["start"], r["end"]) for r in f.get_ranges()], [(0, len(data) - 1)], "ranges")
    eq(f.get_file_properties().metadata, {"Author": "ann"}, "metadata case")
    f.set_http_headers(content_settings=ContentSettings(content_type="text/x"))
    eq(f.get_file_properties().content_settings.content_type, "text/x", "content type")
    f.resize_file(1000)
    eq(f.get_file_properties().size, 1000, "resize")
    eq(f.download_file().readall(), data[:1000], "content after shrinking")
    snap = sh.create_snapshot()["snapshot"]
    f.upload_range(b"Z" * 10, offset=0, length=10)
    eq(fs.get_share_client("pyshare", snapshot=snap).get_file_client("d1/f.bin").download_file(offset=0, length=10).readall(), data[:10], "snapshot content")
    c = sh.get_file_client("d1/copy.bin")
    eq(c.start_copy_from_url(f.url)["copy_status"], "success", "copy")
    c.rename_file("d1/renamed.bin")
    eq(sorted(x["name"] for x in sh.list_directories_and_files("d1")), ["f.bin", "renamed.bin"], "list after rename")
    lease = f.acquire_lease()
    error(lambda: f.upload_range(b"x", offset=0, length=1), 412, "LeaseIdMissing", "write under lease")
    lease.release()
    eq(list(f.list_handles()), [], "no handles")
    key = sh.create_permission_for_share("O:SYG:SYD:(A;;FA;;;SY)")
    check(key, "permission key", key)
    check(sh.get_share_stats() >= 0, "share stats")
    error(lambda: sh.get_directory_client("d1").delete_directory(), 409, "DirectoryNotEmpty", "non-empty directory")
    xc = BlobServiceClient.from_connection_string(CS).create_container("pyxcopy")
    b = xc.get_blob_client("from blob.txt"); b.upload_blob(b"blob bytes", metadata={"src": "blob"})
    dst = sh.get_file_client("d1/fromblob.txt")
    dst.start_copy_from_url(b.url)
    eq((dst.download_file().readall(), dst.get_file_properties().metadata), (b"blob bytes", {"src": "blob"}), "blob to file")
    sas = generate_file_sas(A, "pyshare", ["d1", "f.bin"], account_key=KEY, permission=FileSasPermissions(read=True), expiry=later())
    fb = xc.get_blob_client("fromfile.bin")
    fb.start_copy_from_url(f.url + "?" + sas)
    eq(fb.download_blob().readall(), f.download_file().readall(), "file to blob")
    xc.delete_container()
    sh.delete_share(delete_snapshots=True)


# ---------------------------------------------------------------- Data Lake
from azure.storage.filedatalake import DataLakeServiceClient


@area("azure-storage-file-datalake", "data lake (paths, append/flush, rename, ACLs, recursive ACLs)")
def _():
    dl = DataLakeServiceClient(DFS, credential=CRED)
    fsys = dl.create_file_system("pydl")
    d = fsys.create_directory("top/sub")
    f = d.create_file("a.txt")
    f.append_data(b"hello ", 0, 6); f.append_data(b"lake", 6, 4); f.flush_data(10)
    eq(f.download_file().readall(), b"hello lake", "append and flush")
    fsys.get_file_client("top/b.txt").upload_data(b"bee", overwrite=True)
    eq(sorted((p.name, p.is_directory) for p in fsys.get_paths(recursive=True)),
       [("top", True), ("top/b.txt", False), ("top/sub", True), ("top/sub/a.txt", False)], "recursive listing")
    error(lambda: fsys.create_directory("top", match_condition=MatchConditions.IfMissing), 409, "PathAlreadyExists", "create existing with If-None-Match *")
    d.rename_directory("pydl/top/moved")
    eq(fsys.get_file_client("top/moved/a.txt").download_file().readall(), b"hello lake", "content after directory rename")
    top = fsys.get_directory_client("top")
    top.set_access_control(permissions="rwxr-x--T")
    eq(top.get_access_control()["permissions"], "rwxr-x--T", "permissions with sticky bit")
    oid = "11111111-2222-3333-4444-555555555555"
    acl = f"user::rwx,group::r-x,other::---,user:{oid}:r-x"
    top.set_access_control(acl=acl)
    got = top.get_access_control()["acl"]
    check(f"user:{oid}:r-x" in got.split(","), "named user entry stored", got)
    check("mask::r-x" in got.split(","), "mask computed", got)
    r = top.set_access_control_recursive(acl=f"user::rwx,group::r-x,other::---,user:{oid}:rwx")
    eq((r.counters.directories_successful, r.counters.files_successful, r.counters.failure_count), (2, 2, 0), "recursive counters")
    fa = fsys.get_file_client("top/moved/a.txt").get_access_control()["acl"]
    check(f"user:{oid}:rwx" in fa.split(","), "recursive ACL reached the file", fa)
    r = top.update_access_control_recursive(acl="default:user::rwx,default:group::r-x,default:other::---")
    eq(r.counters.directories_successful + r.counters.files_successful, 4, "update recursive counters")
    check("default:user::rwx" in fsys.get_directory_client("top/moved").get_access_control()["acl"], "default ACL on the subdirectory")
    r = top.remove_access_control_recursive(acl=f"user:{oid}")
    fa = fsys.get_file_client("top/b.txt").get_access_control()["acl"]
    check(oid not in fa, "named user removed recursively", fa)
    error(lambda: top.set_access_control(acl="user::rwx,bogus"), 400, what="malformed ACL")
    top.delete_directory()
    eq(list(fsys.get_paths()), [], "recursive delete")
    dl.delete_file_system("pydl")


@area("azure-storage-file-datalake", "data lake SAS (file system, directory, file), leases, expiry, conditions, owner")
def _():
    from azure.storage.filedatalake import (DataLakeFileClient, FileSystemClient, generate_file_system_sas, generate_directory_sas,
        generate_file_sas as dl_file_sas, FileSystemSasPermissions, DirectorySasPermissions, FileSasPermissions as DLFileSasPermissions)
    dl = DataLakeServiceClient(DFS, credential=CRED)
    fsys = dl.create_file_system("pydlsas")
    f = fsys.get_file_client("a/b.txt"); f.upload_data(b"abc", overwrite=True)
    fss = generate_file_system_sas(A, "pydlsas", KEY, permission=FileSystemSasPermissions(read=True, list=True), expiry=later())
    eq(DataLakeFileClient(DFS, "pydlsas", "a/b.txt", credential=fss).download_file().readall(), b"abc", "file system SAS reads")
    eq([p.name for p in FileSystemClient(DFS, "pydlsas", credential=fss).get_paths()], ["a", "a/b.txt"], "file system SAS lists")
    error(lambda: DataLakeFileClient(DFS, "pydlsas", "a/c.txt", credential=fss).create_file(), 403, "AuthorizationPermissionMismatch", "read SAS creates")
    dsas = generate_directory_sas(A, "pydlsas", "a", KEY, permission=DirectorySasPermissions(read=True, write=True, create=True), expiry=later())
    DataLakeFileClient(DFS, "pydlsas", "a/new.txt", credential=dsas).upload_data(b"n", overwrite=True)
    eq(fsys.get_file_client("a/new.txt").download_file().readall(), b"n", "directory SAS writes inside")
    error(lambda: DataLakeFileClient(DFS, "pydlsas", "other.txt", credential=dsas).upload_data(b"n", overwrite=True), 403, what="directory SAS outside its directory")
    fsas = dl_file_sas(A, "pydlsas", "a", "b.txt", KEY, permission=DLFileSasPermissions(read=True), expiry=later())
    eq(DataLakeFileClient(DFS, "pydlsas", "a/b.txt", credential=fsas).download_file().readall(), b"abc", "file SAS reads")
    lease = f.acquire_lease(lease_duration=15)
    error(lambda: f.upload_data(b"x", overwrite=True), 412, "LeaseIdMissing", "write under lease")
    f.upload_data(b"xyz", overwrite=True, lease=lease)
    eq(f.download_file().readall(), b"xyz", "write with the lease id")
    lease.release()
    before = datetime.datetime.now(UTC).replace(microsecond=0)
    f.set_file_expiry("RelativeToNow", expires_on=3600 * 1000)
    ex = f.get_file_properties().expiry_time
    check(ex is not None and datetime.timedelta(minutes=59) <= ex - before <= datetime.timedelta(minutes=61), "expiry an hour ahead", ex)
    error(lambda: f.delete_file(etag='"0x1"', match_condition=MatchConditions.IfNotModified), 412, "ConditionNotMet", "delete with a stale etag")
    oid = "11111111-2222-3333-4444-555555555555"
    f.set_access_control(owner=oid)
    eq(f.get_access_control()["owner"], oid, "owner set")
    dl.delete_file_system("pydlsas")


sys.exit(1 if failed else 0)
