#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""`periscope report` on synthetic captures (tests/cli/report-fixture.h):
the expected numbers below are worked out by hand from the fixture's stacks
(200 samples: app pid 100 and worker pid 200, 100 each).

usage: test-report.py GROUP PERISCOPE MAKE-REPORT-CAPTURE MAKE-SYSPROF-CAPTURE
GROUP: text | sysprof | hostile | progress | flamegraph | views | diff | timeline
"""
import collections
import json
import os
import re
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from checks import check, failures, finish  # noqa: E402
import tempfile
import zlib

GROUP, PERISCOPE, MAKE_OURS, MAKE_SYSPROF = sys.argv[1:5]

def run(*args, ok=True, env=None):
    p = subprocess.run([PERISCOPE, "report", "--no-progress", *args], capture_output=True, text=True, env=env,
                       timeout=120)
    if ok and p.returncode != 0:
        failures.append(f"periscope report {' '.join(args)} exited {p.returncode}: {p.stderr}")
        print(p.stdout, p.stderr, file=sys.stderr)
    return p


def section(out, title):
    """Rows (list of column lists) of a hottest table starting at title."""
    lines = out.splitlines()
    i = lines.index(title)
    rows = []
    for line in lines[i + 2:]:
        if not line.strip():
            break
        m = re.match(r"^\s*(\d+)\s+([\d.]+)%\s+(\d+)\s+([\d.]+)%  (.*)$", line)
        check(m is not None, f"row format: {line!r}")
        if m:
            rows.append([int(m[1]), m[2], int(m[3]), m[4], m[5]])
    return rows


def tree(out):
    """(depth, percent, total, self, label) of the call tree lines."""
    lines = out.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("Call tree"))
    rows = []
    for line in lines[start + 2:]:
        if not line.strip() or line.startswith("("):
            break
        m = re.match(r"^\s*([\d.]+)% +(\d+) +(\d+)  ( *)(\S.*)$", line)
        check(m is not None, f"tree row format: {line!r}")
        if m:
            check(len(line) - len(line.lstrip()) >= 0 and line[27:].lstrip() == m[5], f"label column: {line!r}")
            rows.append((len(m[4]) // 2, m[1], int(m[2]), int(m[3]), m[5]))
    return rows


def neighbours(out):
    lines = out.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(("Callers of", "Callees of")))
    rows = []
    for line in lines[start + 2:]:
        if not line.strip():
            break
        m = re.match(r"^\s*(\d+)\s+([\d.]+)%  (.*)$", line)
        check(m is not None, f"neighbour row: {line!r}")
        if m:
            rows.append((int(m[1]), m[2], m[3]))
    return lines[start], rows


VECTOR = "std::vector<int, std::allocator<int> >::push_back(int const&)"
OURS_FOLDED = f"""main;[unresolved: helper failed] libfoo.so 5
main;compute 20
main;compute;square (inlined);add_one (inlined) 60
main;libbar.so+0x1234 2
main;{VECTOR} 10
main;write_data;0xffffffff81999999 [kernel] 1
main;write_data;do_syscall_64 [kernel] 2
worker_loop 70
worker_loop;compute 30
"""
# Sysprof's table has one (outer) name per address and no "unresolved"
# ranges, so inline frames fold into compute and libfoo shows as module+off.
SYSPROF_FOLDED = f"""main;compute 80
main;libbar.so+0x1234 2
main;libfoo.so+0x500 5
main;{VECTOR} 10
main;write_data;0xffffffff81999999 [kernel] 1
main;write_data;do_syscall_64 [kernel] 2
worker_loop 70
worker_loop;compute 30
"""


def make(tmp, mode, *extra):
    path = os.path.join(tmp, f"{mode}.capture")
    subprocess.run([MAKE_OURS, mode, path, *extra], check=True)
    return path


def test_text(tmp):
    cap = make(tmp, "ours")
    out = run(cap).stdout
    check("Samples: 200 in 2 processes" in out, "summary sample count")
    check("embedded Periscope table" in out, "says which symbols were used")
    check("Symbol sources: 2 mappings, 1 verified as the file that was mapped\n"
          "  not verified: /usr/lib/libfoo.so (pid 100): binary changed since it was mapped\n" in out,
          "summary names the unverified mapping")
    self_rows = section(out, "Hottest functions by self time:")
    check([r[4] for r in self_rows] == ["worker_loop", "add_one (inlined)", "compute", VECTOR,
                                        "[unresolved: helper failed] libfoo.so", "do_syscall_64 [kernel]",
                                        "libbar.so+0x1234", "0xffffffff81999999 [kernel]"],
          f"self order: {[r[4] for r in self_rows]}")
    check(self_rows[0][:4] == [70, "35.00", 100, "50.00"], f"worker_loop self row {self_rows[0]}")
    check(self_rows[1][:4] == [60, "30.00", 60, "30.00"], f"add_one row {self_rows[1]}")
    check(self_rows[2][:4] == [50, "25.00", 110, "55.00"], f"compute row {self_rows[2]}")
    check(self_rows[7][:2] == [1, "0.50"], f"kernel unknown row {self_rows[7]}")
    total_rows = section(out, "Hottest functions by total time:")
    check([r[4] for r in total_rows][:7] == ["compute", "worker_loop", "main", "add_one (inlined)",
                                             "square (inlined)", VECTOR, "[unresolved: helper failed] libfoo.so"],
          f"total order: {[r[4] for r in total_rows]}")
    check(total_rows[0][:4] == [110, "55.00", 50, "25.00"], f"compute total row {total_rows[0]}")
    check(total_rows[2][:4] == [100, "50.00", 0, "0.00"], f"main total row {total_rows[2]}")
    check(any(r[4] == "write_data" and r[0] == 3 for r in total_rows), "write_data total 3")

    out = run("--mappings", cap).stdout
    check("  pid 100  0x400000-0x500000  /usr/bin/app\n"
          "    found by pinned; verified: inode+build-id match; build-id aa11\n" in out, "--mappings: app:\n" + out)
    check("  pid 100  0x7f1000000000-0x7f1000100000  /usr/lib/libfoo.so\n"
          "    found by map_files; NOT verified: binary changed since it was mapped; build-id none\n" in out,
          "--mappings: libfoo")
    out = run("--mappings", "--pid", "200", cap).stdout
    check("no mapping records for the selected processes" in out, "--mappings follows --pid")

    out = run("--limit", "2", cap).stdout
    check(len(section(out, "Hottest functions by self time:")) == 2, "--limit 2")

    out = run("--tree", "--min-percent", "0", "--no-process-root", cap).stdout
    want = [
        (0, "50.00", 100, 0, "main"),
        (1, "40.00", 80, 20, "compute"),
        (2, "30.00", 60, 0, "square (inlined)"),
        (3, "30.00", 60, 60, "add_one (inlined)"),
        (1, "5.00", 10, 10, VECTOR),
        (1, "2.50", 5, 5, "[unresolved: helper failed] libfoo.so"),
        (1, "1.50", 3, 0, "write_data"),
        (2, "1.00", 2, 2, "do_syscall_64 [kernel]"),
        (2, "0.50", 1, 1, "0xffffffff81999999 [kernel]"),
        (1, "1.00", 2, 2, "libbar.so+0x1234"),
        (0, "50.00", 100, 70, "worker_loop"),
        (1, "15.00", 30, 30, "compute"),
    ]
    got = tree(out)
    check(got == want, "tree:\n" + "\n".join(map(str, got)))
    check("Hottest functions" not in out, "--tree alone prints no hottest tables")

    out = run("--tree", "--min-percent", "2", cap).stdout
    labels = [r[4] for r in tree(out)]
    check("libbar.so+0x1234" not in labels and "write_data" not in labels and "compute" in labels,
          f"--min-percent 2 prunes small nodes: {labels}")
    check("smaller nodes hidden" in out, "says nodes were hidden")

    head, rows = neighbours(run("--callers", "compute", cap).stdout)
    check(head == "Callers of compute: 110 samples (55.00% of all)", head)
    check(rows == [(80, "72.73", "main"), (30, "27.27", "worker_loop")], f"callers: {rows}")
    head, rows = neighbours(run("--callees", "compute", cap).stdout)
    check(rows == [(60, "54.55", "square (inlined)"), (50, "45.45", "(self)")], f"callees: {rows}")
    head, rows = neighbours(run("--callers", "main", cap).stdout)
    check(rows == [(100, "100.00", "(entry point)")], f"main callers: {rows}")
    head, rows = neighbours(run("--callees", "square", cap).stdout)  # function name matches the inlined frame
    check(rows == [(60, "100.00", "add_one (inlined)")], f"square callees: {rows}")
    head, rows = neighbours(run("--callees", "write_data", cap).stdout)
    check(rows == [(2, "66.67", "do_syscall_64 [kernel]"), (1, "33.33", "0xffffffff81999999 [kernel]")],
          f"write_data callees: {rows}")
    p = run("--callers", "comp", cap, ok=False)
    check(p.returncode == 1 and "no function named 'comp'" in p.stderr and "compute" in p.stderr,
          f"unknown name says so and suggests: {p.returncode} {p.stderr}")

    out = run("--pid", "200", cap).stdout
    rows = section(out, "Hottest functions by self time:")
    check("Samples: 100 (of 200 in the capture) in 1 process" in out, "pid filter summary")
    check([r[:3] + [r[4]] for r in rows] == [[70, "70.00", 100, "worker_loop"], [30, "30.00", 30, "compute"]],
          f"--pid 200: {rows}")
    out = run("--comm", "app", cap).stdout
    rows = section(out, "Hottest functions by self time:")
    check(rows[0][:2] == [60, "60.00"] and rows[0][4] == "add_one (inlined)", f"--comm app: {rows[:1]}")
    check(all(r[4] != "worker_loop" for r in rows), "--comm app excludes worker")
    out = run("--comm", "worker", "--comm", "app", "--folded", cap).stdout
    check(out == OURS_FOLDED, "two --comm select both")
    out = run("--comm", "app", "--pid", "200", cap).stdout
    check("No samples match --pid/--comm" in out, "filters combine with AND")
    p = run("--pid", "abc", cap, ok=False)
    check(p.returncode == 2 and "not a process id" in p.stderr, "bad --pid refused")

    out = run("--folded", cap).stdout
    check(out == OURS_FOLDED, "folded:\n" + out)
    out = run("--folded", "--pid", "200", cap).stdout
    check(out == "worker_loop 70\nworker_loop;compute 30\n", "folded with filter:\n" + out)

    # --lines: one frame per source line, from the Periscope table.
    out = run("--folded", "--lines", "--pid", "200", cap).stdout
    check(out == "worker_loop at app.c:15 70\nworker_loop at app.c:15;compute at app.c:14 30\n",
          "--lines folded:\n" + out)
    out = run("--folded", "--lines", "--pid", "100", cap).stdout
    check("main at app.c:11;compute at app.c:21;square (inlined) at math.h:8;add_one (inlined) at math.h:3 60\n" in out,
          "--lines inline chain:\n" + out)
    check("main at app.c:11;write_data at app.c:12;do_syscall_64 [kernel] 2\n" in out, "--lines: kernel has no line")
    head, rows = neighbours(run("--lines", "--callers", "compute", cap).stdout)
    check(rows == [(80, "72.73", "main at app.c:11"), (30, "27.27", "worker_loop at app.c:15")],
          f"--lines callers match the function name: {rows}")

    # Without symbols: module+offset, raw hex, kernel marks.
    out = run("--folded", make(tmp, "nosyms")).stdout
    check("main" not in out and "app+0x1100;app+0x1010 60" in out, "no symbols: module+offset:\n" + out)
    check("app+0x1100;app+0x1200;0xffffffff81000010 [kernel] 2" in out, "no symbols: kernel raw hex")
    out = run(make(tmp, "nosyms")).stdout
    check("Symbols: none (the capture embeds no symbols" in out, "says there are no symbols")

    p = run(os.path.join(tmp, "missing.capture"), ok=False)
    check(p.returncode == 1 and "missing.capture" in p.stderr, "missing file: " + p.stderr)
    p = run(ok=False)
    check(p.returncode == 2 and "Usage" in p.stderr, "no file given")


def test_sysprof(tmp):
    cap = os.path.join(tmp, "sysprof.capture")
    subprocess.run([MAKE_SYSPROF, cap], check=True)
    out = run(cap).stdout
    check("embedded Sysprof table (__symbols__)" in out, "uses Sysprof's table:\n" + out)
    folded = run("--folded", cap).stdout
    check(folded == SYSPROF_FOLDED, "sysprof folded:\n" + folded)
    # The same names as our own capture of the same profile, once inline
    # frames (which only our table has) are left out.
    ours = run("--folded", make(tmp, "ours")).stdout

    def outer_names(text):
        names = set()
        for line in text.splitlines():
            for f in line.rsplit(" ", 1)[0].split(";"):
                if not f.endswith("(inlined)") and not f.startswith(("[unresolved", "libfoo.so+", "libbar.so+", "0x")):
                    names.add(f)
        return names
    check(outer_names(ours) == outer_names(folded) == {"main", "compute", VECTOR, "write_data", "worker_loop",
                                                       "do_syscall_64 [kernel]"},
          f"same names: {outer_names(ours)} vs {outer_names(folded)}")
    head, rows = neighbours(run("--callers", "compute", cap).stdout)
    check(rows == [(80, "72.73", "main"), (30, "27.27", "worker_loop")], f"sysprof callers: {rows}")
    test_sysprof_gz(tmp)


def info(*args):
    p = subprocess.run([PERISCOPE, "info", *args], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"periscope info {' '.join(args)} exited {p.returncode}: {p.stderr}")
    return p.stdout


def test_sysprof_gz(tmp):
    # Sysprof 45+ (Debian 13's 48): the table gzip'ed as __symbols__.gz,
    # exclusive ends. Read like 3.46's: the same names, and info agrees.
    cap = os.path.join(tmp, "sysprof-gz.capture")
    subprocess.run([MAKE_SYSPROF, cap, "gz"], check=True)
    out = run(cap).stdout
    check("Symbols: embedded Sysprof 45+ table (__symbols__.gz)" in out, "uses __symbols__.gz:\n" + out)
    folded = run("--folded", cap).stdout
    # main's neighbour ends where main begins: read inclusive, main would be it.
    check(folded == SYSPROF_FOLDED, "__symbols__.gz folded:\n" + folded)
    text = info(cap)
    check("Symbols embedded: yes (__symbols__.gz)" in text and
          re.search(r"^Symbols usable: yes, \d+ address ranges \(__symbols__\.gz\)$", text, re.M),
          "info on __symbols__.gz:\n" + text)
    # Hostile tables: cut short, and a bomb past the bound. A clear error,
    # the report of addresses still printed, exit 0; info says the same.
    for mode, why in (("gz-truncated", "__symbols__.gz: gzip stream cut short"),
                      ("gz-bomb", "__symbols__.gz: inflates to more than 268435456 bytes")):
        bad = os.path.join(tmp, f"sysprof-{mode}.capture")
        subprocess.run([MAKE_SYSPROF, bad, mode], check=True)
        p = run(bad)
        check(f"Symbols: none ({why}" in p.stdout, f"{mode}: the error in the report:\n" + p.stdout)
        check("app+0x1100" in run("--folded", bad).stdout, f"{mode}: the rest of the report")
        text = info(bad)
        check(f"Symbols usable: no ({why}" in text, f"{mode}: info says why:\n" + text)


def test_hostile(tmp):
    # A Periscope table that lies about its size: refused, the report falls
    # back to __symbols__ and still names functions.
    cap = make(tmp, "badtable")
    p = run("--folded", cap)
    # (our "__symbols__" carries the unresolved range's reason as its name)
    want = "".join(sorted(SYSPROF_FOLDED.replace("main;libfoo.so+0x500 5\n",
                                                 "main;[unresolved: helper failed] libfoo.so 5\n").splitlines(True)))
    check(p.stdout == want, "bad table falls back:\n" + p.stdout)
    out = run(cap).stdout
    check("embedded Sysprof table" in out, "summary says fallback")
    # A truncated capture: reports what precedes the damage and says so.
    good = make(tmp, "ours")
    data = open(good, "rb").read()
    cut = os.path.join(tmp, "cut.capture")
    with open(cut, "wb") as f:
        f.write(data[:len(data) * 2 // 3])
    p = run(cut, ok=False)
    check(p.returncode == 1 and "Samples:" in p.stdout and "Warning: the capture is damaged" in p.stdout,
          f"truncated capture still reports, and exits 1: {p.returncode}")
    check("cut.capture is truncated or damaged" in p.stderr, f"and says so on stderr: {p.stderr}")
    p = run("--folded", cut, ok=False)
    check(p.returncode == 1 and p.stdout and "truncated or damaged" in p.stderr, f"--folded too: {p.returncode}")
    p = run("--diff", good, cut, ok=False)
    check(p.returncode == 1 and "cut.capture is truncated or damaged" in p.stderr, f"--diff too: {p.returncode}")
    # Every other view exits 1 on it too, and says why on stderr.
    for view in (["--tree"], ["--by-process"], ["--by-thread"], ["--mappings"], ["--by-container"],
                 ["--callers", "main"], ["--marks"], ["--counters"], ["--memory"], ["--off-cpu"], ["--wall"],
                 ["-f", os.path.join(tmp, "cut.svg")], ["--timeline", os.path.join(tmp, "cut-timeline.svg")]):
        p = run(*view, cut, ok=False)
        check(p.returncode == 1 and "truncated" in p.stderr,
              f"{' '.join(view)} on a truncated capture: exit {p.returncode}, stderr {p.stderr!r}")
    # Garbage in the middle of a frame header.
    bad = bytearray(data)
    bad[256] = 0xff  # first frame's length: odd and past the end
    bad[256 + 1] = 0xff
    badp = os.path.join(tmp, "bad.capture")
    open(badp, "wb").write(bytes(bad))
    p = run(badp, ok=False)
    check(p.returncode in (0, 1) and "Traceback" not in p.stderr and p.returncode >= 0, f"bad frame: {p.returncode}")
    check("Warning" in p.stdout or p.returncode == 1, "bad frame is reported: " + p.stdout + p.stderr)
    test_corrupted_captures(tmp)


def test_corrupted_captures(tmp):
    """Random damage to a capture with symbol tables: report exits 0 or 1
    with a message, never crashes (the sanitizer build checks memory)."""
    import random
    rnd = random.Random(4242)
    path = os.path.join(tmp, "damaged.capture")
    ours = make(tmp, "ours")
    svg = os.path.join(tmp, "d.svg")
    views = {
        "ours": (["--folded"], ["--tree", "--min-percent", "0"], ["--flamegraph", svg], ["--by-process"],
                 ["--diff", "-f", svg, ours], ["--mappings", "--process-root", "-f", svg]),
        "events": (["--timeline", svg, "--marks", "--counters"], ["--timeline", svg, "--comm", "app"]),
        "memory": (["--memory", "--tree", "-f", svg], ["--memory", "--pid", "100"]),
    }
    for round_ in range(15):
        fixture = ("ours", "events", "memory")[round_ % 3] if round_ >= 5 else "ours"
        data = bytearray(open(make(tmp, fixture), "rb").read())
        for _ in range(rnd.randint(1, 8)):
            at = rnd.randrange(256, len(data))
            data[at] = rnd.randrange(256)
        open(path, "wb").write(bytes(data))
        for args in views[fixture]:
            p = subprocess.run([PERISCOPE, "report", "--no-progress", *args, path], capture_output=True, timeout=60)
            check(p.returncode in (0, 1), f"round {round_} {args}: exit {p.returncode}: {p.stderr[-300:]!r}")
            # Names from a damaged table are made printable: valid UTF-8, no
            # terminal control characters.
            try:
                text = p.stdout.decode("utf-8")
                check(not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text), f"round {round_}: control characters printed")
            except UnicodeDecodeError as e:
                check(False, f"round {round_} {args}: output is not UTF-8: {e}")
            if svg in args and p.returncode == 0 and os.path.exists(svg):
                import xml.dom.minidom
                try:
                    xml.dom.minidom.parse(svg)
                except Exception as e:
                    check(False, f"round {round_} {args}: SVG is not well-formed XML: {e}")
                os.unlink(svg)


def test_progress(tmp):
    # The progress bar appears on a terminal (script(1) gives us one) and
    # not when stderr is a pipe.
    cap = make(tmp, "big", "100000")
    p = subprocess.run(["script", "-qefc", f"{PERISCOPE} report {cap}", "/dev/null"], capture_output=True,
                       text=True, timeout=300)
    check(p.returncode == 0, f"report under script: {p.returncode}")
    check("Loading capture [" in p.stdout and "%" in p.stdout, "progress bar on a terminal")
    check("function_" in p.stdout, "report printed under a terminal")
    p = subprocess.run([PERISCOPE, "report", cap], capture_output=True, text=True, timeout=300)
    check("Loading capture" not in p.stderr and "Loading capture" not in p.stdout, "no bar when not a terminal")
    check("Samples: 100000 in 1 process" in p.stdout, "big capture sample count")


def png_pixels(path):
    """Decodes an 8-bit RGB/RGBA PNG (what Chromium writes) to rows of bytes."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert depth == 8 and ctype in (2, 6), f"unexpected PNG format {depth}/{ctype}"
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def chromium(*args):
    profile = tempfile.mkdtemp(prefix="periscope-chromium-")
    try:
        return subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                               "--no-first-run", "--disable-background-networking", "--disable-component-update",
                               "--disable-sync", f"--user-data-dir={profile}", *args],
                              capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def test_flamegraph(tmp):
    cap = make(tmp, "ours")
    svg = os.path.join(tmp, "flame.svg")
    p = run("--flamegraph", svg, cap)
    check("Flame graph written to" in p.stdout, "says where the flame graph is")
    text = open(svg).read()
    check("http://" not in text.replace("http://www.w3.org/", ""), "self-contained: no external URLs")
    check("<script" in text and "<style>" in text, "inline script and style")
    check("std::vector&lt;int, std::allocator&lt;int&gt; &gt;::push_back(int const&amp;)" in text, "C++ name escaped")
    check("compute (80 samples, 40.00%)" in text, "tooltip text: name, samples, percent")

    if not shutil.which("chromium"):
        check(False, "chromium is not installed: apt-get install -y chromium (listed in scripts/packages.txt)")
        return
    url = "file://" + svg
    # Interaction, driven by a script appended to a copy of the file: click
    # zooms (the clicked frame spans the width, frames outside it hide),
    # typing in the search box highlights and reports the share matched.
    probe = r"""<script><![CDATA[
(function () {
  var svg = document.documentElement;
  function frame(name, depth) {
    return Array.prototype.filter.call(document.querySelectorAll('g.f'), function (g) {
      return g.getAttribute('data-name') === name && (depth === undefined || g.getAttribute('data-d') === depth);
    })[0];
  }
  var main = frame('main');
  main.dispatchEvent(new MouseEvent('mouseover'));
  svg.setAttribute('data-t-hover', document.getElementById('details').textContent);
  main.dispatchEvent(new MouseEvent('click'));
  svg.setAttribute('data-t-zoom-width', Math.round(+main.querySelector('rect').getAttribute('width')));
  svg.setAttribute('data-t-worker-hidden', frame('worker_loop').style.display === 'none' ? 'yes' : 'no');
  svg.setAttribute('data-t-zoom-label', main.querySelector('text').textContent);
  var s = document.getElementById('search');
  s.value = 'comp';
  s.dispatchEvent(new Event('input'));
  svg.setAttribute('data-t-matched', document.getElementById('matched').textContent);
  svg.setAttribute('data-t-hits', document.querySelectorAll('g.match').length);
  document.getElementById('reset').dispatchEvent(new MouseEvent('click'));
  svg.setAttribute('data-t-unzoomed', frame('worker_loop').style.display === 'none' ? 'no' : 'yes');
})();
]]></script>
</svg>"""
    probe_svg = os.path.join(tmp, "probe.svg")
    with open(probe_svg, "w") as f:
        f.write(text.rsplit("</svg>", 1)[0] + probe)
    p = chromium("--dump-dom", "--virtual-time-budget=2000", "file://" + probe_svg)
    dom = p.stdout
    check(p.returncode == 0, f"chromium --dump-dom exited {p.returncode}: {p.stderr[-500:]}")
    for name in ["main", "compute", "square (inlined)", "add_one (inlined)", "worker_loop", "do_syscall_64 [kernel]",
                 "std::vector&lt;int, std::allocator&lt;int&gt; &gt;::push_back(int const&amp;)"]:
        check(name in dom, f"{name} in the DOM")
    check('data-ready="1"' in dom, "the inline script ran (data-ready set)")

    def attr(name):
        m = re.search(name + r'="([^"]*)"', dom)
        return m[1] if m else None
    # Each kind of frame has a hue of its own: kernel frames green, user frames red to yellow.
    fills = {m[1]: tuple(int(v) for v in m[2].split(","))
             for m in re.finditer(r'data-name="([^"]*)".*?fill="rgb\(([\d,]+)\)"', text)}
    kern = fills.get("do_syscall_64 [kernel]")
    user = [fills.get(n) for n in ("main", "compute", "worker_loop")]
    check(kern is not None and kern[1] > kern[0] + 20 and kern[1] > kern[2] + 60,
          f"kernel frames are green: {kern}")
    check(all(u and u[0] >= 200 and u[2] < 60 for u in user), f"user frames are red to yellow: {user}")
    check(attr("data-t-hover") == "main (100 samples, 50.00%)", f"hover details: {attr('data-t-hover')}")
    check(attr("data-t-zoom-width") == "1180", f"zoomed frame spans the width: {attr('data-t-zoom-width')}")
    check(attr("data-t-worker-hidden") == "yes", "frames outside the zoom are hidden")
    check(attr("data-t-zoom-label") == "main", "zoomed label text")
    check(attr("data-t-matched") == "Matched: 110 samples (55.00%)", f"search share: {attr('data-t-matched')}")
    check(attr("data-t-hits") == "2", f"two compute frames highlighted: {attr('data-t-hits')}")
    check(attr("data-t-unzoomed") == "yes", "reset zoom shows everything again")

    png = os.path.join(tmp, "flame.png")
    p = chromium(f"--screenshot={png}", "--window-size=1200,400", "--virtual-time-budget=2000", url)
    check(p.returncode == 0 and os.path.exists(png), f"chromium --screenshot: {p.returncode} {p.stderr[-500:]}")
    if os.path.exists(png):
        w, h, bpp, rows = png_pixels(png)
        colours = set()
        for row in rows[::4]:
            for x in range(0, w * bpp, bpp * 3):
                colours.add(row[x:x + 3])
        check(w == 1200 and h == 400, f"screenshot size {w}x{h}")
        check(len(colours) >= 12, f"screenshot is not blank: {len(colours)} colours")
        # Flame frames are warm (red high, blue low): some must be on screen.
        warm = [c for c in colours if c[0] > 200 and c[2] < 60 and c[1] < 200]
        check(len(warm) >= 2, f"flame-coloured frames visible: {len(warm)}")
    test_flamegraph_options(tmp)


