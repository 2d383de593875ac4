import traceback, datetime, uuid, os
P=os.environ.get("PORT_BASE","4400")
KEY="Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
CS=("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="+KEY+
 ";BlobEndpoint=http://127.0.0.1:"+P+"0/devstoreaccount1;QueueEndpoint=http://127.0.0.1:"+P+"1/devstoreaccount1"
 ";TableEndpoint=http://127.0.0.1:"+P+"2/devstoreaccount1;FileEndpoint=http://127.0.0.1:"+P+"3/devstoreaccount1;")
ok=0; bad=0
def expect(name, code, f):
    """A step that must fail with Azure error code `code`."""
    global ok, bad
    try:
        f(); bad+=1; print("FAIL", name, "succeeded, want", code)
    except Exception as e:
        got=str(getattr(e,"error_code",None))
        if code.lower() in got.lower().replace("_",""): ok+=1; print("PASS", name, "->", code)
        else: bad+=1; print("FAIL", name, type(e).__name__, got, str(e).splitlines()[0][:200])

def step(name, f):
    global ok, bad
    try:
        r=f(); ok+=1; print("PASS", name, "" if r is None else repr(r)[:150])
    except Exception as e:
        bad+=1; print("FAIL", name, type(e).__name__, getattr(e,"error_code",None), str(e).splitlines()[0][:200])

# ---------------- queue
from azure.storage.queue import QueueServiceClient, QueueClient, TextBase64EncodePolicy, AccessPolicy, QueueSasPermissions, generate_queue_sas
qs=QueueServiceClient.from_connection_string(CS)
q=qs.get_queue_client("pyqueue")
step("q create", lambda: q.create_queue(metadata={"a":"1"}))
step("q props", lambda: q.get_queue_properties().approximate_message_count)
step("q send", lambda: q.send_message("hello", visibility_timeout=0, time_to_live=60).id)
step("q send unicode", lambda: q.send_message("héllo <&> ünïcode").id)
step("q peek", lambda: [m.content for m in q.peek_messages(max_messages=5)])
msgs=[]
step("q receive", lambda: msgs.extend(q.receive_messages(messages_per_page=5, visibility_timeout=30)) or [m.content for m in msgs])
step("q update", lambda: q.update_message(msgs[0], content="updated", visibility_timeout=0).pop_receipt)
expect("q delete stale receipt", "MessageNotFound", lambda: q.delete_message(msgs[0]))
step("q receive max", lambda: [ (m.content, m.dequeue_count) for m in q.receive_messages(max_messages=32)])
step("q clear", lambda: q.clear_messages())
step("q set acl", lambda: q.set_queue_access_policy({"p1": AccessPolicy(permission=QueueSasPermissions(read=True, process=True), expiry=datetime.datetime.utcnow()+datetime.timedelta(hours=1))}))
step("q get acl", lambda: q.get_queue_access_policy())
sas=generate_queue_sas("devstoreaccount1","pyqueue",KEY,permission=QueueSasPermissions(add=True,read=True,process=True),expiry=datetime.datetime.utcnow()+datetime.timedelta(hours=1))
qsas=QueueClient.from_queue_url("http://127.0.0.1:"+P+"1/devstoreaccount1/pyqueue", credential=sas)
step("q sas send", lambda: qsas.send_message("via sas").id)
step("q sas receive", lambda: [m.content for m in qsas.receive_messages()])
step("q list", lambda: [x.name for x in qs.list_queues(name_starts_with="py", include_metadata=True)])
step("q service props", lambda: qs.get_service_properties()["cors"])
# get_service_stats: the client derives a secondary host from the IP and cannot connect (client-side).
qb=QueueClient.from_connection_string(CS, "pyqueue", message_encode_policy=TextBase64EncodePolicy())
step("q b64 send", lambda: qb.send_message("b64 text").content)
step("q delete", lambda: q.delete_queue())

