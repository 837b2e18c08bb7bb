#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Integration tests of the sandboxed helper through its real launcher
(resolver/helper-client under bwrap), driven by helper-tool.

usage: helper_test.py CASE   (environment: HELPER_TOOL, PERISCOPE_HELPER,
SRCDIR, optionally DEBUG_FILES_TOOL)"""
import os
import pwd
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

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
    print(out)
    return symbolize_parse(out)


def symbolize_parse(out):
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
    # A root-owned 0711 program under /usr (the sandbox's whole system): the
    # helper runs as an unprivileged host uid, so it may run it, not read it.
    # Its host uid: the probe's last --open is a FIFO, where it waits until
    # the test has read its /proc/PID/status (from inside, the user
    # namespaces show only uid 65534).
    if os.geteuid() != 0:
        raise SystemExit("the probe case creates root-owned files under /usr: run it as root (./test.sh does)")
    try:
        want_uid = pwd.getpwnam("periscope-helper").pw_uid
    except KeyError:
        want_uid = 61871
    probe_dir = tempfile.mkdtemp(prefix="periscope-probe-", dir="/usr/local/share")
    exec_only = os.path.join(probe_dir, "exec-only")
    fifo = os.path.join(probe_dir, "fifo")
    try:
        os.chmod(probe_dir, 0o755)
        shutil.copy("/usr/bin/true", exec_only)
        os.chmod(exec_only, 0o711)
        os.mkfifo(fifo, 0o644)
        p = subprocess.Popen([TOOL, "probe", "--open", secret, "--open", "/etc/passwd", "--open", home,
                              "--open", "/usr/bin/env", "--open", exec_only, "--connect", str(port),
                              "--open", "/proc/self/status", "--open", fifo], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        uids = None
        deadline = time.monotonic() + 20
        while uids is None and time.monotonic() < deadline and p.poll() is None:
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    with open("/proc/%s/cmdline" % pid, "rb") as f:
                        if not f.read().startswith(b"/run/periscope-helper\0--probe\0"):
                            continue
                    with open("/proc/%s/status" % pid) as f:
                        uids = [l.split()[1:] for l in f if l.startswith(("Uid:", "Gid:"))]
                except OSError:
                    continue
            time.sleep(0.02)
        with open(fifo, "w"):
            pass
        out, err = p.communicate(timeout=30)
        if p.returncode != 0:
            print(out, err)
            raise SystemExit("helper-tool probe failed (%d)" % p.returncode)
    finally:
        shutil.rmtree(probe_dir)
    print(out)
    lines = dict(l.split(": ", 1) for l in out.splitlines())
    want = [str(want_uid)] * 4
    check(uids is not None and uids[0] == want and uids[1] == want,
          "the helper runs as host uid and gid %d (periscope-helper, else 61871), never root: Uid/Gid %s"
          % (want_uid, uids))
    check(lines.get("open %s" % exec_only) == "Permission denied",
          "cannot open a root-owned 0711 program under /usr: %s" % lines.get("open %s" % exec_only))
    check(lines.get("open %s" % fifo) == "ok", "the probe went on once its status was read")
    check(lines.get("CapEff") == "0000000000000000", "no effective capabilities")
    check(lines.get("CapPrm") == "0000000000000000", "no permitted capabilities")
    # under its own uid: RLIMIT_NPROC bounds every sandbox of that uid
    # (SANDBOX_MAX_PROCESSES), and the probe's forks below still work
    check(lines.get("RLIMIT_NPROC") == "512", "RLIMIT_NPROC is 512: %s" % lines.get("RLIMIT_NPROC"))
    check(lines.get("open %s" % secret) not in (None, "ok"), "cannot open a file outside /usr (%s)" % secret)
    check(lines.get("open /etc/passwd") not in (None, "ok"), "cannot open /etc/passwd")
    check(lines.get("open %s" % home) not in (None, "ok"), "no home directory")
    check(lines.get("open /usr/bin/env") == "ok", "/usr is readable (the probe is not just broken)")
    # no procfs: a container's read-only /proc/sys may leave none to mount
    # (sanitizer builds mount one: their runtimes read it)
    if os.environ.get("SANITIZED") == "1":
        check(lines.get("open /proc/self/status") == "ok", "sanitizer build: the sandbox has its own /proc")
    else:
        check(lines.get("open /proc/self/status") == "No such file or directory",
              "the sandbox has no /proc: %s" % lines.get("open /proc/self/status"))
    check(lines.get("connect 127.0.0.1:%d" % port) not in (None, "ok"), "cannot reach a listening host port")
    # the system call filter (bwrap --seccomp), which stands in for
    # bwrap's --disable-userns too
    check(lines.get("Seccomp") == "2", "a seccomp filter is loaded (Seccomp: %s)" % lines.get("Seccomp"))
    for call in ("unshare(CLONE_NEWUSER)", "clone(CLONE_NEWUSER)", "ptrace(PTRACE_TRACEME)", "mount", "bpf",
                 "perf_event_open", "keyctl", "socket(AF_INET)", "socket(AF_NETLINK)"):
        check(lines.get("syscall " + call) == "Operation not permitted",
              "%s is denied by the filter: %s" % (call, lines.get("syscall " + call)))
    check(lines.get("syscall socket(AF_UNIX)") == "allowed", "AF_UNIX sockets still work (the filter is not deny-all)")
    srv.settimeout(0.5)
    try:
        c, _ = srv.accept()
        c.close()
        check(False, "no connection arrived on the host")
    except socket.timeout:
        check(True, "no connection arrived on the host")


def resolve(binary, offs, root=None, debuginfod=False, env=None):
    args = [TOOL]
    if root:
        args += ["--debug-root", root]
    if debuginfod:
        args += ["--debuginfod"]
    out = run(*args, "resolve", binary, *offs, env=env)
    print(out)
    info = {}
    for line in out.splitlines():
        if line.startswith("debug-file ") or line.startswith("notes "):
            k, v = line.split(" ", 1)
            info[k] = v
    return info, symbolize_parse(out)


def build_id_of(path):
    out = run(TOOL, "identify", path)
    for l in out.splitlines():
        if l.startswith("build-id "):
            return l.split()[1]
    raise SystemExit("no build-id line")


def stripped_pair(tmp, name="inl", extra=()):
    """Builds the inline workload, splits it into a stripped binary and a
    debug file (objcopy --only-keep-debug), returns (binary, debugfile, offsets)."""
    need("objcopy")
    need("strip")
    b = build(tmp, "workload-inline.c", name, flags=("-O2", "-g", "-Wl,--build-id", *extra))
    o = offsets(b)
    dbg = b + ".debug"
    run("objcopy", "--only-keep-debug", b, dbg)
    run("strip", "--strip-all", b)
    return b, dbg, o


def chain_names(res, off):
    v = res.get(off)
    return [f[0] for f in v] if isinstance(v, list) else v


def case_buildid(tmp):
    b, dbg, o = stripped_pair(tmp)
    empty = os.path.join(tmp, "empty-root")
    os.makedirs(empty)
    info, r = resolve(b, [o["inner"]], root=empty)
    check(info["debug-file"] == "none -", "no debug file in an empty debug root")
    check("inner_inline" not in str(r), "the stripped binary alone has no inline names")

    root = os.path.join(tmp, "debug")
    bid = build_id_of(b)
    d = os.path.join(root, ".build-id", bid[:2])
    os.makedirs(d)
    # a wrong file at the build-id path is refused, not used
    other, other_dbg, _ = stripped_pair(tmp, "other", extra=("-O1",))
    shutil.copy(other_dbg, os.path.join(d, bid[2:] + ".debug"))
    info, r = resolve(b, [o["inner"]], root=root)
    check(info["debug-file"] == "none -", "a debug file with another build-id is not used")
    check("build-id mismatch" in info.get("notes", ""), "the build-id mismatch is said: %s" % info.get("notes"))

    shutil.copy(dbg, os.path.join(d, bid[2:] + ".debug"))
    info, r = resolve(b, [o["inner"], o["work"]], root=root)
    check(info["debug-file"].startswith("build-id %s/.build-id/%s/%s.debug" % (root, bid[:2], bid[2:])),
          "found by build-id: %s" % info["debug-file"])
    check(chain_names(r, o["inner"]) == ["inner_inline", "outer_inline", "work_function"],
          "inline chain from the debug file: %s" % chain_names(r, o["inner"]))
    check(all(f[4] == "debug-file" for f in r[o["inner"]]), "provenance says debug-file")
    check(chain_names(r, o["work"]) == ["work_function"], "plain function from the debug file")


def case_debuglink(tmp):
    b, dbg, o = stripped_pair(tmp)
    run("objcopy", "--add-gnu-debuglink=" + dbg, b)
    root = os.path.join(tmp, "empty-root")
    os.makedirs(root)
    info, r = resolve(b, [o["inner"]], root=root)
    check(info["debug-file"] == "debuglink %s" % dbg, "found by .gnu_debuglink next to the binary: %s" % info["debug-file"])
    check(chain_names(r, o["inner"]) == ["inner_inline", "outer_inline", "work_function"], "names through debuglink")

    # .debug/ subdirectory
    os.makedirs(os.path.join(tmp, ".debug"))
    shutil.move(dbg, os.path.join(tmp, ".debug", os.path.basename(dbg)))
    info, r = resolve(b, [o["inner"]], root=root)
    check(info["debug-file"] == "debuglink %s/.debug/%s" % (tmp, os.path.basename(dbg)), "found in .debug/")

    # the debug file changed after the link was made: CRC mismatch
    with open(os.path.join(tmp, ".debug", os.path.basename(dbg)), "ab") as f:
        f.write(b"changed")
    info, r = resolve(b, [o["inner"]], root=root)
    check(info["debug-file"] == "none -", "a debuglink target with the wrong CRC is refused")
    check("CRC mismatch" in info.get("notes", "") and "not used" in info.get("notes", ""),
          "the CRC mismatch is said: %s" % info.get("notes"))
    check("inner_inline" not in str(r), "no names from the refused file")


def pt_load(data, x, by_vaddr):
    """The (file offset, address) of the PT_LOAD holding x, an address
    (by_vaddr) or a file offset."""
    for t, o, v, fs in elf_phdrs(data):
        start = v if by_vaddr else o
        if t == 1 and start <= x < start + fs:
            return o, v
    raise SystemExit("%s 0x%x not in a PT_LOAD" % ("address" if by_vaddr else "offset", x))


def vaddr_to_offset(data, vaddr):
    o, v = pt_load(data, vaddr, True)
    return o + vaddr - v


def case_stripped_abs(tmp):
    """A stripped versioned library: its version nodes (ABS OBJECT symbols)
    and a data object over code never name a function's code."""
    for p in ("strip", "nm", "readelf"):
        need(p)
    script = os.path.join(tmp, "lib.map")
    with open(script, "w") as f:
        f.write("PERISCOPE_TEST_1.0 { global: exported_entry; code_alias_object; local: *; };\n")
    lib = build(tmp, "workload-versioned.c", "libversioned.so.1",
                flags=("-O2", "-fPIC", "-shared", "-Wl,--version-script=" + script, "-Wl,-soname,libversioned.so.1"))
    syms = {l.split()[0]: int(l.split()[2], 16)
            for l in run("nm", "--format=posix", "--defined-only", lib).splitlines() if len(l.split()) >= 3}
    check("hidden_work" in syms and "exported_entry" in syms, "the library has its symbols before strip")
    run("strip", "--strip-all", lib)
    dyn = run("readelf", "-W", "--dyn-syms", lib)
    check(re.search(r"OBJECT +GLOBAL +DEFAULT +ABS PERISCOPE_TEST_1.0", dyn) and
          re.search(r"64 OBJECT +GLOBAL +DEFAULT +\d+ code_alias_object", dyn),
          "the stripped library keeps an ABS version node and the object alias in .dynsym")
    with open(lib, "rb") as f:
        data = f.read()
    hidden = hex(vaddr_to_offset(data, syms["hidden_work"] + 4))
    entry = hex(vaddr_to_offset(data, syms["exported_entry"]))
    obj = hex(vaddr_to_offset(data, syms["code_alias_object"] + 4))
    r = symbolize(lib, [hidden, obj, entry])
    names = str(r.get(hidden))
    check("PERISCOPE_TEST" not in names and "libversioned" not in names and "code_alias_object" not in names,
          "a static function's code is not named after a version node or a data object: %s" % names)
    check(r.get(hidden) == "status 1", "it is said to have no symbol (status 1): %s" % names)
    check(r.get(obj) == "status 1", "code under a data object is not named after it: %s" % r.get(obj))
    check(chain_names(r, entry) == ["exported_entry"], "the exported function keeps its name: %s" % chain_names(r, entry))