def refused(args, *names, tmp=None):
    """A combination that must be refused: exit 2, both options named, no file written."""
    p = run(*args, ok=False)
    check(p.returncode == 2, f"{args}: exit {p.returncode} (want 2): {p.stderr}")
    for n in names:
        check(n in p.stderr, f"{args}: message names {n}: {p.stderr!r}")
    check(p.stdout == "", f"{args}: nothing on stdout: {p.stdout!r}")
    return p


def process_rows(out):
    lines = out.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("Processes by"))
    rows = []
    for line in lines[start + 2:]:
        if not line.strip() or line.startswith("("):
            break
        m = re.match(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)%  (.*?)\s{2,}(.*)$", line)
        check(m is not None, f"process row: {line!r}")
        if m:
            rows.append((int(m[1]), int(m[2]), m[3], m[4], m[5]))
    return rows


def thread_rows(out):
    """(samples, share, tid, pid, thread, process, top) of a --by-thread table."""
    rows = []
    for line in out.splitlines():
        m = re.match(r"^\s*(\d+)\s+([\d.]+)%\s+(\d+)\s+(\d+)  (.{16})  (.{16})  (.*)$", line)
        if m:
            rows.append((int(m[1]), m[2], int(m[3]), int(m[4]), m[5].strip(), m[6].strip(), m[7]))
    return rows


