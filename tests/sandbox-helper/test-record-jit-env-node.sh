#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# JIT names without flags (docs/jit.md): `periscope record -- node fib.js`,
# node given no option, names fib [jit] because record turned on node's
# perf map for the command; once the recording is done the map is gone and
# the directory node ran in holds nothing new (no isolate-*-v8.log). With
# --no-jit-env: no names and no map. Next to them, what is not ours stays:
# another process's map, and a symlink or a hard link planted at the
# command's own map name. Where node could not create its map (it aborts
# then), it is not asked to. The user's NODE_OPTIONS is added to, and a
# choice already made there or in PYTHONPERFSUPPORT is kept.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
. "$(dirname "$0")/jit-checks.sh"
: "${PERISCOPE:?}"
command -v node >/dev/null || fail "node missing: apt-get install -y nodejs (scripts/install-deps.sh does)"
unset NODE_OPTIONS PYTHONPERFSUPPORT # as a user who asked for nothing
private_bus_start
periscoped_start

fib_js=$(cd "$(dirname "$0")/../lib" && pwd)/fib.js
work=$TEST_TMP/work
mkdir "$work"
# another process's perf map, there before the recording
sleep 600 </dev/null >/dev/null 2>&1 &
other=$!
other_map=/tmp/perf-$other.map
echo "1000 10 other" >"$other_map"
planted= # what case 3 planted
trap 'st=$?; set +e; kill $other 2>/dev/null; rm -f "$other_map" $planted; (exit $st); _periscoped_bus_cleanup' EXIT

record() { # name, record's options and command
        local name=$1
        shift
        (cd "$work" && "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$TEST_TMP/$name.syscap" "$@") \
                >"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err" || { cat "$TEST_TMP/$name.err"; fail "recording $name failed"; }
        grep -q done "$TEST_TMP/$name.out" || fail "$name: node did not run to its end"
}

no_maps_left() { # capture
        local m left=
        for m in $(jit_node_perf_maps "$1"); do
                [ -e "$m" ] && left="$left $m"
        done
        [ -z "$left" ] || fail "perf maps left behind:$left"
        [ -n "$(jit_node_perf_maps "$1")" ] || fail "no node process in the capture"
}

# 1. node with no flags: named, then nothing left behind
record plain -- node "$fib_js" 2500 25
mkdir "$TEST_TMP/plain"
jit_node_check "$TEST_TMP/plain.syscap" "$TEST_TMP/plain"
# V8's JIT code keeps frame pointers: the unwinder's JIT step
# (docs/unwinding.md) goes through it on to node::Start and _start.
"$PERISCOPE" report --no-progress --folded "$TEST_TMP/plain.syscap" | "$PYTHON" -c '
import sys
jitted = rooted = 0
for l in sys.stdin:
    s, _, n = l.rstrip("\n").rpartition(" ")
    frames = s.split(";")
    if not any(f.endswith("[jit]") for f in frames):
        continue
    jitted += int(n)
    if frames[0] == "_start" or any(f.startswith("node::Start(") for f in frames):
        rooted += int(n)
print(f"node: {rooted} of {jitted} samples under [jit] frames reach node::Start")
sys.exit(0 if jitted >= 100 and rooted * 100 >= jitted * 95 else 1)' || fail "node's stacks stop in its JIT code"
no_maps_left "$TEST_TMP/plain.syscap"
[ -z "$(ls -A "$work")" ] || { ls -la "$work"; fail "node left files in the directory it ran in"; }
echo "ok: node named with no flags, its perf map ($(jit_node_perf_maps "$TEST_TMP/plain.syscap")) removed, its directory clean"

# 2. --no-jit-env: node runs as asked, so no names and no map
record off --no-jit-env -- node "$fib_js" 1500 25
"$PERISCOPE" report --no-progress --folded "$TEST_TMP/off.syscap" >"$TEST_TMP/off.folded" || fail "report failed"
! grep -qE "(JS|LazyCompile):\*?fib .*\[jit\]" "$TEST_TMP/off.folded" || fail "--no-jit-env: fib is named, so node wrote a perf map"
for m in $(jit_node_perf_maps "$TEST_TMP/off.syscap"); do
        [ ! -e "$m" ] || fail "--no-jit-env: node wrote $m"