def case_minidebuginfo(tmp):
    """MiniDebugInfo built like Fedora's find-debuginfo does."""
    for p in ("objcopy", "strip", "nm", "xz"):
        need(p)
    b = build(tmp, "workload-inline.c", "inl", flags=("-O2", "-g"))
    o = offsets(b)
    dyn = set(l.split()[0] for l in run("nm", "-D", "--format=posix", "--defined-only", b).splitlines())
    funcs = set(l.split()[0] for l in run("nm", "--format=posix", "--defined-only", b).splitlines()
                if len(l.split()) > 1 and l.split()[1] in ("T", "t", "D"))
    keep = os.path.join(tmp, "keep")
    with open(keep, "w") as f:
        f.write("\n".join(sorted(funcs - dyn)) + "\n")
    dbg = os.path.join(tmp, "debug")
    mini = os.path.join(tmp, "mini_debuginfo")
    run("objcopy", "--only-keep-debug", b, dbg)
    run("objcopy", "-S", "--remove-section", ".gdb_index", "--remove-section", ".comment",
        "--keep-symbols=" + keep, dbg, mini)
    run("xz", "-f", mini)
    run("strip", "--strip-all", "--remove-section", ".comment", b)
    run("objcopy", "--add-section", ".gnu_debugdata=" + mini + ".xz", b)
    ident = run(TOOL, "identify", b)
    print(ident)
    check(" gnu_debugdata" in ident and " symtab" not in ident and " dwarf" not in ident,
          "the binary has only MiniDebugInfo")
    root = os.path.join(tmp, "empty-root")
    os.makedirs(root)
    info, r = resolve(b, [o["work"], o["inner"]], root=root)
    check(chain_names(r, o["work"]) == ["work_function"], "function named from MiniDebugInfo: %s" % chain_names(r, o["work"]))
    check(r[o["work"]][0][4] == "minidebuginfo", "provenance says minidebuginfo")
    check(chain_names(r, o["inner"]) == ["work_function"], "an inlined point is named by its function (no DWARF)")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def case_debuginfod(tmp):
    import time
    import urllib.request
    need("debuginfod")
    b, dbg, o = stripped_pair(tmp)
    served = os.path.join(tmp, "served")
    os.makedirs(served)
    shutil.move(dbg, os.path.join(served, "inl.debug"))
    port = free_port()
    db = os.path.join(tmp, "debuginfod.sqlite")
    srv = subprocess.Popen(["debuginfod", "-F", "-p", str(port), "-d", db, "-t", "1", served],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        scanned = False
        for _ in range(200):
            try:
                m = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=2).read().decode()
                vals = [float(l.split()[-1]) for l in m.splitlines() if l.startswith("scanned_files_total")]
                if vals and sum(vals) >= 1:
                    scanned = True
                    break
            except OSError:
                pass
            time.sleep(0.1)
        if not scanned:
            raise SystemExit("debuginfod on port %d did not scan %s in 20 s" % (port, served))
        root = os.path.join(tmp, "empty-root")
        os.makedirs(root)
        env = dict(os.environ, DEBUGINFOD_URLS="http://127.0.0.1:%d" % port,
                   DEBUGINFOD_CACHE_PATH=os.path.join(tmp, "cache"))
        info, r = resolve(b, [o["inner"]], root=root, env=env)
        check(info["debug-file"] == "none -", "debuginfod is not asked unless the option is on")
        info, r = resolve(b, [o["inner"]], root=root, debuginfod=True, env=env)
        check(info["debug-file"].startswith("debuginfod "), "fetched from debuginfod: %s" % info["debug-file"])
        check(chain_names(r, o["inner"]) == ["inner_inline", "outer_inline", "work_function"],
              "names from the debuginfod file")
        if os.geteuid() == 0:
            # root's fetches run as the fetcher's own unprivileged user, in its cache
            bid = [l.split()[-1] for l in subprocess.run(["readelf", "-n", b], capture_output=True, text=True)
                   .stdout.splitlines() if "Build ID" in l][0]
            cached = os.path.join("/var/cache/periscope/debuginfod", bid, "debuginfo")
            st = os.stat(cached)
            check(st.st_uid != 0, "the fetcher (not root) wrote %s: uid %d" % (cached, st.st_uid))
    finally:
        srv.kill()
        srv.wait()


