# SPDX-License-Identifier: GPL-2.0-or-later
"""A "PostgreSQL" that completes the startup and then never answers (66-pgsilent.sh).

    pgsilent.py DIR

Listens on 127.0.0.1 (its port written to DIR/port once it listens). Each
connection gets the protocol 3.0 startup done as a server does it (SSL and
GSS encryption declined, AuthenticationOk, the parameters libpq wants,
BackendKeyData, ReadyForQuery) and then nothing, ever: every message it is
sent is read and noted in DIR/messages ("CONN TYPE UNIX-TIME", one line
each, CONN counting connections from 1), never answered. The startup is
noted as "CONN startup", a cancel request as "CONN cancel", the end of a
connection as "CONN closed".
"""
import os
import socket
import struct
import sys
import threading
import time

d = sys.argv[1]
lock = threading.Lock()
conns = [0]


def note(n, what):
    with lock:
        with open(os.path.join(d, "messages"), "a") as f:
            f.write("%d %s %.3f\n" % (n, what, time.time()))


def recv_all(c, n):
    b = b""
    while len(b) < n:
        chunk = c.recv(n - len(b))
        if not chunk:
            raise EOFError
        b += chunk
    return b


def msg(kind, payload):
    return kind + struct.pack("!i", len(payload) + 4) + payload


def serve(c, n):
    try:
        while True:
            length, code = struct.unpack("!ii", recv_all(c, 8))
            body = recv_all(c, length - 8)
            if code in (80877103, 80877104):  # SSLRequest, GSSENCRequest: declined
                c.sendall(b"N")
                continue
            if code == 80877102:  # CancelRequest: noted, and like the rest, unanswered
                note(n, "cancel")
                return
            break
        note(n, "startup")
        out = msg(b"R", struct.pack("!i", 0))
        for k, v in ((b"server_version", b"15.0"), (b"server_encoding", b"UTF8"),
                     (b"client_encoding", b"UTF8"), (b"DateStyle", b"ISO, MDY"),
                     (b"integer_datetimes", b"on"), (b"standard_conforming_strings", b"on"),
                     (b"TimeZone", b"UTC")):
            out += msg(b"S", k + b"\0" + v + b"\0")
        out += msg(b"K", struct.pack("!ii", 4242 + n, 1234))
        out += msg(b"Z", b"I")
        c.sendall(out)
        while True:
            kind = recv_all(c, 1)
            (length,) = struct.unpack("!i", recv_all(c, 4))
            recv_all(c, length - 4)
            note(n, kind.decode("latin-1"))
    except (EOFError, OSError):
        note(n, "closed")
    finally:
        c.close()


s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
with open(os.path.join(d, "port.tmp"), "w") as f:
    f.write("%d\n" % s.getsockname()[1])
os.rename(os.path.join(d, "port.tmp"), os.path.join(d, "port"))
while True:
    c, _ = s.accept()
    conns[0] += 1
    threading.Thread(target=serve, args=(c, conns[0]), daemon=True).start()
