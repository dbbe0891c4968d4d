#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks the stored time series of a job against the workload's own clock.

    check_bins.py DB SUMMARY.json TICKS

TICKS has one "start_ns end_ns" line (CLOCK_MONOTONIC) per write of the
workload. A write's bin is decided in the kernel when it ends, somewhere in
[start, end]: so a write whose start and end fall in the same bin must be in
that bin; one that straddles a boundary may be in either. Checks that every
bin holds a possible number of writes, that the bins sum exactly to the
totals, and prints the series.
"""
import json
import sqlite3
import sys
from collections import Counter


def main():
    db, summary, ticks = sys.argv[1:4]
    s = json.load(open(summary))
    origin, width = s["start_mono_ns"], s["bin_width_ns"]
    sure, maybe = Counter(), Counter()
    writes = [tuple(map(int, l.split())) for l in open(ticks) if l.strip()]
    for t0, t1 in writes:
        b0, b1 = (t0 - origin) // width, (t1 - origin) // width
        if b0 == b1:
            sure[b0] += 1
        else:
            for b in range(b0, b1 + 1):
                maybe[b] += 1
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    key = con.execute("select key from jobs where cluster='iorun' and job_id=?",
                      (s["job_id"],)).fetchone()[0]
    rows = con.execute("select bin, calls, bytes from series where job_key=? and op=1 order by bin",
                       (key,)).fetchall()
    tot = con.execute("select sum(calls), sum(bytes) from totals where job_key=? and op=1",
                      (key,)).fetchone()
    bad = []
    got = {b: (c, by) for b, c, by in rows}
    for b in sorted(set(got) | set(sure)):
        c = got.get(b, (0, 0))[0]
        if not sure[b] <= c <= sure[b] + maybe[b]:
            bad.append(f"bin {b}: {c} writes, expected between {sure[b]} and {sure[b] + maybe[b]}")
    if sum(c for c, _ in got.values()) != len(writes):
        bad.append(f"bins hold {sum(c for c, _ in got.values())} writes, the workload made {len(writes)}")
    if (sum(c for c, _ in got.values()), sum(b for _, b in got.values())) != tuple(tot):
        bad.append(f"bins sum to {sum(c for c, _ in got.values())} calls / "
                   f"{sum(b for _, b in got.values())} bytes, totals say {tot[0]} / {tot[1]}")
    print("series (bin: writes, bytes):", ", ".join(f"{b}: {c}, {by}" for b, (c, by) in sorted(got.items())))
    for b in bad:
        print("MISMATCH:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
