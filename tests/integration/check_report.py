#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks ioreport's text and JSON reports of a job against the store.

    check_report.py DB CLUSTER JOB_ID REPORT.txt REPORT.json

Every counter the text prints for a mount ("total_POSIX_WRITES: N" ...) must
equal the totals table summed over steps, exactly: successful calls plus the
IOACCT_<OP>_ERRORS are the stored calls; bytes, access-size bins,
nanoseconds and the failed calls per class (IOACCT_ERRORS_NOTFOUND ...)
likewise. The JSON must parse, carry schema_version 3 and iorun's
summary fields, name the same counters with the same values, and its time
series must add up to the totals. Prints every difference; exits 1 if any.
"""
import json
import re
import sqlite3
import sys

OPS = ["READ", "WRITE", "OPEN", "CREATE", "MKDIR", "UNLINK", "RMDIR", "FSYNC", "RENAME", "STAT",
       "MMAP_FAULT", "CACHE_FILL", "READAHEAD", "FADVISE", "MADVISE", "IO_URING_OP", "SEEK"]
# The page-cache views and hints (kind VIEW, issue 14): not calls of a mount.
VIEWS = {"MMAP_FAULT", "CACHE_FILL", "READAHEAD", "FADVISE", "MADVISE", "IO_URING_OP"}
VIEW_BYTES = {"MMAP_FAULT": "IOACCT_MMAP_READ_BYTES", "CACHE_FILL": "IOACCT_CACHE_MISS_BYTES",
              "READAHEAD": "IOACCT_READAHEAD_BYTES"}
COUNT = {"READ": "POSIX_READS", "WRITE": "POSIX_WRITES", "OPEN": "POSIX_OPENS",
         "CREATE": "IOACCT_CREATES", "MKDIR": "IOACCT_MKDIRS", "UNLINK": "IOACCT_UNLINKS",
         "RMDIR": "IOACCT_RMDIRS", "FSYNC": "POSIX_FSYNCS", "RENAME": "IOACCT_RENAMES",
         "STAT": "POSIX_STATS", "MMAP_FAULT": "IOACCT_MMAP_FAULTS",
         "CACHE_FILL": "IOACCT_CACHE_FILLS", "READAHEAD": "IOACCT_READAHEADS",
         "FADVISE": "IOACCT_FADVISES", "MADVISE": "IOACCT_MADVISES",
         "IO_URING_OP": "IOACCT_IO_URING_OPS", "SEEK": "POSIX_SEEKS"}
PLURAL = ["reads", "writes", "opens", "creates", "mkdirs", "unlinks", "rmdirs", "fsyncs",
          "renames", "stats", "mmap_faults", "cache_fills", "readaheads", "fadvises", "madvises",
          "io_uring_ops", "seeks"]
SIZES = ["0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M", "10M_100M",
         "100M_1G", "1G_PLUS"]
CLASSES = ["notfound", "access", "space", "io", "other"]
U64 = 1 << 64


def stored(db, cluster, job_id):
    """{mount path: {op: [bytes, calls, errors, ns, s0..s9, err_notfound..err_other]}}."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    key = con.execute("select key from jobs where cluster=? and job_id=? order by key desc",
                      (cluster, job_id)).fetchone()[0]
    names = dict(con.execute("select mnt_id, path from mounts where job_key=?", (key,)))
    out = {}
    for row in con.execute("select mnt_id, op, bytes, calls, errors, ns, s0, s1, s2, s3, s4, s5,"
                           " s6, s7, s8, s9, err_notfound, err_access, err_space, err_io,"
                           " err_other from totals where job_key=?", (key,)):
        path = names.get(row[0], f"mnt:{row[0]}")
        acc = out.setdefault(path, {}).setdefault(OPS[row[1]], [0] * 19)
        for i, v in enumerate(row[2:]):
            acc[i] = (acc[i] + v) % U64  # int64 in SQLite, uint64 in ioacct
    return {p: ops for p, ops in out.items()
            if sum(o[1] for op, o in ops.items() if op not in VIEWS)}


def text_counters(path):
    sections, cur = {}, None
    for line in open(path):
        m = re.match(r"# mount: (.*)\t(.*)\t(.*)$", line.rstrip("\n"))
        if m:
            cur = sections.setdefault(m.group(1), {})
            continue
        m = re.match(r"total_(\w+): (\S+)$", line.rstrip("\n"))
        if m and cur is not None:
            cur[m.group(1)] = m.group(2)
        elif not line.strip():
            cur = None
    return sections


