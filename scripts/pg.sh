# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# A private PostgreSQL for scripts/minicluster and the tests: initdb and pg_ctl
# as the postgres user, listening on a Unix socket in its own directory only,
# peer authentication, a database `ioacct` owned by root, which ioacctd's
# account (ioacct) connects as through a map. Sourced (bash).
#
#   pg_find_bin                  sets PGBIN (newest /usr/lib/postgresql/*/bin); 1 when none
#   pg_init DIR                  initdb in DIR/data, start, create role root and db ioacct;
#                                sets PGURL (libpq connection string)
#   pg_start DIR                 start an initialised DIR again
# The server logs to DIR/postgresql.log.
#   pg_stop DIR                  stop it (fast shutdown); 0 when it was not running
#   pg_url DIR                   prints the connection string of DIR
# DIR must be reachable by the postgres user (it is chowned to it); every
# function returns nonzero with a message on stderr when something fails.

pg_find_bin() {
	PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	[ -n "$PGBIN" ] && [ -x "$PGBIN/initdb" ] && [ -x "$PGBIN/pg_ctl" ] || { PGBIN=''; return 1; }
}

pg_url() { echo "postgresql:///ioacct?host=$1&user=root"; }

pg_start() {
	local d=$1 log=$1/postgresql.log
	runuser -u postgres -- "$PGBIN/pg_ctl" -D "$d/data" -l "$log" -w -t 60 \
		-o "-k $d -c listen_addresses='' -c fsync=off" start > /dev/null || {
		echo "PostgreSQL in $d did not start: $(tail -3 "$log" 2>/dev/null)" >&2
		return 1
	}
}

pg_init() {
	local d=$1
	mkdir -p "$d"
	chown postgres: "$d"
	# --no-sync, and fsync off in pg_start: a test's server dies with its test
	# (a crash of the server, not of the machine, loses nothing the kernel
	# holds), and initdb's fsyncs alone took 10 of its 11 s here.
	runuser -u postgres -- "$PGBIN/initdb" --no-sync -D "$d/data" -A peer --auth-local=peer -U postgres \
		> "$d/initdb.log" 2>&1 || { echo "initdb failed: $(tail -3 "$d/initdb.log")" >&2; return 1; }
	# ioacctd runs as its account and connects as the role root, which the
	# peer authentication's map grants it, as a site's pg_ident.conf may
	# (ioacctd(8), PRIVILEGES); root and postgres stay themselves.
	runuser -u postgres -- sh -c "printf '%s\n' 'ioacct root root' 'ioacct postgres postgres' \
		'ioacct ioacct root' >> '$d/data/pg_ident.conf' &&
		sed -i 's/^\(local[[:space:]]*all[[:space:]]*all[[:space:]]*peer\)\$/\1 map=ioacct/' \
		'$d/data/pg_hba.conf'" || { echo "cannot map ioacct to the role root in $d" >&2; return 1; }
	pg_start "$d" || return 1
	# The tests and ioacctd (mapped) connect as root (peer authentication on the Unix socket).
	runuser -u postgres -- "$PGBIN/createuser" -h "$d" root &&
		runuser -u postgres -- "$PGBIN/createdb" -h "$d" -O root ioacct || {
		echo "cannot create role root and database ioacct in $d" >&2
		return 1
	}
	PGURL=$(pg_url "$d")
}

pg_stop() {
	local d=$1
	[ -f "$d/data/postmaster.pid" ] || return 0
	runuser -u postgres -- "$PGBIN/pg_ctl" -D "$d/data" -m fast -w -t 60 stop > /dev/null 2>&1 && return 0
	# pg_ctl could not: the postmaster by its pid file.
	kill -9 "$(head -n 1 "$d/data/postmaster.pid")" 2>/dev/null
	return 0
}
