# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# ioacctd runs what faces the network (/metrics, the cluster store, the OTLP
# sender) and the MPI libraries' ELF parse as the account of ioacct.conf's
# `user` (default ioacct; issue 37); the packages create it. Sourced by what
# starts an ioacctd from the build tree (tests, scripts/minicluster, the
# demo, the benchmarks).
#
#   ioacct_account [NAME]   makes sure the system account NAME (ioacct) exists:
#                           created when it does not; idempotent, safe to run
#                           beside another run of it. 1 with a message when it
#                           cannot be.
ioacct_account() {
	local name=${1:-ioacct}
	id "$name" > /dev/null 2>&1 && return 0
	useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
		"$name" 2> /dev/null
	# Another test may have made it meanwhile: what counts is that it is there.
	id "$name" > /dev/null 2>&1 || {
		echo "cannot create the account $name that ioacctd's workers run as (useradd)" >&2
		return 1
	}
}
