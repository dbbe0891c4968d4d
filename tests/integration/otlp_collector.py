# SPDX-License-Identifier: GPL-2.0-or-later
"""A tiny OTLP/HTTP collector for the span tests: saves each POST body as it came.

    otlp_collector.py MODE DIR [CERT KEY]

ok:    answers 200 to each POST, its body saved as DIR/post-N.bin
flaky: answers the first POST 503 with Retry-After: 1 (its body saved as
       DIR/refused-0.bin), the others 200 as ok does
busy:  answers every POST 429 with Retry-After: 1 (bodies as refused-N.bin)
hang:  accepts connections and never answers (a collector that is stuck)
Each POST answered appends "PATH CONTENT-TYPE LENGTH STATUS CLIENT-PORT UNIX-TIME"
to DIR/posts.log (PATH as the request line had it: absolute through a proxy).
Answers keep the connection (HTTP/1.1). With CERT and KEY (PEM) it speaks
HTTPS. The port it listens on (127.0.0.1) is written to DIR/port once it
listens.
"""
import http.server
import os
import socket
import ssl
import sys
import threading
import time

mode, d = sys.argv[1], sys.argv[2]
tls = sys.argv[3:5]
lock = threading.Lock()
count = {"post": 0, "refused": 0}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        with lock:
            refuse = mode == "busy" or (mode == "flaky" and count["refused"] == 0)
            kind = "refused" if refuse else "post"
            n = count[kind]
            count[kind] += 1
            with open(os.path.join(d, "%s-%d.bin" % (kind, n)), "wb") as f:
                f.write(body)
            status = (429 if mode == "busy" else 503) if refuse else 200
            with open(os.path.join(d, "posts.log"), "a") as f:
                f.write("%s %s %d %d %d %.3f\n" % (self.path, self.headers["Content-Type"],
                                                   len(body), status, self.client_address[1],
                                                   time.time()))
        self.send_response(status)
        if refuse:
            self.send_header("Retry-After", "1")
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def ready(port):
    with open(os.path.join(d, "port.tmp"), "w") as f:
        f.write("%d\n" % port)
    os.rename(os.path.join(d, "port.tmp"), os.path.join(d, "port"))


if mode in ("ok", "flaky", "busy"):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(tls[0], tls[1])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    ready(srv.server_address[1])
    srv.serve_forever()
elif mode == "hang":
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    ready(s.getsockname()[1])
    held = []
    while True:
        c, _ = s.accept()
        held.append(c)  # read nothing, answer nothing
else:
    sys.exit("otlp_collector.py: mode ok, flaky, busy or hang")
