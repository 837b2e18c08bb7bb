#!/usr/bin/env python3
"""Checks a capture recorded from a container process (periscope dump --json):
the container description chunk, OVERLAY layers, identity-checked pins of the
workload's files, and that >= 95% of the workload's samples carry the right
function names (hot_inner called from hot_outer), symbolized from the
workload's binary at the addresses the capture recorded.

usage: check-container-capture.py DUMP.json PID ENGINE NAME OWNER BINARY MAPPED-PATH PIN-HOW [LAYER-PREFIX]
"""
import base64
import bisect
import json
import subprocess
import sys

dump, pid, engine, name, owner, binary, mapped, pin_how = sys.argv[1:9]
layer_prefix = sys.argv[9] if len(sys.argv) > 9 else None
pid = int(pid)


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


desc = dict(l.split("=", 1) for l in chunks("periscope:container", pid).splitlines() if "=" in l)
if not desc:
    fail("no periscope:container chunk for pid %d" % pid)
for k, v in (("engine", engine), ("name", name), ("owner-uid", owner)):
    if desc.get(k) != v:
        fail("container %s is %r, expected %r (%r)" % (k, desc.get(k), v, desc))
print("ok: pid %d described as %s %s (id %s, image %s, owner %s)" % (pid, engine, name, desc.get("id", "")[:12], desc.get("image"), owner))

if layer_prefix:
    layers = [f for f in frames if f["type"] == "OVERLAY" and f["pid"] == pid]
    if len(layers) < 2 or not all(l["src"].startswith(layer_prefix) and l["dst"] == "/" for l in layers):
        fail("OVERLAY frames missing or outside %s: %r" % (layer_prefix, layers))
    print("ok: %d OVERLAY layers under %s" % (len(layers), layer_prefix))

maps = [f for f in frames if f["type"] == "MAP" and f["pid"] == pid]
inode = None
for m in maps:
    if m["filename"] == mapped:
        inode = m["inode"]
if inode is None:
    fail("no MAP of %s for pid %d" % (mapped, pid))
pins = chunks("/.periscope/pinned-files").splitlines()
pin = [p for p in pins if p.split(" ")[1:2] == [str(inode)]]
if not pin or pin_how not in pin[0] or "checked" not in pin[0]:
    fail("%s (inode %d) not pinned via %s with its identity checked: %r" % (mapped, inode, pin_how, pins))
print("ok: pinned:", pin[0])

# Symbol table of the workload binary: (address, name) of functions.
syms = []
for line in subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout.splitlines():
    parts = line.split()
    if len(parts) == 3 and parts[1] in "tTwW":
        syms.append((int(parts[0], 16), parts[2]))
syms.sort()
addrs = [a for a, _ in syms]


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


total = good = 0
for f in frames:
    if f["type"] != "SAMPLE" or f["pid"] != pid:
        continue
    # User frames follow the PERF_CONTEXT_USER marker (-512).
    addrs_ = [int(a, 16) for a in f["addresses"]]
    if 0xfffffffffffffe00 not in addrs_:
        continue
    user = [a for a in addrs_[addrs_.index(0xfffffffffffffe00) + 1:] if a < 0xfffffffffffff001]
    if not user:
        continue
    total += 1
    leaf = symbolize(user[0])
    caller = symbolize(user[1] - 1) if len(user) > 1 else None
    if leaf == "hot_inner" and caller == "hot_outer":
        good += 1
    elif total - good <= 3:
        print("  sample %s: %s ← %s" % ([hex(a) for a in user], leaf, caller), file=sys.stderr)
if total < 20:
    fail("only %d user samples of pid %d" % (total, pid))
share = good / total
print("ok: %d/%d samples (%.1f%%) are hot_inner ← hot_outer" % (good, total, 100 * share))
if share < 0.95:
    fail("only %.1f%% of samples carry the right names" % (100 * share))
