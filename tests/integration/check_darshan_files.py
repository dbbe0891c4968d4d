#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""check_darshan_files.py DUMP REPORT.json EXPECT.json: the POSIX records of a
job's .darshan log (issue 26), as our reader reads them (dxtdump --posix),
exactly as expected: one record per file named by its path, every counter
ioacct keeps per file exact and those it does not keep -1 (but those a
file's counts pin down: no fsync, no fdatasync; no open, no mode: 0, as
Darshan has them); "other files" records as "<mount>/<ioacct: other files>"
with the log's POSIX partial bit; and per mount, the records (files, other
files and "<mount>/<ioacct: not per file>") add up to the mount's successful
calls and bytes in REPORT (iorun --json). Files are POSIX records, the other
two ioacct's own records (issue 38: no file in Darshan's tools).

EXPECT: as check_files.py's: {"files": {PATH: {counter: value}}, "other":
{MOUNT_PATH: {counter: value}}, "sums": [MOUNT_PATH, ...]}; counters not
named are 0 (rw_switches, access1 and access1_count: checked where named);
and "rest": {MOUNT_PATH: {counter: value}}, the "not per file" records
expected, the counters named exact. A record not expected with no call (a
cold binary's pages read in for its exec) is not looked at."""
import json
import sys

COUNTER = {"opens": "POSIX_OPENS", "reads": "POSIX_READS", "writes": "POSIX_WRITES",
           "stats": "POSIX_STATS", "fsyncs": "POSIX_FSYNCS", "seeks": "POSIX_SEEKS",
           "bytes_read": "POSIX_BYTES_READ", "bytes_written": "POSIX_BYTES_WRITTEN",
           "max_byte_read": "POSIX_MAX_BYTE_READ", "max_byte_written": "POSIX_MAX_BYTE_WRITTEN",
           "seq_reads": "POSIX_SEQ_READS", "seq_writes": "POSIX_SEQ_WRITES",
           "consec_reads": "POSIX_CONSEC_READS", "consec_writes": "POSIX_CONSEC_WRITES"}
# Checked where EXPECT names them (a file's own, not summed per mount); -1 never.
OPTIONAL = {"rw_switches": "POSIX_RW_SWITCHES", "access1": "POSIX_ACCESS1_ACCESS",
            "access1_count": "POSIX_ACCESS1_COUNT"}
# What a file's record cannot know: -1, Darshan's "not measured".
UNKNOWN = ["POSIX_MMAPS", "POSIX_FILENOS", "POSIX_DUPS"]
# Not kept per file, but 0 when the file had no call of the kind it counts.
UNKNOWN_BUT_NONE = {"POSIX_FDSYNCS": "fsyncs", "POSIX_MODE": "opens"}
# Mixed over several files: not one file's.
MIXED = ["max_byte_read", "max_byte_written", "seq_reads", "seq_writes", "consec_reads",
         "consec_writes"]
BINS = ["0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M", "10M_100M",
        "100M_1G", "1G_PLUS"]
# The per-mount name of a counter summed over a mount's records (iorun --json, "ops").
MOUNT_OF = {"opens": "open", "reads": "read", "writes": "write", "stats": "stat",
            "fsyncs": "fsync", "seeks": "seek", "bytes_read": "read", "bytes_written": "write"}
OTHER = "<ioacct: other files>"
REST = "<ioacct: not per file>"


def pseudo(mount, what):
    return mount + ("" if mount.endswith("/") else "/") + what


def check_record(name, r, want, other, bad):
    c, f = r["c"], r["f"]
    for k, cn in COUNTER.items():
        exp = -1 if other and k in MIXED else want.get(k, 0)
        if c[cn] != exp:
            bad.append("%s: %s = %d, expected %d" % (name, cn, c[cn], exp))
    for d, key in (("READ", "size_read"), ("WRITE", "size_written")):
        have = ",".join(str(c["POSIX_SIZE_%s_%s" % (d, b)]) for b in BINS)
        exp = want.get(key, "0,0,0,0,0,0,0,0,0,0")
        if have != exp:
            bad.append("%s: size bins of %ss %s, expected %s" % (name, d.lower(), have, exp))
    for cn in UNKNOWN:
        if c[cn] != -1:
            bad.append("%s: %s = %d, expected -1 (not measured)" % (name, cn, c[cn]))
    for cn, k in UNKNOWN_BUT_NONE.items():
        exp = -1 if other or want.get(k, 0) else 0
        if c[cn] != exp:
            bad.append("%s: %s = %d, expected %d" % (name, cn, c[cn], exp))
    for k, cn in OPTIONAL.items():
        if k in want and c[cn] != want[k]:
            bad.append("%s: %s = %d, expected %d" % (name, cn, c[cn], want[k]))
        elif not other and c[cn] < 0:
            bad.append("%s: %s = %d, not measured" % (name, cn, c[cn]))
    if r["own"] != other:
        bad.append("%s: %s record" % (name, "ioacct's own" if r["own"] else "a POSIX"))
    # A job without MPI ranks: its files rank 0, as Darshan's non-MPI logs have
    # them (-1 is a file shared by every rank: Drishti's shared files); ioacct's
    # own records -1.
    if r["rank"] != (-1 if other else 0):
        bad.append("%s: rank %d" % (name, r["rank"]))
    for d, n in (("READ", "POSIX_READS"), ("WRITE", "POSIX_WRITES")):
        a = f["POSIX_F_%s_START_TIMESTAMP" % d]
        b = f["POSIX_F_%s_END_TIMESTAMP" % d]
        if (c[n] > 0 and not 0 <= a <= b) or (c[n] == 0 and (a, b) != (0, 0)):
            bad.append("%s: %s timestamps %f .. %f" % (name, d, a, b))


def mount_of(name, mounts):
    best = None
    for m in mounts:
        if name == m or name.startswith(m if m.endswith("/") else m + "/"):
            if best is None or len(m) > len(best):
                best = m
    return best


def main():
    dump, report, expect = sys.argv[1:4]
    lines = [json.loads(x) for x in open(dump)]
    head, recs = lines[0], lines[1:]
    exp = json.load(open(expect))
    rep = json.load(open(report))
    mounts = [m["mount"] for m in rep["mounts"]]
    others = {pseudo(m, OTHER): m for m in exp["other"]}
    rests = {pseudo(m, REST): m for m in exp.get("rest", {})}
    bad = []
    seen = set()
    for r in recs:
        name = r["name"]
        if name in seen:
            bad.append("%s: two records" % name)
        seen.add(name)
        if name.endswith("/" + REST):
            if not r["own"]:
                bad.append("%s: a POSIX record, not ioacct's own" % name)
            for k, v in exp.get("rest", {}).get(rests.get(name), {}).items():
                if r["c"][COUNTER[k]] != v:
                    bad.append("%s: %s = %d, expected %d" % (name, COUNTER[k], r["c"][COUNTER[k]], v))
            continue
        want = exp["other"][others[name]] if name in others else exp["files"].get(name)
        if want is None and not any(r["c"][cn] for cn in COUNTER.values()):
            # A file the job's calls did not touch: its pages read in for an exec (a cold
            # binary's), which the POSIX counters do not hold.
            print("check_darshan_files: %s: no calls, not looked at" % name)
            continue
        if want is None:
            bad.append("%s: a record not expected" % name)
            continue
        check_record(name, r, want, name in others, bad)
    for name in list(exp["files"]) + list(others) + list(rests):
        if name not in seen:
            bad.append("%s: no record" % name)
    partial = 2 if exp["other"] else 0
    if head["partial"] != partial:
        bad.append("partial flag %d, expected %d" % (head["partial"], partial))
    if "\nioacct_fsync_time=meta\n" not in head["metadata"]:
        bad.append("no ioacct_fsync_time=meta in the metadata")
    for mp in exp["sums"]:
        ops = [m for m in rep["mounts"] if m["mount"] == mp][0]["ops"]
        mine = [r for r in recs if mount_of(r["name"], mounts) == mp]
        for k, op in MOUNT_OF.items():
            o = ops.get(op, {})
            have = o.get("bytes", 0) if k.startswith("bytes") else \
                o.get("calls", 0) - o.get("errors", 0)
            total = sum(r["c"][COUNTER[k]] for r in mine)
            if total != have:
                bad.append("mount %s: records' %s sum to %d, the mount has %d" %
                           (mp, COUNTER[k], total, have))
    for b in bad:
        print("check_darshan_files: " + b)
    print("check_darshan_files: %d records, %d expected files, %s" %
          (len(recs), len(exp["files"]), "bad" if bad else "all exact"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
