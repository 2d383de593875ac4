#!/usr/bin/env python3
"""Server CPU per operation: Cerulean builds side by side with the floor.

    python3 scripts/bench-cpu.py [-rounds N] [-duration 5s] [-workloads W] [-keys N] [-rate R] [-no-floor]
        [-disk] BENCH SERVER [SERVER ...]

BENCH is a built cmd/cerulean-bench, each SERVER a built cmd/cerulean,
optionally followed by serve flags after commas (`bin/cerulean,--blob-versioning`
is that build with versioning on; its label is the file name and flags).
Each round starts, in turn, the floor (`BENCH -floor`: a bare net/http
server answering the same SDK requests without authentication or
storage) and every SERVER (`serve` on an embedded store in /dev/shm, so
fsync does not drown the code paths compared; -disk: in the system's
temporary directory, with its fsyncs, as a user runs it) as a process of its own,
runs `BENCH -workloads blob,queue,tablepoint -server-pid PID` against it
(16 clients; -workloads, -keys, the names each client overwrites in
turn, and -rate, the operations started per second by all clients
together instead of as many as they can, are passed on), and stops it. -no-floor compares the SERVERs alone. The order alternates from round to round
(A B C, C B A, ...) so that a noisy machine's drift falls on all alike.

Throughput is client-bound on two cores, so the figure that compares the
servers is the server process's user+system CPU (from /proc/PID/stat)
divided by the operations it served. Printed per workload: each run's
µs/op, the medians, each median over the floor's, and the Put/Get mix
(the mean of Put Blob's and Get Blob's CPU per operation) over the
floor's mix. Each run's throughput (ops/s) is printed beside its CPU.
"""
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

LINE = re.compile(r"^(.*?)\s+(\d+) ops/s\s+p50 (\S+)\s+p95 \S+\s+p99 (\S+)\s.*errors (\d+)\)\s+server CPU ([\d.]+) µs/op")
RATE = {}  # (target, workload) -> [ops/s per run]
LAT = {}  # (target, workload) -> [(p50, p99) in ms per run]
PACE = "0"  # -rate: operations a second the bench starts (0: closed loop)
DISK = False  # -disk
PORTS = (21000, 21001, 21002)  # below the ephemeral range


def wait_port(port, proc, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), 0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"port {port} not open after {timeout}s")


def label(target):
    if target == "floor":
        return target
    path, *flags = target.split(",")
    return " ".join([os.path.basename(path)] + flags)


def start(target, bench):
    if target == "floor":
        # One floor process answers all three services; the bench gets the
        # same URL for each.
        proc = subprocess.Popen([bench, "-floor", f"127.0.0.1:{PORTS[0]}"])
        wait_port(PORTS[0], proc)
        return proc, None, (PORTS[0],) * 3
    d = tempfile.mkdtemp(prefix="bench-cpu-", dir="/dev/shm" if os.path.isdir("/dev/shm") and not DISK else None)
    path, *flags = target.split(",")
    proc = subprocess.Popen([path, "serve", "--data", d, "--log-level", "error", *flags,
                             "--blob-port", str(PORTS[0]), "--queue-port", str(PORTS[1]),
                             "--table-port", str(PORTS[2]), "--file-port", "-1", "--dfs-port", "-1",
                             "--smb-port", "-1"], stdout=subprocess.DEVNULL)
    for p in PORTS:
        wait_port(p, proc)
    return proc, d, PORTS


def run(target, bench, duration, workloads, keys):
    proc, d, ports = start(target, bench)
    try:
        acct = "devstoreaccount1"
        out = subprocess.run([bench, "-url", f"http://127.0.0.1:{ports[0]}/{acct}",
                              "-queue-url", f"http://127.0.0.1:{ports[1]}/{acct}",
                              "-table-url", f"http://127.0.0.1:{ports[2]}/{acct}",
                              "-workloads", workloads, "-duration", duration, "-keys", str(keys),
                              "-rate", PACE, "-server-pid", str(proc.pid)],
                             check=True, capture_output=True, text=True).stdout
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        if d:
            shutil.rmtree(d, ignore_errors=True)
    res = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if m and m.group(5) == "0":
            w = re.sub(r"\s*\(\d+ clients\)", "", m.group(1).strip())
            res[w] = float(m.group(6))
            RATE.setdefault((target, w), []).append(int(m.group(2)))
            LAT.setdefault((target, w), []).append((ms(m.group(3)), ms(m.group(4))))
    return res


