#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Prints check_files.py's (or with --darshan check_darshan_files.py's) EXPECT
for the max_files = 2 job of 36-files.sh and 37-files-darshan.sh.

  many_expect.py [--darshan] DB JOB DIR MOUNT

The job wrote DIR/f0..f4 in turn (1, 2, 3, 4 and 5 writes of 1000, 1000, 1000,
2000 and 1000 bytes) on MOUNT. A record the job made before them takes one of
the two records too: the binary's own, for its pages read in or mapped by its
exec (a cold page cache; issue 38 names it). So the files that have records
are the first 2 - K, K the job's records of files outside DIR, and the rest
are MOUNT's "other files", exactly."""
import json
import sqlite3
import sys

MAX_FILES = 2
WRITES = [1, 2, 3, 4, 5]
SIZES = [1000, 1000, 1000, 2000, 1000]


def size_bins(i):
    """check_files.py's first 10 bins of writes: 101-1024 is bin 1, 1025-10 KiB bin 2."""
    b = [0] * 10
    b[1 if SIZES[i] <= 1024 else 2] += WRITES[i]
    return b


def main():
    args = sys.argv[1:]
    darshan = args[:1] == ["--darshan"]
    if darshan:
        args = args[1:]
    if len(args) != 4:
        sys.exit(__doc__)
    db, job, d, mount = args
    con = sqlite3.connect(db)
    k = con.execute("SELECT count(*) FROM files f JOIN jobs j ON j.key = f.job_key "
                    "WHERE j.job_id = ? AND NOT (f.dev = 0 AND f.ino = 0) "
                    "AND f.path NOT LIKE ?", (int(job), d.rstrip("/") + "/%")).fetchone()[0]
    n = max(MAX_FILES - k, 0)
    files = {}
    for i in range(n):
        w, z = WRITES[i], SIZES[i]
        files["%s/f%d" % (d, i)] = {"opens": 1, "writes": w, "bytes_written": w * z,
                                    "max_byte_written": w * z - 1, "seq_writes": w - 1,
                                    "consec_writes": w - 1,
                                    "size_written": ",".join(map(str, size_bins(i)))}
    rest = range(n, len(WRITES))
    other = {"opens": len(rest), "writes": sum(WRITES[i] for i in rest),
             "bytes_written": sum(WRITES[i] * SIZES[i] for i in rest),
             "size_written": ",".join(str(sum(size_bins(i)[b] for i in rest)) for b in range(10))}
    if not darshan:
        # The Darshan log has -1 for these of "other files" (they mix files).
        other.update(max_byte_written=max(WRITES[i] * SIZES[i] for i in rest) - 1,
                     seq_writes=sum(WRITES[i] - 1 for i in rest),
                     consec_writes=sum(WRITES[i] - 1 for i in rest))
    exp = {"files": files, "other": {mount: other}, "sums": [mount]}
    if not darshan:
        exp["job"] = int(job)
    print("many_expect: %d record(s) before the files, %d of them with a record" % (k, n),
          file=sys.stderr)
    json.dump(exp, sys.stdout)


if __name__ == "__main__":
    main()
