#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# mmap_read_bytes exact (issue 29): a file mapped whole, every page touched
# once (iommap), in file order and shuffled, MAP_SHARED and MAP_PRIVATE, each
# under its own iorun job, maps exactly the file's size rounded up to pages,
# on tmpfs with huge=never, always and within_size (PMD-mapped huge pages),
# and on ext4, xfs and btrfs on loop devices (large folios), read cold: its
# misses (cache_miss_bytes) are the same bytes. Two files: 16 MiB (a
# multiple of a huge page) and 100000 bytes. The file's own record (issue
# 26, ioreport -f json from the store) has the same mmap_bytes and, cold,
# cache_miss_bytes; and the records of each mount sum to its counts.
#
# Where the kernel lets no program reach the functions that map the pages
# (no fentry and no kprobes: set_pte_range or do_set_pte, do_set_pmd), the
# job's reports say "mmap bytes: not measured here (...)" in text, JSON
# and HTML instead of a number, and its files' mmap_bytes are not numbers
# either (null in JSON, "-" in text); that is checked, the exact cases are not.
. "$(dirname "$0")/lib.sh"
require_root_bpf
IOMMAP=$abs_top_builddir/tests/integration/iommap
IOREPORT=$abs_top_builddir/tools/ioreport
[ -x "$IOMMAP" ] || fail "$IOMMAP not built (make -C tests/integration iommap)"
setup
PG=$(getconf PAGESIZE)
BIG=$((16 * 1048576))
SMALL=100000

start_daemon
"$IOPOKE" "$T/ioacctd.sock" status > "$T/status" || fail "status"
views=$(grep -o 'views=[a-z,-]*' "$T/status" | head -1)
echo "  $views"

# mkfiles DIR: the two files, written through write(2).
mkfiles() {
	head -c $BIG /dev/urandom > "$1/big" && head -c $SMALL /dev/urandom > "$1/small" && sync "$1/big" "$1/small"
}

# A tmpfs under $T (teardown unmounts whatever is left under it).
mount_tmpfs() {
	mkdir -p "$T/$1"
	mount -t tmpfs -o "size=64m,huge=$2" "tmpfs-$1" "$T/$1" || return 1
}

# mmap_job NAME FILE ORDER MAP: FILE read through a mapping under iorun, its JSON in $T/NAME.json.
mmap_job() {
	"$IORUN" --json -o "$T/$1.json" -- "$IOMMAP" "$2" "$3" "$4" > "$T/$1.out" ||
		fail "$1: iorun $IOMMAP $2 $3 $4 failed: $(cat "$T/$1.out")"
}

# mount_field NAME MNT FIELD: FIELD of the job's row of mount MNT ("none" without a row).
mount_field() {
	json_get "$T/$1.json" "([m['$3'] for m in j['mounts'] if m['mount'] == '$2'] or ['none'])[0]"
}

# file_report NAME: the job's report from the store, with its per-file records, in $T/NAME.rep.
file_report() {
	"$IOREPORT" --db "$T/ioacct.db" -f json -o "$T/$1.rep" \
		"$(json_get "$T/$1.json" 'j["job_id"]')" || fail "$1: ioreport -f json failed"
}

# file_field NAME PATH FIELD: FIELD of the record of file PATH ("none" without one, "two": more).
file_field() {
	json_get "$T/$1.rep" "(lambda r: r[0] if len(r) == 1 else ('none' if not r else 'two'))([f['$3'] for f in j['files'] if f['path'] == '$2'])"
}

# files_sum_ok NAME MNT: the records of mount MNT sum to its mmap_read_bytes and cache_miss_bytes.
files_sum_ok() {
	json_get "$T/$1.rep" "all(sum(f[k] for f in j['files'] if f['mount'] == '$2') == [m[c] for m in j['mounts'] if m['mount'] == '$2'][0] for k, c in (('mmap_bytes', 'mmap_read_bytes'), ('cache_miss_bytes', 'cache_miss_bytes')))"
}

