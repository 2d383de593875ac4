"""py_fs.py: the Python data tools over Azure Storage against Cerulean:
adlfs (fsspec), pyarrow.fs.AzureFileSystem with Parquet, deltalake with
two concurrent writers. Run by scripts/clients-python.sh after py_sdk.py,
against the same servers: A (flat namespace, Blob on PORT_BASE+0) and B
(hierarchical namespace, Blob on +5, dfs on +6). One PASS/FAIL line per
package, version and area.

`py_fs.py deltawriter URI WRITER N` is one of the concurrent Delta writers.
"""
import json, os, subprocess, sys, time, traceback

P = os.environ.get("PORT_BASE", "2490")
A = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def delta_options(port):
    # object_store's emulator mode: path-style URLs under
    # AZURITE_BLOB_STORAGE_URL (set in the environment by main), http.
    return {"account_name": A, "account_key": KEY, "use_emulator": "true", "allow_http": "true"}


if len(sys.argv) > 1 and sys.argv[1] == "deltawriter":
    import pyarrow as pa
    from deltalake import write_deltalake, CommitProperties
    uri, writer, n = sys.argv[2], sys.argv[3], int(sys.argv[4])
    for i in range(n):
        t = pa.table({"writer": [writer] * 3, "batch": [i] * 3, "row": [0, 1, 2]})
        write_deltalake(uri, t, mode="append", storage_options=delta_options(None),
                        commit_properties=CommitProperties(custom_metadata={"writer": writer}))
    sys.exit(0)

from importlib.metadata import version
failed = 0
checks = 0
note = ""  # appended to an area's PASS line


class Fail(Exception):
    pass


def check(cond, what, got=None):
    global checks
    checks += 1
    if not cond:
        raise Fail(what + ("" if got is None else f": got {got!r}"))


def eq(got, want, what):
    return check(got == want, f"{what}: want {want!r}", got)


def area(pkg, name):
    def run(fn):
        global failed, checks, note
        t0, checks, note = time.time(), 0, ""
        try:
            fn()
            print(f"PASS {pkg} {version(pkg)} {name}: {checks} checks{note} [{time.time()-t0:.1f}s]", flush=True)
        except Exception as e:
            failed += 1
            where = traceback.extract_tb(e.__traceback__)[-1]
            print(f"FAIL {pkg} {version(pkg)} {name}: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''} (line {where.lineno})", flush=True)
        return fn
    return run


import adlfs


def adlfs_round(endpoint, container):
    cs = f"DefaultEndpointsProtocol=http;AccountName={A};AccountKey={KEY};BlobEndpoint={endpoint};"
    fs = adlfs.AzureBlobFileSystem(connection_string=cs, account_name=A)
    fs.mkdir(container)
    check(container in [p.rstrip("/") for p in fs.ls("")], "container listed", fs.ls(""))
    fs.pipe(f"{container}/a/one.txt", b"one")
    fs.pipe(f"{container}/a/b/two.txt", b"two")
    big = os.urandom(9 * 1024 * 1024 + 3)
    with fs.open(f"{container}/big.bin", "wb", block_size=4 * 1024 * 1024) as f:  # staged blocks, then a block list
        for i in range(0, len(big), 1 << 20):
            f.write(big[i:i + (1 << 20)])
    eq(fs.cat(f"{container}/a/one.txt"), b"one", "cat")
    eq(fs.cat(f"{container}/big.bin"), big, "block upload read back")
    with fs.open(f"{container}/big.bin", "rb") as f:
        f.seek(5 * 1024 * 1024)
        eq(f.read(10), big[5 * 1024 * 1024:5 * 1024 * 1024 + 10], "ranged read")
    eq(sorted(fs.find(container)), [f"{container}/a/b/two.txt", f"{container}/a/one.txt", f"{container}/big.bin"], "find")
    eq(sorted(p.rstrip("/") for p in fs.ls(f"{container}/a")), [f"{container}/a/b", f"{container}/a/one.txt"], "ls with a prefix")
    eq(fs.glob(f"{container}/a/*/*.txt"), [f"{container}/a/b/two.txt"], "glob")
    info = fs.info(f"{container}/big.bin")
    eq((info["type"], info["size"]), ("file", len(big)), "info")
    eq(fs.info(f"{container}/a")["type"], "directory", "info of a prefix")
    fs.mv(f"{container}/a/one.txt", f"{container}/moved.txt")
    eq((fs.exists(f"{container}/a/one.txt"), fs.cat(f"{container}/moved.txt")), (False, b"one"), "mv")
    eq(fs.du(container), len(big) + 6, "du")
    fs.rm(container, recursive=True)
    fs.invalidate_cache()
    check(not fs.exists(f"{container}/big.bin"), "recursive rm")


