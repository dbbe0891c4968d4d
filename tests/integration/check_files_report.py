#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""check_files_report.py DIR EXPECT.json: a job's per-file records (issue 26)
in every report ioreport made of it, exactly as expected.

DIR holds report.json, report.txt, report.html (ioreport -f FORMAT), files.txt
and files.json (ioreport --files, -f json). EXPECT:
  {"files": {PATH: [bytes_read, bytes_written], ...},
   "other": {MOUNT_PATH: [calls, bytes_read, bytes_written], ...},
   "partial": bool}
Checked: JSON's records are those files and "other files" records, exactly;
their bytes sum to each mount's bytes; --files -f json is the report's
"files"; the text's Top files rows, the HTML's files-table rows and the
--files lines carry the same bytes; partial said in each, with the calls
on "other files", exactly when expected, and nowhere else."""
import html
import json
import os
import re
import sys

bad = []


def check(cond, msg):
    if not cond:
        bad.append(msg)


def check_json(rep, exp):
    recs = rep["files"]
    paths = {}
    other = {}
    for r in recs:
        if r["other_files"]:
            check(r["path"] is None, "other files record with a path: %s" % r)
            o = other.setdefault(r["mount"], [0, 0, 0])
            o[0] += (r["opens"] + r["reads"] + r["writes"] + r["stats"] + r["fsyncs"]
                     + r["seeks"])
            o[1] += r["bytes_read"]
            o[2] += r["bytes_written"]
        else:
            p = paths.setdefault(r["path"], [0, 0])
            p[0] += r["bytes_read"]
            p[1] += r["bytes_written"]
    check(paths == exp["files"], "json files %s, expected %s" % (paths, exp["files"]))
    check(other == exp["other"], "json other files %s, expected %s" % (other, exp["other"]))
    calls = sum(v[0] for v in exp["other"].values())
    check(rep["files_partial"] == exp["partial"], "json files_partial %s" % rep["files_partial"])
    check(rep["other_files_calls"] == calls,
          "json other_files_calls %d, expected %d" % (rep["other_files_calls"], calls))
    for m in rep["mounts"]:
        rd = sum(r["bytes_read"] for r in recs if r["mnt_id"] == m["mnt_id"])
        wr = sum(r["bytes_written"] for r in recs if r["mnt_id"] == m["mnt_id"])
        check((rd, wr) == (m["read_bytes"], m["write_bytes"]),
              "mount %s: records sum to %d read, %d written; the mount has %d, %d"
              % (m["mount"], rd, wr, m["read_bytes"], m["write_bytes"]))
    return calls, sum(v[1] + v[2] for v in exp["other"].values())


def expected_rows(exp):
    """(path or "(other files)", mount or None) -> (read, written), ordered as the report."""
    rows = {(p, None): tuple(v) for p, v in exp["files"].items()}
    for m, v in exp["other"].items():
        rows[("(other files)", m)] = (v[1], v[2])
    return rows


def find_row(rows, path, mount):
    return rows.get((path, None), rows.get((path, mount)))


def partial_line(calls, nbytes):
    return ('max_files was reached; %d calls (%d bytes) on files past it are counted as '
            % (calls, nbytes))


def check_text(text, exp, calls, nbytes):
    want = expected_rows(exp)
    sec = text.split("\n## Top files: ", 1)
    check(len(sec) == 2, "text: no Top files section")
    if len(sec) < 2:
        return
    lines = sec[1].split("\n")
    got = {}
    order = []
    for line in lines[2:]:
        if not line or line.startswith("partial:"):
            break
        f = line.split()
        mount, path = f[14], " ".join(f[15:])
        got[(path, mount)] = (int(f[0]), int(f[1]))
        order.append(int(f[0]) + int(f[1]))
    check(order == sorted(order, reverse=True), "text: rows not by bytes moved: %s" % order)
    check(len(got) == len(want), "text: %d rows, expected %d" % (len(got), len(want)))
    for (path, mount), v in got.items():
        w = find_row(want, path, mount)
        check(w == v, "text: %s on %s: %s, expected %s" % (path, mount, v, w))
    line = partial_line(calls, nbytes)
    if exp["partial"]:
        check("\nFiles        partial: " + line in text, "text: no partial line in the summary")
        check("\npartial: " + line in sec[1], "text: no partial line under Top files")
    else:
        check("partial" not in text, "text: says partial")


def check_html(page, exp, calls, nbytes):
    want = expected_rows(exp)
    t = re.search(r'<table id="files-table".*?<tbody>(.*?)</tbody>', page)
    check(t is not None, "html: no files-table")
    if not t:
        return
    num = r'<td class="n">(\d+)(?: <small>[^<]*</small>)?</td>'
    rows = re.findall(r'<tr><td>(.*?)</td><td>(.*?)</td><td class="n">.*?</td>' + num + num,
                      t.group(1))
    check(len(rows) == len(want), "html: %d rows, expected %d" % (len(rows), len(want)))
    for path, mount, rd, wr in rows:
        w = find_row(want, html.unescape(path), html.unescape(mount))
        check(w == (int(rd), int(wr)), "html: %s: %s, %s, expected %s" % (path, rd, wr, w))
    if exp["partial"]:
        check('id="files-partial">Partial: ' + partial_line(calls, nbytes) in page,
              "html: no partial line")
    else:
        check("files-partial" not in page, "html: says partial")


def check_list(text, rep, exp, calls, nbytes):
    lines = text.rstrip("\n").split("\n")
    head = lines[0].split("\t")
    recs = [dict(zip(head, line.split("\t"))) for line in lines[1:] if not line.startswith("#")]
    check(len(recs) == len(rep["files"]),
          "--files: %d lines, the JSON has %d records" % (len(recs), len(rep["files"])))
    for r, j in zip(recs, rep["files"]):
        path = j["path"] if j["path"] is not None else "(other files)"
        check((r["PATH"], int(r["BYTES_READ"]), int(r["BYTES_WRITTEN"]), int(r["RANK"]))
              == (path, j["bytes_read"], j["bytes_written"], j["rank"]),
              "--files: %s, the JSON has %s" % (r, j))
    want = expected_rows(exp)
    for r in recs:
        check(r["PATH"] == "(other files)" or (r["PATH"], None) in want,
              "--files: %s not expected" % r["PATH"])
    tail = "# partial: " + partial_line(calls, nbytes)
    check((tail in text) == exp["partial"], "--files: partial line %s" % (tail in text))


def main():
    d, expect = sys.argv[1:3]
    exp = json.load(open(expect))
    exp["files"] = {k: list(v) for k, v in exp["files"].items()}
    rep = json.load(open(os.path.join(d, "report.json")))
    calls, nbytes = check_json(rep, exp)
    lst = json.load(open(os.path.join(d, "files.json")))
    for k in ("files_partial", "other_files_calls", "other_files_bytes", "files", "job_id"):
        check(lst.get(k) == rep.get(k), "--files -f json: %s differs from the report's" % k)
    check_text(open(os.path.join(d, "report.txt")).read(), exp, calls, nbytes)
    check_html(open(os.path.join(d, "report.html")).read(), exp, calls, nbytes)
    check_list(open(os.path.join(d, "files.txt")).read(), rep, exp, calls, nbytes)
    for b in bad:
        print("check_files_report: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
