#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Runs a command inside the sandbox a systemd unit file asks for.

  unitexec.py UNIT -- COMMAND [ARG...]

This machine's PID 1 is not systemd, so ioacctd's unit cannot be started
by systemd here. What systemd would do to the process before it execs
ExecStart, for the options of [Service] that need no mount namespace, is
done here the way systemd 252 does it, then COMMAND is executed:

  CapabilityBoundingSet=    the bounding set (prctl PR_CAPBSET_DROP)
  NoNewPrivileges=yes       prctl PR_SET_NO_NEW_PRIVS
  UMask=                    umask
  SystemCallFilter=         allow lists (@groups expanded by `systemd-analyze
                            syscall-filter`, @default always added) and deny
                            lists (~...); others killed (SIGSYS), or failed
                            with SystemCallErrorNumber='s errno
  SystemCallArchitectures=native   other ABIs killed
  RestrictAddressFamilies=  socket() of another family: EAFNOSUPPORT
  RestrictNamespaces=yes    unshare, setns, clone with namespace flags: EPERM;
                            clone3: ENOSYS (glibc falls back to clone)
  LockPersonality=yes       personality() to anything else: EPERM
  MemoryDenyWriteExecute=yes  writable and executable mappings: EPERM
  RestrictRealtime=yes      realtime scheduling policies: EPERM
  RestrictSUIDSGID=yes      set-user/group-ID bits on files: EPERM
  ProtectClock=yes          @clock: EPERM
  ProtectHostname=yes       a UTS namespace of its own; sethostname: EPERM

Each rule set is its own seccomp filter, as systemd loads them (the kernel
applies the strictest answer). Options that only describe the unit, or
that this script checks are harmless here (KeyringMode=, DevicePolicy=,
the [Unit] and [Install] sections) are accepted; any other option of
[Service] that changes the process is refused (exit 2), so that nothing
passes under a sandbox that was not applied. Needs root and Debian's
python3-seccomp (run with /usr/bin/python3).
"""
import ctypes
import errno
import os
import re
import subprocess
import sys

import seccomp

# [Service] options that set how the service is run, not its sandbox.
PLAIN = {"Type", "ExecStart", "ExecReload", "Restart", "RestartSec", "KillSignal", "KillMode",
         "TimeoutStopSec", "TimeoutStartSec", "Environment", "LimitNOFILE",
         # No effect here: the session keyring is unused, and ioacctd opens no
         # device but /dev/null, which DevicePolicy=closed keeps.
         "KeyringMode", "DevicePolicy"}

CLONE_NS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | \
    0x40000000 | 0x00000080  # NEWNS NEWCGROUP NEWUTS NEWIPC NEWUSER NEWPID NEWNET NEWTIME
CLONE_NEWUTS = 0x04000000
PROT_WRITE, PROT_EXEC = 2, 4
SCHED_FIFO, SCHED_RR, SCHED_DEADLINE = 1, 2, 6
S_ISUID, S_ISGID = 0o4000, 0o2000
O_CREAT = 0o100
AT_EMPTY_PATH = 0x1000
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP = 38, 24
CAPS = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
        "CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
        "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW",
        "CAP_IPC_LOCK", "CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT",
        "CAP_SYS_PTRACE", "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
        "CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE",
        "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE",
        "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ",
        "CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE"]
FAMILIES = {"AF_UNIX": 1, "AF_LOCAL": 1, "AF_INET": 2, "AF_INET6": 10, "AF_NETLINK": 16,
            "AF_PACKET": 17}

libc = ctypes.CDLL(None, use_errno=True)


def die(msg, code=2):
    print(f"unitexec: {msg}", file=sys.stderr)
    sys.exit(code)


def service_options(path):
    """[Service]'s options in order, as (key, value); a repeated key is another entry."""
    opts, section = [], None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            m = re.match(r"^\[(.*)\]$", line)
            if m:
                section = m.group(1)
                continue
            key, _, value = line.partition("=")
            if section == "Service":
                opts.append((key.strip(), value.strip()))
    return opts


def yes(v):
    return v.lower() in ("yes", "true", "on", "1")


GROUPS = {}


def group(name):
    """The system calls of a systemd group, its nested groups expanded."""
    if name not in GROUPS:
        out = subprocess.run(["systemd-analyze", "syscall-filter", "--no-pager", name],
                             check=True, capture_output=True, text=True).stdout
        calls = set()
        for line in out.splitlines()[1:]:
            w = line.strip()
            if not w or w.startswith("#"):
                continue
            calls |= group(w) if w.startswith("@") else {w}
        GROUPS[name] = calls
    return GROUPS[name]


def names(words):
    calls = set()
    for w in words:
        calls |= group(w) if w.startswith("@") else {w}
    return calls


def add(f, action, call, *args):
    """A rule, unless this architecture has no such call (libseccomp: a negative number)."""
    if seccomp.resolve_syscall(seccomp.Arch.NATIVE, call) < 0:
        return
    f.add_rule(action, call, *args)


def eperm(e=errno.EPERM):
    return seccomp.ERRNO(e)


def syscall_filter(allow, deny, refuse):
    if allow is not None:
        f = seccomp.SyscallFilter(defaction=refuse)
        for call in sorted((allow | group("@default")) - deny):
            add(f, seccomp.ALLOW, call)
    else:
        f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
        for call in sorted(deny):
            add(f, refuse, call)
    return f


def families_filter(allowed):
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for fam in range(0, 46):
        if fam not in allowed:
            add(f, eperm(errno.EAFNOSUPPORT), "socket", seccomp.Arg(0, seccomp.EQ, fam))
    return f