def exported(fmt, *args):
    p = subprocess.run([PERISCOPE, "export", "-F", fmt, *args], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"export -F {fmt} {args}: exit {p.returncode}: {p.stderr}")
    return p.stdout


def test_threads(tmp, mode):
    """Thread names (make-report-capture threads): written after the
    samples, a rename mid-way, a tid of another process, malformed frames;
    threads-early: the same names, each before the samples it names (read
    in one pass rather than names first)."""
    cap = make(tmp, mode)
    rows = thread_rows(run("--by-thread", cap).stdout)
    want = [(100, "44.25", 100, 100, "app-main", "app", "add_one (inlined) (60.00%)"),
            (100, "44.25", 200, 200, "worker", "worker", "worker_loop (70.00%)"),
            (10, "4.42", 101, 100, "net-worker", "app", "compute (100.00%)"),
            (7, "3.10", 102, 100, "renamed", "app", "compute (100.00%)"),
            (5, "2.21", 102, 100, "starting", "app", "compute (100.00%)"),
            (3, "1.33", 104, 100, "app-main", "app", "compute (100.00%)"),
            (1, "0.44", 103, 100, "evil?name?", "app", "compute (100.00%)")]
    check(rows == want, f"--by-thread: {rows}")
    rows = thread_rows(run("--by-thread", "--limit", "2", cap).stdout)
    check(len(rows) == 2, f"--by-thread --limit 2: {rows}")
    out = run("--tid", "102", "--thread-root", "--folded", cap).stdout
    check(out == "renamed (tid 102);main;compute 7\nstarting (tid 102);main;compute 5\n", f"--tid 102 folded: {out!r}")
    out = run("--tid", "101,104", "--folded", cap).stdout
    check(out == "main;compute 13\n", f"--tid 101,104: {out!r}")
    out = run("--tid", "101", "--tid", "200", "--by-process", cap).stdout
    check("      10 " in out and "worker" in out, f"--tid 101 --tid 200 --by-process: {out}")
    out = run("--tid", "999", cap).stdout
    check("No samples match --pid/--comm/--tid" in out, f"--tid 999: {out}")
    out = run("--tid", "102", "--pid", "200", cap).stdout
    check("No samples match" in out, "--tid and --pid must both match")
    p = run("--tid", "abc", cap, ok=False)
    check(p.returncode == 2 and "--tid: 'abc' is not a thread id" in p.stderr, f"--tid abc: {p.returncode} {p.stderr}")
    refused(["--thread-root", cap], "--thread-root")
    out = run("--tree", "--thread-root", "--min-percent", "0", cap).stdout
    check("app (pid 100)" in out and "net-worker (tid 101)" in out, f"--tree --thread-root:\n{out}")
    info = subprocess.run([PERISCOPE, "info", cap], capture_output=True, text=True).stdout
    check("threads: app-main (tid 100), net-worker (tid 101), starting → renamed (tid 102), evil?name? (tid 103)"
          in info, f"info's threads:\n{info}")
    # exports
    heads = collections.Counter(" ".join(l.split()[:2]) for l in exported("perf-script", cap).splitlines()
                                if l and not l[0].isspace())
    check(heads == {"app-main 100/100": 100, "worker 200/200": 100, "net-worker 100/101": 10,
                    "starting 100/102": 5, "renamed 100/102": 7, "evil?name? 100/103": 1,
                    "app-main 100/104": 3}, f"perf-script comm pid/tid: {heads}")
    names = [p["name"] for p in json.loads(exported("speedscope", "--tid", "102,103", cap))["profiles"]]
    check(names == ["starting → renamed (tid 102, pid 100)", "evil?name? (tid 103, pid 100)"], f"speedscope: {names}")
    out = exported("folded", "--thread-root", "--tid", "102", cap)
    check(out == "renamed (tid 102);main;compute 7\nstarting (tid 102);main;compute 5\n", f"export folded: {out!r}")
    p = subprocess.run([PERISCOPE, "export", "-F", "pprof", "--thread-root", "-o", os.path.join(tmp, "x.pb.gz"), cap],
                       capture_output=True, text=True)
    check(p.returncode == 2 and "--thread-root" in p.stderr, f"export pprof --thread-root: {p.returncode} {p.stderr}")
    # a Sysprof capture: no thread names, threads named after their process
    sp = os.path.join(tmp, "sysprof.capture")
    subprocess.run([MAKE_SYSPROF, sp], check=True)
    rows = thread_rows(run("--by-thread", sp).stdout)
    check([(r[2], r[4]) for r in rows] == [(100, "app"), (200, "worker")], f"Sysprof capture --by-thread: {rows}")


