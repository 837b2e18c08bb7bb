#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Off-CPU profiles for an unprivileged user (periscope-user) through the
# system periscoped (private bus, real polkitd): the user's own program,
# no password; each wait attributed to its own function within 10% of its
# wall-clock length, and not one kernel frame (perf_event_paranoid 2: the
# user may not see kernel addresses, as for CPU samples). Another user's
# process stays refused with --off-cpu too.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${SRCDIR:?}"
[ "$(id -u)" = 0 ] || fail "runs as root (./test.sh does): it starts the system daemon and runs as periscope-user"
[ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 2 ] ||
        fail "kernel.perf_event_paranoid is below 2: the user would be allowed kernel addresses"
test_user_require periscope-user
periscoped_start_for_user periscope-user 0755
gcc -O0 -g -fno-omit-frame-pointer -pthread -o "$dir/waits" "$SRCDIR/workload-waits.c" || fail "cannot build workload-waits.c"
chown periscope-user: "$dir/waits"
cap=$dir/user.syscap
as_user "$PERISCOPE" record --address "$BUS_ADDRESS" --off-cpu -o "$cap" -- "$dir/waits" 1 \
        >"$TEST_TMP/phases.txt" 2>"$TEST_TMP/record.err" || { cat "$TEST_TMP/record.err"; fail "the user's record --off-cpu failed"; }
"$PERISCOPE" report --no-progress --off-cpu --folded "$cap" >"$TEST_TMP/ns.folded" || fail "report failed"
"$PERISCOPE" report --no-progress --folded "$cap" >"$TEST_TMP/samples.folded" || fail "report failed"
"$PYTHON" "$SRCDIR/check-waits.py" "$TEST_TMP/ns.folded" "$TEST_TMP/samples.folded" "$TEST_TMP/phases.txt" 0 ||
        fail "the user's waits were not attributed as they happened, or kernel frames showed"
"$PERISCOPE" info "$cap" | grep >/dev/null -x "  kernel=false" || fail "the user's recording says it kept kernel stacks"
# not one kernel address in the capture's off-CPU stacks (markers aside) nor in its samples
"$PERISCOPE" dump --json "$cap" >"$TEST_TMP/dump.json" || fail "dump failed"
"$PYTHON" "$SRCDIR/check-no-kernel-addresses.py" "$TEST_TMP/dump.json" || fail "a kernel address in the user's recording"
# root's process: refused, as without --off-cpu
sleep 30 &
root_pid=$!
private_bus_track $root_pid
if as_user "$PERISCOPE" record --address "$BUS_ADDRESS" --off-cpu -p $root_pid --duration 1 -o "$dir/root.syscap" \
        >"$TEST_TMP/refused.out" 2>&1; then
        fail "periscope-user recorded root's process with --off-cpu"
fi
cat "$TEST_TMP/refused.out"
echo "off-CPU for an unprivileged user: ok"
