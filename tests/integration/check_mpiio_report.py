#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""37-mpiio-report.sh's checks of one job's MPI-IO (issue 27).

check_mpiio_report.py json REPORT.json EXPECT.json
check_mpiio_report.py text REPORT.txt EXPECT.json
check_mpiio_report.py darshan MPIIO.dump EXPECT.json POSIX.dump

EXPECT.json: {"own": counters, "shared": counters, "dir": D}: rank r's
records are D/own.r (counters "own") and D/shared ("shared"), 4 ranks.
"""
import json
import sys

NRANKS = 4
COUNTERS = ["indep_opens", "coll_opens", "indep_reads", "indep_writes", "coll_reads",
            "coll_writes", "split_reads", "split_writes", "nb_reads", "nb_writes", "syncs",
            "views", "bytes_read", "bytes_written", "unsized_reads", "unsized_writes"]
BINS = ["0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M", "10M_100M",
        "100M_1G", "1G_PLUS"]
bad = []


def want_records(exp):
    """(path, rank) -> expected counters."""
    d = exp["dir"]
    out = {}
    for r in range(NRANKS):
        out[(f"{d}/own.{r}", r)] = exp["own"]
        out[(f"{d}/shared", r)] = exp["shared"]
    return out


def same(what, got, want):
    if got != want:
        bad.append(f"{what}: {got!r}, expected {want!r}")


def check_json(path, exp):
    m = json.load(open(path))["mpiio"]
    if m is None:
        sys.exit(f"{path}: mpiio is null (not read)")
    want = want_records(exp)
    got = {(x["path"], x["rank"]): x for x in m["records"]}
    same("records", sorted(got), sorted(want))
    for key, w in want.items():
        x = got.get(key)
        if not x:
            continue
        for c in COUNTERS:
            same(f"{key} {c}", x[c], w[c])
        same(f"{key} read_sizes", [x["read_sizes"][b] for b in BINS], w["size_read"])
        same(f"{key} write_sizes", [x["write_sizes"][b] for b in BINS], w["size_written"])
        same(f"{key} bytes_read_exact", x["bytes_read_exact"], True)
        if x["write_ns"] == 0 or x["meta_ns"] == 0:
            bad.append(f"{key}: no write or metadata time")
    same("nrecords", m["nrecords"], 2 * NRANKS)
    # Per file: the ranks' sums, with the POSIX bytes of the same file beside them.
    files = {f["path"]: f for f in m["files"]}
    same("files", sorted(files), sorted({p for p, _ in want}))
    for p, f in files.items():
        w = exp["shared"] if p.endswith("/shared") else exp["own"]
        n = NRANKS if p.endswith("/shared") else 1
        for c in COUNTERS:
            same(f"{p} sum {c}", f[c], n * w[c])
        posix = f["posix_bytes_read"] + f["posix_bytes_written"]
        # OMPIO's opens on MPI_COMM_SELF may leave the POSIX record's path
        # empty (issue 26): then the report cannot tie it to the file, and
        # says so (no records, ratio null); the shared file's are named.
        if not f["posix_records"] and not p.endswith("/shared"):
            same(f"{p} ratio", f["mpiio_posix_ratio"], None)
            same(f"{p} posix bytes", posix, 0)
            continue
        same(f"{p} posix_records", f["posix_records"], True)
        if posix <= 0:
            bad.append(f"{p}: no POSIX bytes")
            continue
        same(f"{p} ratio", round(f["mpiio_posix_ratio"], 6),
             round((f["bytes_read"] + f["bytes_written"]) / posix, 6))
    # The own files are written by plain POSIX writes of what was asked.
    for r in range(NRANKS):
        f = files.get(f"{exp['dir']}/own.{r}")
        if f and f["posix_records"]:
            same(f"own.{r} posix bytes written", f["posix_bytes_written"], 60)
    for c in ("bytes_read", "bytes_written"):
        same(f"total {c}", m[c], NRANKS * (exp["own"][c] + exp["shared"][c]))


def check_text(path, exp):
    lines = open(path).read().splitlines()
    try:
        start = next(i for i, l in enumerate(lines) if l.startswith("## MPI-IO: "))
    except StopIteration:
        sys.exit(f"{path}: no MPI-IO section")
    head = lines[start]
    tot_r = NRANKS * (exp["own"]["bytes_read"] + exp["shared"]["bytes_read"])
    tot_w = NRANKS * (exp["own"]["bytes_written"] + exp["shared"]["bytes_written"])
    want_head = (f"## MPI-IO: {NRANKS + 1} files, {2 * NRANKS} records (process and file); "
                 f"{tot_r} bytes read, {tot_w} written through MPI-IO;")
    if not head.startswith(want_head):
        bad.append(f"heading {head!r}, expected it to start {want_head!r}")
    rows = {}
    for l in lines[start + 1:]:
        if not l.strip():
            break
        t = l.split()
        if t[0] == "RANK" or not (t[0] == "all" or t[0].isdigit()):
            continue
        rows[(t[-1], t[0])] = t
    for (p, r), w in want_records(exp).items():
        t = rows.get((p, str(r)))
        if not t:
            bad.append(f"text: no row of {p} rank {r}")
            continue
        want = [str(r), f"{w['indep_opens']}/{w['coll_opens']}",
                "/".join(str(w[c]) for c in ("indep_reads", "coll_reads", "split_reads",
                                             "nb_reads")),
                "/".join(str(w[c]) for c in ("indep_writes", "coll_writes", "split_writes",
                                             "nb_writes")),
                str(w["syncs"]), str(w["views"]), str(w["bytes_read"]), str(w["bytes_written"]),
                f"{w['unsized_reads']}/{w['unsized_writes']}"]
        same(f"text row {p} rank {r}", t[:9], want)
    for p in {p for p, _ in want_records(exp)}:
        t = rows.get((p, "all"))
        if not t:
            bad.append(f"text: no row of {p} (all)")
        elif p.endswith("/shared") and (t[-3] == "-" or t[-2] == "-"):
            bad.append(f"text: {p}: no POSIX bytes or ratio")
        elif (t[-3] == "-") != (t[-2] == "-"):
            bad.append(f"text: {p}: POSIX bytes {t[-3]} but ratio {t[-2]}")


def check_darshan(path, exp, posix_path):
    recs = [json.loads(l) for l in open(path)][1:]
    posix = {json.loads(l)["name"] for l in list(open(posix_path))[1:]}
    got = {(x["name"], x["rank"]): x for x in recs}
    want = want_records(exp)
    same("MPIIO records", sorted(got), sorted(want))
    names = {
        "indep_opens": "MPIIO_INDEP_OPENS", "coll_opens": "MPIIO_COLL_OPENS",
        "indep_reads": "MPIIO_INDEP_READS", "indep_writes": "MPIIO_INDEP_WRITES",
        "coll_reads": "MPIIO_COLL_READS", "coll_writes": "MPIIO_COLL_WRITES",
        "split_reads": "MPIIO_SPLIT_READS", "split_writes": "MPIIO_SPLIT_WRITES",
        "nb_reads": "MPIIO_NB_READS", "nb_writes": "MPIIO_NB_WRITES", "syncs": "MPIIO_SYNCS",
        "views": "MPIIO_VIEWS", "bytes_read": "MPIIO_BYTES_READ",
        "bytes_written": "MPIIO_BYTES_WRITTEN"}
    for key, w in want.items():
        x = got.get(key)
        if not x:
            continue
        c, f = x["c"], x["f"]
        for k, n in names.items():
            same(f"{key} {n}", c[n], w[k])
        for i, b in enumerate(BINS):
            same(f"{key} MPIIO_SIZE_READ_AGG_{b}", c[f"MPIIO_SIZE_READ_AGG_{b}"],
                 w["size_read"][i])
            same(f"{key} MPIIO_SIZE_WRITE_AGG_{b}", c[f"MPIIO_SIZE_WRITE_AGG_{b}"],
                 w["size_written"][i])
        # What ioacct does not count is -1, never a made-up 0.
        for n in ("MPIIO_HINTS", "MPIIO_MODE", "MPIIO_RW_SWITCHES", "MPIIO_MAX_READ_TIME_SIZE"):
            same(f"{key} {n}", c[n], -1)
        same(f"{key} MPIIO_F_OPEN_START_TIMESTAMP", f["MPIIO_F_OPEN_START_TIMESTAMP"], -1)
        if not f["MPIIO_F_WRITE_TIME"] > 0 or not f["MPIIO_F_META_TIME"] > 0:
            bad.append(f"{key}: no write or metadata time")
        same(f"{key} MPIIO_FASTEST_RANK", c["MPIIO_FASTEST_RANK"], key[1])
        # Named as the POSIX record of the same file: one record id, one name
        # (the own files' POSIX records may have no path: named by inode then).
        if key[0].endswith("/shared") and key[0] not in posix:
            bad.append(f"{key[0]}: no POSIX record of that name")


def main():
    what, path, exp = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
    if what == "json":
        check_json(path, exp)
    elif what == "text":
        check_text(path, exp)
    else:
        check_darshan(path, exp, sys.argv[4])
    for b in bad:
        print(b, file=sys.stderr)
    sys.exit(1 if bad else 0)


main()
