#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Nothing a user names is opened with root's rights (issue 37). A user's
# process in a monitored job (iorun) tries to open symbolic links named
# libmpi.so.40 (what ioacctd's MPI-IO probes look at) to things only root
# may open: a FIFO with a writer waiting on it, a device node of its own
# (the device of /dev/zero) and /dev/zero itself, a directory, and a sysfs
# file (a kernel interface, root's, not writable by others). The user gets
# EACCES or reads nothing of it; ioacctd looks at each (its refusal logged)
# and opens none: the writer still waits, inotify sees no open of the FIFO,
# the node or the directory, and every open(2) of ioacctd's (strace) naming
# one of the links is a path handle (O_PATH) and no handle is reopened (but
# those of the programs the job executes, from /proc/PID/exe or sent by the
# job's client, opened with its rights, beside a probe_exe request: issue 39).
# 37-mpiio.sh checks that real OpenMPI and MPICH libraries are still attached.
. "$(dirname "$0")/lib.sh"
require_root_bpf
command -v runuser > /dev/null || skip "runuser is needed to run the job's process as a user"
command -v useradd > /dev/null || skip "useradd is needed to create an unprivileged user"
command -v strace > /dev/null || skip "strace is needed to see ioacctd's opens (Debian: strace)"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is needed to run the user's process"
EXTRA_CONF="log_level = debug"
setup
WRITER=
STRACE=
WATCH=
cleanup() {
	local rc=$?
	for p in $WRITER $STRACE $WATCH; do kill "$p" 2>/dev/null; done
	(exit $rc)
	teardown
}
trap cleanup EXIT
U=ioacct-test
id "$U" > /dev/null 2>&1 || useradd -M -s /bin/sh "$U" || skip "cannot create user $U"
chmod 755 "$T"

# What only root may open, in a directory only root may enter.
R=$T/root
mkdir -m 700 "$R"
mkfifo -m 600 "$R/fifo"
mknod -m 600 "$R/zero" c 1 5
mkdir -m 700 "$R/dir"
SYSF=/sys/kernel/mm/transparent_hugepage/enabled
[ -f "$SYSF" ] || SYSF=/sys/kernel/profiling
[ -f "$SYSF" ] || skip "no sysfs file to link to"
# The user's links, each named as an MPI library.
L=$T/links
for k in fifo zero devzero dir sysfs; do mkdir -p "$L/$k"; done
ln -s "$R/fifo" "$L/fifo/libmpi.so.40"
ln -s "$R/zero" "$L/zero/libmpi.so.40"
ln -s /dev/zero "$L/devzero/libmpi.so.40"
ln -s "$R/dir" "$L/dir/libmpi.so.40"
ln -s "$SYSF" "$L/sysfs/libmpi.so.40"
chown -R "$U" "$L"

# A writer waits on the FIFO: it is released only if someone opens it to read.
( exec 3> "$R/fifo"; echo released > "$T/released" ) &
WRITER=$!
# inotify on what is root's: an open of any of them is seen (O_PATH opens are not events);
# the marker's own open, after them in the queue, says when every earlier event was read.
touch "$T/marker"
/usr/bin/python3 - "$T/opens" "$R/fifo" "$R/zero" "$R/dir" "$T/marker" <<'PY' &
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
IN_OPEN = 0x20
fd = libc.inotify_init()
names = {}
for p in sys.argv[2:]:
    wd = libc.inotify_add_watch(fd, p.encode(), IN_OPEN)
    assert wd >= 0, p
    names[wd] = p
open(sys.argv[1] + ".ready", "w").close()
with open(sys.argv[1], "a", buffering=1) as out:
    while True:
        buf = os.read(fd, 4096)
        i = 0
        while i < len(buf):
            wd, mask, cookie, ln = struct.unpack_from("iIII", buf, i)
            out.write("%s opened\n" % names.get(wd, wd))
            i += 16 + ln
PY
WATCH=$!
for _ in $(seq 1 200); do [ -e "$T/opens.ready" ] && break; sleep 0.05; done
[ -e "$T/opens.ready" ] || fail "the inotify watcher did not start"

start_daemon
# The libraries it parses ahead at start are root's (their handles reopened for the ELF
# worker): parsed before strace looks, so that an open it sees is one of the links'.
ahead() { grep -c "^ioacctd: debug: MPI-IO: .*$1" "$T/ioacctd.log"; }
for _ in $(seq 1 1200); do [ "$(ahead ": parsed ahead")" -ge "$(ahead " to be parsed ahead")" ] && break; sleep 0.05; done
[ "$(ahead ": parsed ahead")" -ge "$(ahead " to be parsed ahead")" ] ||
	fail "the libraries to be parsed ahead were not in 60 s: $(grep "parsed ahead" "$T/ioacctd.log")"
