#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Darshan interop end to end, with the real daemon: a workload runs under
# iorun; `ioreport --format darshan` writes its log (and iorun --format darshan
# the same bytes), whose layout is checked with Python's zlib against the
# format (header, regions, record sizes); the
# job compared with its own log (`ioreport --compare`) gives every ratio
# exactly 1, the same bandwidth in every time bin and a relative error of 0;
# --darshan-filter leaves /dev/shm out on both sides; bad logs and bad usage
# are refused with a message; a real Darshan log from ../shared/darshan-logs
# (beside the source tree) is compared too when it is there.
. "$(dirname "$0")/lib.sh"
require_root_bpf
IOREPORT=$abs_top_builddir/tools/ioreport
[ -x "$IOREPORT" ] || fail "$IOREPORT not built"
SRCDIR=$(cd "$(dirname "$0")/../.." && pwd)
setup
start_daemon

D=$T/root-fs
SHM=/dev/shm/ioacct-test-$$
mkdir -p "$D/files"
JOB=4909

"$IORUN" --job-id $JOB --bin-width 0.5 --format darshan -o "$T/iorun.darshan" -- "$IOWORK" \
	write "$D/big" 1048576 32 , \
	fsync "$D/big" 3 , \
	sleep 0.6 , \
	read "$D/big" 65536 256 , \
	stat "$D/big" 20 , \
	create "$D/files" 10 , \
	rename "$D/files" 10 , \
	missing "$D" 2 , \
	sleep 0.6 , \
	pwrite "$SHM" 4096 50 | cat || fail "iorun failed"
ROOTMNT=$(mount_of "$D")

