#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""check_files.py DB REPORT.json EXPECT.json: a job's per-file records (issue 26)
in the store, exactly as expected, and no other; the records' sums equal the
per-mount totals of REPORT (iorun --json) for the calls both count.

EXPECT: {"job": N, "files": {PATH: {counter: value, ...}, ...},
         "other": {MOUNT_PATH: {counter: value}}, "sums": [MOUNT_PATH, ...]}
A path is the file's absolute path, PATH@N the record of rank N (a record
of rank -1 is named by its path alone); "other" lists the "other files" records
expected (the records past max_files), by the mount's path. Counters not
named must be 0 (times apart, which are checked for sense only). "only": [DIR,
...], when given: records of files outside these directories are not looked
at (a shell's libraries), though they count in the sums; nor is a record
of no call (only page-cache or mmap bytes: a cold binary's pages read in
for its exec). gen, rw_switches, access1, access1_count: checked where named."""
import json
import sqlite3
import sys

COUNTS = ["opens", "reads", "writes", "stats", "fsyncs", "seeks", "bytes_read",
          "bytes_written", "max_byte_read", "max_byte_written", "seq_reads", "seq_writes", "consec_reads",
          "consec_writes", "mmap_bytes", "cache_miss_bytes"]
# The views' bytes: a record with nothing else is of no call of the job's.
VIEWS = ["mmap_bytes", "cache_miss_bytes"]
# Checked where EXPECT names them (issues 36, 38).
OPTIONAL = ("gen", "rw_switches", "access1", "access1_count")
# The per-mount name of a counter summed over a mount's records (iorun --json, "ops").
MOUNT_OF = {"opens": ("open", "calls"), "reads": ("read", "calls"),
            "writes": ("write", "calls"), "stats": ("stat", "calls"),
            "fsyncs": ("fsync", "calls"), "seeks": ("seek", "ok"),
            "bytes_read": ("read", "bytes"),
            "bytes_written": ("write", "bytes"), "mmap_bytes": ("mmap_fault", "bytes"),
            "cache_miss_bytes": ("cache_fill", "bytes")}


def main():
    db, report, expect = sys.argv[1:4]
    exp = json.load(open(expect))
    rep = json.load(open(report))
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    key = con.execute("SELECT key FROM jobs WHERE job_id = ?", (exp["job"],)).fetchone()[0]
    mounts = {r["mnt_id"]: r["path"] for r in con.execute(
        "SELECT mnt_id, path FROM mounts WHERE job_key = ?", (key,))}
    rows = list(con.execute("SELECT * FROM files WHERE job_key = ?", (key,)))
    bad = []
    seen = set()
    for r in rows:
        other = r["dev"] == 0 and r["ino"] == 0
        name = ("other:" + mounts.get(r["mnt_id"], "?")) if other else r["path"]
        if not other and "only" in exp and not any(
                name.startswith(d.rstrip("/") + "/") for d in exp["only"]):
            continue
        if r["rank"] != -1:
            name += "@%d" % r["rank"]
        if name in seen:
            bad.append("%s: two records" % name)
        seen.add(name)
        want = exp["other"].get(mounts.get(r["mnt_id"])) if other else exp["files"].get(name)
        if want is None and not other and not any(r[c] for c in COUNTS if c not in VIEWS):
            # No call: pages of a file read in for an exec (a cold binary's); in the sums.
            continue
        if want is None:
            bad.append("%s: a record not expected (%s)" % (name, dict(r)))
            continue
        for c in COUNTS:
            if r[c] != want.get(c, 0):
                bad.append("%s: %s = %d, expected %d" % (name, c, r[c], want.get(c, 0)))
        for c in ("size_read", "size_written") + OPTIONAL:
            if c in want and r[c] != want[c]:
                bad.append("%s: %s = %s, expected %s" % (name, c, r[c], want[c]))
        # Times: a read's or write's record has them in order, within the job.
        for d, n in (("read", "reads"), ("write", "writes")):
            first, last = r["first_%s_ns" % d], r["last_%s_ns" % d]
            if (r[n] > 0) != (first >= 0) or (r[n] > 0 and not 0 <= first <= last):
                bad.append("%s: %s times %d .. %d" % (name, d, first, last))
    for name in list(exp["files"]) + ["other:" + m for m in exp["other"]]:
        if name not in seen:
            bad.append("%s: no record" % name)
    # The records' sums are the mounts' counts.
    for mp in exp.get("sums", []):
        ids = [i for i, p in mounts.items() if p == mp]
        m = [x for x in rep["mounts"] if x["mount"] == mp]
        if not m:
            bad.append("mount %s not in the report" % mp)
            continue
        ops = m[0]["ops"]
        for c, (op, field) in MOUNT_OF.items():
            total = sum(r[c] for r in rows if r["mnt_id"] in ids)
            o = ops.get(op, {})
            # "ok": the successful calls (the records count no failed call).
            have = o.get("calls", 0) - o.get("errors", 0) if field == "ok" else o.get(field, 0)
            if total != have:
                bad.append("mount %s: files' %s sum to %d, the mount has %d" % (mp, c, total, have))
    for b in bad:
        print("check_files: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