def namespaces_filter():
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for bit in range(32):
        if CLONE_NS & (1 << bit):
            add(f, eperm(), "unshare", seccomp.Arg(0, seccomp.MASKED_EQ, 1 << bit, 1 << bit))
            add(f, eperm(), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, 1 << bit, 1 << bit))
    add(f, eperm(), "setns")
    add(f, eperm(errno.ENOSYS), "clone3")
    return f


def misc_filter(opts):
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    if yes(opts.get("LockPersonality", "no")):
        pers = libc.personality(0xffffffff)
        add(f, eperm(), "personality", seccomp.Arg(0, seccomp.NE, pers))
    if yes(opts.get("MemoryDenyWriteExecute", "no")):
        wx = PROT_WRITE | PROT_EXEC
        add(f, eperm(), "mmap", seccomp.Arg(2, seccomp.MASKED_EQ, wx, wx))
        add(f, eperm(), "mprotect", seccomp.Arg(2, seccomp.MASKED_EQ, PROT_EXEC, PROT_EXEC))
        add(f, eperm(), "pkey_mprotect",
            seccomp.Arg(2, seccomp.MASKED_EQ, PROT_EXEC, PROT_EXEC))
    if yes(opts.get("RestrictRealtime", "no")):
        for pol in (SCHED_FIFO, SCHED_RR, SCHED_DEADLINE):
            add(f, eperm(), "sched_setscheduler", seccomp.Arg(1, seccomp.EQ, pol))
        add(f, eperm(), "sched_setattr")
    if yes(opts.get("RestrictSUIDSGID", "no")):
        for bit in (S_ISUID, S_ISGID):
            add(f, eperm(), "chmod", seccomp.Arg(1, seccomp.MASKED_EQ, bit, bit))
            add(f, eperm(), "fchmod", seccomp.Arg(1, seccomp.MASKED_EQ, bit, bit))
            add(f, eperm(), "fchmodat", seccomp.Arg(2, seccomp.MASKED_EQ, bit, bit))
            add(f, eperm(), "open", seccomp.Arg(1, seccomp.MASKED_EQ, O_CREAT, O_CREAT),
                seccomp.Arg(2, seccomp.MASKED_EQ, bit, bit))
            add(f, eperm(), "openat", seccomp.Arg(2, seccomp.MASKED_EQ, O_CREAT, O_CREAT),
                seccomp.Arg(3, seccomp.MASKED_EQ, bit, bit))
            add(f, eperm(), "creat", seccomp.Arg(1, seccomp.MASKED_EQ, bit, bit))
            add(f, eperm(), "mknod", seccomp.Arg(1, seccomp.MASKED_EQ, bit, bit))
            add(f, eperm(), "mknodat", seccomp.Arg(2, seccomp.MASKED_EQ, bit, bit))
    if yes(opts.get("ProtectClock", "no")):
        for call in group("@clock"):
            add(f, eperm(), call)
    if yes(opts.get("ProtectHostname", "no")):
        add(f, eperm(), "sethostname")
        add(f, eperm(), "setdomainname")
    return f


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        die("usage: unitexec.py UNIT -- COMMAND [ARG...]")
    unit, cmd = sys.argv[1], sys.argv[3:]
    opts, allow, deny, bounding = {}, None, set(), None
    families, refuse = None, seccomp.KILL_PROCESS
    for key, value in service_options(unit):
        if key in PLAIN:
            continue
        words = value.split()
        if key == "SystemCallFilter":
            if words and words[0].startswith("~"):
                deny |= names([words[0][1:]] + words[1:])
            else:
                allow = (allow or set()) | names(words)
        elif key == "CapabilityBoundingSet":
            if words and words[0].startswith("~"):
                die("CapabilityBoundingSet=~ is not applied here")
            bounding = (bounding or set()) | set(words)
        elif key == "SystemCallErrorNumber":
            refuse = eperm(getattr(errno, value))
        elif key == "RestrictAddressFamilies":
            families = {FAMILIES[w] for w in words}
        elif key in ("NoNewPrivileges", "LockPersonality", "MemoryDenyWriteExecute",
                     "RestrictRealtime", "RestrictSUIDSGID", "ProtectClock", "ProtectHostname",
                     "RestrictNamespaces", "SystemCallArchitectures", "UMask"):
            opts[key] = value
        else:
            die(f"{unit}: {key}= is not applied by this script; it cannot run the unit's sandbox")
    if opts.get("SystemCallArchitectures", "native") != "native":
        die("SystemCallArchitectures= other than native is not applied here")
    if "UMask" in opts:
        os.umask(int(opts["UMask"], 8))
    if yes(opts.get("ProtectHostname", "no")):
        if libc.unshare(CLONE_NEWUTS):
            die(f"cannot make a UTS namespace: {os.strerror(ctypes.get_errno())}")
    if bounding is not None:
        for i, name in enumerate(CAPS):
            if name not in bounding and libc.prctl(PR_CAPBSET_DROP, i, 0, 0, 0) != 0 and \
                    ctypes.get_errno() != errno.EINVAL:
                die(f"cannot drop {name} from the bounding set: {os.strerror(ctypes.get_errno())}")
    filters = [misc_filter(opts)]
    if families is not None:
        filters.append(families_filter(families))
    if yes(opts.get("RestrictNamespaces", "no")):
        filters.append(namespaces_filter())
    # The allow list last: the calls the others need to load are still allowed.
    filters.append(syscall_filter(allow, deny, refuse))
    if yes(opts.get("NoNewPrivileges", "no")) and libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0):
        die("cannot set no_new_privs")
    for f in filters:
        # libseccomp would set no_new_privs itself; systemd does only when asked.
        f.set_attr(seccomp.Attr.CTL_NNP, 0)
        f.load()
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    main()
