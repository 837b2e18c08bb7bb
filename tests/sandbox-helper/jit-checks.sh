# SPDX-License-Identifier: LGPL-2.1-or-later
# jit-checks.sh: the assertions on recordings of JIT code, sourced by the
# private-daemon tests (test-record-jit-node.sh, test-record-jitdump.sh,
# test-record-jit-perf-map-safety.sh) and by the installed-service family
# (tests/service/installed/), so that both check the same things. Needs
# PERISCOPE (the CLI that reads captures), PYTHON and fail(); each function
# writes its files into the directory it is given.
#   jit_node_check CAPTURE DIR           node --perf-basic-prof fib.js: fib named [jit] from its perf map
#                                        ("JS:*fib …" in node 20's V8, "LazyCompile:*fib …"
#                                        in that of Debian 12's node 18)
#   jit_node_perf_maps CAPTURE           the perf maps node left behind (pids from the capture)
#   jitdump_check CAPTURE DIR            jitdump-writer DIR 700: jit_alpha/jit_beta named from the jitdump
#   perf_map_named CAPTURE               jitdump-writer … MODE: prints "NAMED TOTAL"
#   perf_map_check MODE NAMED TOTAL      file: >= 80% named; symlink, foreign: nothing named

jit_node_perf_maps() { # capture
        "$PERISCOPE" dump --json "$1" | "$PYTHON" -c '
import json, sys
for f in json.load(sys.stdin)["frames"]:
    if f["type"] == "PROCESS" and "fib.js" in f["cmdline"]:
        print("/tmp/perf-%d.map" % f["pid"])' | sort -u
}

jit_node_check() { # capture, dir
        local cap=$1 d=$2
        "$PERISCOPE" report --no-progress --folded "$cap" >"$d/folded" || fail "report failed"
        "$PERISCOPE" report --no-progress "$cap" >"$d/report" || fail "report failed"
        "$PYTHON" - "$d/folded" <<'PY' || { head -50 "$d/report"; fail "fib is not named"; }
import sys
total = fib = anon = 0
for l in open(sys.argv[1]):
    s, _, n = l.rstrip("\n").rpartition(" ")
    frames, n = s.split(";"), int(n)
    total += n
    if any(f.startswith(("JS:", "LazyCompile:")) and "fib " in f and f.endswith("[jit]") for f in frames):
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
        grep -A1 "^    Self   Self%" "$d/report" | grep >/dev/null -E "%  (JS|LazyCompile):\*?fib .*fib\.js.*\[jit\]" ||
                { head -40 "$d/report"; fail "fib [jit] is not the report's hottest function by self time"; }
        grep -E "(JS|LazyCompile):\*?fib .*\[jit\]" "$d/report" | head -3
        # JITMAP frames carry the same names; the mapping keeps the perf map's provenance.
        "$PERISCOPE" dump --json "$cap" >"$d/dump.json" || fail "dump failed"
        "$PYTHON" - "$d/dump.json" <<'PY' || fail "JITMAP frames"
import json, sys
d = json.load(open(sys.argv[1]))
names = [e["name"] for f in d["frames"] if f["type"] == "JITMAP" for e in f["entries"]]
fib = [n for n in names if n.startswith(("JS:", "LazyCompile:")) and "fib " in n]
print(f"JITMAP: {len(names)} entries, {len(fib)} for fib, e.g. {fib[:1]}")
sys.exit(0 if fib else 1)
PY
        "$PERISCOPE" report --no-progress --mappings "$cap" >"$d/mappings" || fail "report --mappings failed"
        grep -qE "/tmp/perf-[0-9]+\.map" "$d/mappings" || { cat "$d/mappings"; fail "no provenance for the perf map"; }
}

jitdump_check() { # capture, dir
        local cap=$1 d=$2
        : "${SYSPROF_NAMES:?}"
        "$PERISCOPE" report --no-progress --folded "$cap" >"$d/folded" || fail "report failed"
        "$PYTHON" - "$d/folded" <<'PY' || { sort -t' ' -k2 -n "$d/folded" | tail; fail "the JIT functions are not named"; }
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
        "$PERISCOPE" dump --json "$cap" >"$d/dump.json" || fail "dump failed"
        "$PYTHON" - "$d/dump.json" <<'PY' || fail "alpha's source lines or the JITMAP frames"
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
        "$PERISCOPE" report --no-progress --mappings "$cap" >"$d/mappings" || fail "report --mappings failed"
        grep -qE "/jit-[0-9]+\.dump" "$d/mappings" || { cat "$d/mappings"; fail "no provenance for the jitdump"; }
        # Sysprof's own code shows the names: from __symbols__ and from the JITMAP frames.
        local how f n
        for how in "" --jitmap; do
                "$SYSPROF_NAMES" $how "$cap" | sort -rn >"$d/sysprof$how"
                for f in jit_alpha jit_beta; do
                        n=$(awk -v f=$f '$2 == f { print $1 }' "$d/sysprof$how")
                        [ "${n:-0}" -ge 100 ] || { head "$d/sysprof$how"; fail "Sysprof ${how:-(__symbols__)} names $f in only ${n:-0} samples"; }
                done
                echo "ok: Sysprof ${how:-(__symbols__)}: $(head -2 "$d/sysprof$how" | tr '\n' ' ')"
        done
}

perf_map_named() { # capture
        "$PERISCOPE" report --no-progress --folded "$1" | "$PYTHON" -c '
import sys
total = named = 0
for l in sys.stdin:
    s, _, n = l.rstrip("\n").rpartition(" ")
    total += int(n)
    if any(f in ("jit_alpha [jit]", "jit_beta [jit]") for f in s.split(";")):
        named += int(n)
print(named, total)'
}

perf_map_check() { # mode, named, total
        local mode=$1 named=$2 total=$3
        case $mode in
        file)
                echo "plain perf map: $named of $total samples named"
                [ "$total" -ge 100 ] && [ $((named * 10)) -ge $((total * 8)) ] || fail "the process's own perf map did not name its code" ;;
        symlink)
                echo "symlinked perf map: $named of $total samples named"
                [ "$total" -ge 100 ] && [ "$named" = 0 ] || fail "a symlink at /tmp/perf-PID.map was followed" ;;
        foreign)
                echo "perf map owned by uid 65534: $named of $total samples named"
                [ "$total" -ge 100 ] && [ "$named" = 0 ] || fail "a perf map owned by another uid was used" ;;
        *) fail "perf_map_check: unknown mode $mode" ;;
        esac
}
