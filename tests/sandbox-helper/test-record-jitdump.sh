#!/usr/bin/env bash
# End to end through the real periscoped: a program that generates code
# at run time and describes it in a jitdump file, in the layout perf's JIT
# interface documents (jitdump-writer.c: DEBUG_INFO, LOAD of jit_alpha,
# LOAD of jit_beta elsewhere, MOVE of jit_alpha to a new address after
# which its old page is unmapped, CLOSE). The program maps the dump file,
# so the recording pins it like any mapped file; the sandboxed helper
# reads it: both functions are named [jit] with their shares (alpha ran
# twice as long as beta, at two addresses), alpha's samples carry the
# source line its DEBUG_INFO gives, at the old and at the moved address.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${SRCDIR:?}" "${SYSPROF_NAMES:?}"
[ "$(uname -m)" = x86_64 ] || fail "jitdump-writer generates x86-64 code; this machine is $(uname -m)"
command -v cc >/dev/null || fail "cc missing: apt-get install -y gcc"
cc -O2 -Wall -o "$TEST_TMP/jitdump-writer" "$SRCDIR/jitdump-writer.c" || fail "cannot build jitdump-writer"
private_bus_start
periscoped_start

mkdir "$TEST_TMP/dumps"
cap=$TEST_TMP/jit.syscap
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$cap" -- "$TEST_TMP/jitdump-writer" "$TEST_TMP/dumps" 700 \
        >"$TEST_TMP/out" 2>"$TEST_TMP/err" || { cat "$TEST_TMP/err"; fail "recording failed"; }
grep -q "^done .*/jit-[0-9]*\.dump" "$TEST_TMP/out" || { cat "$TEST_TMP/out"; fail "jitdump-writer did not finish"; }
"$PERISCOPE" report --no-progress --folded "$cap" >"$TEST_TMP/folded" || fail "report failed"
"$PYTHON" - "$TEST_TMP/folded" <<'PY' || { cat "$TEST_TMP/folded" | sort -t' ' -k2 -n | tail; fail "the JIT functions are not named"; }
import sys
total = alpha = beta = unnamed = 0
for l in open(sys.argv[1]):
    s, _, n = l.rstrip("\n").rpartition(" ")
    frames, n = s.split(";"), int(n)
    total += n
    user = [f for f in frames if not f.endswith("[kernel]")]
    leaf = user[-1] if user else ""
    if leaf == "jit_alpha [jit]":
        alpha += n
    elif leaf == "jit_beta [jit]":
        beta += n
    elif "anon" in leaf or "unresolved" in leaf:
        unnamed += n
print(f"jitdump: {total} samples: jit_alpha {alpha}, jit_beta {beta}, unnamed {unnamed}")
ok = total >= 100 and alpha + beta >= 0.8 * total and 1.4 * beta < alpha < 2.8 * beta and unnamed < 0.05 * total
sys.exit(0 if ok else 1)
PY
# Source lines from DEBUG_INFO, at the address alpha was loaded at and at
# the one it moved to; JITMAP frames name both functions.
"$PERISCOPE" dump --json "$cap" >"$TEST_TMP/dump.json" || fail "dump failed"
"$PYTHON" - "$TEST_TMP/dump.json" <<'PY' || fail "alpha's source lines or the JITMAP frames"
import json, sys
d = json.load(open(sys.argv[1]))
where = {}
for f in d["frames"]:
    if f["type"] != "SAMPLE" or not f["symbols"]:
        continue
    for a, sy in zip(f["addresses"], f["symbols"]):
        if sy and sy[-1]["function"] == "jit_alpha":
            where.setdefault((sy[-1].get("file"), sy[-1].get("line")), set()).add(int(a, 16) >> 12)
print("jit_alpha positions (file, line) -> pages:", {k: len(v) for k, v in where.items()})
lines = where.get(("alpha.js", 11), set())
jit = {e["name"] for f in d["frames"] if f["type"] == "JITMAP" for e in f["entries"]}
print("JITMAP names:", sorted(jit))
sys.exit(0 if len(lines) == 2 and {"jit_alpha", "jit_beta"} <= jit else 1)
PY
"$PERISCOPE" report --no-progress --mappings "$cap" >"$TEST_TMP/mappings" || fail "report --mappings failed"
grep -qE "/jit-[0-9]+\.dump" "$TEST_TMP/mappings" || { cat "$TEST_TMP/mappings"; fail "no provenance for the jitdump"; }
# Sysprof's own code shows the names: from __symbols__ and from the JITMAP frames.
for how in "" --jitmap; do
        "$SYSPROF_NAMES" $how "$cap" | sort -rn >"$TEST_TMP/sysprof$how"
        for f in jit_alpha jit_beta; do
                n=$(awk -v f=$f '$2 == f { print $1 }' "$TEST_TMP/sysprof$how")
                [ "${n:-0}" -ge 100 ] || { head "$TEST_TMP/sysprof$how"; fail "Sysprof ${how:-(__symbols__)} names $f in only ${n:-0} samples"; }
        done
        echo "ok: Sysprof ${how:-(__symbols__)}: $(head -2 "$TEST_TMP/sysprof$how" | tr '\n' ' ')"
done
echo "ok: the jitdump's functions are named, before and after the move"
