# SPDX-License-Identifier: GPL-2.0-or-later
# The lines of iorun's --json summary that check.awk reads, for the kernel
# matrix (issue 35): under TCG check.awk's parse, a character at a time, was
# most of a run's check (10 to 17 s a run, 20 runs a VM), and the per-file
# records' fields it never reads were two thirds of the summary. Line by
# line (the summary is ioacct's own, one field a line), this leaves out the
# top-level sections check.awk never reads and, in the per-file records,
# every field but path, mount, mmap_bytes, cache_miss_bytes and those KEEP
# names (the expectations' "file:" keys, "|"-separated). What it keeps is
# unchanged, so check.awk's verdict is the same (tests/vm/slim-check.sh).
#
#   awk -v keep="opens|seeks" -f slim.awk SUMMARY.json > SLIM.json
BEGIN {
	n = split("path|mount|mmap_bytes|cache_miss_bytes|" keep, a, "|")
	for (i = 1; i <= n; i++)
		if (a[i] != "")
			want[a[i]] = 1
	n = split("steps series advice totals mpiio hdf5", a, " ")
	for (i = 1; i <= n; i++)
		drop[a[i]] = 1
}
skip {
	if ($0 ~ /^  []}],?$/)
		skip = 0
	next
}
/^  "[a-z_0-9]+": [[{]$/ {
	k = $0
	sub(/^  "/, "", k)
	sub(/".*/, "", k)
	if (k in drop) {
		skip = 1
		next
	}
	if (k == "files")
		infiles = 1
	print
	next
}
infiles && /^  [\]],?$/ {
	infiles = 0
}
infiles && /^      "/ {
	k = $0
	sub(/^      "/, "", k)
	sub(/".*/, "", k)
	if (!(k in want))
		next
}
{
	print
}
