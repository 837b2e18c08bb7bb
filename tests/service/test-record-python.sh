#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Python frames in the samples of Debian 12's python3.11 (issue 29,
# docs/python.md), through periscoped on a private bus:
# - `record -- python3.11 workload.py split`: the Python functions in call
#   order under the native main, and work_a's share of the samples that
#   of its CPU time (the workload's own log) within 4 sigma + 1 point;
#   Sysprof 3.46's own resolver names the frames;
# - `record -p PID` of an interpreter already running;
# - two threads: each thread's samples carry its own chain only;
# - --off-cpu: the sleep below the Python function that sleeps;
# - --no-python-frames: none, the interpreter's own frames as before;
# - a hostile "python3.11" whose _PyRuntime loops: its capture counts the
#   failed reads and names no frame, and the daemon records on.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${HOSTILE_PYTHON:?}" "${SYSPROF_NAMES:?}"
PY311=/usr/bin/python3.11
[ -x $PY311 ] || fail "$PY311 is missing: apt-get install -y python3.11"
here=$(cd "$(dirname "$0")" && pwd)
workload=$TEST_TMP/workload.py
cp "$here/python-workload.py" "$workload"
check() { "$PYTHON" "$here/check-python-frames.py" "$@"; }
stat_of() { # CAPTURE KEY: the value of a periscope.stats key
        "$PERISCOPE" info "$1" | sed -n "s/^ *$2=//p"
}
private_bus_start
periscoped_start

# 1. the command: the 2:1 split
cap=$TEST_TMP/split.syscap
split=$cap
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$cap" -- $PY311 "$workload" split 1200000 8 "$TEST_TMP/phases" \
        2>"$TEST_TMP/split.err" || { cat "$TEST_TMP/split.err"; fail "record exited $?"; }
grep -q "^periscope: Python frames in [1-9][0-9]* samples of 1 interpreter$" "$TEST_TMP/split.err" ||
        { cat "$TEST_TMP/split.err"; fail "record did not say how many samples got Python frames"; }
"$PERISCOPE" report --folded "$cap" >"$TEST_TMP/split.folded"
"$PERISCOPE" export --format perf-script -o "$TEST_TMP/split.perf" "$cap"
check split "$TEST_TMP/split.folded" "$TEST_TMP/split.perf" "$TEST_TMP/phases" ||
        { head -c 3000 "$TEST_TMP/split.folded"; fail "the Python frames of the split workload are wrong"; }
# Sysprof 3.46's own JITMAP resolver names them too
"$SYSPROF_NAMES" --jitmap "$cap" >"$TEST_TMP/split.sysprof" || fail "libsysprof-4 cannot read the capture"
for f in work_a work_b spin; do
        grep -q "^[0-9]* py::$f (" "$TEST_TMP/split.sysprof" || { cat "$TEST_TMP/split.sysprof"; fail "Sysprof does not name py::$f"; }
done
echo "ok: record -- python3.11: $(stat_of "$cap" python_samples) samples with Python frames," \
        "read $(stat_of "$cap" python_delay_mean_ns) ns after their sample on average"

# 2. -p of a running interpreter
$PY311 "$workload" forever 300000 >"$TEST_TMP/forever.out" &
fpid=$!
private_bus_track $fpid
wait_for 10 grep -q ready "$TEST_TMP/forever.out" || fail "the interpreter did not start"
cap=$TEST_TMP/p.syscap
"$PERISCOPE" record --address "$BUS_ADDRESS" -p $fpid --duration 2 -o "$cap" || fail "record -p exited $?"
kill $fpid
"$PERISCOPE" report --folded "$cap" >"$TEST_TMP/p.folded"
check present "$TEST_TMP/p.folded" forever a work_a b work_b spin || fail "record -p has no Python frames"
echo "ok: record -p of a running interpreter"

# 3. threads
cap=$TEST_TMP/threads.syscap
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$cap" -- $PY311 "$workload" threads 200000 2 || fail "record exited $?"
"$PERISCOPE" export --format perf-script -o "$TEST_TMP/threads.perf" "$cap"
check threads "$TEST_TMP/threads.perf" || fail "threads' Python frames are mixed up"
echo "ok: each thread its own frames"

# 3b. off-CPU stacks: where a Python function waits
cap=$TEST_TMP/offcpu.syscap
"$PERISCOPE" record --address "$BUS_ADDRESS" --off-cpu -o "$cap" -- $PY311 "$workload" sleeper 20 || fail "record exited $?"
"$PERISCOPE" report --off-cpu --folded "$cap" >"$TEST_TMP/offcpu.folded"
check present "$TEST_TMP/offcpu.folded" main waiter || fail "the off-CPU stacks have no Python frames"
grep -q "py::waiter .*clock_nanosleep" "$TEST_TMP/offcpu.folded" || fail "the sleep is not below py::waiter"
echo "ok: --off-cpu stacks carry Python frames"

# 4. the option off
cap=$TEST_TMP/off.syscap
"$PERISCOPE" record --address "$BUS_ADDRESS" --no-python-frames -o "$cap" -- $PY311 "$workload" split 300000 2 ||
        fail "record exited $?"
"$PERISCOPE" report --folded "$cap" >"$TEST_TMP/off.folded"
check absent "$TEST_TMP/off.folded" || fail "--no-python-frames has Python frames"
grep -q "_PyEval_EvalFrameDefault" "$TEST_TMP/off.folded" || fail "--no-python-frames lost the interpreter's frames"
[ -z "$(stat_of "$cap" python_samples)" ] || fail "--no-python-frames still counts Python samples"
echo "ok: --no-python-frames"

# 5. hostile: a python3.11 whose runtime state loops
cp "$HOSTILE_PYTHON" "$TEST_TMP/python3.11"
cap=$TEST_TMP/hostile.syscap
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$cap" -- "$TEST_TMP/python3.11" 2 || fail "record of the hostile interpreter exited $?"
"$PERISCOPE" report --folded "$cap" >"$TEST_TMP/hostile.folded"
check absent "$TEST_TMP/hostile.folded" || fail "the hostile interpreter got Python frames"
[ "$(stat_of "$cap" python_processes)" = 1 ] || fail "the hostile interpreter was not located"
[ "$(stat_of "$cap" python_samples)" = 0 ] || fail "the hostile interpreter's samples got Python frames"
f=$(stat_of "$cap" python_read_failures)
[ "${f:-0}" -gt 0 ] || fail "the hostile interpreter's failed reads were not counted"
[ "$(stat_of "$split" python_read_failures)" = 0 ] || fail "the honest interpreter's reads failed"
hpid=$("$PERISCOPE" info "$cap" | awk '$2 ~ /python3.11$/ { print $1; exit }')
grep "process $hpid: Python frames not read: ." "$TEST_TMP/periscoped.log" || fail "periscoped did not say why"
kill -0 "$PERISCOPED_PID" || fail "periscoped died"
cap=$TEST_TMP/after.syscap
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$cap" -- $PY311 "$workload" split 1200000 3 || fail "record exited $?"
"$PERISCOPE" report --folded "$cap" >"$TEST_TMP/after.folded"
check present "$TEST_TMP/after.folded" work_a work_b || fail "no Python frames after the hostile interpreter"
echo "ok: a hostile interpreter costs its own frames only ($f failed reads counted)"
