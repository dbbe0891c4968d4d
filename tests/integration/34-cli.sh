#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every program's command line through the one frame (lib/core/cli.h, issue
# 25): ioacctd, iorun, ioacct, ioacct top, ioreport and iotrace each take -V
# and --version, -h and --help, -c/--config and --socket, and agree on what
# they say: the version line, the common options in the help (same words),
# an unknown option, a missing value, a missing configuration file and a bad
# --socket are one line on stderr with the program's status for bad usage
# (2; iorun 125, as its command's statuses are its own). Needs no daemon.
. "$(dirname "$0")/lib.sh"
IOACCT=$abs_top_builddir/tools/ioacct
IOREPORT=$abs_top_builddir/tools/ioreport
IOTRACE=$abs_top_builddir/tools/iotrace
for p in "$IOACCTD" "$IORUN" "$IOACCT" "$IOREPORT" "$IOTRACE"; do
	[ -x "$p" ] || fail "$p not built"
done
T=$(mktemp -d /var/tmp/ioacct-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
unset IOACCT_CONF

# NAME|COMMAND|USAGE-STATUS|ARGUMENTS that make an otherwise valid command line
PROGS="ioacctd|$IOACCTD|2|
iorun|$IORUN|125|-- touch $T/ran
ioacct|$IOACCT|2|
ioacct top|$IOACCT top|2|
ioreport|$IOREPORT|2|1
iotrace|$IOTRACE|2|-- touch $T/ran"

# run OUT ERR CMD...: the status in $rc.
run() {
	local out=$1 err=$2
	shift 2
	rc=0
	"$@" > "$out" 2> "$err" < /dev/null || rc=$?
}

# one_line NAME WHAT STATUS WANT-STATUS WANT-LINE: stderr is that line alone, stdout empty.
one_line() {
	[ "$3" = "$4" ] || { cat "$T/err"; fail "$1 $2: exit $3, wanted $4"; }
	[ ! -s "$T/out" ] || { cat "$T/out"; fail "$1 $2: wrote on stdout"; }
	[ "$(cat "$T/err")" = "$5" ] || { cat "$T/err"; fail "$1 $2: wanted the one line '$5'"; }
}

version=
first_common=
while IFS='|' read -r name cmd status args; do
	# shellcheck disable=SC2086 # $cmd and $args are words
	set -- $cmd
	# ---- -V, --version ----
	for opt in -V --version; do
		run "$T/out" "$T/err" "$@" $opt
		[ $rc = 0 ] && [ ! -s "$T/err" ] || { cat "$T/err"; fail "$name $opt: exit $rc"; }
		line=$(cat "$T/out")
		case $line in
		"$name "[0-9]*) ;;
		*) fail "$name $opt: '$line' is not '$name VERSION'" ;;
		esac
		[ -z "$version" ] && version=${line##* }
		[ "${line##* }" = "$version" ] || fail "$name $opt: version ${line##* }, others $version"
	done
	# ---- -h, --help ----
	run "$T/h" "$T/err" "$@" -h
	[ $rc = 0 ] && [ ! -s "$T/err" ] || { cat "$T/err"; fail "$name -h: exit $rc"; }
	run "$T/help" "$T/err" "$@" --help
	[ $rc = 0 ] && [ ! -s "$T/err" ] || { cat "$T/err"; fail "$name --help: exit $rc"; }
	cmp -s "$T/h" "$T/help" || fail "$name: -h and --help differ"
	head -1 "$T/help" | grep -q "^Usage: $name " || { head -1 "$T/help"; fail "$name --help: no usage line"; }
	# The frame's options, in the same words everywhere (columns aside).
	common=$(grep -E '^  (-c, --config|    --socket|-h, --help|-V, --version) ' "$T/help" -A1 |
		 tr -s ' ' | tr '\n' '|')
	for o in "-c, --config FILE" "--socket PATH" "-h, --help" "-V, --version"; do
		grep -q -- "$o" "$T/help" || { cat "$T/help"; fail "$name --help: no $o"; }
	done
	[ -n "$common" ] || { cat "$T/help"; fail "$name --help: no common options"; }
	[ -z "$first_common" ] && first_common=$common
	[ "$common" = "$first_common" ] || fail "$name --help: the common options in other words: $common"
	# ---- bad usage: one line, the program's status ----
	run "$T/out" "$T/err" "$@" --no-such-option
	one_line "$name" --no-such-option $rc "$status" \
		"$name: unknown option --no-such-option (see $name --help)"
	run "$T/out" "$T/err" "$@" --socket
	one_line "$name" "--socket (no value)" $rc "$status" \
		"$name: option --socket needs a value (see $name --help)"
	run "$T/out" "$T/err" "$@" -c
	one_line "$name" "-c (no value)" $rc "$status" "$name: option -c needs a value (see $name --help)"
	# ---- the configuration: a missing file, a bad --socket (through the config's checks) ----
	# shellcheck disable=SC2086
	run "$T/out" "$T/err" "$@" -c "$T/missing.conf" $args
	one_line "$name" "-c missing" $rc "$status" "$name: $T/missing.conf: No such file or directory"
	# shellcheck disable=SC2086
	run "$T/out" "$T/err" "$@" --config="$T/missing.conf" $args
	one_line "$name" "--config= missing" $rc "$status" "$name: $T/missing.conf: No such file or directory"
	# shellcheck disable=SC2086
	IOACCT_CONF=$T/missing.conf run "$T/out" "$T/err" "$@" $args
	one_line "$name" "IOACCT_CONF missing" $rc "$status" "$name: $T/missing.conf: No such file or directory"
	echo "socket = $T/s.sock" > "$T/ok.conf"
	# shellcheck disable=SC2086
	run "$T/out" "$T/err" "$@" -c "$T/ok.conf" --socket rel.sock $args
	one_line "$name" "--socket rel.sock" $rc "$status" \
		"$name: --socket: socket: \"rel.sock\" is not an absolute path"
	[ ! -e "$T/ran" ] || fail "$name: the command ran after bad usage"
	ok "$name: -V, --version, -h, --help, bad options and configuration (exit $status)"
done <<< "$PROGS"
ok "every program: version $version, the same common options, the same messages"
