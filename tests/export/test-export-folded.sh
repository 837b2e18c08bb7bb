#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `periscope export --format folded` and `periscope dump --json` on a real
# recording: folded stacks with FlameGraph's annotations (kernel frames
# "_[k]", inlined "_[i]") that are exactly `periscope report --folded`'s
# stacks, counts adding up to the capture's samples; the JSON dump names
# every address next to it, inline chain innermost first with file:line.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
. "$SRCDIR/lib.sh"
record_cpu
cap=$TEST_TMP/cpu.syscap
"$PERISCOPE" export --format folded -o "$TEST_TMP/export.folded" "$cap" || fail "export --format folded failed"
"$PERISCOPE" report --no-progress --folded "$cap" >"$TEST_TMP/report.folded" || fail "report --folded failed"
"$PERISCOPE" dump --json "$cap" >"$TEST_TMP/dump.json" || fail "dump --json failed"

"$PYTHON" - "$TEST_TMP" "$(source_line "$SRCDIR/workload-export.c" 'sink = sink * 2654435761u')" \
        "$(source_line "$SRCDIR/workload-export.c" 'for (int k = 0; k < 500')" <<'PY'
import collections, json, re, sys
tmp, mix_lines = sys.argv[1], {int(sys.argv[2]), int(sys.argv[3])}  # mix_inline's loop: its body and its for
def fail(msg):
    sys.exit("FAIL: " + msg)
def folded(path):
    c = collections.Counter()
    for l in open(path).read().splitlines():
        m = re.fullmatch(r"(.+) (\d+)", l)
        if not m:
            fail("%s: not a folded line: %r" % (path, l))
        c[m.group(1)] += int(m.group(2))
    return c
ours, report = folded(tmp + "/export.folded"), folded(tmp + "/report.folded")
doc = json.load(open(tmp + "/dump.json"))
samples = [f for f in doc["frames"] if f["type"] == "SAMPLE"]

# --- dump --json: names next to the addresses
kernel_names, user_names, inline_ok = set(), set(), 0
for s in samples:
    if len(s["symbols"]) != len(s["addresses"]):
        fail("a SAMPLE has %d symbol entries for %d addresses" % (len(s["symbols"]), len(s["addresses"])))
    for a, syms in zip(s["addresses"], s["symbols"]):
        if int(a, 16) >= 2**64 - 4095:
            if syms is not None:
                fail("the context marker %s has names" % a)
            continue
        for f in syms or []:
            (kernel_names if f["kernel"] else user_names).add(f["function"])
        names = [f["function"] for f in syms or []]
        if names == ["mix_inline", "hot_heavy"]:
            if not (syms[0]["inlined"] and not syms[1]["inlined"] and syms[0].get("file", "").endswith("workload-export.c")
                    and syms[0].get("line") in mix_lines):
                fail("mix_inline in hot_heavy is not marked inlined at workload-export.c:%s: %r" % (sorted(mix_lines), syms))
            inline_ok += 1
if not inline_ok:
    fail("dump --json has no address named mix_inline (inlined) in hot_heavy")
if not {"run_rounds", "main", "kernel_zero"} <= user_names or "read_zero" not in kernel_names:
    fail("dump --json lacks names: user %s, kernel %s" % (sorted(user_names)[:30], sorted(kernel_names)[:30]))
print("ok: dump --json names %d addresses as mix_inline (inlined, its loop's lines) in hot_heavy; %d kernel functions" %
      (inline_ok, len(kernel_names)))

# --- folded: annotations
frames = [f for st in ours for f in st.split(";")]
for f in frames:
    base = re.sub(r"_\[[kij]\]$", "", f)
    if f.endswith("_[k]") != (base in kernel_names and base not in user_names) and base in kernel_names | user_names:
        fail("frame %r: kernel functions, and only they, end in _[k]" % f)
if not any(re.search(r"(^|;)kernel_zero;.*_\[k\]", st) for st in ours):
    fail("no stack goes from kernel_zero into kernel frames")
if not any(re.search(r"(^|;)hot_heavy;mix_inline_\[i\]( |;|$)", st + " ") for st in ours):
    fail("no stack has hot_heavy;mix_inline_[i]")
n = sum(1 for s in samples if any(s["symbols"]))
if sum(ours.values()) != n:
    fail("the folded counts add up to %d, the capture has %d samples" % (sum(ours.values()), n))

# --- the same stacks as the report's
def plain_ours(st):
    return ";".join(re.sub(r"_\[[kij]\]$", "", f) for f in st.split(";"))
def plain_report(st):
    return ";".join(re.sub(r"( \(inlined\))?( \[kernel\]| \[jit\])?$", "", f) for f in st.split(";"))
a = collections.Counter({plain_ours(k): v for k, v in ours.items()})
b = collections.Counter()
for k, v in report.items():
    b[plain_report(k)] += v
if a != b:
    diff = [(k, a[k], b[k]) for k in set(a) | set(b) if a[k] != b[k]]
    fail("export and report --folded differ: %r" % diff[:5])
print("ok: %d folded stacks, %d samples, _[k] on kernel and _[i] on inlined frames, same stacks as report --folded" %
      (len(ours), n))
PY
[ $? = 0 ] || fail "folded export or dump --json is wrong"
echo "ok: folded export and dump --json"
