#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The SPANK plugin told only where ioacctd's socket is (issue 12): a
# plugstack.conf line with socket= and no config=, and no IOACCT_CONF in
# slurmd's environment, so that nothing gives the plugin the daemon's store
# (which is in the test's directory, not at the default path). The epilog
# reads the job back through the socket: the reports (text, JSON and a
# Darshan log) are written, owned by the user, with the exact bytes and the
# user's name.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/cluster.sh"
slurm_test_setup
start_daemon
unset IOACCT_CONF
start_cluster "required $PLUGIN socket=$T/ioacctd.sock"

W=$T/work; mkdir -p "$W"; chown "$U" "$W"
WMNT=$(mount_of "$W")
printf '#!/bin/bash\n%s write %s/f.dat 1048576 2 , read %s/f.dat 65536 16\n' "$IOWORK" "$W" "$W" > "$W/job.sh"
chmod 755 "$W/job.sh"

J=$(submit_as "$U" --io-monitor=format=text,json,darshan --chdir="$W" -o "$W/out-%j.txt" "$W/job.sh")
state=$(wait_job "$J")
[ "$state" = COMPLETED ] || { cat "$W/out-$J.txt"; fail "job $J ended $state"; }
R=$W/ioacct-$J.txt
[ -f "$R" ] || { ls -la "$W"; grep -i ioacct "$C/log/slurmd.log" | tail; fail "socket= only: no report $R"; }
[ -f "$W/ioacct-$J.json" ] || fail "socket= only: no JSON report"
[ "$(stat -c %U "$R")" = "$U" ] || fail "report owned by $(stat -c %U "$R"), not $U"
head -12 "$R"
grep -q "^# user: $U\$" "$R" || fail "report: the user: line is not '$U'"
[ "$(report_bytes_written "$R" "$WMNT")" = 2097152 ] || { cat "$R"; fail "report: $WMNT is not 2097152 bytes written"; }
# Written only: bash and its libraries are read from the same mount.
[ "$(json_get "$W/ioacct-$J.json" '[m["write_bytes"] for m in j["mounts"] if m["mount"] == "'"$WMNT"'"]')" = "[2097152]" ] ||
	fail "JSON report: not 2097152 bytes written on $WMNT"
[ "$(json_get "$W/ioacct-$J.json" 'j["user"]')" = "$U" ] || fail "JSON report: user is not $U"
ok "plugstack.conf with only socket=: reports by the user, exact bytes, user: $U"

# The Darshan log (the plugin links libdarshan): the user's, and the job itself
# when ioreport compares the job with it (read through the same socket).
D=$W/ioacct-$J.darshan
IOREPORT=$abs_top_builddir/tools/ioreport
[ -f "$D" ] || { grep -i ioacct "$C/log/slurmd.log" | tail; fail "no Darshan log $D"; }
[ "$(stat -c %U "$D")" = "$U" ] || fail "Darshan log owned by $(stat -c %U "$D"), not $U"
"$IOREPORT" --socket "$T/ioacctd.sock" --compare "$D" "$J" > "$T/compare.txt" ||
	fail "ioreport --compare with the plugin's Darshan log failed"
awk -v m="$WMNT" '/^# mount: / { in_m = ($3 == m) } in_m && $1 == "POSIX_BYTES_WRITTEN" { print $2, $3 }' \
	"$T/compare.txt" | grep -qx '2097152 2097152' ||
	{ cat "$T/compare.txt"; fail "Darshan log: POSIX_BYTES_WRITTEN on $WMNT is not 2097152 on both sides"; }
ok "format=darshan: the plugin writes the user's Darshan log, 2097152 bytes written on $WMNT"
