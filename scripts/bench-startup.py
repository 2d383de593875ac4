#!/usr/bin/env python3
"""Start-up time and idle RSS of `cerulean serve`, --in-memory against the
embedded store, in alternating runs (docs/benchmarks.md).

    go build -o /tmp/cerulean ./cmd/cerulean
    python3 scripts/bench-startup.py /tmp/cerulean [runs] [base port]

Start-up is the time from spawning the process to the first accepted TCP
connection on the Blob port (polled every 0.2 ms); idle RSS is VmRSS 3 s
later. The embedded store starts on a fresh data directory each run.
"""
import os, shutil, signal, socket, statistics, subprocess, sys, tempfile, time

BIN = sys.argv[1]
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 7
BASE = int(sys.argv[3]) if len(sys.argv) > 3 else 21720
PORTS = ["--blob-port", str(BASE), "--queue-port", str(BASE + 1), "--table-port", str(BASE + 2),
         "--file-port", str(BASE + 3), "--smb-port", str(BASE + 4), "--dfs-port", "-1"]


def one(mode):
    d = tempfile.mkdtemp(prefix="cerulean-startup-")
    store = ["--in-memory"] if mode == "memory" else ["--data", os.path.join(d, "data")]
    t0 = time.perf_counter()
    p = subprocess.Popen([BIN, "serve"] + PORTS + store, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            s = socket.socket()
            try:
                s.connect(("127.0.0.1", BASE))
                t1 = time.perf_counter()
                break
            except OSError:
                if p.poll() is not None:
                    raise SystemExit(f"{mode}: server exited with {p.returncode}")
                time.sleep(0.0002)
            finally:
                s.close()
        time.sleep(3)
        rss = 0
        with open(f"/proc/{p.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) / 1024
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait()
        shutil.rmtree(d, ignore_errors=True)
    return (t1 - t0) * 1000, rss


res = {"memory": [], "embedded": []}
for i in range(RUNS):
    for mode in (("memory", "embedded") if i % 2 == 0 else ("embedded", "memory")):
        ms, rss = one(mode)
        res[mode].append((ms, rss))
        print(f"run {i + 1} {mode:8s} start {ms:6.1f} ms  idle RSS {rss:5.1f} MiB", flush=True)
for mode, v in res.items():
    ms = [a for a, _ in v]
    rs = [b for _, b in v]
    print(f"{mode:8s} start median {statistics.median(ms):.1f} ms (min {min(ms):.1f}, max {max(ms):.1f}); "
          f"idle RSS median {statistics.median(rs):.1f} MiB (min {min(rs):.1f}, max {max(rs):.1f})")