# ---------------- table
from azure.data.tables import TableServiceClient, TableClient, UpdateMode, EdmType, EntityProperty, TableSasPermissions, generate_table_sas, TableTransactionError
from azure.core.credentials import AzureNamedKeyCredential
ts=TableServiceClient.from_connection_string(CS)
step("t create", lambda: ts.create_table("pytable").table_name)
t=ts.get_table_client("pytable")
ent={"PartitionKey":"p","RowKey":"r1","s":"str","i":5,"big":EntityProperty(2**40, EdmType.INT64),"d":1.5,"b":True,
     "dt":datetime.datetime(2020,1,2,3,4,5,tzinfo=datetime.timezone.utc),"g":uuid.UUID("12345678-1234-5678-1234-567812345678"),"bin":b"\x00\x01\xff","nan":float("nan")}
step("t create entity", lambda: t.create_entity(ent)["etag"])
step("t get", lambda: dict(t.get_entity("p","r1")))
step("t query", lambda: [e["RowKey"] for e in t.query_entities("i eq @i and b eq true", parameters={"i":5})])
step("t query dt", lambda: [e["RowKey"] for e in t.query_entities("dt ge datetime'2020-01-01T00:00:00Z'")])
step("t query guid", lambda: [e["RowKey"] for e in t.query_entities("g eq guid'12345678-1234-5678-1234-567812345678'")])
step("t select", lambda: [dict(e) for e in t.query_entities("PartitionKey eq 'p'", select=["s","i"])])
e=t.get_entity("p","r1")
step("t update merge", lambda: t.update_entity({"PartitionKey":"p","RowKey":"r1","x":1}, mode=UpdateMode.MERGE, etag=e.metadata["etag"], match_condition=__import__("azure.core").core.MatchConditions.IfNotModified))
expect("t update stale etag", "UpdateConditionNotSatisfied", lambda: t.update_entity({"PartitionKey":"p","RowKey":"r1","x":2}, mode=UpdateMode.REPLACE, etag=e.metadata["etag"], match_condition=__import__("azure.core").core.MatchConditions.IfNotModified))
step("t upsert", lambda: t.upsert_entity({"PartitionKey":"p","RowKey":"r2","v":1}))
step("t tx", lambda: t.submit_transaction([("create",{"PartitionKey":"p","RowKey":"r3"}),("upsert",{"PartitionKey":"p","RowKey":"r4"}),("update",{"PartitionKey":"p","RowKey":"r2","v":2},{"mode":"replace"})]))
def failtx():
    try:
        t.submit_transaction([("create",{"PartitionKey":"p","RowKey":"r5"}),("create",{"PartitionKey":"p","RowKey":"r1"})])
    except TableTransactionError as ex:
        return ("TableTransactionError", ex.index, ex.error_code)
step("t tx fail", failtx)
step("t list", lambda: [x.name for x in ts.query_tables("TableName eq 'pytable'")])
step("t list entities pages", lambda: len(list(t.list_entities(results_per_page=2))))
step("t acl", lambda: t.get_table_access_policy())
step("t delete entity", lambda: t.delete_entity("p","r4"))
step("t service props", lambda: ts.get_service_properties()["cors"])
sas=generate_table_sas(AzureNamedKeyCredential("devstoreaccount1",KEY),"pytable",permission=TableSasPermissions(read=True),expiry=datetime.datetime.utcnow()+datetime.timedelta(hours=1))
from azure.core.credentials import AzureSasCredential
tsas=TableClient(endpoint="http://127.0.0.1:"+P+"2/devstoreaccount1", table_name="pytable", credential=AzureSasCredential(sas))
step("t sas read", lambda: len(list(tsas.list_entities())))
step("t delete table", lambda: ts.delete_table("pytable"))

