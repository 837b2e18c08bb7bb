# SPDX-License-Identifier: LGPL-2.1-or-later
# availability.sh: sourced by the tests of the service's availability
# (flood, xz bomb, slow debuginfod, trace-fd merge, node's tables), after
# periscoped-bus.sh. They measure the service against an attack, not
# against the other work of a shared machine: meson runs each alone
# (is_parallel: false), and
#   availability_start [PERISCOPED ARGS…]  the bus, and periscoped on it:
#       this test's session gets nice -10 among the machine's sessions
#       (autogroups share CPU time before nice values count), the bus the
#       priority periscoped takes for itself (nice -10), and the daemon
#       runs without meson's MALLOC_PERTURB_ (it fills every multi-MiB
#       block at malloc and free in one go; production has no such fill)
#   recording_of_uid UID   sets id and path of UID's first recording
#   probe_finishing PATH SECONDS   Properties.Get of PATH's State until it
#       is finished (property-latency); sets gets, finishing_gets,
#       finishing_ms, max_ms, max_finishing_ms, stop_ms
#   get_within_100ms MS WHILE   fails with "Properties.Get took MS ms
#       WHILE (must be < 100 ms)" unless MS < 100
: "${PROBE:?}"

get_within_100ms() { # MS WHILE
        awk -v m="$1" 'BEGIN { exit !(m < 100) }' || fail "Properties.Get took $1 ms $2 (must be < 100 ms)"
}

availability_start() {
        private_bus_start
        echo -10 >/proc/self/autogroup || fail "cannot raise this test's session (autogroup)"
        renice -n -10 -p "${PRIVATE_BUS_PIDS[0]}" >/dev/null
        MALLOC_PERTURB_= periscoped_start "$@"
}

recording_of_uid() {
        local uid=$1
        path=
        for _ in $(seq 100); do
                id=$(sed -n "s/.*recording \([0-9]*\): started for uid $uid .*/\1/p" "$TEST_TMP/periscoped.log" | head -1)
                [ -n "$id" ] && { path=/org/periscope/Recording/$id; return 0; }
                sleep 0.1
        done
        cat "$TEST_TMP/periscoped.log"
        fail "no recording of uid $uid started"
}

probe_finishing() {
        nice -n -10 "$PROBE" "$BUS_ADDRESS" "$1" "$2" >"$TEST_TMP/latency" 2>"$TEST_TMP/latency.err" ||
                { cat "$TEST_TMP/latency" "$TEST_TMP/latency.err"; fail "probing $1 failed"; }
        cat "$TEST_TMP/latency.err"
        read -r _ gets _ finishing_gets _ finishing_ms _ max_ms _ max_finishing_ms _ stop_ms <"$TEST_TMP/latency"
}
