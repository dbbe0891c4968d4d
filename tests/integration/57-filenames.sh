#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every file named (issue 38), whatever call made its record first: a job
# of 4 OpenMPI ranks (mpirun stats its MCA components before dlopen, as
# libltdl does; hwloc's plugins, ssh, nsswitch.conf), a Python job that
# imports C extension modules (Python's importer stats a module before it
# opens it), a job whose standard output is a file it inherited (glibc's
# fstat of it is a stat by path, "" with AT_EMPTY_PATH), and files only
# stat'ed, by absolute and relative paths and through a directory fd. No
# record but the mounts' "other files" is "(path unknown)": not in the
# store, not in ioreport's text, JSON or --files. Each name is the file's:
# a file opened by the job has the path it was opened by, a file only
# stat'ed the path it was stat'ed by, made absolute.
. "$(dirname "$0")/lib.sh"
require_root_bpf
command -v sqlite3 > /dev/null || skip "sqlite3 is needed to read the store"
IOREPORT=$abs_top_builddir/tools/ioreport
setup
start_daemon
W=$(realpath "$T")/w
mkdir -p "$W/sub"

# unnamed NAME: the job's records (not "other files") that have no path, and
# the text, JSON and --files reports of it from the store: none may say the
# path is unknown. A note per file opened, stat'ed or mapped as it went.
unnamed() {
	local job
	job=$(json_get "$T/$1.json" 'j["job_id"]')
	N=$(sqlite3 "$T/ioacct.db" "SELECT count(*) FROM files f JOIN jobs j ON j.key = f.job_key
		WHERE j.job_id = $job")
	sqlite3 "$T/ioacct.db" "SELECT rank, dev, ino, opens, reads, writes, stats, mmap_bytes,
		cache_miss_bytes FROM files f JOIN jobs j ON j.key = f.job_key
		WHERE j.job_id = $job AND path = '' AND (dev <> 0 OR ino <> 0)" > "$T/$1.unnamed"
	"$IOREPORT" --db "$T/ioacct.db" "$job" > "$T/$1.txt" || fail "$1: ioreport failed"
	"$IOREPORT" --db "$T/ioacct.db" -f json -o "$T/$1.rep" "$job" || fail "$1: ioreport -f json"
	"$IOREPORT" --db "$T/ioacct.db" --files "$job" > "$T/$1.files" || fail "$1: ioreport --files"
	json_get "$T/$1.rep" "sum(1 for f in j['files'] if not f['other_files'] and not f['path'])" \
		>> "$T/$1.unnamed.json"
	if [ -s "$T/$1.unnamed" ] || [ "$(cat "$T/$1.unnamed.json")" != 0 ] ||
		grep -q "(path unknown)" "$T/$1.txt" ||
		awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "PATH") p = i; next }
			!/^#/ && $p == "" { bad = 1 } END { exit !bad }' "$T/$1.files"; then
		head -20 "$T/$1.unnamed"
		fail "$1: $(wc -l < "$T/$1.unnamed") of $N records have no path (the JSON: $(cat "$T/$1.unnamed.json"))"
	fi
}

# path_of NAME PATH FIELD: FIELD summed over the records named PATH of job NAME.
path_of() {
	sqlite3 "$T/ioacct.db" "SELECT coalesce(sum($3), 0) FROM files f JOIN jobs j ON j.key = f.job_key
		WHERE j.job_id = $(json_get "$T/$1.json" 'j["job_id"]') AND path = '$2'"
}

# ---- Python, C extension modules ----
PY=/usr/bin/python3
"$PY" -c 'import numpy' 2> /dev/null || skip "$PY cannot import numpy (Debian: python3-numpy)"
"$IORUN" --json -o "$T/py.json" -- "$PY" -c "
import numpy, json, pickle, decimal, sqlite3, zlib, ssl, _ctypes
a = numpy.arange(1000)
numpy.save('$W/a.npy', a)
json.dump([1, 2], open('$W/a.json', 'w'))
pickle.dump(a, open('$W/a.pkl', 'wb'))
" > "$T/py.out" 2>&1 || { cat "$T/py.out"; fail "iorun $PY failed"; }
unnamed py
[ "$(path_of py "$W/a.npy" writes)" -ge 1 ] && [ "$(path_of py "$W/a.pkl" opens)" = 1 ] ||
	fail "python: the files it wrote are not there by their paths"
SO=$("$PY" -c 'import numpy.core._multiarray_umath as m; print(m.__file__)')
[ "$(path_of py "$SO" opens)" -ge 1 ] && [ "$(path_of py "$SO" stats)" -ge 1 ] ||
	fail "python: $SO is not one record with its stat and open ($(path_of py "$SO" stats), $(path_of py "$SO" opens))"
ok "python: $N records, none without its path; $SO stat'ed then opened, one record"

# ---- OpenMPI: 4 ranks ----
OMPICC=$(command -v mpicc.openmpi || command -v mpicc) ||
	skip "mpicc not found (Debian: libopenmpi-dev openmpi-bin)"
OMPIRUN=$(command -v mpirun.openmpi || command -v mpirun) || skip "mpirun not found (Debian: openmpi-bin)"
"$OMPIRUN" --version 2>&1 | grep -q "open-mpi.org" || skip "$OMPIRUN is not OpenMPI's"
"$OMPICC" -Wall -o "$T/mpifile" "$(dirname "$0")/mpifile.c" || fail "$OMPICC mpifile.c failed"
export OMPI_MCA_orte_tmpdir_base=$T/ompi
mkdir -p "$OMPI_MCA_orte_tmpdir_base" "$W/mpi"
"$IORUN" --json -o "$T/mpi.json" -- "$OMPIRUN" --allow-run-as-root --oversubscribe -np 4 \
	"$T/mpifile" "$W/mpi" indep 4096 4 > "$T/mpi.out" 2>&1 ||
	{ cat "$T/mpi.out"; fail "iorun mpirun failed"; }
unnamed mpi
[ "$(path_of mpi "$W/mpi/data" writes)" = 16 ] || fail "mpi: the data file's 16 writes are not under its name"
ok "OpenMPI, 4 ranks: $N records, none without its path"

# ---- an inherited standard output; files only stat'ed ----
echo data > "$W/sub/rel"
echo data > "$W/abs"
"$IORUN" --json -o "$T/sh.json" -- "$PY" -c "
import os, sys
print('to the inherited file', flush=True)
os.chdir('$W')
os.stat('sub/rel')
os.stat('$W/abs')
os.stat('rel', dir_fd=os.open('sub', os.O_RDONLY | os.O_DIRECTORY))
" > "$W/stdout.txt" || fail "iorun (inherited stdout) failed"
unnamed sh
[ "$(path_of sh "$W/stdout.txt" writes)" -ge 1 ] || fail "the inherited stdout's writes are not under its name"
[ "$(path_of sh "$W/sub/rel" stats)" = 2 ] && [ "$(path_of sh "$W/abs" stats)" = 1 ] &&
	[ "$(path_of sh "$W/sub/rel" opens)" = 0 ] ||
	fail "the files only stat'ed are not named by their paths made absolute"
ok "an inherited standard output and files only stat'ed (relative, absolute, by dirfd) named"
