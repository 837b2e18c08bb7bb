#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# periscoped with `unwind dwarf` (and the default, auto) on workloads built
# with -O2 -fomit-frame-pointer: at least 99% of the samples reach main with
# exactly the program's functions; the same workload in `fp` mode does not
# (so it is the DWARF unwinder that does it); the capture holds addresses
# only (bytes per sample far below the 16 KiB stack copies); stack-size is
# checked. Runs periscoped on a private bus, tables come from the sandboxed
# helper.
. "$(dirname "$0")/../../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${CAPTURE_JSON:?}" "${DEEP:?}" "${QSORT:?}" "${THREADS:?}"
min_ok=${UNWIND_MIN_OK:-99}
# Two seconds of CPU per workload: the samples before main (the dynamic
# loader, which no unwinder gets to main) stay well under 1%.
check="python3 $(dirname "$0")/check-service-capture.py $CAPTURE_JSON"
private_bus_start
periscoped_start

deep_chain=main,chain_a,chain_b,chain_c,chain_d,leaf_work
"$PERISCOPE" record --address "$BUS_ADDRESS" --unwind dwarf -o "$TEST_TMP/deep.syscap" -- "$DEEP" 2000 \
        || fail "record exited $?"
$check "$TEST_TMP/deep.syscap" "$DEEP" --chain $deep_chain --min-ok $min_ok --min-full 50 --max-bytes-per-sample 400
# The capture says which machine it was recorded on (periscope.machine).
"$PERISCOPE" info "$TEST_TMP/deep.syscap" >"$TEST_TMP/deep.info" || fail "info failed"
grep >/dev/null "^Architecture: $(uname -m)\$" "$TEST_TMP/deep.info" ||
        { cat "$TEST_TMP/deep.info"; fail "info does not say $(uname -m)"; }

# Default (auto) is DWARF too; qsort goes through libc and back.
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$TEST_TMP/qsort.syscap" -- "$QSORT" 2000 || fail "record exited $?"
$check "$TEST_TMP/qsort.syscap" "$QSORT" --chain main,sort_items,*,compare_items --chain main,fill_items \
        --min-ok $min_ok --min-full 30 --max-bytes-per-sample 400

# Four threads on two CPUs: the exec and mmaps land in one CPU's ring, the
# first samples in the other's; the rings are merged by time, so no sample
# is unwound before the mapping it needs (ring by ring, 3-4% stopped at the
# leaf whenever the exec ran on the second CPU).
"$PERISCOPE" record --address "$BUS_ADDRESS" --unwind dwarf --stack-size 32768 -o "$TEST_TMP/threads.syscap" \
        -- "$THREADS" 2000 || fail "record exited $?"
$check "$TEST_TMP/threads.syscap" "$THREADS" --chain main,main_loop,main_leaf \
        --chain worker_main,worker_mid,worker_leaf --min-ok $min_ok --min-full 50

# Frame pointers only: on this binary the kernel's walk gets lost.
"$PERISCOPE" record --address "$BUS_ADDRESS" --unwind fp -o "$TEST_TMP/deep-fp.syscap" -- "$DEEP" 600 \
        || fail "record exited $?"
$check "$TEST_TMP/deep-fp.syscap" "$DEEP" --chain $deep_chain --max-ok 50

# Bad stack sizes are refused with a message that says what is allowed.
set +e
msg=$("$PERISCOPE" record --address "$BUS_ADDRESS" --unwind dwarf --stack-size 1001 -o "$TEST_TMP/x.syscap" -- true 2>&1)
st=$?
set -e
[ $st != 0 ] || fail "stack-size 1001 was accepted"
echo "$msg" | grep >/dev/null "multiple of 8" || fail "unhelpful error for stack-size 1001: $msg"
msg=$("$PERISCOPE" record --address "$BUS_ADDRESS" --unwind sideways -o "$TEST_TMP/x.syscap" -- true 2>&1) \
        && fail "unwind 'sideways' was accepted"
echo "$msg" | grep >/dev/null "dwarf" || fail "unhelpful error for unwind 'sideways': $msg"
echo "ok: dwarf stacks reach main, fp ones do not, options checked"