case ",${views#views=}," in
*,mmap,*) ;;
*,mmap-nohook,*)
	# No exact hook: the reports say so, and give no number.
	mount_tmpfs nohook never || fail "cannot mount a tmpfs"
	mkfiles "$T/nohook"
	mmap_job nohook "$T/nohook/small" seq shared
	check_note=$(json_get "$T/nohook.json" "j.get('mmap_read_bytes_note', '')")
	case "$check_note" in
	"mmap bytes: not measured here ("*")") ;;
	*) cat "$T/nohook.json"; fail "JSON: no mmap_read_bytes_note saying not measured ($check_note)" ;;
	esac
	[ "$(json_get "$T/nohook.json" "j['totals']['mmap_read_bytes']")" = None ] &&
		[ "$(mount_field nohook "$T/nohook" mmap_read_bytes)" = None ] ||
		fail "JSON: mmap_read_bytes is a number where it was not measured"
	JID=$(json_get "$T/nohook.json" 'j["job_id"]')
	"$IOREPORT" --cluster iorun "$JID" > "$T/nohook.txt" || fail "ioreport (text)"
	grep -q "^mmap bytes: not measured here (.*)\$" "$T/nohook.txt" ||
		{ cat "$T/nohook.txt"; fail "text report: no 'mmap bytes: not measured here' line"; }
	grep -Eq "^$T/nohook +[0-9]+ +- " "$T/nohook.txt" ||
		{ grep -A4 '^## Page cache' "$T/nohook.txt"; fail "text report: a number in the MMAP column"; }
	! grep -q "IOACCT_MMAP_READ_BYTES" "$T/nohook.txt" ||
		fail "text report: an IOACCT_MMAP_READ_BYTES counter where mmap bytes were not measured"
	"$IOREPORT" --cluster iorun --format darshan -o "$T/nohook.darshan" "$JID" ||
		fail "ioreport (darshan)"
	"$abs_top_builddir/tests/integration/dxtdump" "$T/nohook.darshan" |
		grep -qx 'ioacct_mmap_read_bytes=-1' ||
		fail "Darshan log: ioacct_mmap_read_bytes is not -1 (not known) where not measured"
	mrb=$("$abs_top_builddir/tools/ioacct" --db "$T/ioacct.db" -j "$JID" -M iorun -X -n -P -o MmapReadBytes,JobID 2>&1) ||
		fail "ioacct -o MmapReadBytes: $mrb"
	[ "$mrb" = "|$JID" ] || fail "ioacct -o MmapReadBytes gives '$mrb', want empty where not measured"
	"$IOREPORT" --cluster iorun --format html -o "$T/nohook.html" "$JID" || fail "ioreport (html)"
	grep -q '<th>mmap bytes</th><td>not measured here (' "$T/nohook.html" ||
		fail "HTML report: no 'mmap bytes: not measured here' row"
	# The file's record: mmap bytes not known, not 0; the rest of it counted.
	file_report nohook
	SMALLP=$(realpath "$T/nohook/small")
	[ "$(file_field nohook "$SMALLP" mmap_bytes)" = None ] ||
		{ cat "$T/nohook.rep"; fail "JSON: the file's mmap_bytes is not null where not measured"; }
	[ "$(file_field nohook "$SMALLP" opens)" = 1 ] ||
		{ cat "$T/nohook.rep"; fail "JSON: the file's record has not its 1 open"; }
	"$IOREPORT" --db "$T/ioacct.db" --files "$JID" > "$T/nohook.files" || fail "ioreport --files"
	python3 - "$T/nohook.files" "$SMALLP" <<'PY' || fail "ioreport --files: MMAP_BYTES is not '-' where not measured"
import sys
lines = open(sys.argv[1]).read().rstrip("\n").split("\n")
head = lines[0].split("\t")
rows = [dict(zip(head, l.split("\t"))) for l in lines[1:] if not l.startswith("#")]
r = [x for x in rows if x["PATH"] == sys.argv[2]]
sys.exit(0 if len(r) == 1 and r[0]["MMAP_BYTES"] == "-" and r[0]["CACHE_MISS_BYTES"].isdigit() else 1)
PY
	ok "no exact hook on this kernel: $check_note, in text, JSON and HTML, and per file"
	ok "SKIP of the exact cases: they need fentry or kprobes on set_pte_range/do_set_pmd"
	exit 0
	;;
