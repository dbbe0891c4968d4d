#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A hostile local client of ioacctd, for 14-hostile.sh; run it as a non-root user.

  hostile.py SOCKET idle N SECONDS       hold N idle connections, reconnecting the dropped
  hostile.py SOCKET slowloris N SECONDS  N connections sending a request one byte a second
  hostile.py SOCKET noread N SECONDS     N connections sending QUERY (with peaks), never
                                         reading the reply; sent again once dropped
  hostile.py SOCKET burst N              open N connections at once, then close them
  hostile.py SOCKET flood N              N malformed requests in a row, each reply read
  hostile.py SOCKET query-size           one QUERY (with peaks), read: prints the reply's bytes

The modes that last SECONDS stop earlier on SIGTERM. Each prints one line "MODE: key=value ..." saying what it achieved, so that the test can
check the attack really happened. Messages are built by hand (lib/core/proto.h: 16-byte
header, u32 magic "IOAC", u16 version, u16 type, u32 len, u32 seq; TLV attributes).
"""
import errno
import fcntl
import resource
import select
import signal
import socket
import struct
import sys
import termios
import time

MAGIC = 0x43414F49
MSG_STATUS, MSG_QUERY = 4, 6
ATTR_PEAKS = 56


def message(mtype, attrs=b"", seq=1):
    return struct.pack("<IHHII", MAGIC, 1, mtype, len(attrs), seq) + attrs


def attr_u32(atype, value):
    return struct.pack("<HHI", atype, 4, value)


QUERY = message(MSG_QUERY, attr_u32(ATTR_PEAKS, 1))
STATUS = message(MSG_STATUS)


def connect(path, blocking=True):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setblocking(blocking)
    try:
        s.connect(path)
    except BlockingIOError:
        pass  # the backlog is full; the socket is still queued or will fail
    return s


def closed_by_peer(s):
    """True when the daemon closed s, even with its reply still unread."""
    p = select.poll()
    p.register(s, select.POLLIN | select.POLLRDHUP)
    return any(ev & (select.POLLHUP | select.POLLERR | select.POLLRDHUP) for _, ev in p.poll(0))


STOP = False
HELD_S = 2.5


def on_term(signum, frame):
    global STOP
    STOP = True


def hold(path, n, seconds, first, step):
    """Keeps n connections open for `seconds`, each started with first(sock) and
    redone when the daemon drops it; step(socks) between rounds. Returns (most
    connections held at once, how many were dropped and redone). Held means still
    open HELD_S after connecting: a connection the daemon refuses is closed as
    soon as it is accepted, but looks open while it waits in the backlog, which
    on a loaded machine (the 10,000-connection burst runs at the same time) can
    take more than a second. HELD_S stays below the daemon's 5 s request deadline,
    after which even an accepted idle connection is dropped."""
    socks, since, redone, most = [None] * n, [0.0] * n, 0, 0
    end = time.monotonic() + seconds
    while time.monotonic() < end and not STOP:
        for i, s in enumerate(socks):
            if s is not None and not closed_by_peer(s):
                continue
            if s is not None:
                s.close()
                redone += 1
            try:
                socks[i] = connect(path)
                since[i] = time.monotonic()
                first(socks[i])
            except OSError:
                socks[i] = None
        step([s for s in socks if s is not None])
        now = time.monotonic()
        most = max(most, sum(1 for i, s in enumerate(socks)
                             if s is not None and now - since[i] >= HELD_S and not closed_by_peer(s)))
    for s in socks:
        if s is not None:
            s.close()
    return most, redone


def main():
    path, mode = sys.argv[1], sys.argv[2]
    signal.signal(signal.SIGTERM, on_term)
    # Thousands of sockets at once: as many open files as this user may have.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if mode == "idle":
        n, secs = int(sys.argv[3]), float(sys.argv[4])
        most, rec = hold(path, n, secs, lambda s: None, lambda socks: time.sleep(0.2))
        print(f"idle: connections={n} held_at_once={most} dropped_and_redone={rec}")
    elif mode == "slowloris":
        n, secs = int(sys.argv[3]), float(sys.argv[4])
        sent = {}

        def first(s):
            sent[s.fileno()] = 0

        def step(socks):
            for s in socks:
                k = sent.get(s.fileno(), 0)
                if k < len(STATUS):
                    try:
                        s.send(STATUS[k:k + 1])
                        sent[s.fileno()] = k + 1
                    except OSError:
                        pass
            time.sleep(1)

        most, rec = hold(path, n, secs, first, step)
        print(f"slowloris: connections={n} held_at_once={most} dropped_and_redone={rec}")
    elif mode == "noread":
        n, secs = int(sys.argv[3]), float(sys.argv[4])
        sends = [0]

        def first(s):
            # A small receive buffer: the daemon's reply stays stuck in its own.
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.sendall(QUERY)
            sends[0] += 1

        stuck = [0]

        def step(socks):
            # A reply is stuck when less of it has arrived than its header announces:
            # the rest waits in the daemon, which must not wait with it.
            now = 0
            for s in socks:
                try:
                    avail = struct.unpack("i", fcntl.ioctl(s, termios.FIONREAD, b"\0" * 4))[0]
                    if avail >= 16:
                        hdr = s.recv(16, socket.MSG_PEEK | socket.MSG_DONTWAIT)
                        if avail < 16 + struct.unpack("<IHHII", hdr)[3]:
                            now += 1
                except OSError:
                    pass
            stuck[0] = max(stuck[0], now)
            time.sleep(0.2)

        most, rec = hold(path, n, secs, first, step)
        print(f"noread: connections={n} queries_sent={sends[0]} stuck_at_once={stuck[0]} "
              f"dropped_and_redone={rec}")
    elif mode == "burst":
        n = int(sys.argv[3])
        socks, refused = [], 0
        for _ in range(n):
            try:
                socks.append(connect(path, blocking=False))
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.ECONNREFUSED):
                    raise
                refused += 1
        time.sleep(1)
        for s in socks:
            s.close()
        print(f"burst: connections={n} queued={len(socks)} refused={refused}")
    elif mode == "flood":
        n, replies = int(sys.argv[3]), 0
        for i in range(n):
            s = connect(path)
            s.settimeout(10)
            try:
                s.sendall(b"GARBAGE!" + struct.pack("<II", i, i))
                data = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                if len(data) >= 16 and struct.unpack("<I", data[:4])[0] == MAGIC:
                    replies += 1
            except OSError:
                pass
            s.close()
        print(f"flood: requests={n} error_replies={replies}")
    elif mode == "query-size":
        s = connect(path)
        s.sendall(QUERY)
        data = b""
        while True:
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            data += chunk
        print(len(data))
    else:
        sys.exit(f"hostile.py: unknown mode {mode}")


if __name__ == "__main__":
    main()