@area("adlfs", "adlfs over Blob, flat namespace (mkdir, pipe, block upload, ranged read, find, glob, info, mv, du, rm)")
def _():
    adlfs_round(f"http://127.0.0.1:{P}0/{A}", "adlfsflat")


@area("adlfs", "adlfs over the dfs endpoint, hierarchical namespace (the same steps)")
def _():
    adlfs_round(f"http://127.0.0.1:{P}6/{A}", "adlfshns")


import pyarrow as pa, pyarrow.dataset as ds, pyarrow.fs as pafs, pyarrow.parquet as pq


def arrow_round(blob_port, dfs_port, container, hns):
    fs = pafs.AzureFileSystem(account_name=A, account_key=KEY, blob_storage_authority=f"127.0.0.1:{blob_port}",
                              dfs_storage_authority=f"127.0.0.1:{dfs_port}", blob_storage_scheme="http", dfs_storage_scheme="http")
    fs.create_dir(container)
    n = 10000
    t = pa.table({"id": pa.array(range(n), pa.int64()), "part": pa.array([i % 3 for i in range(n)], pa.int32()),
                  "name": pa.array([f"row-{i}" for i in range(n)])})
    ds.write_dataset(t, f"{container}/data", filesystem=fs, format="parquet",
                     partitioning=ds.partitioning(pa.schema([("part", pa.int32())]), flavor="hive"), max_rows_per_file=2000, max_rows_per_group=1000)
    files = sorted(i.path for i in fs.get_file_info(pafs.FileSelector(f"{container}/data", recursive=True)) if i.type == pafs.FileType.File)
    check(len(files) >= 3 and all(f.endswith(".parquet") for f in files), "partitioned files written", files)
    back = ds.dataset(f"{container}/data", filesystem=fs, format="parquet", partitioning="hive").to_table().sort_by("id")
    eq(back.column("id").to_pylist(), list(range(n)), "ids read back")
    eq(back.column("name").to_pylist()[1234], "row-1234", "values read back")
    eq(back.column("part").to_pylist()[:4], [0, 1, 2, 0], "partition column")
    only = ds.dataset(f"{container}/data", filesystem=fs, format="parquet", partitioning="hive").to_table(filter=ds.field("part") == 2)
    eq(only.num_rows, len([i for i in range(n) if i % 3 == 2]), "partition pruning")
    pq.write_table(t, f"{container}/single.parquet", filesystem=fs)
    eq(pq.read_table(f"{container}/single.parquet", filesystem=fs).num_rows, n, "single file")
    if hns:  # Arrow moves files only on hierarchical accounts (apache/arrow#40405)
        fs.move(f"{container}/single.parquet", f"{container}/renamed.parquet")
        eq(fs.get_file_info(f"{container}/single.parquet").type, pafs.FileType.NotFound, "moved away")
        eq(pq.read_metadata(f"{container}/renamed.parquet", filesystem=fs).num_rows, n, "moved file's footer")
        fs.move(f"{container}/data", f"{container}/moved")  # a directory rename through the dfs endpoint
        eq(ds.dataset(f"{container}/moved", filesystem=fs, format="parquet", partitioning="hive").count_rows(), n, "dataset after a directory move")
        eq(fs.get_file_info(f"{container}/data").type, pafs.FileType.NotFound, "old directory gone")
    fs.delete_dir(container)
    eq(fs.get_file_info(container).type, pafs.FileType.NotFound, "container deleted")


@area("pyarrow", "pyarrow AzureFileSystem, flat namespace: Parquet dataset written (hive partitions) and read back, delete")
def _():
    arrow_round(f"{P}0", f"{P}0", "arrowflat", False)


@area("pyarrow", "pyarrow AzureFileSystem, hierarchical namespace (Blob + dfs): the same steps, a file and a directory move")
def _():
    arrow_round(f"{P}5", f"{P}6", "arrowhns", True)


import deltalake
from deltalake import DeltaTable, write_deltalake


