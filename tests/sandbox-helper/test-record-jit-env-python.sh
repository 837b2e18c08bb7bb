#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# JIT names without flags for CPython 3.12+ (docs/jit.md): Debian 13's
# python3.13, given no -X perf and no environment, recorded with
# `periscope record -- …`, has its functions named py::… [jit] from the
# perf map record turned on for it (PYTHONPERFSUPPORT=1); afterwards the
# map is gone. With --no-jit-env: no py:: names and no map.
#
# The interpreter comes from the suite's Debian 13 root (python_root, built
# once under $PERISCOPE_TEST_CACHE). It
# runs chrooted in a mount namespace of its own whose /tmp is this
# machine's, so its perf map is written where record looks (a map written
# inside another root is left there, docs/jit.md) and the workload in
# $TEST_TMP is at the same path inside.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
. "$(dirname "$0")/jit-checks.sh"
. "$(dirname "$0")/../lib/python-roots.sh"
: "${PERISCOPE:?}"
[ "$(id -u)" = 0 ] || fail "needs root (chroot, mount namespaces)"
unset NODE_OPTIONS PYTHONPERFSUPPORT # as a user who asked for nothing

python_root trixie # PY_ROOT: the suite's Debian 13 root (tests/lib/python-roots.sh)
root=$PY_ROOT
version=$(chroot "$root" python3.13 --version) || fail "python3.13 does not run in $root"
echo "interpreter: $version from $root"

private_bus_start
periscoped_start

cat >"$TEST_TMP/work.py" <<'PY'
import sys, time

def leaf_sum(n):
    s = 0
    for i in range(n):
        s += i * i
    return s

def middle():
    return leaf_sum(20000)

end = time.time() + float(sys.argv[1])
while time.time() < end:
    middle()
print("done")
PY
chmod 644 "$TEST_TMP/work.py"

record() { # name, record's options
        local name=$1
        shift
        "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$TEST_TMP/$name.syscap" "$@" -- \
                unshare -m sh -c "mount --bind /tmp '$root/tmp' && exec chroot '$root' python3.13 '$TEST_TMP/work.py' 2" \
                >"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err" || { cat "$TEST_TMP/$name.err"; fail "recording $name failed"; }
        grep -q done "$TEST_TMP/$name.out" || { cat "$TEST_TMP/$name.err"; fail "$name: python3.13 did not run to its end"; }
}

python_maps() { # capture: the perf map names of the interpreter's processes
        "$PERISCOPE" dump --json "$1" | "$PYTHON" -c '
import json, sys
for f in json.load(sys.stdin)["frames"]:
    if f["type"] == "PROCESS" and "work.py" in f["cmdline"]:
        print("/tmp/perf-%d.map" % f["pid"])' | sort -u
}

# The perf map's names are "py::QUALNAME:FILE [jit]"; the Python frames
# the recording reads from the interpreter (docs/python.md), which are on
# with --no-jit-env too, are "py::QUALNAME (FILE:LINE) [jit]".
py_named() { # capture: "NAMED TOTAL", samples with the map's py::leaf_sum:… [jit]
        "$PERISCOPE" report --no-progress --folded "$1" | "$PYTHON" -c '
import sys
total = named = 0
for l in sys.stdin:
    s, _, n = l.rstrip("\n").rpartition(" ")
    total += int(n)
    if any(f.startswith("py::leaf_sum:") and f.endswith("[jit]") for f in s.split(";")):
        named += int(n)
print(named, total)'
}

py_rooted() { # capture, file: "ROOTED JITTED", samples with a py:: … [jit] frame, and of those reaching main; the others into file
        "$PERISCOPE" report --no-progress --folded "$1" | "$PYTHON" -c '
import sys
jitted = rooted = 0
other = open(sys.argv[1], "w")
for l in sys.stdin:
    s, _, n = l.rstrip("\n").rpartition(" ")
    frames = s.split(";")
    if not any(f.startswith("py::") and f.endswith("[jit]") and " (" not in f for f in frames):
        continue
    jitted += int(n)
    # main or what it calls into (Py_BytesMain may be main itself);
    # what lies above main is libc, which has no table here (its MMAP2
    # names the root'"'"'s libc by the chroot'"'"'s path)
    if any(f.split(" ")[0] in ("main", "Py_BytesMain", "Py_RunMain") for f in frames):
        rooted += int(n)
    else:
        other.write(l)
print(rooted, jitted)' "$2"
}

# 1. no flags: named, then the map is gone
record plain
read -r named total < <(py_named "$TEST_TMP/plain.syscap")
echo "python3.13 with no flags: py::leaf_sum [jit] in $named of $total samples"
[ "$total" -ge 100 ] && [ $((named * 2)) -ge "$total" ] || {
        "$PERISCOPE" report --no-progress "$TEST_TMP/plain.syscap" | head -30
        fail "python3.13's functions are not named from its perf map"
}
# The stacks go on through the trampolines: CPython's x86_64 trampoline
# (Python/asm_trampoline.S) keeps no frame pointer and has no unwind
# table, so the unwinder's trampoline step (docs/unwinding.md) must reach
# the interpreter's main below every py:: frame.
read -r rooted jitted < <(py_rooted "$TEST_TMP/plain.syscap" "$TEST_TMP/unrooted")
echo "python3.13 with no flags: $rooted of $jitted samples under py:: [jit] frames reach main"
[ "$jitted" -ge 100 ] && [ $((rooted * 100)) -ge $((jitted * 95)) ] || {
        sed -n 1,10p "$TEST_TMP/unrooted"
        "$PERISCOPE" info "$TEST_TMP/plain.syscap" >"$TEST_TMP/info"
        grep -i unwind "$TEST_TMP/info"
        fail "python3.13's stacks stop at its perf trampolines: $rooted of $jitted reach main"
}
maps=$(python_maps "$TEST_TMP/plain.syscap")
[ -n "$maps" ] || fail "no python3.13 process in the capture"
for m in $maps; do
        [ ! -e "$m" ] || { rm -f "$m"; fail "the perf map $m was left behind"; }
done
echo "ok: python3.13 named with no flags, its perf map ($maps) removed"

# 2. --no-jit-env: no names, no map
record off --no-jit-env
read -r named total < <(py_named "$TEST_TMP/off.syscap")
[ "$total" -ge 100 ] && [ "$named" = 0 ] || fail "--no-jit-env: $named of $total samples named py::leaf_sum [jit]"
for m in $(python_maps "$TEST_TMP/off.syscap"); do
        [ ! -e "$m" ] || { rm -f "$m"; fail "--no-jit-env: python3.13 wrote $m"; }
done
echo "ok: --no-jit-env: no py:: names, no perf map"