def ms(d):
    """A Go duration as printed (1.234ms, 850µs, 1.2s) in milliseconds."""
    for unit, f in (("ms", 1), ("µs", 1e-3), ("us", 1e-3), ("ns", 1e-6), ("s", 1e3)):
        if d.endswith(unit):
            return float(d[:-len(unit)]) * f
    return float("nan")


def main():
    args = sys.argv[1:]
    rounds, duration, workloads, keys, floor = 4, "5s", "blob,queue,tablepoint", 1000, True
    while args and args[0].startswith("-"):
        if args[0] == "-no-floor":
            floor, args = False, args[1:]
            continue
        if args[0] == "-disk":
            global DISK
            DISK, args = True, args[1:]
            continue
        flag, val = args[0], args[1]
        args = args[2:]
        if flag == "-workloads":
            workloads = val
        elif flag == "-keys":
            keys = int(val)
        elif flag == "-rounds":
            rounds = int(val)
        elif flag == "-duration":
            duration = val
        elif flag == "-rate":
            global PACE
            PACE = val
        else:
            sys.exit(f"unknown flag {flag}")
    if len(args) < 2:
        sys.exit(__doc__)
    bench, servers = args[0], args[1:]
    # The figures are shares of the base: the floor, or with -no-floor the
    # first SERVER.
    targets = (["floor"] if floor else []) + servers
    base, others = targets[0], targets[1:]
    runs = {t: [] for t in targets}
    for r in range(rounds):
        order = targets if r % 2 == 0 else list(reversed(targets))
        for t in order:
            runs[t].append(run(t, bench, duration, workloads, keys))
            print(f"round {r + 1} {label(t)}: {runs[t][-1]}", file=sys.stderr)
    wls = list(runs[base][0].keys())
    med = {t: {w: statistics.median([x[w] for x in runs[t] if w in x]) for w in wls} for t in targets}
    names = [label(t) for t in targets]
    print("| workload | " + " | ".join(f"{n} µs/op (runs; median)" for n in names) + " | " +
          " | ".join(f"{label(t)}/{label(base)}" for t in others) + " | " +
          " | ".join(f"{n} ops/s (median)" for n in names) + " |")
    print("|---" * (1 + 2 * len(names) + len(others)) + "|")
    for w in wls:
        cells = []
        for t in targets:
            vals = [x[w] for x in runs[t] if w in x]
            cells.append(" / ".join(f"{v:.0f}" for v in vals) + f"; **{med[t][w]:.0f}**")
        ratios = [f"{med[t][w] / med[base][w]:.2f}" for t in others]
        rates = [f"{statistics.median(RATE.get((t, w), [0])):.0f}" for t in targets]
        print(f"| {w} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " | " + " | ".join(rates) + " |")
    put = next((w for w in wls if w.startswith("Put Blob")), None)
    get = next((w for w in wls if w.startswith("Get Blob")), None)
    if put and get:
        bmix = (med[base][put] + med[base][get]) / 2
        for t in others:
            mix = (med[t][put] + med[t][get]) / 2
            print(f"{label(t)}: Put/Get mix {mix:.0f} µs/op, {mix / bmix:.2f}× {label(base)}'s {bmix:.0f}")
    print("latency, medians over the runs (p50 / p99 ms):")
    for w in wls:
        print(f"  {w}: " + "; ".join(
            f"{label(t)} {statistics.median([l[0] for l in LAT.get((t, w), [(0, 0)])]):.2f} / "
            f"{statistics.median([l[1] for l in LAT.get((t, w), [(0, 0)])]):.2f}" for t in targets))

if __name__ == "__main__":
    main()
