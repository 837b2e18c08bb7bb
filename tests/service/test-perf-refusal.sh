#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A recording that perf_event_open refuses says why, to the caller and in
# the daemon's log (a notice with the caller's uid), and never "not yours"
# when the process is the caller's to record (issue 19):
#   - periscoped without CAP_PERFMON, CAP_SYS_ADMIN and CAP_SYS_PTRACE (a
#     bounding set without them, as a unit that forgot them would give) asked
#     by root for nobody's process: the missing CAP_PERFMON is named;
#   - periscoped with its capabilities under a seccomp filter answering
#     perf_event_open with EPERM (a unit's SystemCallFilter=): the filter is
#     named.
# Debian's perf_event_paranoid=3 needs Debian's kernel: the decision is
# unit-tested in service-perf-diagnose.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${DEMO:?}" "${DENY_PERF_EVENT_OPEN:?}"
[ "$(id -u)" = 0 ] || fail "this test starts periscoped as root with chosen capabilities: run it as root"
command -v setpriv >/dev/null || fail "setpriv (util-linux) is needed"
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
[ "$paranoid" -le 2 ] || fail "perf_event_paranoid is $paranoid here: this test wants a kernel where CAP_PERFMON suffices"

private_bus_start
cp "$DEMO" "$TEST_TMP/demo" && chmod 755 "$TEST_TMP/demo"

# started_daemon LOG PREFIX...: periscoped on the private bus under PREFIX
start_daemon() {
        local log=$1
        shift
        "$@" "$PERISCOPED" --address="$BUS_ADDRESS" 2>>"$log" &
        PERISCOPED_PID=$!
        private_bus_track $PERISCOPED_PID
        for _ in $(seq 100); do
                busctl --address="$BUS_ADDRESS" status org.periscope.Profiler1 >/dev/null 2>&1 && return 0
                kill -0 $PERISCOPED_PID 2>/dev/null || { cat "$log"; fail "periscoped exited at start"; }
                sleep 0.05
        done
        fail "periscoped did not take its bus name"
}
stop_daemon() {
        kill "$PERISCOPED_PID"
        wait "$PERISCOPED_PID" 2>/dev/null || true
}

# record_refused NAME WHY: records $work for a second, which must fail (else
# fails with WHY); the client's stderr is in $TEST_TMP/NAME.err.
record_refused() {
        local rc=0
        "$PERISCOPE" record --address "$BUS_ADDRESS" -p "$work" --duration 1 -o "$TEST_TMP/$1.syscap" \
                2>"$TEST_TMP/$1.err" || rc=$?
        cat "$TEST_TMP/$1.err"
        [ $rc != 0 ] || fail "$2"
}

# 1. No CAP_PERFMON (nor SYS_ADMIN, SYS_PTRACE): root asks for nobody's process.
setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$TEST_TMP/demo" -t 30000 & work=$!
private_bus_track $work
start_daemon "$TEST_TMP/periscoped-nocap.log" \
        setpriv --bounding-set=-all,+checkpoint_restore,+dac_read_search,+ipc_lock,+syslog,+setfcap,+setuid,+setgid --inh-caps=-all --
record_refused nocap "periscoped without CAP_PERFMON recorded nobody's process"
grep >/dev/null "perf_event_open for process $work failed: Permission denied: periscoped has no CAP_PERFMON" "$TEST_TMP/nocap.err" ||
        fail "the caller is not told that periscoped lacks CAP_PERFMON"
! grep >/dev/null "not yours" "$TEST_TMP/nocap.err" || fail "the caller is told the process is not theirs"
stop_daemon
cat "$TEST_TMP/periscoped-nocap.log"
grep >/dev/null "^periscoped: uid 0: org.periscope.Profiler1.Record refused: perf_event_open for process $work failed: .*no CAP_PERFMON.*(org.periscope.Error.PerfFailed)" \
        "$TEST_TMP/periscoped-nocap.log" || fail "the daemon's log has no refusal naming uid 0, Record and the cause"
kill $work; wait $work 2>/dev/null || true
echo "ok: without CAP_PERFMON the refusal names it, to the caller and in the log"

# 2. A seccomp filter answering perf_event_open with EPERM; the process is root's own.
"$TEST_TMP/demo" -t 30000 & work=$!
private_bus_track $work
start_daemon "$TEST_TMP/periscoped-seccomp.log" "$DENY_PERF_EVENT_OPEN"
record_refused seccomp "periscoped recorded with perf_event_open filtered out"
grep >/dev/null "perf_event_open for process $work failed: Operation not permitted: .*seccomp filter" "$TEST_TMP/seccomp.err" ||
        fail "the caller is not told of the seccomp filter"
! grep >/dev/null "not yours\|no CAP_PERFMON" "$TEST_TMP/seccomp.err" || fail "the caller is told a wrong cause"
stop_daemon
grep >/dev/null "^periscoped: uid 0: org.periscope.Profiler1.Record refused: .*seccomp filter" "$TEST_TMP/periscoped-seccomp.log" ||
        { cat "$TEST_TMP/periscoped-seccomp.log"; fail "the daemon's log has no refusal naming the seccomp filter"; }
kill $work; wait $work 2>/dev/null || true
echo "ok: under a seccomp filter the refusal names it"
echo PASS