def test_views(tmp):
    test_threads(tmp, "threads")
    test_threads(tmp, "threads-early")
    cap = make(tmp, "ours")
    # --by-process: one line per process, most samples first (equal: by pid).
    rows = process_rows(run("--by-process", cap).stdout)
    check(rows == [(100, 100, "50.00", "app --fast", "add_one (inlined) (60.00%)"),
                   (200, 100, "50.00", "worker", "worker_loop (70.00%)")], f"--by-process: {rows}")
    rows = process_rows(run("--by-process", "--comm", "worker", cap).stdout)
    check(rows == [(200, 100, "100.00", "worker", "worker_loop (70.00%)")], f"--by-process --comm worker: {rows}")
    out = run("--by-process", "--tree", cap).stdout
    check("Processes by samples:" in out and "Call tree" in out, "--by-process combines with --tree")

    # Process roots: on by default with several processes, for the tree and the flame graph.
    got = tree(run("--tree", "--min-percent", "0", cap).stdout)
    check(got[0] == (0, "50.00", 100, 0, "app (pid 100)") and got[1] == (1, "50.00", 100, 0, "main"),
          f"tree starts with app's process frame: {got[:2]}")
    check((0, "50.00", 100, 0, "worker (pid 200)") in got and (1, "50.00", 100, 70, "worker_loop") in got,
          f"worker's process frame: {got}")
    got = tree(run("--tree", "--pid", "200", cap).stdout)
    check(got[0][4] == "worker_loop", f"one process: no process frame by default: {got[:1]}")
    got = tree(run("--tree", "--pid", "200", "--process-root", cap).stdout)
    check(got[0][4] == "worker (pid 200)" and got[1][4] == "worker_loop", f"--process-root forces it: {got[:2]}")
    out = run("--folded", "--process-root", cap).stdout
    check("app (pid 100);main;compute 20\n" in out and "worker (pid 200);worker_loop 70\n" in out,
          "--folded --process-root:\n" + out)
    check(run("--folded", cap).stdout == OURS_FOLDED, "--folded without --process-root keeps plain stacks")
    check("Hottest functions by self time:" in run(cap).stdout and "app (pid 100)" not in run(cap).stdout,
          "process frames are not functions in the hottest tables")
    head, rows_ = neighbours(run("--callers", "main", cap).stdout)
    check(rows_ == [(100, "100.00", "(entry point)")], f"process frames are not callers: {rows_}")
    refused(["--process-root", "--no-process-root", cap], "--process-root", "--no-process-root")

    # Combinations that are refused name both options; nothing is written.
    svg = os.path.join(tmp, "never.svg")
    refused(["--marks", "--tree", cap], "--marks", "--tree")
    refused(["--folded", "--tree", cap], "--folded", "--tree")
    refused(["--counters", "-f", svg, cap], "--counters", "--flamegraph")
    refused(["--timeline", svg, "--callers", "main", cap], "--timeline", "--callers")
    refused(["--memory", "--by-container", cap], "--memory", "--by-container")
    refused(["--diff", "--tree", cap, cap], "--diff", "--tree")
    refused(["--by-process", "--marks", cap], "--by-process", "--marks")
    refused(["--lines", "--counters", cap], "--lines", "--counters")
    refused(["--process-root", "--by-process", cap], "--process-root", "--tree")
    refused(["--min-percent", "2", cap], "--min-percent", "--tree")
    check(not os.path.exists(svg), "a refused report writes no file")
    p = refused(["--title", "x", cap], "--title", "--flamegraph")
    p = refused(["--inverted", "--tree", cap], "--inverted", "--flamegraph")
    refused(["--width", "50", "-f", svg, cap], "--width", "400")
    check(not os.path.exists(svg), "a refused report writes no file")

    # Combinations that work: --by-container with a flame graph and a tree
    # (containers as root frames above the processes).
    out = run("--by-container", "--tree", "--min-percent", "0", "-f", svg, cap).stdout
    check("Samples by container or app:" in out, "--by-container table printed with --tree")
    got = tree(out)
    check(got[:2] == [(0, "100.00", 200, 0, "host (no container)"), (1, "50.00", 100, 0, "app (pid 100)")],
          f"--by-container --tree: container then process: {got[:2]}")
    text = open(svg).read() if os.path.exists(svg) else ""
    check("host (no container) (200 samples, 100.00%)" in text, "--by-container -f: container frame in the SVG")
    os.unlink(svg) if os.path.exists(svg) else None

    ct = make(tmp, "container")
    out = run("--by-container", "--tree", "--min-percent", "0", ct).stdout
    got = tree(out)
    check(got[0] == (0, "50.00", 100, 0, "host (no container)") and got[1] == (1, "50.00", 100, 0, "app (pid 100)"),
          f"--by-container --tree: host first: {got[:2]}")
    check((0, "50.00", 100, 0, "podman web (localhost/web:1)") in got and (1, "50.00", 100, 0, "worker (pid 200)") in got,
          f"--by-container --tree: the container above worker: {got}")
    out = run("--by-container", "--folded", ct).stdout
    check("podman web (localhost/web:1);worker_loop;compute 30\n" in out, "--by-container --folded:\n" + out)

    # --memory with the stack views: weighed by allocated bytes.
    mem = make(tmp, "memory")
    out = run("--memory", "--tree", "--min-percent", "0", mem).stdout
    check("Leaked (still live at the end), by call site:" in out, "--memory --tree keeps the memory tables")
    check("Allocated: 10700 bytes" in out, "--memory --tree summary in bytes:\n" + out)
    got = tree(out)
    check((0, "98.13", 10500, 0, "app (pid 100)") in got and (4, "93.46", 10000, 10000, "add_one (inlined)") in got
          and (1, "1.87", 200, 200, "worker_loop") in got, f"--memory --tree by bytes: {got}")
    out = run("--memory", "--folded", mem).stdout
    check(out == "main;compute;square (inlined);add_one (inlined) 10000\nmain;write_data 500\nworker_loop 200\n",
          "--memory --folded:\n" + out)
    out = run("--memory", "-f", svg, mem).stdout
    text = open(svg).read() if os.path.exists(svg) else ""
    check("add_one (inlined) (10000 bytes, 93.46%)" in text and 'data-unit="bytes"' in text,
          "--memory -f: a flame graph of bytes")
    head, rows_ = neighbours(run("--memory", "--callers", "write_data", mem).stdout)
    check(head == "Callers of write_data: 500 bytes (4.67% of all)" and rows_ == [(500, "100.00", "main")],
          f"--memory --callers: {head} {rows_}")

    # --pid/--comm in every view.
    out = run("--memory", "--pid", "200", mem).stdout
    check("Memory: 1 process, 4 allocations" in out and "add_one" not in out, "--memory --pid 200:\n" + out)
    out = run("--memory", "--comm", "app", mem).stdout
    check("Memory: 1 process, 15 allocations" in out and "worker_loop" not in out, "--memory --comm app:\n" + out)
    ev = make(tmp, "events")
    out = run("--marks", "--pid", "200", ev).stdout
    check("Marks: 1 in 1 group/name" in out and "sync" in out and "request" not in out, "--marks --pid:\n" + out)
    out = run("--marks", "--comm", "app", ev).stdout
    check("Marks: 4 in 2 groups/names" in out and "sync" not in out, "--marks --comm:\n" + out)
    out = run("--counters", "--pid", "200", ev).stdout
    check("queue length" not in out and "Combined" in out, "--counters --pid 200: system counters only:\n" + out)
    out = run("--counters", "--comm", "app", ev).stdout
    check("queue length" in out, "--counters --comm app keeps app's counter")
    out = run("--timeline", svg, "--pid", "200", ev).stdout
    check("Timeline of 5 counters and 1 mark written" in out, "--timeline --pid:\n" + out)
    out = run("--by-container", "--pid", "200", cap).stdout
    check("Samples: 100\n" in out, "--by-container --pid:\n" + out)
    out = run("--folded", "--comm", "worker", "-f", svg, cap).stdout
    check(out == "worker_loop 70\nworker_loop;compute 30\n", "--folded -f --comm")
    text = open(svg).read()
    check("worker_loop" in text and ">main<" not in text and "add_one" not in text, "-f follows --comm")

    # --mappings (and the summary) list each mapping once.
    out = run("--mappings", make(tmp, "dupmaps")).stdout
    check(out.count("/usr/bin/app\n") == 1 and out.count("  pid 100  0x7f1000000000-0x7f1000100000") == 1,
          "--mappings lists each mapping once:\n" + out)
    check("Symbol sources: 2 mappings, 1 verified" in out and out.count("not verified: /usr/lib/libfoo.so") == 1,
          "summary counts each mapping once:\n" + out)

    # Plurals follow the counts.
    out = run("--tree", "--min-percent", "40", "--pid", "200", cap).stdout
    check("(1 smaller node hidden;" in out, "one node hidden:\n" + out)
    out = run("--tree", "--min-percent", "20", cap).stdout
    check("(5 smaller nodes hidden;" in out, "five nodes hidden:\n" + out)
    out = run(make(tmp, "big", "1")).stdout
    check("Samples: 1 in 1 process\n" in out, "one sample, one process:\n" + out)

    # info cuts long command lines; report shortens them in --by-process.
    lc = make(tmp, "longcmd")
    p = subprocess.run([PERISCOPE, "info", lc], capture_output=True, text=True, timeout=60)
    line = next((l for l in p.stdout.splitlines() if l.lstrip().startswith("300 ")), "")
    check(p.returncode == 0 and line.endswith("… (2851 more characters; --full shows them)") and len(line) < 240,
          f"info cuts a 3000-character command line: {line[:200]!r}")

    # A process shown as "[worker]" (no command line) is selected by its name.
    br = make(tmp, "bracketed")
    rows = process_rows(run("--by-process", "--comm", "worker", br).stdout)
    check([r[:2] for r in rows] == [(200, 100)], f"--comm worker selects the process shown as [worker]: {rows}")
    rows = process_rows(run("--by-process", "--comm", "[worker]", br).stdout)
    check([r[:2] for r in rows] == [(200, 100)], f"--comm [worker] selects it too: {rows}")
    out = run("--comm", "work", br).stdout
    check("No samples match --pid/--comm" in out, "--comm is not a prefix match")


