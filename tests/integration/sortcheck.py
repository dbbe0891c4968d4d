#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""sortcheck.py PAGE.html: the HTML report's top files sort in a real browser.

Opens PAGE in headless Chromium, driven through its DevTools pipe (the page
itself has no script), clicks each column name of the top files (the labels
of the radio buttons fs-0 .. fs-10) and prints, per click, "K ID FIRST": the
one table then shown and its first row's path. More than one table shown, or
none, prints "K -" and fails (exit 1)."""
import json
import os
import subprocess
import sys
import tempfile
import time

SHOWN = """(() => [...document.querySelectorAll('table.ftab')]
  .filter(t => getComputedStyle(t).display != 'none')
  .map(t => t.id + ' ' + t.tBodies[0].rows[0].cells[0].textContent))()"""


class Chrome:
    def __init__(self):
        r1, w1 = os.pipe()
        r2, w2 = os.pipe()

        def fds():
            os.dup2(r1, 3)
            os.dup2(w2, 4)
        self.p = subprocess.Popen(
            [os.environ.get("CHROMIUM", "chromium"), "--headless", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--remote-debugging-pipe",
             "--user-data-dir=" + tempfile.mkdtemp(prefix="sortcheck.")],
            pass_fds=(3, 4), preexec_fn=fds, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(r1)
        os.close(w2)
        self.w, self.r, self.buf, self.n = w1, r2, b"", 0

    def call(self, method, params=None, session=None):
        self.n += 1
        msg = {"id": self.n, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        while True:
            while b"\0" not in self.buf:
                chunk = os.read(self.r, 65536)
                if not chunk:
                    raise SystemExit("sortcheck: chromium closed its pipe")
                self.buf += chunk
            m, self.buf = self.buf.split(b"\0", 1)
            m = json.loads(m)
            if m.get("id") == self.n:
                if "error" in m:
                    raise SystemExit("sortcheck: %s: %s" % (method, m["error"]))
                return m["result"]

    def js(self, session, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session)
        if "exceptionDetails" in r:
            raise SystemExit("sortcheck: %s" % r["exceptionDetails"])
        return r["result"].get("value")


def main():
    c = Chrome()
    try:
        t = c.call("Target.createTarget", {"url": "file://" + os.path.abspath(sys.argv[1])})
        s = c.call("Target.attachToTarget", {"targetId": t["targetId"], "flatten": True})
        s = s["sessionId"]
        for _ in range(400):
            if c.js(s, "document.readyState == 'complete' && !!document.getElementById('files')"):
                break
            time.sleep(0.05)
        else:
            raise SystemExit("sortcheck: the page has no #files")
        rc = 0
        for k in range(11):
            c.js(s, "document.querySelector('label[for=\"fs-%d\"]').click()" % k)
            shown = c.js(s, SHOWN)
            print("%d %s" % (k, shown[0] if len(shown) == 1 else "-"))
            rc |= len(shown) != 1
        return rc
    finally:
        c.p.kill()
        c.p.wait()


if __name__ == "__main__":
    sys.exit(main())