done
echo "ok: --no-jit-env: no names, no perf map"

# 3. what sits at the command's own map name, made after the recording
# started by the command's first process before it becomes node, and is
# not a file node made: a symlink (node writes through it) or a second
# hard link of another file. record removes neither, nor the file they
# lead to.
target=$TEST_TMP/planted-target
for kind in symlink hardlink; do
        : >"$target"
        case $kind in
        symlink) plant="ln -s '$target' /tmp/perf-\$\$.map" ;;
        hardlink) plant="ln '$target' /tmp/perf-\$\$.map" ;;
        esac
        record $kind -- sh -c "$plant && exec node '$fib_js' 1000 25"
        planted=$(jit_node_perf_maps "$TEST_TMP/$kind.syscap")
        [ -n "$planted" ] || fail "no node process in the $kind capture"
        case $kind in
        symlink) [ -L "$planted" ] ;;
        hardlink) [ -f "$planted" ] && [ "$planted" -ef "$target" ] ;;
        esac || fail "the planted $kind $planted was removed or replaced"
        [ -f "$target" ] || fail "the $kind's target $target was removed"
        rm -f "$planted"
        planted=
        echo "ok: a $kind at the command's map name is left alone"
done

# 4. node aborts when it cannot create its perf map (V8 checks the open):
# where /tmp is read-only, record leaves NODE_OPTIONS alone and node runs
unshare -m sh -c "mount --bind /tmp /tmp && mount -o remount,bind,ro /tmp && cd '$work' &&
        exec '$PERISCOPE' record --address '$BUS_ADDRESS' -o /dev/fd/3 -- node '$fib_js' 1000 25" \
        3>"$TEST_TMP/ro.syscap" >"$TEST_TMP/ro.out" 2>"$TEST_TMP/ro.err" ||
        { cat "$TEST_TMP/ro.err"; fail "node under a read-only /tmp failed"; }
grep -q done "$TEST_TMP/ro.out" || fail "node under a read-only /tmp did not run to its end"
echo "ok: with a read-only /tmp node is not asked for a perf map and runs"

# 5. the user's environment: NODE_OPTIONS is added to, not replaced; a
# choice about perf maps made there, or PYTHONPERFSUPPORT set to anything,
# is left as it is, and so is the map node was asked for that way
seen() { # what the command should see, then the environment
        local want=$1
        shift
        (cd "$work" && env "$@" "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$TEST_TMP/env.syscap" -- \
                node -p 'process.env.NODE_OPTIONS + " " + process.env.PYTHONPERFSUPPORT') \
                >"$TEST_TMP/env.out" 2>"$TEST_TMP/env.err" || { cat "$TEST_TMP/env.err"; fail "recording with $* failed"; }
        [ "$(cat "$TEST_TMP/env.out")" = "$want" ] || fail "with $*, the command saw '$(cat "$TEST_TMP/env.out")', not '$want'"
        echo "ok: with $*, the command sees '$want'"
}
seen "--max-old-space-size=64 --perf-basic-prof-only-functions 1" NODE_OPTIONS=--max-old-space-size=64
seen "--perf-basic-prof 0" NODE_OPTIONS=--perf-basic-prof PYTHONPERFSUPPORT=0
planted=$("$PERISCOPE" dump --json "$TEST_TMP/env.syscap" | "$PYTHON" -c '
import json, sys
for f in json.load(sys.stdin)["frames"]:
    if f["type"] == "PROCESS" and "process.env" in f["cmdline"]:
        print("/tmp/perf-%d.map" % f["pid"])' | sort -u)
[ -f "$planted" ] || fail "record removed the perf map ($planted) the user's NODE_OPTIONS asked for"
rm -f "$planted" "$work"/isolate-*-v8.log
planted=
echo "ok: the perf map the user's NODE_OPTIONS asked for is kept"

[ -f "$other_map" ] && [ "$(cat "$other_map")" = "1000 10 other" ] || fail "another process's perf map $other_map was touched"
echo "ok: another process's perf map is untouched"