def flame_dom(svg, fragment=""):
    p = chromium("--dump-dom", "--virtual-time-budget=2000", "file://" + svg + fragment)
    check(p.returncode == 0 and 'data-ready="1"' in p.stdout, f"chromium ran the flame graph's script: {p.stderr[-300:]}")
    return p.stdout


def frame_rects(dom):
    """name -> list of (x, y, width, depth) of the drawn frames."""
    out = {}
    for m in re.finditer(r'<g class="f"[^>]*data-d="(\d+)" data-name="([^"]*)"[^>]*>.*?<rect x="([\d.]+)" y="([\d.]+)" '
                         r'width="([\d.]+)"', dom):
        out.setdefault(m[2], []).append((float(m[3]), float(m[4]), float(m[5]), int(m[1])))
    return out


def test_flamegraph_options(tmp):
    """--title, --width, --inverted, #search= in the URL, process roots."""
    cap = make(tmp, "ours")
    svg = os.path.join(tmp, "options.svg")
    run("-f", svg, "--title", "Checkout service <prod>", "--width", "800", cap)
    dom = flame_dom(svg)
    check(re.search(r'<text id="title"[^>]*>Checkout service &lt;prod&gt;</text>', dom) is not None, "--title shown")
    check(re.search(r'<svg[^>]* width="800"', dom) is not None, "--width 800 sets the SVG width")
    rects = frame_rects(dom)
    check(abs(rects["all"][0][2] - 780) < 0.1, f"the root spans 800 - 2 x 10 px: {rects['all']}")
    # Several processes: one root frame per process, under "all".
    check([r[3] for r in rects.get("app (pid 100)", [])] == [1] and [r[3] for r in rects.get("worker (pid 200)", [])] == [1],
          f"process frames at depth 1: {rects.get('app (pid 100)')} {rects.get('worker (pid 200)')}")
    check([r[3] for r in rects.get("main", [])] == [2], "main under its process")
    # (layout is written by periscope; the script only moves frames on zoom:
    # these two read the file)
    run("-f", svg, "--no-process-root", cap)
    rects = frame_rects(open(svg).read())
    check("app (pid 100)" not in rects and [r[3] for r in rects.get("main", [])] == [1], "--no-process-root")

    # Flames grow up (the root at the bottom); --inverted hangs them down.
    run("-f", svg, cap)
    rects = frame_rects(open(svg).read())
    check(rects["all"][0][1] > rects["main"][0][1], "flame: root below its children")
    run("-f", svg, "--inverted", cap)
    dom = flame_dom(svg)
    rects = frame_rects(dom)
    check(rects["all"][0][1] < rects["main"][0][1] < rects["add_one (inlined)"][0][1], "--inverted: icicle, root on top")

    # The search term is read from the URL and written back to it.
    dom = flame_dom(svg, "#search=compute")
    m = re.search(r'<text id="matched"[^>]*>([^<]*)</text>', dom)
    check(m is not None and m[1] == "Matched: 110 samples (55.00%)", f"#search=compute on load: {m and m[1]}")
    check(re.search(r'<input[^>]*id="search"', dom) is not None, "search box present")
    probe = r"""<script><![CDATA[
(function () {
  var s = document.getElementById('search');
  s.value = 'worker_loop|main';
  s.dispatchEvent(new Event('input'));
  document.documentElement.setAttribute('data-t-hash', location.hash);
})();
]]></script>
</svg>"""
    probe_svg = os.path.join(tmp, "probe-search.svg")
    with open(probe_svg, "w") as f:
        f.write(open(svg).read().rsplit("</svg>", 1)[0] + probe)
    dom = flame_dom(probe_svg)
    m = re.search(r'data-t-hash="([^"]*)"', dom)
    check(m is not None and m[1] == "#search=worker_loop%7Cmain", f"a search updates the URL: {m and m[1]}")
    png = os.path.join(tmp, "inverted.png")
    p = chromium(f"--screenshot={png}", "--window-size=1200,300", "--virtual-time-budget=2000", "file://" + svg)
    if check_png(png):
        w, h, bpp, rows = png_pixels(png)
        # icicle: the frames (not the page background) fill the top rows
        top = rows[80][12 * bpp:13 * bpp]
        check(top[0] < 230 or top[2] < 230, f"a frame right under the search box: {tuple(top)}")


