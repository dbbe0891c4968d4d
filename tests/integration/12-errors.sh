#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Failed calls per class, decided in the kernel from the errno: a job run as
# nobody makes N opens and N2 stats of missing files (notfound), M opens of a
# root-only file (EACCES) and R creates on a read-only mount (EROFS: access),
# K writes to a full tmpfs (ENOSPC: space) and E exclusive creates of a file
# that exists (EEXIST: other). The text report (table and Darshan-named
# counters) and the JSON must say exactly those numbers per mount, the
# summary must tell real errors from lookups that found nothing, and the
# advice must flag the real errors, not the lookups.
. "$(dirname "$0")/lib.sh"
require_root_bpf
command -v setpriv >/dev/null || skip "setpriv (util-linux) is needed to run the job as nobody"
IOREPORT=$abs_top_builddir/tools/ioreport
[ -x "$IOREPORT" ] || fail "$IOREPORT not built"
EXTRA_CONF="advice_notfound_min = 60"
setup
start_daemon

N=40 N2=30 M=7 R=5 K=9 E=3
JOB=4713
A=$T/errfs
RO=$T/rofs
mkdir -p "$A" "$RO"
# nobody must reach the mounts below the private temporary directory.
chmod 711 "$T"
mount -t tmpfs -o size=64k,mode=1777 ioacct-test-err "$A" || skip "cannot mount a tmpfs on $A"
MOUNTED="$A"
cleanup_mounts() { for m in $MOUNTED; do umount "$m" 2>/dev/null; done; }
trap 'rc=$?; cleanup_mounts; (exit $rc); teardown' EXIT
mount -t tmpfs -o size=64k,ro ioacct-test-ro "$RO" || fail "cannot mount a read-only tmpfs on $RO"
MOUNTED="$A $RO"
echo secret > "$A/secret"
chmod 600 "$A/secret"
echo there > "$A/exists"
chmod 666 "$A/exists"
# Fill the tmpfs before the job: in the job every write fails, none is short.
dd if=/dev/zero of="$A/fill" bs=4k 2>/dev/null && fail "a 64k tmpfs took an endless file"
chmod 666 "$A/fill"
dd if=/dev/zero of="$A/probe" bs=1 count=1 2>/dev/null && fail "$A is not full"

"$IORUN" --job-id $JOB -o "$T/iorun.txt" -- setpriv --reuid=65534 --regid=65534 --clear-groups -- \
	"$IOWORK" missing "$A" $N , nostat "$A" $N2 , denied "$A/secret" $M , rofs "$RO" $R , \
	full "$A/fill" 4096 $K , exists "$A/exists" $E | cat || fail "iorun failed"
"$IOREPORT" --format json -o "$T/report.json" $JOB || fail "ioreport (json) failed"
"$IOREPORT" $JOB > "$T/report.txt" || fail "ioreport (text) failed"

# JSON: per mount and per operation, exactly.
python3 - "$T/report.json" "$A" "$RO" $N $N2 $M $R $K $E <<'PY' || fail "JSON error classes are not exact"
import json, sys
j = json.load(open(sys.argv[1]))
a, ro = sys.argv[2], sys.argv[3]
n, n2, m, r, k, e = map(int, sys.argv[4:])
mounts = {x["mount"]: x for x in j["mounts"]}
zero = {"notfound": 0, "access": 0, "space": 0, "io": 0, "other": 0, "unclassified": 0}
want = {
    a: {"errors": n + n2 + m + k + e, "real_errors": m + k + e,
        "error_classes": dict(zero, notfound=n + n2, access=m, space=k, other=e),
        "ops": {"open": dict(zero, notfound=n, access=m, other=e), "stat": dict(zero, notfound=n2),
                "write": dict(zero, space=k)},
        "calls": {"open": n + m + e + 1, "stat": n2, "write": k}},
    ro: {"errors": r, "real_errors": r, "error_classes": dict(zero, access=r),
         "ops": {"open": dict(zero, access=r)}, "calls": {"open": r}},
}
bad = []
assert j["schema_version"] == 3, j["schema_version"]
for path, w in want.items():
    got = mounts.get(path)
    if got is None:
        bad.append(f"no mount {path} in {sorted(mounts)}")
        continue
    for key in ("errors", "real_errors", "error_classes"):
        if got[key] != w[key]:
            bad.append(f"{path} {key}: {got[key]} != {w[key]}")
    for op, cls in w["ops"].items():
        if got["ops"][op]["error_classes"] != cls:
            bad.append(f"{path} {op}: {got['ops'][op]['error_classes']} != {cls}")
    for op, calls in w["calls"].items():
        if got["ops"][op]["calls"] != calls:
            bad.append(f"{path} {op} calls: {got['ops'][op]['calls']} != {calls}")
    if got["ops"]["write"]["bytes"] != 0:
        bad.append(f"{path}: failed writes counted bytes")
for b in bad:
    print("MISMATCH:", b)
sys.exit(1 if bad else 0)
PY
ok "JSON: $((N + N2)) notfound, $M+$R access, $K space, $E other, per mount and operation"