def delta_round(port, container):
    os.environ["AZURITE_BLOB_STORAGE_URL"] = f"http://127.0.0.1:{port}"
    from azure.storage.blob import BlobServiceClient
    BlobServiceClient(f"http://127.0.0.1:{port}/{A}", credential={"account_name": A, "account_key": KEY}).create_container(container)
    uri = f"az://{container}/table"
    write_deltalake(uri, pa.table({"writer": ["init"], "batch": [0], "row": [0]}), storage_options=delta_options(port))
    n = 6
    procs = [subprocess.Popen([sys.executable, __file__, "deltawriter", uri, w, str(n)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
             for w in ("w1", "w2")]
    outs = [p.communicate(timeout=300)[0].decode() for p in procs]
    eq([p.returncode for p in procs], [0, 0], "both writers committed every append: " + " | ".join(o.strip()[-300:] for o in outs))
    dt = DeltaTable(uri, storage_options=delta_options(port))
    eq(dt.version(), 2 * n, "one version per append")
    hist = sorted(dt.history(), key=lambda h: h["version"])
    eq([h["version"] for h in hist], list(range(2 * n + 1)), "every version committed exactly once")
    eq([h["operation"] for h in hist[1:]], ["WRITE"] * (2 * n), "every later version an append")
    order = "".join(h.get("writer", "?")[-1] for h in hist[1:])
    eq(sorted(order), sorted("1" * n + "2" * n), "each writer's commits in the log once each (commit order " + order + ")")
    global note
    note = f"; commit order by writer {order}"
    rows = dt.to_pyarrow_table().to_pylist()
    got = sorted((r["writer"], r["batch"], r["row"]) for r in rows)
    want = sorted([("init", 0, 0)] + [(w, i, r) for w in ("w1", "w2") for i in range(n) for r in range(3)])
    eq(got, want, "table reads back whole, no batch lost or doubled")
    # Each version's log entry adds exactly one file: one winner per version.
    adds = []
    for v in range(1, 2 * n + 1):
        dt.load_as_version(v)
        adds.append(len(dt.file_uris()))
    eq(adds, list(range(2, 2 * n + 2)), "each version added exactly one data file")


@area("deltalake", "deltalake, two concurrent writers (6 appends each) on a flat-namespace account")
def _():
    delta_round(f"{P}0", "deltaflat")


@area("deltalake", "deltalake, two concurrent writers on the hierarchical-namespace account (Blob endpoint)")
def _():
    delta_round(f"{P}5", "deltahns")


@area("deltalake", "deltalake table maintenance: checkpoint, optimize (compact), delete, merge, time travel, vacuum")
def _():
    port = f"{P}0"
    os.environ["AZURITE_BLOB_STORAGE_URL"] = f"http://127.0.0.1:{port}"
    from azure.storage.blob import BlobServiceClient
    BlobServiceClient(f"http://127.0.0.1:{port}/{A}", credential={"account_name": A, "account_key": KEY}).create_container("deltamaint")
    uri, so = "az://deltamaint/t", delta_options(port)
    for i in range(5):
        write_deltalake(uri, pa.table({"id": [i * 10 + j for j in range(10)], "p": [i % 2] * 10}), mode="append", storage_options=so, partition_by=["p"])
    dt = DeltaTable(uri, storage_options=so)
    dt.create_checkpoint()
    eq(DeltaTable(uri, storage_options=so).to_pyarrow_table().num_rows, 50, "read through the checkpoint")
    m = dt.optimize.compact()
    eq((m["numFilesRemoved"], m["numFilesAdded"]), (5, 2), "compaction: 5 files into one per partition")
    eq(len(DeltaTable(uri, storage_options=so).file_uris()), 2, "files after compaction")
    eq(dt.delete("id < 5")["num_deleted_rows"], 5, "delete")
    r = dt.merge(pa.table({"id": [7, 100], "p": [1, 1]}), "s.id = t.id", source_alias="s", target_alias="t").when_matched_delete().when_not_matched_insert_all().execute()
    eq((r["num_target_rows_inserted"], r["num_target_rows_deleted"]), (1, 1), "merge: 100 inserted, 7 deleted")
    ids = sorted(DeltaTable(uri, storage_options=so).to_pyarrow_table().column("id").to_pylist())
    eq(ids, sorted([i for i in range(50) if i >= 5 and i != 7] + [100]), "rows after delete and merge")
    eq(DeltaTable(uri, storage_options=so, version=4).to_pyarrow_table().num_rows, 50, "time travel to version 4")
    gone = dt.vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
    check(len(gone) >= 5, "vacuum removed the replaced files", gone)
    eq(sorted(DeltaTable(uri, storage_options=so).to_pyarrow_table().column("id").to_pylist()), ids, "rows after vacuum")



# pyarrow's and deltalake's native thread pools can still be running when
# the interpreter tears itself down, and a pool destroyed then aborts the
# process after every check has passed ("terminate called without an active
# exception": apache/arrow#34314). The results are printed by now, so leave
# without that teardown.
import gc
gc.collect()
sys.stdout.flush()
sys.stderr.flush()
os._exit(1 if failed else 0)