strace -f -e trace=open,openat,openat2,recvmsg -o "$T/strace.out" -p "$DAEMON_PID" 2> "$T/strace.err" &
STRACE=$!
for _ in $(seq 1 400); do
	grep -q "Process $DAEMON_PID attached" "$T/strace.err" 2>/dev/null && break
	sleep 0.05
done
grep -q "Process $DAEMON_PID attached" "$T/strace.err" ||
	fail "strace did not attach: $(cat "$T/strace.err")"

# The user's process opens each link, and lives until ioacctd has looked at every one:
# ioacctd reads /proc/PID/root of the task that opened it.
refused() { grep -c "MPI-IO: .*/links/[a-z]*/libmpi.so.40 not attached: " "$T/ioacctd.log"; }
"$IORUN" --job-id 6701 -o /dev/null -- runuser -u "$U" -- /usr/bin/python3 -c '
import errno, os, sys, time
for p in sys.argv[2:]:
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
        os.close(fd)
        print("%s: opened" % p, file=sys.stderr)
    except OSError as e:
        print("%s: %s" % (p, errno.errorcode[e.errno]), file=sys.stderr)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.05)
' "$T/go" "$L"/*/libmpi.so.40 2> "$T/user.err" &
JOB=$!
for _ in $(seq 1 1200); do [ "$(refused)" -ge 5 ] && break; sleep 0.05; done
touch "$T/go"
wait "$JOB" || fail "the job failed: $(cat "$T/user.err")"
[ "$(refused)" -ge 5 ] ||
	fail "ioacctd looked at $(refused) of the 5 links: $(grep MPI-IO "$T/ioacctd.log")"
kill "$STRACE"; wait "$STRACE" 2>/dev/null; STRACE=
grep "MPI-IO: .*libmpi.so.40 not attached" "$T/ioacctd.log" | sed 's/^/  /'
cat "$T/user.err" | sed 's/^/  user: /'

# Nothing of root's was opened (every event before the marker's read), the writer still waits.
: < "$T/marker"
for _ in $(seq 1 400); do grep -q "^$T/marker opened" "$T/opens" && break; sleep 0.05; done
grep -q "^$T/marker opened" "$T/opens" || fail "the inotify watcher never saw the marker"
! grep -v "^$T/marker opened" "$T/opens" || fail "opened: $(grep -v marker "$T/opens")"
[ ! -e "$T/released" ] || fail "the FIFO's writer was released: someone opened the FIFO"
kill -0 "$WRITER" 2>/dev/null || fail "the FIFO's writer is gone"
ok "the FIFO's writer still waits; no open of the FIFO, the device node or the directory"
python3 - "$T/strace.out" "$L" "$R" "$SYSF" <<'PY' || fail "ioacctd's opens (strace): $(grep -e libmpi -e /proc/self/fd "$T/strace.out")"
import re, sys
out, links, root, sysf = sys.argv[1:]
lines = open(out, errors="replace").read().splitlines()
named = [l for l in lines if "libmpi.so.40" in l]
assert len(named) >= 5, "ioacctd opened %d of the links: %s" % (len(named), named)
for l in named:
    assert "O_PATH" in l, "not a path handle: " + l
    assert "openat2(" not in l or "RESOLVE_IN_ROOT" in l, "not resolved in the task's root: " + l
# The programs the job executes are looked into (HDF5 linked into them): their handles,
# from /proc/PID/exe, or the descriptors a client sent (probe_exe: iorun's, opened with
# its own rights), are reopened for the ELF worker; no other handle is.
exe, bad, progs = {}, [], 0
for l in lines:
    m = re.search(r'"/proc/self/fd/(\d+)"', l)
    if m and exe.get(m.group(1)):
        progs += 1
    elif m or root in l or sysf in l or '"/dev/zero"' in l:
        bad.append(l)
    for fds in re.findall(r"SCM_RIGHTS, cmsg_data=\[([\d, ]+)\]", l):
        exe.update((fd.strip(), True) for fd in fds.split(","))
    r = re.search(r"\) = (\d+)$", l) if "recvmsg(" not in l else None
    if r:
        exe[r.group(1)] = bool(re.search(r'"/proc/\d+/exe", .*O_PATH', l))
assert not bad, "opened: %s" % bad
print("  %d opens of the links by ioacctd, all O_PATH; %d programs' files looked into" % (len(named), progs))
PY
ok "ioacctd's opens of the links are path handles (O_PATH), none reopened (only the programs' own files)"
# (The host's libraries parsed ahead are attached at the job's registration: not those.)
grep -q "MPI-IO: attached to .*/links/" "$T/ioacctd.log" && fail "uprobes were attached to a link's target"
ok "nothing attached to the links' targets"