# Text: the Darshan-named counters of each mount, and the table by class.
counter() { # MOUNT NAME
	awk -v m="$1" -v n="total_$2:" '$1 == "#" && $2 == "mount:" { cur = $3 }
		cur == m && $1 == n { print $2 }' "$T/report.txt"
}
for c in "NOTFOUND $((N + N2))" "ACCESS $M" "SPACE $K" "IO 0" "OTHER $E" "ERRORS $((N + N2 + M + K + E))"; do
	set -- $c
	name=IOACCT_ERRORS_$1; [ "$1" = ERRORS ] && name=IOACCT_ERRORS
	[ "$(counter "$A" $name)" = "$2" ] || fail "$A: total_$name is '$(counter "$A" $name)', not $2"
done
[ "$(counter "$RO" IOACCT_ERRORS_ACCESS)" = "$R" ] || fail "$RO: total_IOACCT_ERRORS_ACCESS is not $R"
row() { awk -v m="$1" -v o="$2" '/^## Failed calls by class/ { t = 1; next } /^## / { t = 0 }
	t && $1 == m && $2 == o { $1 = ""; $2 = ""; print substr($0, 3) }' "$T/report.txt"; }
[ "$(row "$A" open | tr -s ' ')" = "$((N + M + E)) $N $M 0 0 $E 0" ] || fail "$A open row: $(row "$A" open)"
[ "$(row "$A" stat | tr -s ' ')" = "$N2 $N2 0 0 0 0 0" ] || fail "$A stat row: $(row "$A" stat)"
[ "$(row "$A" write | tr -s ' ')" = "$K 0 0 $K 0 0 0" ] || fail "$A write row: $(row "$A" write)"
[ "$(row "$RO" open | tr -s ' ')" = "$R 0 $R 0 0 0 0" ] || fail "$RO open row: $(row "$RO" open)"
# The mounts table: real errors apart from lookups that found nothing.
mrow=$(awk -v m="$A" '/^## I\/O per mount/ { t = 1; next } /^## / { t = 0 } t && $1 == m' "$T/report.txt")
set -- $mrow
[ "$9" = $((M + K + E)) ] && [ "${10}" = $((N + N2)) ] || fail "mounts table row: $mrow"
ok "text: counters and tables per class exact"

# Summary first: the job's real errors include at least these, and lookups are not errors.
sed -n '/^## Summary/,/^## /p' "$T/report.txt" > "$T/summary.txt"
grep -Eq "^Errors +[0-9]+ real errors?: [0-9]+ out of space or quota, [0-9]+ I/O, [0-9]+ permission denied, [0-9]+ other\$" \
	"$T/summary.txt" || { cat "$T/summary.txt"; fail "the summary lacks the errors line"; }
grep -Eq "^ +[0-9]+ lookups? found nothing \(ENOENT, ENOTDIR\): not errors\$" "$T/summary.txt" ||
	fail "the summary does not set lookups apart"
cmp -s "$T/report.txt" "$T/iorun.txt" || { diff "$T/iorun.txt" "$T/report.txt"; fail "iorun and ioreport disagree"; }
ok "summary tells real errors from lookups that found nothing"

# Advice: the real errors are HIGH (no space); lookups are INFO only, never errors.
grep -q "^HIGH errors: $A: " "$T/report.txt" && grep -q "^WARN errors: $RO: " "$T/report.txt" &&
	grep -q "^INFO notfound-lookups: $A: " "$T/report.txt" ||
	{ sed -n '/^## Advice/,/^## /p' "$T/report.txt"; fail "the advice does not flag the errors"; }
python3 - "$T/report.json" "$A" "$RO" $N $N2 $M $R $K $E <<'PY' || fail "the advice's numbers are not exact"
import json, sys
j = json.load(open(sys.argv[1]))
a, ro = sys.argv[2], sys.argv[3]
n, n2, m, r, k, e = map(int, sys.argv[4:])
adv = {(x["rule"], x["mount"]): x for x in j["advice"]}
want = {
    ("errors", a): ("HIGH", {"real_errors": m + k + e, "space": k, "io": 0, "access": m,
                             "other": e, "unclassified": 0}),
    ("errors", ro): ("WARN", {"real_errors": r, "space": 0, "io": 0, "access": r, "other": 0,
                              "unclassified": 0}),
    ("notfound-lookups", a): ("INFO", {"notfound": n + n2, "opens_and_stats": n + m + e + 1 + n2}),
}
bad = []
for key, (level, values) in want.items():
    x = adv.get(key)
    if x is None or x["level"] != level or x["values"] != values:
        bad.append(f"{key}: {x and (x['level'], x['values'])} != {(level, values)}")
for x in j["advice"]:
    if x["level"] in ("HIGH", "WARN") and "found nothing" in x["message"] and x["rule"] != "errors":
        bad.append(f"lookups flagged: {x['message']}")
for b in bad:
    print("MISMATCH:", b)
sys.exit(1 if bad else 0)
PY
ok "advice: real errors flagged with exact numbers, lookups only noted"
