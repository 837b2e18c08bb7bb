#!/usr/bin/env python3
"""Integration tests of the sandboxed helper through its real launcher
(resolver/helper-client under bwrap), driven by helper-tool.

usage: helper_test.py CASE   (environment: HELPER_TOOL, PERISCOPE_HELPER,
SRCDIR, optionally DEBUG_FILES_TOOL)"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

TOOL = os.environ["HELPER_TOOL"]
SRC = os.environ["SRCDIR"]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    else:
        print("ok:", what)


def run(*args, **kw):
    p = subprocess.run(list(args), capture_output=True, text=True, **kw)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
        raise SystemExit("command failed (%d): %s" % (p.returncode, " ".join(args)))
    return p.stdout


def need(prog):
    if not shutil.which(prog):
        raise SystemExit("%s is missing: apt-get install -y the package that has it (see scripts/packages.txt)" % prog)


def build(tmp, src, out, compiler="gcc", flags=("-O2", "-g")):
    need(compiler)
    path = os.path.join(tmp, out)
    run(compiler, *flags, "-I", SRC, "-o", path, os.path.join(SRC, src))
    return path


def offsets(binary):
    """Runs a workload; returns {label: file offset} it printed."""
    out = run(binary)
    return {l.split()[0]: l.split()[1] for l in out.splitlines()}


def symbolize(binary, offs, debug=None, extra=()):
    """Returns {offset: [(name, inlined, file, line, source)]} or {offset: 'unresolved…'}."""
    args = [TOOL, *extra, "symbolize", binary]
    if debug:
        args += ["--debug", debug]
    out = run(*args, *offs)
    res, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"^(0x[0-9a-f]+) \[(unresolved: .*)\]$", line)
        if m:
            res[m.group(1)] = m.group(2)
            continue
        m = re.match(r"^(0x[0-9a-f]+) status (\d+)$", line)
        if m:
            cur = m.group(1)
            res[cur] = [] if m.group(2) == "0" else "status %s" % m.group(2)
            continue
        m = re.match(r"^  (.*?)( \[inlined\])? \+0x[0-9a-f]+ at (.*):(\d+) \((.*)\)$", line)
        if m and cur:
            res[cur].append((m.group(1), bool(m.group(2)), m.group(3), int(m.group(4)), m.group(5)))
    print(out)
    return res


def marker_line(src, mark):
    with open(os.path.join(SRC, src)) as f:
        for i, l in enumerate(f, 1):
            if mark in l:
                return i
    raise SystemExit("marker %s not in %s" % (mark, src))


def case_inline(tmp):
    b = build(tmp, "workload-inline.c", "inl")
    o = offsets(b)
    r = symbolize(b, [o["inner"], o["work"], o["main"]])
    chain = r[o["inner"]]
    check([f[0] for f in chain] == ["inner_inline", "outer_inline", "work_function"],
          "inline chain innermost first: %s" % [f[0] for f in chain])
    check([f[1] for f in chain] == [True, True, False], "inlined frames marked, the function not")
    src = "workload-inline.c"
    check([f[3] for f in chain] == [marker_line(src, "MARK-inner"), marker_line(src, "MARK-call-inner"),
                                    marker_line(src, "MARK-call-outer")],
          "each frame at its own source line (inline call sites): %s" % [f[3] for f in chain])
    check(all(f[2].endswith("/workload-inline.c") for f in chain), "source file named")
    check([f[0] for f in r[o["work"]]] == ["work_function"], "an address outside the inlines is the function alone")
    check(r[o["work"]][0][3] == marker_line(src, "MARK-work"), "line of the non-inlined point")
    check([f[0] for f in r[o["main"]]] == ["main"], "main")


def case_cpp(tmp):
    b = build(tmp, "workload-cpp.cc", "cpp", compiler="g++")
    o = offsets(b)
    r = symbolize(b, [o["twice"], o["compute"], o["operator"]])
    names = [f[0] for f in r[o["twice"]]]
    check(names == ["periscope_test::Box<long>::twice() const", "periscope_test::Box<long>::compute(int) const"],
          "demangled inline chain: %s" % names)
    check(r[o["twice"]][0][1] and not r[o["twice"]][1][1], "inlined method marked as inlined")
    check([f[0] for f in r[o["compute"]]] == ["periscope_test::Box<long>::compute(int) const"], "template method")
    op = r[o["operator"]][0][0]
    check(op.startswith("periscope_test::operator+(periscope_test::Box<long> const&, std::"), "operator demangled: %s" % op)


def case_probe(tmp):
    # a listening port on the host's loopback: the sandbox must not reach it
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    secret = os.path.join(tmp, "secret")
    with open(secret, "w") as f:
        f.write("x")
    home = os.path.expanduser("~")
    out = run(TOOL, "probe", "--open", secret, "--open", "/etc/passwd", "--open", home,
              "--open", "/usr/bin/env", "--connect", str(port))
    print(out)
    lines = dict(l.split(": ", 1) for l in out.splitlines())
    check(lines.get("CapEff") == "0000000000000000", "no effective capabilities")
    check(lines.get("CapPrm") == "0000000000000000", "no permitted capabilities")
    check(lines.get("open %s" % secret) not in (None, "ok"), "cannot open a file outside /usr (%s)" % secret)
    check(lines.get("open /etc/passwd") not in (None, "ok"), "cannot open /etc/passwd")
    check(lines.get("open %s" % home) not in (None, "ok"), "no home directory")
    check(lines.get("open /usr/bin/env") == "ok", "/usr is readable (the probe is not just broken)")
    check(lines.get("connect 127.0.0.1:%d" % port) not in (None, "ok"), "cannot reach a listening host port")
    srv.settimeout(0.5)
    try:
        c, _ = srv.accept()
        c.close()
        check(False, "no connection arrived on the host")
    except socket.timeout:
        check(True, "no connection arrived on the host")


CASES = {k[5:]: v for k, v in globals().items() if k.startswith("case_")}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        raise SystemExit("usage: helper_test.py {%s}" % "|".join(CASES))
    with tempfile.TemporaryDirectory(prefix="periscope-helper-test.") as tmp:
        CASES[sys.argv[1]](tmp)
    if failures:
        raise SystemExit("%d check(s) failed" % len(failures))