# ---------------- file
from azure.storage.fileshare import ShareServiceClient, ShareFileClient, ShareDirectoryClient
fs=ShareServiceClient.from_connection_string(CS)
sh=fs.get_share_client("pyshare")
step("f create share", lambda: sh.create_share(quota=5))
step("f dir", lambda: sh.create_directory("d1"))
f=sh.get_file_client("d1/f.bin")
data=bytes(range(256))*4096
step("f upload", lambda: f.upload_file(data))
step("f download", lambda: f.download_file().readall()==data)
step("f range", lambda: f.download_file(offset=10, length=10).readall()==data[10:20])
step("f ranges", lambda: f.get_ranges())
step("f props", lambda: f.get_file_properties().size)
step("f metadata", lambda: f.set_file_metadata({"m":"1"}))
def file_meta():
    m=f.get_file_properties().metadata
    if m!={"m":"1"}: raise Exception("read back %r" % m)
    return m
step("f metadata read", file_meta)
step("f http headers", lambda: f.set_http_headers(content_settings=__import__("azure.storage.fileshare",fromlist=["ContentSettings"]).ContentSettings(content_type="text/x")))
step("f resize", lambda: f.resize_file(1000))
step("f list", lambda: [x["name"] for x in sh.list_directories_and_files("d1")])
step("f snapshot", lambda: sh.create_snapshot()["snapshot"])
step("f copy", lambda: sh.get_file_client("d1/copy.bin").start_copy_from_url(f.url)["copy_status"])
step("f rename", lambda: sh.get_file_client("d1/copy.bin").rename_file("d1/renamed.bin").file_name)
step("f lease", lambda: f.acquire_lease().id)
step("f handles", lambda: list(f.list_handles()))
step("f stats", lambda: sh.get_share_stats())
step("f permission", lambda: sh.create_permission_for_share("O:SYG:SYD:(A;;FA;;;SY)"))
# ---------------- between Blob and Files
from azure.storage.blob import BlobServiceClient
from azure.storage.fileshare import generate_file_sas, FileSasPermissions
xc=BlobServiceClient.from_connection_string(CS).get_container_client("pyxcopy")
def blob_to_file():
    xc.create_container()
    b=xc.get_blob_client("from blob.txt"); b.upload_blob(b"blob bytes", metadata={"src":"blob"})
    dst=sh.get_file_client("d1/fromblob.txt")
    st=dst.start_copy_from_url(b.url)["copy_status"]
    got=dst.download_file().readall()
    if got!=b"blob bytes" or dst.get_file_properties().metadata.get("src")!="blob": raise Exception("copied %r" % got)
    return st
def file_to_blob():
    sas=generate_file_sas("devstoreaccount1", "pyshare", ["d1", "f.bin"], account_key=KEY, permission=FileSasPermissions(read=True), expiry=datetime.datetime.utcnow()+datetime.timedelta(hours=1))
    b=xc.get_blob_client("fromfile.bin")
    st=b.start_copy_from_url(f.url+"?"+sas)["copy_status"]
    if b.download_blob().readall()!=f.download_file().readall(): raise Exception("content differs")
    xc.delete_container()
    return st
def meta_case():
    want={"Author":"ann","MixedCase":"v"}
    xc.create_container(metadata=want)
    b=xc.get_blob_client("meta"); b.upload_blob(b"m", metadata=want)
    f2=sh.get_file_client("d1/meta.txt"); f2.upload_file(b"m", metadata=want)
    got=[xc.get_container_properties().metadata, b.get_blob_properties().metadata, f2.get_file_properties().metadata,
         [c.metadata for c in BlobServiceClient.from_connection_string(CS).list_containers(name_starts_with="pyxcopy", include_metadata=True)][0]]
    xc.delete_container()
    for g in got:
        if g!=want: raise Exception("read back %r" % got)
    return got[1]
step("x metadata names keep their case", meta_case)
step("x blob to file", blob_to_file)
step("x file to blob", file_to_blob)
step("f delete share", lambda: sh.delete_share(delete_snapshots=True))
print("ok", ok, "bad", bad)