def diff_rows(out, title):
    lines = out.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(title))
    rows = {}
    for line in lines[start + 2:]:
        if not line.strip() or "(no function changed" in line:
            break
        m = re.match(r"^\s*([\d.]+)%\s+([\d.]+)%\s+([+-][\d.]+)%  (.*)$", line)
        check(m is not None, f"diff row: {line!r}")
        if m:
            rows[m[4]] = (float(m[1]), float(m[2]), float(m[3]))
    return rows


def test_diff(tmp):
    before, after = make(tmp, "ours"), make(tmp, "grown")
    # after = before + 200 samples in add_one: 400 samples, add_one's self
    # share 30% -> 65%; worker_loop's 35% -> 17.5% (same count, half the share).
    out = run("--diff", before, after).stdout
    check(out.startswith(f"Before: {before} (200 samples)\nAfter:  {after} (400 samples)\n"), "diff header:\n" + out)
    self_ = diff_rows(out, "Change in self time")
    total = diff_rows(out, "Change in total time")
    check(list(self_)[0] == "add_one (inlined)" and self_["add_one (inlined)"] == (30.0, 65.0, 35.0),
          f"add_one grew most: {list(self_.items())[:2]}")
    check(self_["worker_loop"] == (35.0, 17.5, -17.5), f"worker_loop shrank: {self_.get('worker_loop')}")
    check(total["compute"] == (55.0, 77.5, 22.5) and total["main"] == (50.0, 75.0, 25.0),
          f"total shares: compute {total.get('compute')} main {total.get('main')}")
    out = run("--diff", after, before).stdout
    check(diff_rows(out, "Change in self time")["add_one (inlined)"] == (65.0, 30.0, -35.0), "reversed diff")
    out = run("--diff", "--folded", before, after).stdout
    want = "".join(f"{line.rsplit(' ', 1)[0]} {line.rsplit(' ', 1)[1]} {260 if 'add_one' in line else line.rsplit(' ', 1)[1]}\n"
                   for line in OURS_FOLDED.splitlines())
    check(out == want, "--diff --folded: difffolded's 'stack before after':\n" + out)
    out = run("--diff", "--limit", "1", before, after).stdout
    check(len(diff_rows(out, "Change in self time")) == 1, "--limit applies to the diff tables")
    out = run("--diff", "--pid", "200", before, after).stdout
    check(diff_rows(out, "Change in self time") == {} and "(no function changed by 0.01% or more)" in out,
          "--diff --pid 200: worker did not change:\n" + out)
    refused(["--diff", "--process-root", before, after], "--diff", "--process-root")
    p = run("--diff", before, ok=False)
    check(p.returncode == 2 and "--diff compares two captures" in p.stderr, f"--diff with one file: {p.stderr}")
    p = run("--diff", before, os.path.join(tmp, "missing.capture"), ok=False)
    check(p.returncode == 1 and "missing.capture" in p.stderr, f"--diff with a missing file: {p.stderr}")

    # The differential flame graph: widths of AFTER, red grew, blue shrank.
    svg = os.path.join(tmp, "diff.svg")
    out = run("--diff", "-f", svg, before, after).stdout
    check(f"Differential flame graph written to {svg}" in out, "says where the differential flame graph is")
    if not shutil.which("chromium"):
        check(False, "chromium is not installed: apt-get install -y chromium (listed in scripts/packages.txt)")
        return
    p = chromium("--dump-dom", "--virtual-time-budget=2000", "file://" + svg)
    dom = p.stdout

    def fill(name):
        m = re.search(r'data-name="' + re.escape(name) + r'"><title>([^<]*)</title><rect[^>]*fill="rgb\((\d+),(\d+),(\d+)\)"', dom)
        return (m[1], tuple(int(x) for x in m.groups()[1:])) if m else (None, None)
    title, rgb = fill("add_one (inlined)")
    check(rgb is not None and rgb[0] == 255 and rgb[1] < 100 and rgb[1] == rgb[2],
          f"add_one is deep red: {rgb}")
    check(title == "add_one (inlined) (260 samples, 65.00%; before 30.00%, +35.00%)", f"add_one tooltip: {title}")
    title, rgb = fill("worker_loop")
    check(rgb is not None and rgb[2] == 255 and rgb[0] < 200 and rgb[0] == rgb[1], f"worker_loop is blue: {rgb}")
    check("red: grew" in dom and "blue: shrank" in dom, "legend says what the colours mean")
    png = os.path.join(tmp, "diff.png")
    p = chromium(f"--screenshot={png}", "--window-size=1200,200", "--virtual-time-budget=2000", "file://" + svg)
    if check_png(png):
        w, h, bpp, rows = png_pixels(png)
        red = blue = 0
        for row in rows:
            for x in range(0, w * bpp, bpp):
                r, g, b = row[x], row[x + 1], row[x + 2]
                red += r > 240 and g < 120 and b < 120
                blue += b > 240 and r < 160 and g < 160
        check(red > 20000 and blue > 3000, f"red and blue frames on screen: {red} red, {blue} blue pixels")


