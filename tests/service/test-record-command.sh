#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `periscope record -- demo-workload` through periscoped on a private bus:
# the exit status is the command's, most samples carry complete
# frame-pointer stacks (inner_c → middle_b → outer_a → run_workload → main)
# inside the workload's text, and exec'd children appear with their maps.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${DEMO:?}" "${CAPTURE_JSON:?}"
private_bus_start
periscoped_start
cap=$TEST_TMP/demo.syscap
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$cap" -- "$DEMO" -t 1200 -c 2 || fail "record exited $?"
"$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$cap" callchains "$DEMO" --children 2

# An exec that gains capabilities (as a set-id program's does) makes the
# kernel remove the process's events; a root caller's recording samples it
# again, in its new image, and says so.
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$TEST_TMP/caps.syscap" -- "$EXEC_GAINS_CAPS" "$DEMO" -t 1200 2>"$TEST_TMP/caps.err" ||
        { cat "$TEST_TMP/caps.err"; fail "record of a command that execs with a capability gain exited $?"; }
"$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$TEST_TMP/caps.syscap" callchains "$DEMO" ||
        { tail -20 "$TEST_TMP/periscoped.log"; fail "the program exec'd with a capability gain was not sampled after its exec"; }
grep -q "process .* exec.d a program with other privileges .*: sampled again" "$TEST_TMP/periscoped.log" ||
        { tail -20 "$TEST_TMP/periscoped.log"; fail "periscoped did not say it sampled the process again after its exec"; }
echo "ok: a process whose exec gains capabilities is sampled again after it"

# The exit status is the command's.
set +e
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$TEST_TMP/false.syscap" -- sh -c 'exit 7'
st=$?
set -e
[ $st = 7 ] || fail "exit status $st, the command exited 7"
"$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$TEST_TMP/false.syscap" readable --min-samples 0 --reason command-exited
echo "ok: exit status is the command's"

# -p PID… ends when every recorded process has exited (as perf record -p),
# with reason targets-exited; the capture is complete.
"$DEMO" -t 600 & a=$!
"$DEMO" -t 1200 & b=$!
private_bus_track $a $b
st=0
timeout 60 "$PERISCOPE" record --address "$BUS_ADDRESS" -p $a,$b -o "$TEST_TMP/p.syscap" 2>"$TEST_TMP/p.err" || st=$?
cat "$TEST_TMP/p.err"
[ $st = 0 ] || fail "record -p exited $st when its processes ended (124: it never ended)"
grep -q "(ended: targets-exited)" "$TEST_TMP/p.err" || fail "record -p did not end with reason targets-exited"
"$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$TEST_TMP/p.syscap" readable --min-samples 50 --reason targets-exited
echo "ok: -p ends when every recorded process exited"
