# SPDX-License-Identifier: LGPL-2.1-or-later
# control-checks.sh: the control fd, the trace fd and --memory under the
# unit, with the private-daemon tests' programs and assertions
# (tests/service/control/control-checks.sh), as root as they record.
# Sourced by test-installed.sh.
#   check_control_fd   collector-client threads 4 5000 (test-record-control.sh, 1)
#   check_memory       --memory of memory-workload (test-record-control.sh, 5)
#   check_trace_fd     trace-writer env and fd (test-record-trace.sh, 1)
. "$src/tests/service/control/control-checks.sh"

check_control_fd() {
        : "${CHECK:?}"
        local d=$tmp/control cap=$CT_WORK/threads.syscap
        mkdir -p "$d"
        in_ct periscope record -o "$cap" -- /usr/local/bin/collector-client threads 4 5000 >"$d/threads.out" 2>"$d/threads.err" ||
                { cat "$d/threads.err"; service_state; fail "record of the collector client exited $?"; }
        ! grep -q "private periscoped" "$d/threads.err" || fail "periscope record used a private periscoped"
        control_check_threads "$root$cap" "$d/threads.out" "$d"
}

check_memory() {
        local d=$tmp/memory cap=$CT_WORK/memory.syscap
        mkdir -p "$d"
        ct_record root "$d/record.log" --memory -o "$cap" -- /usr/local/bin/memory-workload
        control_check_memory "$root$cap" "$d"
}

check_trace_fd() {
        : "${TRACE_CHECK:?}"
        local d=$tmp/trace mode
        mkdir -p "$d"
        for mode in env fd; do
                in_ct periscope record -o "$CT_WORK/trace-$mode.syscap" -- /usr/local/bin/trace-writer $mode \
                        >"$d/$mode.out" 2>"$d/$mode.err" || { cat "$d/$mode.err"; service_state; fail "record $mode exited $?"; }
                cat "$d/$mode.err"
                ! grep -q "private periscoped" "$d/$mode.err" || fail "periscope record used a private periscoped"
                trace_check_writer $mode "$root$CT_WORK/trace-$mode.syscap" "$d/$mode.out" "$d/$mode.err"
        done
        trace_check_env_report "$root$CT_WORK/trace-env.syscap" "$d/env.out" "$d"
}
