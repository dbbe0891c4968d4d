#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What faces the network runs without privileges (issue 37): one real ioacctd
# with /metrics (metrics_listen), a private PostgreSQL (cluster_db), an OTLP
# collector (otlp_url) and MPI-IO (mpi_libraries) has a worker process for
# each: the /metrics server, the cluster store's connections (the exporter's
# and the cluster queries'), the OTLP sender and the MPI libraries' ELF
# parser.
#  1. Each runs as the account ioacct (the daemon's own, issue 37's core),
#     its groups its own alone, with no capability in any set, the bounding
#     set included, NoNewPrivs 1, Seccomp 2, and no descriptor of the store,
#     the BPF objects or pins.
#  2. Each killed with SIGKILL: the daemon goes on, says how it ended, starts
#     it again (as unprivileged), and its work is done: /metrics served, a job
#     finished meanwhile exported exactly, a job's spans sent, an OpenMPI job's
#     MPI-IO counters exact (where OpenMPI is installed).
#  3. A system call outside a worker's filter (IOACCT_CRASH_AT=worker-syscall:
#     acct(2) once each starts) kills that worker alone, by SIGSYS, said so;
#     each comes back and works.
#  3b. The PostgreSQL and OTLP workers, which may open files (libpq's and
#     libcurl's settings), cannot open the store their uid owns: Landlock
#     (IOACCT_CRASH_AT=worker-open-store makes each try once it serves).
#  4. SIGTERM of the daemon ends every worker.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../scripts/pg.sh"
. "$(dirname "$0")/pgcompare.sh"
. "$(dirname "$0")/otlp.sh"
IOSEQ=$abs_top_builddir/tests/integration/ioseq
require_root_bpf
require_pg
command -v curl > /dev/null && command -v openssl > /dev/null ||
	skip "curl and openssl are needed to read /metrics with a login"
grep -q '^#define HAVE_MHD 1' "$abs_top_builddir/ioacct-config.h" ||
	skip "ioacctd was built without libmicrohttpd (Debian: libmicrohttpd-dev)"
[ -x "$IOSEQ" ] || fail "$IOSEQ not built"

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
MPORT=$(free_port)
pg_test_setup "metrics_listen = 127.0.0.1:$MPORT
mpi_detach_after = 1s"
# With logins: root's password file, opened by the daemon, read by each worker started.
printf 'scraper:%s\n' "$(openssl passwd -6 's3cret')" > "$T/metrics.passwd"
chmod 600 "$T/metrics.passwd"
echo "metrics_auth_file = $T/metrics.passwd" >> "$CONF"
trap 'rc=$?; stop_collector; stop_daemon; pg_stop "$PGD"; rm -rf "$PGD"; (exit $rc); teardown' EXIT
start_collector ok "$T/coll"
echo "otlp_url = http://127.0.0.1:$PORT" >> "$CONF"
UID_IOACCT=$(id -u ioacct)
GID_IOACCT=$(id -g ioacct)
M=http://127.0.0.1:$MPORT/metrics

# workers NAME: the pids of the daemon's workers of that kind, one a line.
workers() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(awk '{ print $4 }' "$p/stat" 2> /dev/null)" = "$DAEMON_PID" ] || continue
		tr '\0' ' ' < "$p/cmdline" 2> /dev/null | grep -q "^ioacctd --worker $1 " &&
			echo "${p#/proc/}"
	done
}

# wait_workers NAME N [NOT...]: until N workers of that kind run, none of pids NOT; sets W.
wait_workers() {
	local name=$1 n=$2 p
	shift 2
	for _ in $(seq 1 1200); do
		W=$(workers "$name")
		if [ "$(echo "$W" | grep -c .)" = "$n" ]; then
			for p in "$@"; do echo "$W" | grep -qx "$p" && continue 2; done
			return 0
		fi
		sleep 0.05
	done
	fail "not $n worker(s) $name (besides $*): $(workers "$name" | paste -sd' ')"
}

