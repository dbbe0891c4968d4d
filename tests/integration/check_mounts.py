#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Compares iorun's --json summary with exact expectations.

    check_mounts.py SUMMARY.json EXPECT.json

EXPECT maps a mount point to the fields it must have, exactly; a field of
COUNTS not named must be 0 (size histograms: every bin not named must be
0); any other field of the summary's mount (io_uring_ops, ...) and the
classes in "op_errors" and "error_classes" are checked when named. Mounts not
named must not appear at all, unless EXPECT has "_others_allowed": true.
Prints every difference; exits 1 if there is any.
"""
import json
import sys

COUNTS = ["read_bytes", "write_bytes", "reads", "writes", "opens", "creates", "mkdirs",
          "unlinks", "rmdirs", "fsyncs", "renames", "stats", "errors"]


def main():
    got = json.load(open(sys.argv[1]))
    want = json.load(open(sys.argv[2]))
    others = want.pop("_others_allowed", False)
    mounts = {m["mount"]: m for m in got["mounts"]}
    bad = []
    for mnt, exp in want.items():
        m = mounts.get(mnt)
        if m is None:
            bad.append(f"mount {mnt}: missing (got {sorted(mounts)})")
            continue
        for k in COUNTS:
            if m[k] != exp.get(k, 0):
                bad.append(f"mount {mnt}: {k} = {m[k]}, expected {exp.get(k, 0)}")
        for h in ("read_sizes", "write_sizes"):
            for b, v in m[h].items():
                if v != exp.get(h, {}).get(b, 0):
                    bad.append(f"mount {mnt}: {h}[{b}] = {v}, expected {exp.get(h, {}).get(b, 0)}")
        for d in ("op_errors", "error_classes"):
            for k, v in exp.get(d, {}).items():
                if m[d][k] != v:
                    bad.append(f"mount {mnt}: {d}[{k}] = {m[d][k]}, expected {v}")
        for k, v in exp.items():
            if k not in COUNTS and k not in ("read_sizes", "write_sizes", "op_errors", "error_classes") \
                    and m.get(k) != v:
                bad.append(f"mount {mnt}: {k} = {m.get(k)}, expected {v}")
    if not others:
        for mnt in mounts:
            if mnt not in want:
                bad.append(f"mount {mnt}: unexpected ({mounts[mnt]})")
    if got.get("dropped", 0) != 0:
        bad.append(f"dropped = {got['dropped']}, expected 0")
    for b in bad:
        print("MISMATCH:", b)
    if not bad:
        print("all counters exact:", ", ".join(
            f"{m}: {mounts[m]['write_bytes']} B written, {mounts[m]['read_bytes']} B read"
            for m in want))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
