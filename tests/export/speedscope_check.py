#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""speedscope_check.py APP_DIR PROFILE NAME... [--ratio A B LOW HIGH] [--expect-fail]

Loads PROFILE in the speedscope app itself (APP_DIR: the npm package's
dist/release) in headless Chromium, served from a loopback HTTP server and
passed the way speedscope takes a profile by URL (#profileURL=...), in its
"Sandwich" view, whose table of functions (name, total, self) is DOM text.
The page is read over Chromium's DevTools protocol (a pipe, no network)
until the table has been drawn and stays the same.
Checks that every NAME is in the table and, with --ratio, that the total
share of A over B lies in [LOW, HIGH]. Exit 0 when all holds; with
--expect-fail, exit 0 only when a check fails (the check can tell).
"""
import functools, html, http.server, json, os, re, select, shutil, subprocess, sys, tempfile, threading, time
import urllib.parse


def parse_args(argv):
    ratio, expect_fail, rest = None, False, []
    i = 0
    while i < len(argv):
        if argv[i] == "--ratio":
            ratio = (argv[i + 1], argv[i + 2], float(argv[i + 3]), float(argv[i + 4]))
            i += 5
        elif argv[i] == "--expect-fail":
            expect_fail = True
            i += 1
        else:
            rest.append(argv[i])
            i += 1
    return rest[0], rest[1], rest[2:], ratio, expect_fail


def serve(root):
    handler = functools.partial(QuietHandler, directory=root)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class DevTools:
    """Chromium's DevTools protocol over --remote-debugging-pipe (fd 3: our
    commands, fd 4: its answers, each message ending in a NUL byte)."""

    def __init__(self, tmp):
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if not chromium:
            sys.exit("FAIL: chromium missing: apt-get install -y chromium")
        cmd_r, self.cmd_w = os.pipe()
        self.ans_r, ans_w = os.pipe()
        # the child's fds 3 and 4, whatever numbers the pipes got here
        setup = "exec 3<&%d 4>&%d; exec \"$@\"" % (cmd_r, ans_w)
        args = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--user-data-dir=" + os.path.join(tmp, "chromium"), "--window-size=1400,12000",
                "--remote-debugging-pipe", "about:blank"]
        self.log = open(os.path.join(tmp, "chromium.log"), "w")
        self.proc = subprocess.Popen(["sh", "-c", setup, "sh"] + args, pass_fds=(cmd_r, ans_w),
                                     stdout=self.log, stderr=self.log)
        os.close(cmd_r)
        os.close(ans_w)
        self.buf, self.next_id, self.session = b"", 0, None

    def call(self, method, params=None, timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session and not method.startswith("Target."):
            msg["sessionId"] = self.session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self.buf:
                raw, self.buf = self.buf.split(b"\0", 1)
                answer = json.loads(raw)
                if answer.get("id") == self.next_id:
                    if "error" in answer:
                        raise RuntimeError("%s: %s" % (method, answer["error"]))
                    return answer["result"]
            if time.monotonic() > deadline:
                raise RuntimeError("chromium did not answer %s in %d s" % (method, timeout))
            if not select.select([self.ans_r], [], [], 1)[0]:
                if self.proc.poll() is not None:
                    raise RuntimeError("chromium exited with %d" % self.proc.returncode)
                continue
            chunk = os.read(self.ans_r, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self.buf += chunk

    def attach_page(self):
        for _ in range(100):
            pages = [t for t in self.call("Target.getTargets")["targetInfos"] if t["type"] == "page"]
            if pages:
                self.session = self.call("Target.attachToTarget", {"targetId": pages[0]["targetId"], "flatten": True})["sessionId"]
                return
            time.sleep(0.2)
        raise RuntimeError("chromium opened no page")

    def html(self):
        r = self.call("Runtime.evaluate", {"expression": "document.documentElement.outerHTML", "returnByValue": True})
        return r["result"].get("value", "")

    def close(self):
        self.proc.kill()
        self.proc.wait()
        os.close(self.cmd_w)
        os.close(self.ans_r)
        self.log.close()


def rendered_table(url, tmp, timeout=120):
    """The page's HTML once the sandwich table is drawn and stopped changing
    (speedscope renders the rows that fit the window, after it measured it)."""
    dt = DevTools(tmp)
    try:
        dt.attach_page()
        # a window tall enough for every row of the table (speedscope draws
        # only the rows that fit), set before the app measures it
        dt.call("Emulation.setDeviceMetricsOverride", {"width": 1400, "height": 12000, "deviceScaleFactor": 1,
                                                       "mobile": False})
        dt.call("Page.navigate", {"url": url})
        deadline = time.monotonic() + timeout
        last, stable, dom = None, 0, ""
        while time.monotonic() < deadline:
            dom = dt.html()
            rows = sandwich_rows(dom)[0]
            key = tuple(sorted(rows)) if rows else None
            stable = stable + 1 if key and key == last else 0
            last = key
            if stable >= 4:
                return dom
            time.sleep(0.5)
        return dom
    finally:
        dt.close()


def sandwich_rows(dom):
    """The sandwich table as {name: total percent}, and the page title."""
    body = re.sub(r"<(style|script)\b.*?</\1>", "", dom, flags=re.S)
    title = re.search(r"<title>(.*?)</title>", dom, flags=re.S)
    cells = [html.unescape(c).strip() for c in re.split(r"<[^>]+>", body)]
    cells = [c for c in cells if c]
    if "Symbol Name" not in cells:
        return None, title and html.unescape(title.group(1)), cells
    cells = cells[cells.index("Symbol Name") + 1:]
    rows = {}
    for i in range(0, len(cells) - 2, 3):
        total, self_, name = cells[i:i + 3]
        m = re.search(r"\([<>]?([\d.]+)%\)", total)  # "1.2ms (0.25%)", "0.00ns (<0.01%)", "476ms (>99%)"
        if not m or not re.search(r"\([<>]?([\d.]+)%\)", self_):
            break
        rows[name] = float(m.group(1))
    return rows, title and html.unescape(title.group(1)), cells


def check(app, profile, names, ratio):
    tmp = tempfile.mkdtemp(prefix="speedscope-check.")
    try:
        root = os.path.join(tmp, "www")
        os.mkdir(root)
        os.symlink(os.path.abspath(app), os.path.join(root, "app"))
        shutil.copy(profile, os.path.join(root, "profile"))
        server = serve(root)
        base = "http://127.0.0.1:%d" % server.server_address[1]
        url = "%s/app/index.html#profileURL=%s&view=sandwich" % (base, urllib.parse.quote(base + "/profile", safe=""))
        try:
            dom = rendered_table(url, tmp)
        finally:
            server.shutdown()
        rows, title, cells = sandwich_rows(dom)
        if rows is None:
            return "speedscope shows no function table (title %r): %s" % (title, " | ".join(cells[:40]))
        print("speedscope: title %r, %d functions in the table" % (title, len(rows)))
        missing = [n for n in names if n not in rows]
        if missing:
            return "speedscope does not show %s; it shows: %s" % (missing, sorted(rows)[:60])
        for n in names:
            print("  %-40s total %.2f%%" % (n, rows[n]))
        if ratio:
            a, b, low, high = ratio
            r = rows[a] / max(rows[b], 0.01)
            if not low <= r <= high:
                return "%s/%s = %.2f, expected %.1f..%.1f" % (a, b, r, low, high)
            print("  %s/%s = %.2f" % (a, b, r))
        return None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    app, profile, names, ratio, expect_fail = parse_args(sys.argv[1:])
    if not os.path.exists(os.path.join(app, "index.html")):
        sys.exit("FAIL: no speedscope app at %s" % app)
    err = check(app, profile, names, ratio)
    if expect_fail:
        if err is None:
            sys.exit("FAIL: the check passed on a profile it should reject")
        print("ok: rejected as it should be: " + err)
        return
    if err:
        sys.exit("FAIL: " + err)


if __name__ == "__main__":
    main()
