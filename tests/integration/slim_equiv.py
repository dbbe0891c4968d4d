#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes two expectation files for tests/vm/check.awk from an iorun --json
summary: RIGHT names every non-zero integer counter of every mount and the
bytes and calls of the summary's first two per-file records (check.awk passes
it), WRONG the same with one record's writes and one mount's opens off by one
(check.awk finds both). 01-exact.sh runs check.awk on the summary whole and
slimmed by tests/vm/slim.awk with both: the output must be the same.

    slim_equiv.py SUMMARY.json RIGHT WRONG
"""
import json
import sys


def flat(o, p=""):
    if isinstance(o, dict):
        for k, v in o.items():
            yield from flat(v, p + k + ".")
    elif isinstance(o, list):
        for i, v in enumerate(o):
            yield from flat(v, p + str(i) + ".")
    else:
        yield p[:-1], o


def main():
    summary, right, wrong = sys.argv[1:4]
    with open(summary) as f:
        d = json.load(f)
    lines = []
    for m in d["mounts"]:
        kv = [f"{k}={v}" for k, v in flat(m)
              if isinstance(v, int) and not isinstance(v, bool) and v and k != "mnt_id"]
        lines.append(m["mount"] + " " + " ".join(kv))
    recs = [r for r in d.get("files", []) if not r.get("other_files")][:2]
    if len(recs) < 2:
        sys.exit(f"slim_equiv.py: {summary} has fewer than two per-file records")
    sums = {}
    for r in d["files"]:
        for k in ("opens", "writes", "bytes_written"):
            sums[(r["path"], k)] = sums.get((r["path"], k), 0) + r[k]
    for r in recs:
        p = r["path"]
        lines.append(f"file:{p} " + " ".join(f"{k}={sums[(p, k)]}"
                                             for k in ("opens", "writes", "bytes_written")))
    lines.append(f"@ probe_mode={d['probe_mode']}")
    with open(right, "w") as f:
        f.write("\n".join(lines) + "\n")
    bad = list(lines)
    p = recs[0]["path"]
    bad[-3] = f"file:{p} writes={sums[(p, 'writes')] + 1}"
    first = bad[0].split(" ")
    first = [w if not w.startswith("opens=") else f"opens={int(w[6:]) + 1}" for w in first]
    bad[0] = " ".join(first)
    with open(wrong, "w") as f:
        f.write("\n".join(bad) + "\n")


if __name__ == "__main__":
    main()