def check_png(png):
    ok = os.path.exists(png)
    check(ok, f"chromium wrote a screenshot {png}")
    return ok


def test_timeline(tmp):
    ev = make(tmp, "events")
    svg = os.path.join(tmp, "timeline.svg")
    out = run("--timeline", svg, ev).stdout
    check("Timeline of 6 counters and 5 marks written" in out, "timeline summary:\n" + out)
    if not shutil.which("chromium"):
        check(False, "chromium is not installed: apt-get install -y chromium (listed in scripts/packages.txt)")
        return
    p = chromium("--dump-dom", "--virtual-time-budget=2000", "file://" + svg)
    dom = p.stdout
    check(p.returncode == 0 and "Counters and marks over 3.400 s" in dom, "chromium loaded the timeline")
    scales = re.findall(r'<text class="scale"[^>]*>([^<]*)</text>', dom)
    # lanes in order: CPU Frequency, CPU Percent x2, Memory x2, app: top then bottom of each
    check(scales[2:6] == ["100%", "0%", "100%", "0%"], f"every CPU lane 0-100%: {scales}")
    check(scales[6] == scales[8] and scales[6].endswith("GiB") and scales[7] == scales[9],
          f"memory lanes share one scale in GiB: {scales}")
    check(scales[0] == "2700 MHz", f"frequency in MHz: {scales}")
    check(re.search(r">22\.5\sGiB to 24\.6\sGiB<", dom) is not None, "memory range in GiB")
    check("e+" not in dom, "no raw exponent numbers")
    ticks = re.findall(r'<text class="tick"[^>]*>([^<]*)</text>', dom)
    check(ticks == ["0 s", "0.5 s", "1 s", "1.5 s", "2 s", "2.5 s", "3 s"], f"round time ticks: {ticks}")
    rows = re.findall(r'<text class="mark-row"[^>]*>([^<]*)</text>', dom)
    check(rows == ["app / load", "app / request", "worker / sync"], f"mark rows labelled: {rows}")
    check(">loading the configuration<" in dom, "a wide mark carries its message")

    # The 7% dip of Combined stays small; the 50% dip of CPU 1 takes half the lane.
    def spread(name):
        m = re.search(r"<title>CPU Percent / " + name + r":.*?points=\"([^\"]*)\"", dom, re.S)
        ys = [float(pt.split(",")[1]) for pt in m[1].split()] if m else [0]
        return max(ys) - min(ys)
    check(0.5 < spread("Combined") < 4, f"a 7% dip is a small step: {spread('Combined'):.1f} px")
    check(15 < spread("Total CPU 1") < 25, f"a 50% dip is half a lane: {spread('Total CPU 1'):.1f} px")

    png = os.path.join(tmp, "timeline.png")
    p = chromium(f"--screenshot={png}", "--window-size=1200,500", "--virtual-time-budget=2000", "file://" + svg)
    if check_png(png):
        w, h, bpp, rows_ = png_pixels(png)
        colours = set()
        for row in rows_[::3]:
            for x in range(0, w * bpp, bpp * 2):
                colours.add(row[x:x + 3])
        check(len(colours) >= 12, f"timeline screenshot is not blank: {len(colours)} colours")


def main():
    tmp = tempfile.mkdtemp(prefix="periscope-report-test-")
    try:
        {"text": test_text, "sysprof": test_sysprof, "hostile": test_hostile, "progress": test_progress,
         "flamegraph": test_flamegraph, "views": test_views, "diff": test_diff, "timeline": test_timeline}[GROUP](tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    finish()
    print(f"report {GROUP}: all checks passed")


main()