def elf_phdrs(data):
    import struct
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    out = []
    for i in range(phnum):
        p_type, p_flags, p_offset, p_vaddr, _, p_filesz, _, _ = struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)
        out.append((p_type, p_offset, p_vaddr, p_filesz))
    return out


def offset_to_vaddr(data, off):
    o, v = pt_load(data, off, False)
    return v + off - o


def uleb(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def dwarf_bomb(kind, low, size):
    """(.debug_abbrev, .debug_info, .debug_aranges) of a hostile DWARF unit
    covering [low, low+size)."""
    import struct
    abbrev = bytearray()
    abbrev += b"\x01\x11\x01" + b"\x03\x08\x11\x01\x12\x07" + b"\x00\x00"     # CU
    abbrev += b"\x02\x2e\x01" + b"\x03\x08\x11\x01\x12\x07" + b"\x00\x00"     # subprogram
    abbrev += b"\x03\x0b\x01" + b"\x11\x01\x12\x07" + b"\x00\x00"             # lexical_block
    abbrev += b"\x04\x1d\x01" + b"\x31\x13\x11\x01\x12\x07" + b"\x00\x00"     # inlined_subroutine
    if kind == "abbrev":
        # one abbreviation with two million attributes
        abbrev += b"\x05\x0b\x01" + b"\x11\x01\x12\x07" + b"\x03\x19" * 2000000 + b"\x00\x00"
    abbrev += b"\x00"
    body = bytearray()
    rng = struct.pack("<QQ", low, size)
    body += b"\x01" + b"bomb.c\x00" + rng
    body += b"\x02" + b"bomb\x00" + rng
    depth = 0
    if kind == "deep":
        body += (b"\x03" + rng) * 400000
        depth = 400000
    elif kind == "loop":
        # inlined_subroutine whose abstract origin is itself (offset from CU start)
        off = 11 + len(body)
        body += b"\x04" + struct.pack("<I", off) + rng
        depth = 1
    elif kind == "abbrev":
        body += b"\x05" + rng
        depth = 1
    body += b"\x00" * (depth + 2)
    hdr = struct.pack("<HIB", 4, 0, 8)
    info = struct.pack("<I", len(hdr) + len(body)) + hdr + body
    ar = struct.pack("<HIBB", 2, 0, 8, 0) + b"\x00" * 4 + struct.pack("<QQQQ", low, size, 0, 0)
    aranges = struct.pack("<I", len(ar)) + ar
    return bytes(abbrev), info, aranges


def case_hostile(tmp):
    import struct
    need("objcopy")
    good = build(tmp, "workload-inline.c", "good")
    o = offsets(good)
    data = open(good, "rb").read()
    hostile = {}

    def write(name, content):
        p = os.path.join(tmp, name)
        with open(p, "wb") as f:
            f.write(content)
        hostile[name] = p

    write("truncated-header", data[:40])
    write("truncated-half", data[:len(data) // 2])
    shoff, = struct.unpack_from("<Q", data, 40)
    shnum, shstrndx = struct.unpack_from("<HH", data, 60)
    # every section at the same offset with a size past the end of the file
    d = bytearray(data)
    for i in range(shnum):
        struct.pack_into("<QQ", d, shoff + i * 64 + 24, 64, len(data) * 4)
    write("overlapping-sections", bytes(d))
    # huge counts: 65535 program and section headers, offsets near the end
    d = bytearray(data)
    struct.pack_into("<H", d, 56, 0xffff)
    struct.pack_into("<H", d, 60, 0xffff)
    write("huge-counts", bytes(d))
    # a symbol table claiming an enormous size and entries
    d = bytearray(data)
    for i in range(shnum):
        t, = struct.unpack_from("<I", d, shoff + i * 64 + 4)
        if t in (2, 11):  # SHT_SYMTAB, SHT_DYNSYM
            struct.pack_into("<Q", d, shoff + i * 64 + 32, 0x7fffffffffff)
    write("huge-symtab", bytes(d))
    # bad string offsets: section names, and the symbol/string table links
    d = bytearray(data)
    for i in range(shnum):
        struct.pack_into("<I", d, shoff + i * 64, 0xfffffff0)
        t, = struct.unpack_from("<I", d, shoff + i * 64 + 4)
        if t in (2, 11):
            struct.pack_into("<I", d, shoff + i * 64 + 40, 0xffff)
    write("bad-string-offsets", bytes(d))
    d = bytearray(data)
    struct.pack_into("<H", d, 62, 0xfffe)
    write("bad-shstrndx", bytes(d))

    # DWARF bombs on a copy without its own debug info
    nodebug = os.path.join(tmp, "nodebug")
    run("objcopy", "--strip-debug", good, nodebug)
    vaddr = offset_to_vaddr(data, int(o["work"], 16))
    for kind in ("deep", "loop", "abbrev"):
        ab, info, ar = dwarf_bomb(kind, vaddr - 0x40, 0x100)
        open(os.path.join(tmp, "abbrev"), "wb").write(ab)
        open(os.path.join(tmp, "info"), "wb").write(info)
        open(os.path.join(tmp, "aranges"), "wb").write(ar)
        out = os.path.join(tmp, "dwarf-bomb-" + kind)
        run("objcopy", "--add-section", ".debug_abbrev=" + os.path.join(tmp, "abbrev"),
            "--add-section", ".debug_info=" + os.path.join(tmp, "info"),
            "--add-section", ".debug_aranges=" + os.path.join(tmp, "aranges"), nodebug, out)
        hostile["dwarf-bomb-" + kind] = out

    args = [TOOL, "--timeout", "8000", "--cpu", "8", "batch"]
    offs = ",".join([o["inner"], o["work"]])
    for name, path in hostile.items():
        args += [path, offs, good, offs]
    p = subprocess.run(args, capture_output=True, text=True, timeout=600)
    print(p.stdout[-20000:], p.stderr[-5000:])
    check(p.returncode == 0, "the client survives every hostile file")
    sections = p.stdout.split("== ")[1:]
    check(len(sections) == 2 * len(hostile), "every file got an answer (%d of %d)" % (len(sections), 2 * len(hostile)))
    names = list(hostile)
    restarts = 0
    last_starts = 1
    for i in range(0, len(sections) - 1, 2):
        bad, ok = sections[i], sections[i + 1]
        name = names[i // 2]
        failed = "[unresolved: " in bad
        res = symbolize_parse(ok)
        check(chain_names(res, o["inner"]) == ["inner_inline", "outer_inline", "work_function"],
              "after %s the next file is symbolized correctly" % name)
        # a hostile file yields, per address, names or a reason
        lines = [l for l in bad.splitlines()[1:] if l.startswith("0x")]
        check(len(lines) == 2 and all(" status " in l or "[unresolved: " in l for l in lines),
              "%s: an answer or a reason for each address" % name)
        starts = int(ok.strip().splitlines()[-1].split()[1])
        if starts > last_starts:
            restarts += 1
        last_starts = starts
        print("%s: %s" % (name, "unresolved" if failed else "answered"))
    print("helper restarts: %d" % restarts)
    # the deep DIE chain (400000 nested blocks) once overflowed libdw's
    # recursion (dwarf_getscopes) and killed the helper; the helper now
    # finds functions with its own bounded walk (dwarf-functions.c) and
    # names the function that holds the addresses. (A helper that dies is
    # restarted: sandbox-helper-client-failures crashes one through the
    # real launcher.)
    deep = sections[names.index("dwarf-bomb-deep") * 2]
    deep_lines = [l for l in deep.splitlines()[1:] if l.strip()]
    check([l.split()[0] for l in deep_lines if l.startswith("  ")] == ["bomb", "bomb"],
          "the DWARF bomb's addresses are named by their function, bomb, through the bounded walk")


def start_waiting_workload(b):
    """Starts workload b that waits on its stdin: (the process, its labels'
    addresses as it printed them before "ready")."""
    p = subprocess.Popen([b], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         env=dict(os.environ, WORKLOAD_WAIT="1"))
    labels = {}
    for line in p.stdout:
        if line.strip() == "ready":
            break
        lab, off, addr = line.split()
        labels[lab] = addr
    return p, labels


def case_stage(tmp):
    """The service's symbolization stage on a live process: names survive the
    binary's deletion, both tables agree, kernel names from kallsyms."""
    stage = os.environ["STAGE_TOOL"]
    b = build(tmp, "workload-inline.c", "inl")
    p, labels = start_waiting_workload(b)
    kaddr = None
    ksyms = []
    with open("/proc/kallsyms") as f:
        for l in f:
            a, t, name = l.split()[:3]
            if name == "schedule" and t in "tT":
                kaddr = int(a, 16)
            if t in "tT" and len(l.split()) == 3:
                ksyms.append((int(a, 16), name))
    if not kaddr:
        raise SystemExit("/proc/kallsyms has no readable 'schedule' (run as root, kptr_restrict 0)")
    kaddr_in = "0x%xk" % (kaddr + 4)
    # a kernel return address at the very start of the next function (the
    # caller ended in a noreturn call) is named by the caller; the next
    # function starts at schedule, or at its __pfx_schedule padding symbol
    ksyms.sort()
    starts = {a: n for a, n in ksyms}
    kret = max((a for a, n in ksyms if n == "__pfx_schedule" and a < kaddr), default=kaddr)
    kprev = starts[max(a for a in starts if a < kret)]
    cap = os.path.join(tmp, "out.syscap")
    addrs = [labels["inner"], labels["work"], labels["main"]]
    out = run(stage, "record", str(p.pid), cap, *addrs, "0x10", kaddr_in, "0x%xkr" % kret)
    print(out)
    check("progress 0/6" in out and "progress 6/6" in out, "progress from 0 to all 6 addresses")
    # the profiled program goes away and its binary is deleted
    os.unlink(b)
    p.stdin.close()
    p.wait()
    out = run(stage, "read", cap, str(p.pid), *addrs, "0x10", "0x%x" % (kaddr + 4), "0x%x" % kret)
    print(out)
    per = {l.split(": ", 1)[0].split()[1]: [x.strip() for x in l.split(": ", 1)[1].split("|") if x.strip()]
           for l in out.splitlines() if l.startswith("periscope ")}
    sysp = {l.split(": ", 1)[0].split()[1]: l.split(": ", 1)[1] for l in out.splitlines() if l.startswith("sysprof ")}
    check(per[labels["inner"]] == ["inner_inline [inlined]", "outer_inline [inlined]", "work_function"],
          "after deletion: inline chain from the capture: %s" % per[labels["inner"]])
    check(per[labels["work"]] == ["work_function"] and per[labels["main"]] == ["main"], "plain functions")
    for a in addrs:
        check(sysp[a] == per[a][-1].replace(" [inlined]", ""),
              "__symbols__ (3.46 layout) names %s like the Periscope table: %s" % (a, sysp[a]))
    check(per["0x10"][0].startswith("[unresolved: no mapping"), "an address outside every mapping says why")
    kk = "0x%x" % (kaddr + 4)
    check(per[kk] == ["schedule"] and sysp[kk] == "schedule", "kernel address named from kallsyms")
    kr = "0x%x" % kret
    check(per[kr] == [kprev] and sysp[kr] == kprev,
          "a kernel return address at the first byte after %s is named %s: %s" % (kprev, kprev, per[kr]))
    check(("mapping %s: %s |" % (labels["work"], b)) in out and "pinned via map_files" in out,
          "mapping provenance recorded with the file that was read")


def case_stage_cut(tmp):
    """The symbolization stage cut short as at the service's stop: the
    addresses say why they have no names, and their mapping keeps the
    build-id `periscope symbolize` needs: the helper's when it still
    identified the file (hurry), the kernel's when the helper was not asked
    any more (cut now); kernel names still come from kallsyms."""
    stage = os.environ["STAGE_TOOL"]
    b = build(tmp, "workload-inline.c", "inl", flags=("-O2", "-g", "-Wl,--build-id"))
    bid = build_id_of(b)
    p, labels = start_waiting_workload(b)
    why = "cut short by shutdown"
    addrs = [labels["inner"], labels["work"], labels["main"]]

    def record_read(name, *opts):
        cap = os.path.join(tmp, name + ".syscap")
        out = run(stage, "record", str(p.pid), cap, *opts, *addrs)
        print(out)
        st = out.splitlines()[-1].split()
        read = run(stage, "read", cap, str(p.pid), *addrs)
        print(read)
        per = {l.split(": ", 1)[0].split()[1]: l.split(": ", 1)[1] for l in read.splitlines()
               if l.startswith("periscope ")}
        maps = {l.split(": ", 1)[0].split()[1]: [x.strip() for x in l.split(": ", 1)[1].split("|")]
                for l in read.splitlines() if l.startswith("mapping ")}
        return dict(zip(st[1::2], st[2::2])), per, maps

    st, per, maps = record_read("hurry", "--hurry", why)
    check(st["cut-short"] == "3" and st["resolved"] == "0" and st["files"] == "1",
          "hurry: the file is identified, its 3 addresses cut short: %s" % st)
    check(all(per[a].strip() == "[unresolved: %s] [unresolved] |" % why for a in addrs),
          "hurry: every address says why it has no name: %s" % per)
    check(all(maps[a][-1] == bid for a in addrs), "hurry: the mapping keeps the helper's build-id %s" % bid)

    st, per, maps = record_read("now", "--cut-now", why)
    check(st["cut-short"] == "3" and st["files"] == "0", "cut now: the helper is not asked: %s" % st)
    check(all(maps[a][-1] == "-" for a in addrs), "cut now, no build-id from the kernel: none claimed")

    kbid = bid
    st, per, maps = record_read("now-kernel", "--cut-now", why, "--kernel-build-id", kbid)
    check(all(per[a].strip() == "[unresolved: %s] [unresolved] |" % why for a in addrs),
          "cut now: every address says why it has no name")
    check(all(maps[a][-1] == kbid for a in addrs), "cut now: the mapping keeps the kernel's build-id")
    p.stdin.close()
    p.wait()


def jit_names(fmt, path, addrs):
    """helper-tool jit: (entries, refused, {addr: (start, size, name, where)} or error text)."""
    out = run(TOOL, "jit", fmt, path, *["%x" % a for a in addrs])
    lines = out.splitlines()
    if lines[0].startswith("error "):
        return lines[0][6:]
    head = lines[0].split()
    res = {}
    for l in lines[1:]:
        f = l.split(" ", 3)
        if f[1] == "-":
            res[int(f[0], 16)] = None
            continue
        name, _, where = f[3].partition(" @ ")
        res[int(f[0], 16)] = (int(f[1], 16), int(f[2], 16), name, where or None)
    return int(head[1]), int(head[3]), res


def jitdump(records, big_endian=False, version=1, header_size=40, magic=0x4A695444):
    """A jitdump: header + records (id, payload bytes); lengths from the payloads."""
    import struct
    e = ">" if big_endian else "<"
    out = struct.pack(e + "IIIIIIQQ", magic, version, header_size, 62, 0, 1234, 1, 0)[:max(header_size, 32)]
    out += b"\0" * (header_size - len(out))
    for rid, payload, *size in records:
        total = size[0] if size else 16 + len(payload)
        out += struct.pack(e + "IIQ", rid, total, 2) + payload
    return out


def jd_load(vma, size, index, name, e="<"):
    import struct
    return (0, struct.pack(e + "IIQQQQ", 1, 1, vma, vma, size, index) + name + b"\0" + b"\x90" * size)


def jd_move(old, new, size, index, e="<"):
    import struct
    return (1, struct.pack(e + "IIQQQQQ", 1, 1, new, old, new, size, index))


def jd_debug(addr, entries, e="<", count=None):
    import struct
    body = b"".join(struct.pack(e + "QII", a, line, 0) + f + b"\0" for a, line, f in entries)
    return (2, struct.pack(e + "QQ", addr, len(entries) if count is None else count) + body)


def case_jit_hostile(tmp):
    """Hostile perf maps and jitdumps: each costs only its own entries."""
    pm = os.path.join(tmp, "perf-1.map")
    with open(pm, "wb") as f:
        f.write(b"1000 10 alpha\n0x2000 0x20 beta with spaces\r\nzzzz 10 bad\n3000 0 zero\n"
                b"ffffffffffffffff 10 wrap\n4000 10\n12345678901234567 10 toolong\n5000 10 nul\0inside\n"
                b"\n6000 10 bad\xff\xfeutf8\n1008 4 inner-later\n" + b"8" * 100000 + b" 10 endless\n"
                b"8000 10 " + b"x" * 5000 + b"\n7000 10 last-no-newline")
    entries, refused, r = jit_names("perf-map", pm, [0x1000, 0x1009, 0x100c, 0x2010, 0x3000, 0x4000, 0x5000,
                                                     0x6000, 0x7005, 0x8000, 0x9000])
    check(refused == 7 and entries == 13, "perf map: 7 of 13 lines refused (bad hex, size 0, wrap, no name, 17 digits, NUL, 100 kB line): %d of %d" % (refused, entries))
    check(r[0x1000][2] == "alpha" and r[0x100c][2] == "alpha" and r[0x1009][2] == "inner-later",
          "perf map: the later entry wins where it overlaps an earlier one, only there")
    check(r[0x2010][:3] == (0x2000, 0x20, "beta with spaces"), "perf map: names keep their spaces, lose the CR")
    check(all(r[a] is None for a in (0x3000, 0x4000, 0x5000, 0x9000)), "perf map: refused lines name nothing")
    check(r[0x6000][2] == "bad??utf8", "perf map: bad UTF-8 becomes '?': %r" % (r[0x6000],))
    check(r[0x7005][2] == "last-no-newline", "perf map: a last line without a newline is read")
    check(r[0x8000][2] == "x" * 4096, "perf map: a 5000-byte name is cut at 4096 bytes")
    # Many entries covering one address: the newest wins, fast.
    many = os.path.join(tmp, "perf-2.map")
    with open(many, "w") as f:
        for i in range(300000):
            f.write("10000 100000 f%d\n" % i)
    import time
    t = time.time()
    entries, refused, r = jit_names("perf-map", many, [0x10000 + 16 * i for i in range(5000)])
    took = time.time() - t
    check(entries == 300000 and all(v[2] == "f299999" for v in r.values()) and took < 10,
          "perf map: 300000 overlapping entries, 5000 addresses: the last line names all, %.1f s" % took)
    check(isinstance(jit_names("perf-map", "/dev/null", [1]), str), "perf map: a device is refused")

    # jitdumps
    def dump(name, data):
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        return path
    good = [jd_debug(0x10000, [(0x10000, 7, b"f1.js"), (0x10010, 8, b"f1.js")]), jd_load(0x10000, 0x100, 1, b"f1"),
            jd_move(0x10000, 0x20000, 0x100, 1), jd_load(0x30000, 0x10, 2, b"f2")]
    for be in (False, True):
        e = ">" if be else "<"
        recs = [jd_debug(0x10000, [(0x10000, 7, b"f1.js"), (0x10010, 8, b"f1.js")], e),
                jd_load(0x10000, 0x100, 1, b"f1", e), jd_move(0x10000, 0x20000, 0x100, 1, e),
                jd_load(0x30000, 0x10, 2, b"f2", e)]
        entries, refused, r = jit_names("jitdump", dump("jit-%d.dump" % be, jitdump(recs, be)),
                                        [0x10004, 0x10012, 0x20012, 0x30000, 0x40000])
        check(r[0x10004][2:] == ("f1", "f1.js:7") and r[0x10012][2:] == ("f1", "f1.js:8")
              and r[0x20012][2:] == ("f1", "f1.js:8") and r[0x20012][0] == 0x20000
              and r[0x30000][2:] == ("f2", None) and r[0x40000] is None,
              "jitdump (%s-endian): loads, a move with its lines, DEBUG_INFO" % ("big" if be else "little"))
    for what, data in [("wrong magic", jitdump(good, magic=0x12345678)), ("version 2", jitdump(good, version=2)),
                       ("a 1 GiB header", jitdump(good)[:8] + (1 << 30).to_bytes(4, "little") + jitdump(good)[12:]),
                       ("a short file", b"JiTD")]:
        res = jit_names("jitdump", dump("bad.dump", data), [0x10004])
        check(isinstance(res, str) and "jitdump" in res, "jitdump: %s is refused: %s" % (what, res))
    bad = [jd_debug(0x50000, [(0x50000, 1, b"x.js")], count=1 << 40),  # absurd entry count
           jd_load(0x50000, 0x10, 3, b"lines-refused"),
           (0, jd_load(0x60000, 0x10, 4, b"nonul")[1].replace(b"nonul\0", b"nonulX")),  # no NUL in record
           jd_load(0xfffffffffffffff0, 0x100, 5, b"wraps"),
           jd_move(0x70000, 0x80000, 0x10, 99),  # never loaded
           jd_move(0x50000, 0x90000, 0x20, 3),  # size changed
           (77, b"future record type"),
           jd_load(0xa0000, 0x10, 6, b"after-unknown")]
    entries, refused, r = jit_names("jitdump", dump("hostile.dump", jitdump(bad)),
                                    [0x50000, 0x60000, 0x80000, 0x90000, 0xa0000])
    check(refused == 5 and r[0x50000][2:] == ("lines-refused", None) and r[0x60000] is None and r[0x80000] is None
          and r[0x90000] is None and r[0xa0000][2] == "after-unknown",
          "jitdump: bad DEBUG_INFO, no NUL, wrapping range, moves of unknown or resized code refused (%d), "
          "unknown records skipped" % refused)
    # A record that claims to run past the file (still being written) ends it; one shorter than its header too.
    cut = jitdump(good + [(0, jd_load(0xb0000, 0x10, 7, b"cut")[1], 1 << 20)])
    entries, refused, r = jit_names("jitdump", dump("cut.dump", cut), [0x30000, 0xb0000])
    check(r[0x30000][2] == "f2" and r[0xb0000] is None, "jitdump: a record past the end of the file ends it")
    tiny = jitdump(good[:2] + [(0, b"", 8)] + good[2:])
    entries, refused, r = jit_names("jitdump", dump("tiny.dump", tiny), [0x10004, 0x30000])
    check(r[0x10004][2] == "f1" and r[0x30000] is None and refused == 1,
          "jitdump: a record shorter than its header stops the file there")


CASES = {k[5:].replace("_", "-"): v for k, v in globals().items() if k.startswith("case_")}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        raise SystemExit("usage: helper_test.py {%s}" % "|".join(CASES))
    with tempfile.TemporaryDirectory(prefix="periscope-helper-test.") as tmp:
        CASES[sys.argv[1]](tmp)
    if failures:
        raise SystemExit("%d check(s) failed" % len(failures))