def main():
    db, cluster, job_id, txt, js = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
    want = stored(db, cluster, job_id)
    text = text_counters(txt)
    j = json.load(open(js))
    bad = []
    # The kernel had no exact hook for mmap bytes (the report says why instead of a number).
    unmeasured = bool(j.get("mmap_read_bytes_note"))
    if set(text) != set(want):
        bad.append(f"text mounts {sorted(text)} != stored {sorted(want)}")
    for path, ops in want.items():
        c = text.get(path, {})
        for op in OPS:
            b, calls, errors, ns = ops.get(op, [0] * 19)[:4]
            hist = ops.get(op, [0] * 19)[4:14]
            got = int(c.get(COUNT[op], -1)) + int(c.get(f"IOACCT_{op}_ERRORS", -1))
            if got != calls:
                bad.append(f"{path} {op}: text says {got} calls, store {calls}")
            if int(c.get(f"IOACCT_{op}_TIME_NS", -1)) != ns:
                bad.append(f"{path} {op}: text time {c.get(f'IOACCT_{op}_TIME_NS')}, store {ns}")
            if op == "MMAP_FAULT" and unmeasured:
                # No exact hook on this kernel: the counter is left out, never a number.
                if VIEW_BYTES[op] in c:
                    bad.append(f"{path} {VIEW_BYTES[op]}: text {c[VIEW_BYTES[op]]}, but not measured")
            elif op in VIEW_BYTES and int(c.get(VIEW_BYTES[op], -1)) != b:
                bad.append(f"{path} {VIEW_BYTES[op]}: text {c.get(VIEW_BYTES[op])}, store {b}")
            if op in ("READ", "WRITE"):
                name = "POSIX_BYTES_READ" if op == "READ" else "POSIX_BYTES_WRITTEN"
                if int(c.get(name, -1)) != b:
                    bad.append(f"{path} {name}: text {c.get(name)}, store {b}")
                for i, s in enumerate(SIZES):
                    name = f"POSIX_SIZE_{op}_{s}"
                    if int(c.get(name, -1)) != hist[i]:
                        bad.append(f"{path} {name}: text {c.get(name)}, store {hist[i]}")
        for i, cls in enumerate(CLASSES):
            n = sum(o[14 + i] for o in ops.values())
            name = f"IOACCT_ERRORS_{cls.upper()}"
            if int(c.get(name, -1)) != n:
                bad.append(f"{path} {name}: text {c.get(name)}, store {n}")
    # JSON: the same content.
    if j.get("schema_version") != 3:
        bad.append(f"schema_version {j.get('schema_version')}")
    for k in ("job_id", "cluster", "node", "state", "exit_code", "start_ns", "end_ns",
              "bin_width_ns", "probe_mode", "dropped", "dropped_bytes", "mounts", "steps",
              "series", "advice"):
        if k not in j:
            bad.append(f"JSON lacks {k}")
    jm = {m["mount"]: m for m in j.get("mounts", [])}
    if set(jm) != set(want):
        bad.append(f"JSON mounts {sorted(jm)} != stored {sorted(want)}")
    for path, m in jm.items():
        ops = want.get(path, {})
        # Version 3 spells the bytes as Darshan does; version 2's names stay beside them.
        for new, old, op in (("bytes_read", "read_bytes", "READ"),
                             ("bytes_written", "write_bytes", "WRITE")):
            if not m.get(new) == m.get(old) == ops.get(op, [0])[0]:
                bad.append(f"JSON {path} {new} = {m.get(new)}, {old} = {m.get(old)}")
        for i, op in enumerate(OPS):
            if m[PLURAL[i]] != ops.get(op, [0] * 4)[1]:
                bad.append(f"JSON {path} {PLURAL[i]} = {m[PLURAL[i]]}")
            for k, cls in enumerate(CLASSES):
                got = m["ops"][op.lower()]["error_classes"][cls]
                if got != ops.get(op, [0] * 19)[14 + k]:
                    bad.append(f"JSON {path} {op} {cls} errors = {got}")
        for name, v in text.get(path, {}).items():
            jv = m["counters"].get(name)
            if jv is None or (str(jv) != v and f"{jv:.6f}" != v):
                bad.append(f"JSON {path} {name} = {jv}, text {v}")
    for s in j.get("series", {}).get("mounts", []):
        m = want.get(s["mount"], {})
        if sum(s["bytes_read"]) != m.get("READ", [0])[0] or sum(s["bytes_written"]) != m.get("WRITE", [0])[0]:
            bad.append(f"JSON series of {s['mount']} does not add up to the totals")
        if s["read_bytes"] != s["bytes_read"] or s["write_bytes"] != s["bytes_written"]:
            bad.append(f"JSON series of {s['mount']}: version 2's names differ")
        if sum(s["reads"]) != m.get("READ", [0, 0])[1] or sum(s["writes"]) != m.get("WRITE", [0, 0])[1]:
            bad.append(f"JSON series calls of {s['mount']} do not add up to the totals")
    if not j.get("advice"):
        bad.append("JSON has no advice")
    for b in bad:
        print("MISMATCH:", b)
    if not bad:
        print("report counters exact:", ", ".join(
            f"{p}: {int(text[p]['POSIX_BYTES_WRITTEN'])} B written" for p in sorted(want)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
