#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Lets container jobs end once the store holds all their writes.

    watch_stored.py DB EXPECTED.json GODIR SECONDS [MOD:REST]

EXPECTED maps a job id to {mount point: bytes written}. For each job (those
whose id % MOD >= REST when given), creates GODIR/JOB as soon as the store's
series hold at least its bytes written: its mounts were named in that same
drain, while its namespace lived. Gives up after SECONDS (the jobs then end
anyway). 28-nsreuse.sh and 54-mntreuse.sh run it beside their jobs.
"""
import json
import os
import sqlite3
import sys
import time


def main():
    db, exp, go, seconds = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3], float(sys.argv[4])
    mod, rest = (int(x) for x in sys.argv[5].split(":")) if len(sys.argv) > 5 else (1, 0)
    want = {int(j): sum(m.values()) for j, m in exp.items() if int(j) % mod >= rest}
    deadline = time.time() + seconds
    while want and time.time() < deadline:
        try:
            con = sqlite3.connect(db, timeout=10)
            rows = con.execute("select j.job_id, coalesce(sum(s.bytes), 0) from series s join jobs j"
                               " on s.job_key = j.key where s.op = 1 group by j.job_id").fetchall()
            con.close()
        except sqlite3.Error:
            rows = []
        for job, got in rows:
            if job in want and got >= want[job]:
                open(os.path.join(go, str(job)), "w").close()
                del want[job]
        time.sleep(0.1)


if __name__ == "__main__":
    main()
