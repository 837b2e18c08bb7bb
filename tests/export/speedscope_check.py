#!/usr/bin/env python3
"""speedscope_check.py APP_DIR PROFILE NAME... [--ratio A B LOW HIGH] [--expect-fail]

Loads PROFILE in the speedscope app itself (APP_DIR: the npm package's
dist/release) in headless Chromium, served from a loopback HTTP server and
passed the way speedscope takes a profile by URL (#profileURL=...), in its
"Sandwich" view, whose table of functions (name, total, self) is DOM text.
Checks that every NAME is in the table and, with --ratio, that the total
share of A over B lies in [LOW, HIGH]. Exit 0 when all holds; with
--expect-fail, exit 0 only when a check fails (the check can tell).
"""
import functools, html, http.server, os, re, shutil, subprocess, sys, tempfile, threading, urllib.parse


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


def dump_dom(url, tmp):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        sys.exit("FAIL: chromium missing: apt-get install -y chromium")
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--user-data-dir=" + os.path.join(tmp, "chromium"), "--window-size=1400,12000",
           "--virtual-time-budget=20000", "--dump-dom", url]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    if r.returncode != 0:
        sys.exit("FAIL: chromium exited %d: %s" % (r.returncode, r.stderr[-2000:]))
    return r.stdout


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
        m = re.search(r"\(([\d.<]+)%\)", total)
        if not m or not re.search(r"\(([\d.<]+)%\)", self_):
            break
        rows[name] = float(m.group(1).lstrip("<"))
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
            dom = dump_dom(url, tmp)
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