*) skip "the mmap view is not active on this kernel ($views)" ;;
esac

want_of() { echo $((($1 + PG - 1) / PG * PG)); }
FAILS=0
printf '  %-22s %-6s %-5s %-8s %12s %12s %12s %s\n' "file system" file order map mmap_bytes want misses \
	"file's record (mmap, misses)"
# run_cases FS DIR COLD: every file, order and map type of DIR; COLD: evict first, check misses.
run_cases() {
	local fs=$1 dir=$2 cold=$3 f size want order map got miss name try fgot fmiss sums
	for f in big small; do
		size=$(stat -c %s "$dir/$f")
		want=$(want_of "$size")
		for order in seq rand; do
			for map in shared private; do
				name=$fs-$f-$order-$map
				# Something else on the machine may read a page back in: up to 3 cold attempts.
				for try in 1 2 3; do
					[ "$cold" = 1 ] && "$IOWORK" evict "$dir/$f" > /dev/null
					mmap_job "$name" "$dir/$f" $order $map
					got=$(mount_field "$name" "$dir" mmap_read_bytes)
					miss=$(mount_field "$name" "$dir" cache_miss_bytes)
					[ "$cold" = 1 ] && [ "$miss" != "$want" ] && [ "$got" = "$want" ] && continue
					break
				done
				# The file's record: the same bytes; the mount's records sum to its counts.
				file_report "$name"
				fgot=$(file_field "$name" "$(realpath "$dir/$f")" mmap_bytes)
				fmiss=$(file_field "$name" "$(realpath "$dir/$f")" cache_miss_bytes)
				sums=$(files_sum_ok "$name" "$dir")
				[ "$cold" = 1 ] || { miss=-; fmiss=-; }
				if [ "$got" = "$want" ] && [ "$fgot" = "$want" ] && [ "$sums" = True ] &&
					{ [ "$cold" != 1 ] || { [ "$miss" = "$want" ] && [ "$fmiss" = "$want" ]; }; }; then
					r=ok
				else
					r=FAIL
					FAILS=$((FAILS + 1))
				fi
				printf '  %-22s %-6s %-5s %-8s %12s %12s %12s %s %s sums=%s %s\n' "$fs" $f $order \
					$map "$got" $want "$miss" "$fgot" "$fmiss" "$sums" $r
			done
		done
	done
}

for huge in never always within_size; do
	if ! mount_tmpfs "tmpfs-$huge" $huge; then
		echo "  tmpfs huge=$huge: cannot mount (no THP for shmem?): not checked"
		continue
	fi
	mkfiles "$T/tmpfs-$huge"
	run_cases "tmpfs huge=$huge" "$T/tmpfs-$huge" 0
	umount "$T/tmpfs-$huge"
done

for fs in ext4 xfs btrfs; do
	if ! command -v "mkfs.$fs" > /dev/null; then
		echo "  $fs: mkfs.$fs missing (scripts/deps installs it): not checked"
		continue
	fi
	mkdir -p "$T/$fs"
	truncate -s 512M "$T/$fs.img"
	case $fs in
	ext4) mkfs.ext4 -q -F "$T/$fs.img" > "$T/mkfs.log" 2>&1 ;;
	*) "mkfs.$fs" -f "$T/$fs.img" > "$T/mkfs.log" 2>&1 ;;
	esac || { cat "$T/mkfs.log"; fail "mkfs.$fs failed"; }
	mount -o loop "$T/$fs.img" "$T/$fs" || fail "cannot mount $fs on a loop device"
	mkfiles "$T/$fs"
	run_cases "$fs" "$T/$fs" 1
	umount "$T/$fs"
	rm -f "$T/$fs.img"
done

[ $FAILS = 0 ] || fail "$FAILS cases where mmap_read_bytes (or cold, cache_miss_bytes), the mount's or the file's record's, is not the file's size in pages, or the records do not sum to the mount's"
ok "mmap_read_bytes exact on every file system, file, order and map type above, per mount and per file"
