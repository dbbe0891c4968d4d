# SPDX-License-Identifier: GPL-2.0-or-later
# ioacctd's account (ioacct.conf's user, default ioacct): made as the packages
# make it when this machine lacks it. Sourced by tests/integration/lib.sh,
# scripts/minicluster and scripts/demo, which start ioacctd as root as the
# packages do and give it its state directories.

IOACCT_USER=ioacct

# daemon_user: 0 once the account exists. Once even when tests run side by
# side: useradd refuses a name taken meanwhile, and fails while another
# useradd holds /etc/passwd, so it is tried again.
daemon_user() {
	local _
	for _ in $(seq 1 100); do
		id -u "$IOACCT_USER" > /dev/null 2>&1 && return 0
		useradd --system --user-group --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin --comment "ioacct daemon" "$IOACCT_USER" 2> /dev/null &&
			return 0
		sleep 0.1
	done
	id -u "$IOACCT_USER" > /dev/null 2>&1
}
