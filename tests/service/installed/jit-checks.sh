# SPDX-License-Identifier: LGPL-2.1-or-later
# jit-checks.sh: JIT code under the unit, with the private-daemon tests'
# workloads and assertions (tests/sandbox-helper/jit-checks.sh), as root as
# they record. Sourced by test-installed.sh.
#   check_jit_perf_map         node --perf-basic-prof: fib named from /tmp/perf-PID.map
#                              (test-record-jit-node.sh)
#   check_jit_perf_map_safety  jitdump-writer's perf map: its own file named, a symlink
#                              and another uid's file not read (test-record-jit-perf-map-safety.sh)
#   check_jitdump              jitdump-writer's jitdump: load, move, reuse (test-record-jitdump.sh)
. "$src/tests/sandbox-helper/jit-checks.sh"

check_jit_perf_map() {
        local d=$tmp/node cap=$CT_WORK/node.syscap
        mkdir -p "$d"
        # node also writes a V8 log (isolate-*.log) where it runs
        ct_record root "$d/record.log" -o "$cap" -- sh -c "cd $CT_WORK && exec node --perf-basic-prof /usr/local/share/periscope-tests/fib.js 2500 25"
        grep -q "done" "$d/record.log" || fail "node did not run to its end"
        # node leaves its perf map behind: remove it (its pid is the capture's command).
        local m
        for m in $(jit_node_perf_maps "$root$cap"); do in_ct rm -f "$m"; done
        jit_node_check "$root$cap" "$d"
        echo "ok: node's JavaScript named from its perf map"
}

check_jit_perf_map_safety() {
        local d=$tmp/perf-map mode cap map named total
        mkdir -p "$d"
        for mode in file symlink foreign; do
                cap=$CT_WORK/perf-map-$mode.syscap
                mkdir -p "$root$CT_WORK/$mode"
                ct_record root "$d/$mode.log" -o "$cap" -- /usr/local/bin/jitdump-writer "$CT_WORK/$mode" 300 "$mode"
                map=$(sed -n 's/^done \(\/tmp\/perf-[0-9]*\.map\)$/\1/p' "$d/$mode.log")
                [ -n "$map" ] || fail "jitdump-writer ($mode) did not finish"
                in_ct rm -f "$map"
                read -r named total < <(perf_map_named "$root$cap")
                perf_map_check $mode "$named" "$total"
        done
        echo "ok: only the process's own regular perf map is read"
}

check_jitdump() {
        local d=$tmp/jitdump cap=$CT_WORK/jitdump.syscap
        mkdir -p "$d" "$root$CT_WORK/dumps"
        ct_record root "$d/record.log" -o "$cap" -- /usr/local/bin/jitdump-writer "$CT_WORK/dumps" 700
        grep -q "^done .*/jit-[0-9]*\.dump" "$d/record.log" || fail "jitdump-writer did not finish"
        jitdump_check "$root$cap" "$d"
        echo "ok: the jitdump's functions are named, before and after the move"
}
