# SPDX-License-Identifier: GPL-2.0-or-later
"""A tiny OTLP/HTTP collector for 46-otlp.sh: saves each POST body as it came.

    otlp_collector.py MODE DIR

ok:   answers 200 to each POST, its body saved as DIR/post-N.bin and its
      path and content type appended to DIR/posts.log
hang: accepts connections and never answers (a collector that is stuck)
The port it listens on (127.0.0.1) is written to DIR/port once it listens.
"""
import http.server
import os
import socket
import sys
import threading

mode, d = sys.argv[1], sys.argv[2]
lock = threading.Lock()
count = [0]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        with lock:
            n = count[0]
            count[0] += 1
            with open(os.path.join(d, "post-%d.bin" % n), "wb") as f:
                f.write(body)
            with open(os.path.join(d, "posts.log"), "a") as f:
                f.write("%s %s %d\n" % (self.path, self.headers["Content-Type"], len(body)))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def ready(port):
    with open(os.path.join(d, "port.tmp"), "w") as f:
        f.write("%d\n" % port)
    os.rename(os.path.join(d, "port.tmp"), os.path.join(d, "port"))


if mode == "ok":
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
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
    sys.exit("otlp_collector.py: mode ok or hang")
