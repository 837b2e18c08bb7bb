#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""check-service-capture.py: reads a capture periscoped wrote (through
capture-json) and checks the user stacks of one workload the way a user
reads them: names from the workload's own symbol table (nm; test side), the
program's own functions from the root (main, or a thread's start routine)
to the leaf, "*" for each run of frames outside the program.

  check-service-capture.py CAPTURE_JSON CAPTURE BINARY --chain a,b,c [...]
        [--min-ok PCT] [--max-ok PCT] [--min-full PCT] [--max-bytes-per-sample N]

A sample is correct when its own-function sequence read from the root is a
prefix of one of the chains (optionally ending in "*", a leaf outside the
program). --max-ok turns the check around (the fp mode must NOT reach main
on a binary without frame pointers)."""
import argparse
import json
import os
import subprocess
import sys

CONTEXT_MIN = 2**64 - 4095
CONTEXT_USER = 2**64 - 512


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("capture")
    ap.add_argument("binary")
    ap.add_argument("--chain", action="append", required=True)
    ap.add_argument("--min-ok", type=float, default=None)
    ap.add_argument("--max-ok", type=float, default=None)
    ap.add_argument("--min-full", type=float, default=0)
    ap.add_argument("--max-bytes-per-sample", type=float, default=None)
    ap.add_argument("--min-samples", type=int, default=100)
    a = ap.parse_args()

    p = subprocess.run([a.tool, a.capture], capture_output=True, text=True)
    frames = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
    if p.returncode != 0 or any(f["type"] == "ERROR" for f in frames):
        fail(f"{a.capture} is not readable: {p.stderr.strip()}")

    syms = []
    out = subprocess.run(["nm", "-S", "--defined-only", a.binary], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            s, n = int(parts[0], 16), int(parts[1], 16)
            syms.append((s, s + n, parts[3].split(".")[0]))
    # PT_LOAD: file offset -> vaddr
    loads = []
    out = subprocess.run(["readelf", "-lW", a.binary], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            loads.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
    real = os.path.realpath(a.binary)
    maps = {}
    for f in frames:
        if f["type"] == "MAP" and os.path.realpath(f["filename"]) == real:
            maps.setdefault(f["pid"], []).append(f)
    if not maps:
        fail(f"no MAP frame of {a.binary}")

    def name(pid, addr):
        for m in maps.get(pid, []):
            if m["start"] <= addr < m["end"]:
                off = addr - m["start"] + m["offset"]
                for (o, v, sz) in loads:
                    if o <= off < o + sz:
                        va = off - o + v
                        for (s, e, nm) in syms:
                            if s <= va < e:
                                return nm
                return None  # own file, no symbol (.plt): foreign
        return None

    chains = [c.split(",") for c in a.chain]
    roots = {c[0] for c in chains}
    samples = [f for f in frames if f["type"] == "SAMPLE" and f["pid"] in maps]
    if len(samples) < a.min_samples:
        fail(f"only {len(samples)} samples of {a.binary}")
    ok = full = 0
    bad = []
    for s in samples:
        user, in_user = [], False
        for x in s["addrs"]:
            if x >= CONTEXT_MIN:
                in_user = x == CONTEXT_USER
                continue
            if in_user:
                user.append(x)
        toks = []
        for i in range(len(user) - 1, -1, -1):
            n = name(s["pid"], user[i] if i == 0 else user[i] - 1)
            t = n if n else "*"
            if toks and t == "*" and toks[-1] == "*":
                continue
            toks.append(t)
        verdict = None
        for st in range(len(toks)):
            if toks[st] not in roots:
                continue
            seq = toks[st:]
            if len(seq) > 1 and seq[-1] == "*":
                seq = seq[:-1]
            for c in chains:
                if c[0] == seq[0] and len(seq) <= len(c) and c[:len(seq)] == seq:
                    verdict = "full" if len(seq) == len(c) else "ok"
                    break
            if verdict is None:
                verdict = "wrong"
            break
        if verdict in ("ok", "full"):
            ok += 1
            full += verdict == "full"
        elif len(bad) < 5:
            bad.append(toks)
    n = len(samples)
    pct_ok, pct_full = 100.0 * ok / n, 100.0 * full / n
    size = os.path.getsize(a.capture)
    print(f"{n} samples: {pct_ok:.2f}% reach the root with the expected functions, {pct_full:.2f}% whole chains; "
          f"capture {size} bytes, {size / n:.0f} bytes/sample")
    for b in bad:
        print("  e.g.", " → ".join(b), file=sys.stderr)
    for f in frames:
        if f["type"] == "METADATA" and f.get("id") == "periscope.stats":
            print("  stats:", " ".join(l for l in f["metadata"].splitlines() if l.startswith("unwind")),
                  file=sys.stderr)
    if a.min_ok is not None and pct_ok < a.min_ok:
        fail(f"{pct_ok:.2f}% of samples reach the root correctly, need {a.min_ok}%")
    if a.max_ok is not None and pct_ok > a.max_ok:
        fail(f"{pct_ok:.2f}% of samples reach the root, expected at most {a.max_ok}% in this mode")
    if pct_full < a.min_full:
        fail(f"only {pct_full:.2f}% whole chains, need {a.min_full}%")
    if a.max_bytes_per_sample is not None and size / n > a.max_bytes_per_sample:
        fail(f"{size / n:.0f} bytes per sample: the capture holds more than addresses")


main()
