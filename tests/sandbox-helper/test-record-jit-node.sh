#!/usr/bin/env bash
# End to end through the real periscoped: node run with --perf-basic-prof
# writes /tmp/perf-PID.map; the recording pins it through the process's
# root, the sandboxed helper reads it, and the JavaScript function fib
# appears in `periscope report` as a named [jit] frame with its share of
# the samples (not as one "[unresolved …] anon" row). The names are in
# both symbol tables and in JITMAP frames, and the perf map's provenance
# is kept for the anonymous mapping.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}"
command -v node >/dev/null || fail "node missing: apt-get install -y nodejs (scripts/install-deps.sh does)"
private_bus_start
periscoped_start

fib_js=$(cd "$(dirname "$0")/../lib" && pwd)/fib.js
cap=$TEST_TMP/node.syscap
cd "$TEST_TMP" # node --perf-basic-prof also writes a V8 log (isolate-*.log) where it runs
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$cap" -- node --perf-basic-prof "$fib_js" 2500 25 \
        >"$TEST_TMP/out" 2>"$TEST_TMP/err" || { cat "$TEST_TMP/err"; fail "recording node failed"; }
grep -q done "$TEST_TMP/out" || fail "node did not run to its end"
# node leaves its perf map behind: remove it (its pid is the capture's command).
"$PERISCOPE" dump --json "$cap" | "$PYTHON" -c '
import json, sys
for f in json.load(sys.stdin)["frames"]:
    if f["type"] == "PROCESS" and "fib.js" in f["cmdline"]:
        print("/tmp/perf-%d.map" % f["pid"])' | xargs -r rm -f
"$PERISCOPE" report --no-progress --folded "$cap" >"$TEST_TMP/folded" || fail "report failed"
"$PERISCOPE" report --no-progress "$cap" >"$TEST_TMP/report" || fail "report failed"
"$PYTHON" - "$TEST_TMP/folded" <<'PY' || { head -50 "$TEST_TMP/report"; fail "fib is not named"; }
import sys
total = fib = anon = 0
for l in open(sys.argv[1]):
    s, _, n = l.rstrip("\n").rpartition(" ")
    frames, n = s.split(";"), int(n)
    total += n
    if any(f.startswith("JS:") and "fib " in f and f.endswith("[jit]") for f in frames):
        fib += n
    user = [f for f in frames if not f.endswith("[kernel]")]
    if user and "anon" in user[-1] and "unresolved" in user[-1]:
        anon += n
pct = 100.0 * fib / total if total else 0
print(f"node: fib [jit] in {fib} of {total} samples ({pct:.1f}%); {anon} samples end in an unresolved anon frame")
# node's start-up (V8 deserializing its snapshot) takes a share that grows
# with the machine's load: fib need not hold half of the samples, but a
# real share of them
sys.exit(0 if total >= 100 and pct >= 30 and anon * 10 < total else 1)
PY
# The flat report shows it with its share, marked [jit], as the hottest function.
grep -A1 "^    Self   Self%" "$TEST_TMP/report" | grep >/dev/null -E "%  JS:\*?fib .*fib\.js.*\[jit\]" ||
        { head -40 "$TEST_TMP/report"; fail "fib [jit] is not the report's hottest function by self time"; }
grep -E "JS:\*?fib .*\[jit\]" "$TEST_TMP/report" | head -3
# JITMAP frames carry the same names; the mapping keeps the perf map's provenance.
"$PERISCOPE" dump --json "$cap" >"$TEST_TMP/dump.json" || fail "dump failed"
"$PYTHON" - "$TEST_TMP/dump.json" <<'PY' || fail "JITMAP frames"
import json, sys
d = json.load(open(sys.argv[1]))
names = [e["name"] for f in d["frames"] if f["type"] == "JITMAP" for e in f["entries"]]
fib = [n for n in names if n.startswith("JS:") and "fib " in n]
print(f"JITMAP: {len(names)} entries, {len(fib)} for fib, e.g. {fib[:1]}")
sys.exit(0 if fib else 1)
PY
"$PERISCOPE" report --no-progress --mappings "$cap" >"$TEST_TMP/mappings" || fail "report --mappings failed"
grep -qE "/tmp/perf-[0-9]+\.map" "$TEST_TMP/mappings" || { cat "$TEST_TMP/mappings"; fail "no provenance for the perf map"; }
echo "ok: node's JavaScript named from its perf map"