# unprivileged PID NAME: what /proc says of the worker, and what it holds.
unprivileged() {
	local s=/proc/$1/status f
	grep -qx "Uid:	$UID_IOACCT	$UID_IOACCT	$UID_IOACCT	$UID_IOACCT" "$s" ||
		fail "$2 (pid $1) is not uid $UID_IOACCT: $(grep ^Uid "$s")"
	grep -qx "Gid:	$GID_IOACCT	$GID_IOACCT	$GID_IOACCT	$GID_IOACCT" "$s" ||
		fail "$2 (pid $1) is not gid $GID_IOACCT: $(grep ^Gid "$s")"
	# No group but the account's own: none when a root core made it, else the core's one.
	grep -qE "^Groups:\s*($GID_IOACCT\s*)?$" "$s" || fail "$2 (pid $1) has groups: $(grep ^Groups "$s")"
	# The bounding set too: emptied by a root core in the child, else the core's, empty.
	for c in CapInh CapPrm CapEff CapBnd CapAmb; do
		grep -qx "$c:	0000000000000000" "$s" || fail "$2 (pid $1): $(grep "^$c" "$s")"
	done
	grep -qx "NoNewPrivs:	1" "$s" || fail "$2 (pid $1): $(grep ^NoNewPrivs "$s")"
	grep -qx "Seccomp:	2" "$s" || fail "$2 (pid $1): $(grep ^Seccomp: "$s")"
	for f in /proc/"$1"/fd/*; do
		case $(readlink "$f") in
		"$T"/ioacct.db* | anon_inode:bpf* | "$PIN"*)
			fail "$2 (pid $1) holds $(readlink "$f")" ;;
		esac
	done
}

# metrics_up: /metrics answers with the daemon's page, to the scraper's login only.
metrics_up() {
	for _ in $(seq 1 600); do
		curl -sf -u scraper:s3cret "$M" 2> /dev/null | grep -qx 'ioacct_up 1' && break
		sleep 0.05
	done
	curl -sf -u scraper:s3cret "$M" | grep -qx 'ioacct_up 1' || fail "/metrics does not answer"
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$M")" = 401 ] || fail "/metrics without a login"
}

# export_job ID: a job (PostgreSQL's workers just killed or not) reaches PostgreSQL exactly.
export_job() {
	run_job "$1" 65536 5
	wait_exported "$DB" "job $1"
	[ "$(pg_write_bytes "$1")" = 327680 ] ||
		fail "job $1: PostgreSQL has $(pg_write_bytes "$1") bytes, not 327680"
	[ "$(pg_copies "$1")" = 1 ] || fail "job $1: $(pg_copies "$1") copies in PostgreSQL"
}

# spans_job ID: a job's spans reach the collector, none dropped.
spans_job() {
	local before
	before=$(wc -l 2> /dev/null < "$T/coll/posts.log" || echo 0)
	"$IORUN" --spans --job-id "$1" -o /dev/null -- "$IOSEQ" "$D/s$1" "$D/missing" 2> "$T/spans.err" ||
		fail "iorun --spans: $(cat "$T/spans.err")"
	for _ in $(seq 1 600); do
		grep -qE "job iorun/$1: spans: [0-9]+ spans sent, 0 dropped" "$T/ioacctd.log" && break
		sleep 0.05
	done
	grep -qE "job iorun/$1: spans: 9 spans sent, 0 dropped" "$T/ioacctd.log" ||
		fail "job $1: $(grep "job iorun/$1: spans" "$T/ioacctd.log")"
	[ "$(wc -l < "$T/coll/posts.log")" -gt "$before" ] || fail "job $1: the collector got nothing"
}

# MPI: an OpenMPI job of mpiio.c, as 37-mpiio.sh runs it, where installed.
OMPICC=$(command -v mpicc.openmpi || command -v mpicc || true)
OMPIRUN=$(command -v mpirun.openmpi || command -v mpirun || true)
if [ -n "$OMPICC" ] && [ -n "$OMPIRUN" ] && "$OMPIRUN" --version 2>&1 | grep -q open-mpi.org; then
	export OMPI_MCA_orte_tmpdir_base=$T/ompi
	mkdir -p "$OMPI_MCA_orte_tmpdir_base"
	mount -t tmpfs -o size=64m ioacct-ompi "$OMPI_MCA_orte_tmpdir_base" ||
		fail "cannot mount a tmpfs for OpenMPI's session directory"
	"$OMPICC" -Wall -o "$T/mpiio" "$(dirname "$0")/mpiio.c" || fail "$OMPICC failed"
else
	OMPIRUN=
	echo "  (no OpenMPI here: the ELF worker's work is not checked with a job)"
fi
# mpi_job ID: 4 ranks; the library attached once more (at the job's registration: parsed
# ahead by the ELF worker), every rank's shared file exact.
mpi_job() {
	local from
	[ -n "$OMPIRUN" ] || return 0
	# The libraries of the jobs before detached first: this one's registration attaches them again.
	wait_libraries_detached
	from=$(($(wc -l < "$T/ioacctd.log") + 1))
	rm -rf "$D/mpi" && mkdir -p "$D/mpi"
	"$IORUN" --job-id "$1" -o /dev/null -- "$OMPIRUN" --allow-run-as-root --oversubscribe -np 4 \
		"$T/mpiio" "$D/mpi" > "$T/mpi.out" 2>&1 || { cat "$T/mpi.out"; fail "the MPI job failed"; }
	[ "$(tail -n +"$from" "$T/ioacctd.log" | grep -c "MPI-IO: attached to .*libmpi.so.*(OpenMPI;")" = 1 ] ||
		fail "job $1: libmpi not attached once more: $(grep MPI-IO "$T/ioacctd.log")"
	[ "$(sqlite3 "$DB" "SELECT count(*), sum(bytes_written), sum(bytes_read) FROM mpiio_files f
		JOIN jobs j ON j.key = f.job_key WHERE j.job_id = $1 AND f.path = '$D/mpi/shared'")" = \
		"4|8700|8700" ] || fail "job $1: the MPI-IO counters of the shared file are not exact"
	# Its uprobes go with its step: the next job attaches again.
	for _ in $(seq 1 1200); do
		tail -n +"$from" "$T/ioacctd.log" | grep -q "MPI-IO: detached from the library .*libmpi.so" &&
			return 0
		sleep 0.1
	done
	fail "job $1: the library not detached after the job"
}

# ---- 1. each worker unprivileged ---------------------------------------------------
start_daemon
metrics_up
wait_workers metrics 1; MW=$W
wait_workers elf 1; EW=$W
export_job 1
# The exporter's connection and the cluster queries': two of PostgreSQL's.
wait_workers pg 2; PW=$W
spans_job 2
wait_workers otlp 1; OW=$W
for p in $MW; do unprivileged "$p" metrics; done
for p in $PW; do unprivileged "$p" "the cluster store's"; done
for p in $OW; do unprivileged "$p" otlp; done
for p in $EW; do unprivileged "$p" elf; done
mpi_job 3
ok "metrics, cluster store (2), OTLP and ELF workers: uid ioacct, no capability, NoNewPrivs, Seccomp 2"

# ---- 2. each killed: the daemon goes on, the worker comes back, its work done -------
kill -9 $MW
wait_workers metrics 1 $MW
metrics_up
unprivileged "$W" metrics
kill -9 $PW
export_job 4
wait_workers pg 2 $PW
for p in $W; do unprivileged "$p" "the cluster store's"; done
# Spans sent while it is down are dropped and counted, as when the collector is down.
kill -9 $OW
wait_workers otlp 1 $OW
unprivileged "$W" otlp
spans_job 5
kill -9 $EW
wait_workers elf 1 $EW
unprivileged "$W" elf
mpi_job 6
kill -0 "$DAEMON_PID" || fail "ioacctd ended"
for n in metrics pg otlp elf; do
	grep -q "worker $n (pid [0-9]*) killed by signal 9 (Killed) after [0-9]* ms; starting it again" \
		"$T/ioacctd.log" || fail "no line about the $n worker's kill"
done
ok "each worker killed: said, started again unprivileged; /metrics, export, spans, MPI-IO exact"

# ---- 3. a system call outside the filter kills that worker alone --------------------
stop_daemon
IOACCT_CRASH_AT=worker-syscall start_daemon
# sigsys NAME: how many of that kind were killed for a call outside their filter.
sigsys() {
	grep -c "worker $1 (pid [0-9]*) killed by SIGSYS: a system call outside its seccomp filter" \
		"$T/ioacctd.log"
}
for n in metrics:1 pg:2 otlp:1 elf:1; do
	for _ in $(seq 1 1200); do [ "$(sigsys "${n%:*}")" = "${n#*:}" ] && break; sleep 0.05; done
	[ "$(sigsys "${n%:*}")" = "${n#*:}" ] || fail "${n%:*}: $(sigsys "${n%:*}") SIGSYS lines, not ${n#*:}"
	# Back, from their second start: the fault is the first start's alone.
	for _ in $(seq 1 1200); do
		[ "$(workers "${n%:*}" | wc -l)" = "${n#*:}" ] && break
		sleep 0.05
	done
done
kill -0 "$DAEMON_PID" || fail "ioacctd ended"
metrics_up
export_job 7
spans_job 8
mpi_job 9
ok "a system call outside a worker's filter kills it alone (SIGSYS, said); each comes back and works"

# ---- 3b. a worker that may open files cannot open the store (Landlock) ---------------
# The account owns the store: only Landlock keeps the PostgreSQL and OTLP
# workers, which read libpq's and libcurl's files, from reading it too.
LANDLOCK=$(python3 -c 'import ctypes; print(ctypes.CDLL(None).syscall(444, None, 0, 1))')
stop_daemon
IOACCT_CRASH_AT=worker-open-store start_daemon
# opened NAME: how the workers of that kind fared with the store, a line each.
opened() {
	grep "IOACCT_CRASH_AT=worker-open-store: worker $1: the store .* opened for reading: " \
		"$T/ioacctd.log" | sed 's/.*opened for reading: //'
}
export_job 10
spans_job 11
for n in pg otlp; do
	for _ in $(seq 1 1200); do [ -n "$(opened $n)" ] && break; sleep 0.05; done
	[ -n "$(opened $n)" ] || fail "$n: no line of its attempt on the store"
	if [ "$LANDLOCK" -ge 1 ]; then
		[ "$(opened $n | sort -u)" = "Permission denied (fault injection)" ] ||
			fail "$n worker: the store opened for reading: $(opened $n | sort -u | head -1)"
	fi
done
grep -q "Landlock is not" "$T/ioacctd.log" && [ "$LANDLOCK" -ge 1 ] &&
	fail "the daemon says there is no Landlock, the kernel has ABI $LANDLOCK"
if [ "$LANDLOCK" -ge 1 ]; then
	ok "Landlock ABI $LANDLOCK: the PostgreSQL and OTLP workers cannot read the store their uid owns; export and spans exact"
else
	ok "no Landlock in this kernel ($LANDLOCK): the daemon says so; export and spans exact"
fi

# ---- 4. SIGTERM ends them all --------------------------------------------------------
ALL=$(for n in metrics pg otlp elf; do workers "$n"; done)
[ -n "$ALL" ] || fail "no worker before the stop"
stop_daemon
for p in $ALL; do
	[ ! -e "/proc/$p" ] || [ "$(awk '{ print $3 }' "/proc/$p/stat")" = Z ] ||
		fail "worker pid $p outlived the daemon"
done
ok "SIGTERM of the daemon ends every worker"
