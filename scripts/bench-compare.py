#!/usr/bin/env python3
"""Compare two builds side by side on the same machine.

    python3 scripts/bench-compare.py OLD_BIN NEW_BIN [ROUNDS] [-- bench flags]

OLD_BIN and NEW_BIN are cmd/cerulean-bench built at each commit (its
in-process server is that commit's server). Runs each (in-process
server, embedded store on tmpfs so fsync costs do not drown the code
paths compared) in turn,
alternating OLD, NEW, NEW, OLD, ... so drift of a noisy machine falls on
both, and prints per workload every run's ops/s, the median of each
binary and NEW's median relative to OLD's. Default bench flags:
-workloads blob,queue,table -duration 5s.
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

LINE = re.compile(r"^(.*?)\s+(\d+) ops/s\s+p50 (\S+)\s+p95 (\S+)\s+p99 (\S+)")


def run(binary, flags):
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    d = tempfile.mkdtemp(prefix="bench-compare-", dir=base)
    try:
        out = subprocess.run([binary, "-data", d] + flags, check=True,
                             capture_output=True, text=True).stdout
    finally:
        shutil.rmtree(d, ignore_errors=True)
    res = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            res[m.group(1).strip()] = (int(m.group(2)), m.group(3), m.group(4), m.group(5))
    return res


def main():
    args = sys.argv[1:]
    flags = ["-workloads", "blob,queue,table", "-duration", "5s"]
    if "--" in args:
        i = args.index("--")
        args, flags = args[:i], args[i + 1:]
    if len(args) < 2:
        sys.exit(__doc__)
    old, new = args[0], args[1]
    rounds = int(args[2]) if len(args) > 2 else 3
    bins = (old, new)
    runs = ([], [])
    for r in range(rounds):
        order = (0, 1) if r % 2 == 0 else (1, 0)
        for i in order:
            res = run(bins[i], flags)
            runs[i].append(res)
            print(f"round {r + 1} {('old', 'new')[i]} {os.path.basename(bins[i])}: " +
                  ", ".join(f"{k}: {v[0]}" for k, v in res.items()), flush=True)
    names = [k for k in runs[0][0] if all(k in x for x in runs[0] + runs[1])]
    print()
    print(f"| workload | {os.path.basename(old)} ops/s (runs) | median | "
          f"{os.path.basename(new)} ops/s (runs) | median | new/old |")
    print("|---|---|---|---|---|---|")
    for k in names:
        a = [x[k][0] for x in runs[0]]
        b = [x[k][0] for x in runs[1]]
        ma, mb = statistics.median(a), statistics.median(b)
        ratio = f"{mb / ma:.2f}" if ma else "-"
        print(f"| {k} | {' / '.join(map(str, a))} | {ma:,.0f} | "
              f"{' / '.join(map(str, b))} | {mb:,.0f} | {ratio} |")


if __name__ == "__main__":
    main()
