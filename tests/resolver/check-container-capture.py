#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Checks a capture recorded from container processes (periscope dump --json):
the container description chunk, OVERLAY layers, identity-checked pins of the
workload's files, and that >= 95% of the workload's samples carry the right
function names (hot_inner called from hot_outer), symbolized from the
workload's binary at the addresses the capture recorded; for ENGINE flatpak,
the process's /.flatpak-info embedded.

usage: check-container-capture.py DUMP.json PID ENGINE NAME OWNER BINARY MAPPED-PATH PIN-HOW [LAYER-PREFIX]
PID "all:N": every process that mapped MAPPED-PATH, at least N of them.
SINCE_EXEC=1 in the environment: a process's samples count from its exec of
MAPPED-PATH on (its PROCESS frame); before, it ran another program (runc's
init for `podman exec`), whose samples are not the workload's.
"""
import base64
import bisect
import json
import os
import subprocess
import sys

dump, pid_spec, engine, name, owner, binary, mapped, pin_how = sys.argv[1:9]
capture = os.environ.get("CAPTURE")    # with PERISCOPE: also check `periscope report`
layer_prefix = sys.argv[9] if len(sys.argv) > 9 else None
USER_MARK = 0xfffffffffffffe00  # PERF_CONTEXT_USER


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


d = json.load(open(dump))
if d.get("error"):
    fail("capture read error: %s" % d["error"])
frames = d["frames"]


def chunks(path, fpid=None):
    data = b""
    for f in frames:
        if f["type"] == "FILE_CHUNK" and f["path"] == path and (fpid is None or f["pid"] == fpid):
            data += base64.b64decode(f["data_base64"])
    return data.decode("utf-8", "replace")


# Symbol table of the workload binary: (address, name) of functions.
syms = []
for line in subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout.splitlines():
    parts = line.split()
    if len(parts) == 3 and parts[1] in "tTwW":
        syms.append((int(parts[0], 16), parts[2]))
syms.sort()
addrs = [a for a, _ in syms]
pins = chunks("/.periscope/pinned-files").splitlines()


def check_pid(pid):
    desc = dict(l.split("=", 1) for l in chunks("periscope:container", pid).splitlines() if "=" in l)
    if not desc:
        fail("no periscope:container chunk for pid %d" % pid)
    for k, v in (("engine", engine), ("name", name), ("owner-uid", owner)):
        if desc.get(k) != v:
            fail("pid %d: container %s is %r, expected %r (%r)" % (pid, k, desc.get(k), v, desc))
    print("ok: pid %d described as %s %s (id %s, image %s, owner %s)" % (pid, engine, name, desc.get("id", "")[:12], desc.get("image"), owner))
    if engine == "flatpak":
        info = chunks("/.flatpak-info", pid).splitlines()
        if "name=" + name not in info or not any(l.startswith("app-path=") for l in info):
            fail("pid %d: /.flatpak-info not embedded with name=%s and app-path: %r" % (pid, name, info[:10]))
        print("ok: pid %d: its /.flatpak-info embedded (%d lines)" % (pid, len(info)))

    if layer_prefix:
        layers = [f for f in frames if f["type"] == "OVERLAY" and f["pid"] == pid]
        if len(layers) < 2 or not all(l["src"].startswith(layer_prefix) and l["dst"] == "/" for l in layers):
            fail("pid %d: OVERLAY frames missing or outside %s: %r" % (pid, layer_prefix, layers))
        print("ok: %d OVERLAY layers under %s" % (len(layers), layer_prefix))

    maps = [f for f in frames if f["type"] == "MAP" and f["pid"] == pid]
    inode = next((m["inode"] for m in maps if m["filename"] == mapped), None)
    if inode is None:
        fail("no MAP of %s for pid %d" % (mapped, pid))
    pin = [p for p in pins if p.split(" ")[1:2] == [str(inode)]]
    if not pin or pin_how not in pin[0] or "checked" not in pin[0]:
        fail("%s (inode %d) not pinned via %s with its identity checked: %r" % (mapped, inode, pin_how, pins))
    print("ok: pinned:", pin[0])

    def symbolize(ip):
        for m in maps:
            s, e = int(m["start"], 16), int(m["end"], 16)
            if s <= ip < e:
                if m["filename"] != mapped:
                    return m["filename"]
                vaddr = ip - s + int(m["file_offset"], 16)
                i = bisect.bisect_right(addrs, vaddr) - 1
                return syms[i][1] if i >= 0 else "?"
        return "[unmapped]"

    since = None
    if os.environ.get("SINCE_EXEC"):
        # the program's command line, or, for a process caught while it
        # exec'd (its /proc cmdline not readable yet), the kernel's "[comm]"
        # (comm is cut to 15 characters)
        prog = os.path.basename(mapped)
        execs = [f["time"] for f in frames if f["type"] == "PROCESS" and f["pid"] == pid and
                 (os.path.basename(f["cmdline"].split(" ")[0]) == prog or f["cmdline"] == "[%s]" % prog[:15])]
        if not execs:
            fail("pid %d: no PROCESS frame running %s" % (pid, mapped))
        since = max(execs)
    before = sum(1 for f in frames if f["type"] == "SAMPLE" and f["pid"] == pid and since is not None and f["time"] < since)
    if since is not None:
        print("ok: pid %d: %d samples before its exec of %s (another program) left out" % (pid, before, mapped))
    total = good = 0
    for f in frames:
        if f["type"] != "SAMPLE" or f["pid"] != pid or (since is not None and f["time"] < since):
            continue
        a = [int(x, 16) for x in f["addresses"]]
        if USER_MARK not in a:
            continue
        user = [x for x in a[a.index(USER_MARK) + 1:] if x <= 0xfffffffffffff000]
        if not user:
            continue
        total += 1
        leaf = symbolize(user[0])
        caller = symbolize(user[1] - 1) if len(user) > 1 else None
        if leaf == "hot_inner" and caller == "hot_outer":
            good += 1
        elif total - good <= 3:
            print("  sample %s: %s <- %s" % ([hex(x) for x in user], leaf, caller), file=sys.stderr)
    if total < 20:
        fail("only %d user samples of pid %d" % (total, pid))
    share = good / total
    print("ok: pid %d: %d/%d samples (%.1f%%) are hot_inner <- hot_outer" % (pid, good, total, 100 * share))
    if share < 0.95:
        fail("pid %d: only %.1f%% of samples carry the right names" % (pid, 100 * share))

    # The service's own symbolization (embedded symbols) must say the same.
    if capture and os.environ.get("PERISCOPE"):
        out = subprocess.run([os.environ["PERISCOPE"], "report", "--folded", "--no-progress", "-p", str(pid), capture],
                             capture_output=True, text=True)
        if out.returncode != 0:
            fail("periscope report failed: %s" % out.stderr)
        total = good = 0
        for line in out.stdout.splitlines():
            stack, _, count = line.rpartition(" ")
            user = [f for f in stack.split(";") if not f.endswith("[kernel]")]
            total += int(count)
            if user[-2:] == ["hot_outer", "hot_inner"]:
                good += int(count)
        total -= before  # the report has no time filter: the pre-exec samples leave by count
        if total <= 0 or good / total < 0.95:
            fail("pid %d: periscope report names hot_outer;hot_inner in only %d/%d samples:\n%s" % (pid, good, total, out.stdout[:2000]))
        print("ok: pid %d: periscope report: %d/%d samples (%.1f%%) main;hot_outer;hot_inner" % (pid, good, total, 100 * good / total))


if pid_spec.startswith("all:"):
    pids = sorted({f["pid"] for f in frames if f["type"] == "MAP" and f["filename"] == mapped})
    if len(pids) < int(pid_spec[4:]):
        # What each process of the capture looked like, to see which one is missing and why.
        for p in sorted({f["pid"] for f in frames if f["type"] in ("PROCESS", "MAP")}):
            procs = [(f["time"], f["cmdline"]) for f in frames if f["type"] == "PROCESS" and f["pid"] == p]
            files = sorted({f["filename"] for f in frames if f["type"] == "MAP" and f["pid"] == p})
            n = sum(1 for f in frames if f["type"] == "SAMPLE" and f["pid"] == p)
            print("  pid %d: %d samples, PROCESS %r, MAP %s" % (p, n, procs, " ".join(files)[:300]), file=sys.stderr)
        fail("only %d processes mapped %s, expected at least %s" % (len(pids), mapped, pid_spec[4:]))
    for p in pids:
        check_pid(p)
else:
    check_pid(int(pid_spec))
