#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A synthetic store for retention tests (37-retain.sh) and measurements.

  retain_store.py fill DB NJOBS NBINS AGE_DAYS
      adds NJOBS finished jobs to DB (made and migrated by ioacct first), each
      ended AGE_DAYS ago with 2 steps, 2 mounts, 2 operations x NBINS bins of
      series, their totals and a per-file record; prints the rows of one job.
  retain_store.py check DB ROWS
      every job has exactly ROWS rows in the tables of jobs (whole), and no
      row of any of them belongs to a job that is not there; prints the jobs.
"""
import sqlite3
import sys
import time

TABLES = ["steps", "mounts", "series", "totals", "files"]
COUNTERS = ("bytes, calls, errors, ns, s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, "
            "err_notfound, err_access, err_space, err_io, err_other")


def fill(path, njobs, nbins, age_days):
    db = sqlite3.connect(path)
    end = int((time.time() - age_days * 86400) * 1e9)
    start = end - nbins * 5 * 10**9
    cur = db.cursor()
    file_cols = [r[1] for r in db.execute("PRAGMA table_info(files)") if r[1] != "gen"][:32]
    for j in range(njobs):
        cur.execute("INSERT INTO jobs (cluster, job_id, node, source, uid, gid, user, name,"
                    " workdir, start_ns, end_ns, state, exit_code, probe_mode, bin_width_ns,"
                    " dropped_events, dropped_bytes, restart) VALUES ('hpc', ?, 'n1', 'slurm',"
                    " ?, 100, ?, 'synthetic', '/w', ?, ?, 'COMPLETED', 0, 'tracepoint',"
                    " 5000000000, 0, 0, 0)",
                    (900000 + j, 1000 + j % 7, "u%d" % (j % 7), start, end))
        key = cur.lastrowid
        for s in range(2):
            cur.execute("INSERT INTO steps VALUES (?, ?, ?, ?, 'COMPLETED', 0, '/cg')",
                        (key, s, start, end))
        for m in (20, 21):
            cur.execute("INSERT INTO mounts VALUES (?, ?, ?, 'ext4', '/dev/x')",
                        (key, m, "/m%d" % m))
        rows = []
        for s in range(2):
            for m in (20, 21):
                for op in range(2):
                    for b in range(nbins):
                        rows.append((key, s, m, op, b, 4096 * (b + 1), b + 1, 0, 1000 * b)
                                    + (0,) * 15)
        cur.executemany("INSERT INTO series (job_key, step_id, mnt_id, op, bin, " + COUNTERS +
                        ") VALUES (" + ", ".join("?" * 24) + ")", rows)
        cur.execute("INSERT INTO totals (job_key, step_id, mnt_id, op, " + COUNTERS + ")"
                    " SELECT job_key, step_id, mnt_id, op, sum(bytes), sum(calls), 0, sum(ns),"
                    " 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 FROM series WHERE job_key = ?"
                    " GROUP BY step_id, mnt_id, op", (key,))
        # Schema 14's 32 columns by name: later ones (gen, access sizes...) have defaults.
        cur.execute("INSERT INTO files (" + ", ".join(file_cols) + ") VALUES"
                    " (?, 0, -1, 20, 1, ?, '/m20/f',"
                    " 1, 0, 1, 0, 0, 0, 4096, 0, 0, 0, 0, 4095, 0, 0, 0, 0, 0, 0, 0, 0,"
                    " '0,0,0,0,0,0,0,0,0,0', '0,0,1,0,0,0,0,0,0,0', 0, 0, 0)", (key, j))
    db.commit()
    print(1 + 2 + 2 + 8 * nbins + 8 + 1)


def check(path, want):
    db = sqlite3.connect("file:" + path + "?mode=ro", uri=True)
    keys = [r[0] for r in db.execute("SELECT key FROM jobs")]
    counts = {k: 1 for k in keys}
    for t in TABLES + ["export_queue", "report_specs", "watches"]:
        for k, n in db.execute("SELECT job_key, count(*) FROM %s GROUP BY job_key" % t):
            if k not in counts:
                sys.exit("%s has %d rows of job %d, which is not there" % (t, n, k))
            counts[k] += n
    bad = [k for k, n in counts.items() if n != want]
    if bad:
        sys.exit("jobs not whole (%d rows, not %d): %s" % (counts[bad[0]], want, bad[:10]))
    print(len(keys))


if __name__ == "__main__":
    if sys.argv[1] == "fill":
        fill(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
    elif sys.argv[1] == "check":
        check(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit(__doc__)