"$IOREPORT" --format darshan -o "$T/job.darshan" $JOB || fail "ioreport --format darshan failed"
# One list of formats: iorun writes the same log as ioreport.
cmp "$T/iorun.darshan" "$T/job.darshan" || fail "iorun --format darshan and ioreport --format darshan differ"
rc=0; "$IORUN" --format darshan -- true 2> "$T/err" || rc=$?
[ $rc = 125 ] && grep -q -- "-o FILE" "$T/err" || { cat "$T/err"; fail "iorun --format darshan without -o: exit $rc"; }
python3 - "$T/job.darshan" <<'PY' || fail "the .darshan log does not have Darshan's layout"
# Offsets from darshan-log-format.h (format 3.41), darshan-posix-log-format.h
# and darshan-heatmap-log-format.h.
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"3.41\0\0\0\0", d[:8]
magic, = struct.unpack_from("<q", d, 8)
assert magic == 6567223, magic
assert d[16] == 0, "not zlib"
name_off, name_len = struct.unpack_from("<QQ", d, 32)
maps = [struct.unpack_from("<QQ", d, 48 + 16 * i) for i in range(64)]
vers = struct.unpack_from("<64I", d, 1072)
assert name_off > 1328 and vers[1] == 4 and vers[15] == 1, (name_off, vers[1], vers[15])
assert [i for i in range(64) if maps[i][1]] == [1, 15], "regions other than POSIX and HEATMAP"
job = zlib.decompress(d[1328:name_off])
uid, ssec, snsec, esec, ensec, nprocs, jobid = struct.unpack_from("<7q", job, 0)
assert jobid == 4909 and nprocs == 1 and esec * 10**9 + ensec > ssec * 10**9 + snsec
exe, *mounts = job[1080:].rstrip(b"\0").decode().split("\n")
assert "iowork" in exe, exe
fstypes = dict(reversed(m.split("\t")) for m in mounts)
assert fstypes.get("/dev/shm") == "tmpfs", fstypes
names = zlib.decompress(d[name_off:name_off + name_len])
posix = zlib.decompress(d[maps[1][0]:maps[1][0] + maps[1][1]])
# One record per file (issue 26: through ioacctd's socket too), at least one per mount.
assert len(posix) % 704 == 0 and len(posix) // 704 >= len(mounts), (len(posix), len(mounts))
# No MPI ranks: every file rank 0, as in Darshan's non-MPI logs (issue 38).
for r in range(len(posix) // 704):
    rank, = struct.unpack_from("<q", posix, 704 * r + 8)
    assert rank == 0, rank
hm = zlib.decompress(d[maps[15][0]:maps[15][0] + maps[15][1]])
width, nbins = struct.unpack_from("<dq", hm, 16)
assert width == 0.5 and len(hm) == 48 + 16 * nbins, (width, nbins, len(hm))
assert b"heatmap:POSIX\0" in names
print(f"layout ok: {len(mounts)} mounts, {len(posix) // 704} POSIX records, {nbins} heatmap bins")
PY
ok "--format darshan writes a zlib log of format 3.41 with Darshan's layout"

# ratios_are_one FILE MIN: every per-mount row has OURS = DARSHAN and a ratio of exactly 1
# (or - where both are 0), at least MIN of them 1, every time bin the same on both sides.
ratios_are_one() {
	awk -v min="$2" '
	/^COUNTER / { table = 1; next }
	/^# / || /^$/ { table = 0 }
	/^ *BIN / { series = 1; next }
	table {
		if ($2 != $3) { print "differs: " $0; bad++ }
		if ($4 == "1.000000") ones++; else if ($4 != "-") { print "ratio: " $0; bad++ }
	}
	series && NF == 6 && $1 ~ /^[0-9]+$/ {
		bins++
		if ($3 != $4 || $5 != $6) { print "bin differs: " $0; bad++ }
	}
	/relative error/ {
		errs++
		if ($0 !~ /: \+0\.0000%, ratio (1\.000000|-)$/) { print "error: " $0; bad++ }
	}
	END {
		printf "%d ratios of 1, %d time bins, %d relative errors\n", ones, bins, errs
		exit (bad || ones < min || bins < 2 || errs != 2)
	}' "$1"
}

"$IOREPORT" --compare "$T/job.darshan" $JOB > "$T/self.txt" || fail "ioreport --compare failed"
ratios_are_one "$T/self.txt" 15 || { cat "$T/self.txt"; fail "the job against its own log: a ratio is not 1"; }
grep -q "^# mount: $ROOTMNT	" "$T/self.txt" || fail "no block for $ROOTMNT"
grep -q '^# mount: /dev/shm	tmpfs	ours: yes	Darshan: 1 POSIX record$' "$T/self.txt" ||
	fail "no block for /dev/shm"
grep -Eq '^POSIX_WRITES +32 +32 +1\.000000$' "$T/self.txt" || fail "POSIX_WRITES on $ROOTMNT is not 32"
grep -Eq '^POSIX_READS +256 +256 +1\.000000$' "$T/self.txt" || fail "POSIX_READS is not 256"
grep -q '^## What each side cannot see' "$T/self.txt" || fail "the blind spots are not stated"
grep -q '^# filter: none' "$T/self.txt" || fail "the filter is not stated"
ok "the job against its own log: every ratio exactly 1, every time bin equal"

# Rows that are 0 on both sides are left out and counted; --all-counters shows them.
omitted=$(awk '/^# [0-9]+ counters? 0 on both sides left out \(--all-counters shows them\)$/ { n += $2 }
	END { print n + 0 }' "$T/self.txt")
[ "$omitted" -gt 0 ] || fail "no all-zero row left out of the comparison"
"$IOREPORT" --compare "$T/job.darshan" --all-counters $JOB > "$T/all.txt" || fail "--all-counters failed"
grep -q 'left out (--all-counters' "$T/all.txt" && fail "--all-counters still leaves rows out"
[ $(($(grep -Ec '^POSIX_' "$T/all.txt") - $(grep -Ec '^POSIX_' "$T/self.txt"))) = "$omitted" ] ||
	fail "--all-counters does not show the $omitted rows left out"
ok "--compare leaves out $omitted all-zero rows, --all-counters shows them"

"$IOREPORT" --compare "$T/job.darshan" --mount "$ROOTMNT" $JOB > "$T/one.txt" || fail "--compare --mount failed"
[ "$(grep -c '^# mount: ' "$T/one.txt")" = 1 ] || fail "--compare --mount kept other mounts"
ok "--compare --mount compares one mount"

"$IOREPORT" --format darshan --darshan-filter -o "$T/filtered.darshan" $JOB ||
	fail "ioreport --format darshan --darshan-filter failed"
"$IOREPORT" --compare "$T/filtered.darshan" --darshan-filter $JOB > "$T/filtered.txt" ||
	fail "ioreport --compare --darshan-filter failed"
ratios_are_one "$T/filtered.txt" 10 || { cat "$T/filtered.txt"; fail "filtered: a ratio is not 1"; }
grep -q '^# filter: --darshan-filter; ours leaves out mounts Darshan does not record:.* /dev/shm (tmpfs)' \
	"$T/filtered.txt" || fail "the filter does not name /dev/shm"
grep -q '^# mount: /dev/shm' "$T/filtered.txt" && fail "/dev/shm compared despite --darshan-filter"
"$IOREPORT" --compare "$T/job.darshan" --darshan-filter $JOB > "$T/mixed.txt" || fail "compare failed"
grep -q '^# mount: /dev/shm	tmpfs	ours: no I/O	Darshan: 1 POSIX record$' "$T/mixed.txt" ||
	fail "ours filtered against an unfiltered log: /dev/shm should be Darshan's only"
ok "--darshan-filter leaves /dev/shm out of the log and of the comparison"

# Bad logs: a message and exit 1, never a crash.
head -c $(($(stat -c %s "$T/job.darshan") - 7)) "$T/job.darshan" > "$T/cut.darshan"
printf 'this is not a Darshan log\n' > "$T/text.darshan"
python3 -c 'import sys; d = bytearray(open(sys.argv[1], "rb").read()); d[16] = 1; open(sys.argv[2], "wb").write(d)' \
	"$T/job.darshan" "$T/bzip2.darshan"
for bad in "cut:truncated" "text:not a Darshan log" "bzip2:bzip2-compressed" "none:cannot read"; do
	rc=0; "$IOREPORT" --compare "$T/${bad%%:*}.darshan" $JOB > /dev/null 2> "$T/err" || rc=$?
	[ $rc = 1 ] && grep -q "${bad#*:}" "$T/err" || fail "${bad%%:*} log: exit $rc, $(cat "$T/err")"
done
ok "bad logs: exit 1 with a message ($(head -c 120 "$T/err"))"

rc=0; "$IOREPORT" --format darshan $JOB 2> "$T/err" || rc=$?
[ $rc = 2 ] && grep -q -- "-o FILE" "$T/err" || fail "--format darshan without -o: exit $rc"
rc=0; "$IOREPORT" --compare "$T/job.darshan" --format json $JOB 2> "$T/err" || rc=$?
[ $rc = 2 ] || fail "--compare with --format json: exit $rc"
rc=0; "$IOREPORT" --darshan-filter $JOB 2> "$T/err" || rc=$?
[ $rc = 2 ] || fail "--darshan-filter alone: exit $rc"
rc=0; "$IOREPORT" --all-counters $JOB 2> "$T/err" || rc=$?
[ $rc = 2 ] && grep -q -- "--all-counters goes with --compare" "$T/err" || fail "--all-counters alone: exit $rc"
ok "usage errors: exit 2"

LOGS=${IOACCT_DARSHAN_LOGS:-$SRCDIR/../shared/darshan-logs}
[ -f "$LOGS/ior_hdf5_example.darshan" ] ||
	skip "$LOGS not found: a real Darshan log not compared (everything else passed)"
"$IOREPORT" --compare "$LOGS/ior_hdf5_example.darshan" $JOB > "$T/ior.txt" ||
	fail "ioreport --compare of a real Darshan log failed"
grep -q '^# darshan jobid: 32324925$' "$T/ior.txt" || fail "the real log's job id is not shown"
grep -q '^# mount: /global/cscratch1	lustre	ours: no I/O	Darshan: 1 POSIX record$' "$T/ior.txt" ||
	{ cat "$T/ior.txt"; fail "the real log's POSIX record is not on /global/cscratch1"; }
grep -q 'H5F (ver 3, not read)' "$T/ior.txt" || fail "modules not read are not listed"
grep -q 'no heatmap:POSIX records' "$T/ior.txt" || fail "a log without heatmap not said so"
ok "a real Darshan log (ior_hdf5_example, format 3.21) compared with the job"
