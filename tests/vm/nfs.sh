# SPDX-License-Identifier: GPL-2.0-or-later
# NFS over loopback in a test VM (busybox sh; sourced by init.sh and
# bench-init.sh, which define say()): an NFSv4.2 server (kernel nfsd, no
# rpcbind, no mountd: the export cache is filled by hand through
# /proc/net/rpc) exporting a tmpfs, mounted over TCP to 127.0.0.1. Needs the
# modules nfsd and nfsv4 (mkinitramfs -m "nfsd nfsv4").
#
#   nfs_setup DIR SIZE   the server up and its export mounted on DIR (SIZE: the
#                        exported tmpfs's size, "600m"); 1 when it cannot be
#   nfs_ready DIR        waits (60 s at most) until a file can be made on DIR:
#                        NFSv4's grace period (10 s here) must end first, so
#                        set up early and wait late

nfs_setup() {
	grep -qw nfsd /proc/filesystems || { say "no nfsd file system (module not loaded)"; return 1; }
	ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
	mkdir -p /srv/nfs /proc/fs/nfsd "$1"
	mount -t tmpfs -o "size=$2" nfsexport /srv/nfs || return 1
	mount -t nfsd nfsd /proc/fs/nfsd || return 1
	# A short grace period: the server has no client records to recover.
	echo 10 > /proc/fs/nfsd/nfsv4leasetime
	echo 10 > /proc/fs/nfsd/nfsv4gracetime
	echo "-3 +4 +4.1 +4.2" > /proc/fs/nfsd/versions || return 1
	# What mountd would answer: 127.0.0.1 is in "localdomain", which may use
	# /srv/nfs (fsid 0, the NFSv4 root) read-write, no root squash, async,
	# no subtree check, insecure ports: flags 0x2412.
	exp=2147483647
	printf '%s\n' "nfsd 127.0.0.1 $exp localdomain" > /proc/net/rpc/auth.unix.ip/channel || return 1
	printf '%s\n' "localdomain 1 \\x00000000 $exp /srv/nfs" > /proc/net/rpc/nfsd.fh/channel || return 1
	printf '%s\n' "localdomain /srv/nfs $exp 9234 0 0 0" > /proc/net/rpc/nfsd.export/channel || return 1
	echo 4 > /proc/fs/nfsd/threads || return 1
	mount -t nfs4 -o vers=4.2,addr=127.0.0.1,clientaddr=127.0.0.1 127.0.0.1:/ "$1" || return 1
}

nfs_ready() {
	t=0
	until echo x > "$1/.probe" 2>/dev/null; do
		t=$((t + 1))
		[ $t -lt 60 ] || return 1
		sleep 1
	done
	rm -f "$1/.probe"
	say "NFS: $(grep " $1 " /proc/mounts)"
}
