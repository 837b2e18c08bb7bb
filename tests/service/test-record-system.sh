#!/usr/bin/env bash
# Root records the whole system: many processes with their maps, samples
# from several processes, kernel stacks with the kernel context marker.
# Ctrl-C (SIGINT) stops a recording cleanly, and on a terminal a live line
# shows progress.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${DEMO:?}" "${CAPTURE_JSON:?}"
private_bus_start
periscoped_start
demo_start 60000 # killed at the end
# Something that spends its time in the kernel.
dd if=/dev/zero of=/dev/null bs=1 count=100000000 2>/dev/null & sys=$!
private_bus_track $sys

t0=$SECONDS
"$PERISCOPE" record --address "$BUS_ADDRESS" --system --duration 1.5 -o "$TEST_TMP/sys.syscap" 2>"$TEST_TMP/sys.err" ||
        { cat "$TEST_TMP/sys.err"; fail "system recording failed"; }
cat "$TEST_TMP/sys.err"; echo "(system recording took $((SECONDS - t0)) s in all)"
"$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$TEST_TMP/sys.syscap" readable --min-samples 50 --reason duration
echo "at ${SECONDS}s: checking"
"$CAPTURE_JSON" "$TEST_TMP/sys.syscap" | "$PYTHON" -c '
import json, sys
work, dd = int(sys.argv[1]), int(sys.argv[2])
frames = [json.loads(l) for l in sys.stdin]
procs = {f["pid"] for f in frames if f["type"] == "PROCESS"}
mapped = {f["pid"] for f in frames if f["type"] == "MAP"}
sampled = {f["pid"] for f in frames if f["type"] == "SAMPLE"}
kernel = [f for f in frames if f["type"] == "SAMPLE" and 2**64 - 128 in f["addrs"]]
ok = True
def need(cond, msg):
    global ok
    if not cond:
        print("FAIL:", msg); ok = False
need(len(procs) >= 10, f"only {len(procs)} processes in a system-wide snapshot")
need(work in procs and work in mapped and work in sampled, f"the demo workload {work} is missing (procs/maps/samples)")
need(dd in sampled, f"dd {dd} has no samples")
need(len(kernel) >= 5, f"only {len(kernel)} samples with kernel stacks (root may see them)")
k = kernel[0]["addrs"] if kernel else []
# the kernel part runs to the user marker, or to the end (a kernel thread)
kend = k.index(2**64 - 512) if 2**64 - 512 in k else len(k)
need(not kernel or (k[0] == 2**64 - 128 and all(a >= 2**63 for a in k[1:kend])),
     f"kernel part malformed: {k}")
if not ok: sys.exit(1)
print(f"ok: {len(procs)} processes, {len(sampled)} sampled, {len(kernel)} samples with kernel stacks")
' $work $sys

kill -0 $work || { wait $work; fail "the demo workload ended early with status $? after $SECONDS s"; }
echo "at ${SECONDS}s: SIGINT"
# SIGINT stops cleanly: exit 130, capture complete with reason "stopped".
"$PERISCOPE" record --address "$BUS_ADDRESS" -p $work -o "$TEST_TMP/int.syscap" 2>"$TEST_TMP/int.err" & cli=$!
sleep 2
kill -INT $cli || { cat "$TEST_TMP/int.err"; fail "periscope record ended before SIGINT"; }
st=0; wait $cli || st=$?
cat "$TEST_TMP/int.err"
[ $st = 130 ] || fail "periscope record exited $st after SIGINT (want 130, the capture complete)"
"$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$TEST_TMP/int.syscap" readable --min-samples 5 --reason stopped
echo "at ${SECONDS}s: summary"
grep -q "capture written to $TEST_TMP/int.syscap" "$TEST_TMP/int.err" || fail "no summary after SIGINT"

echo "at ${SECONDS}s: terminal"
# On a terminal: the live line.
script -qec "$PERISCOPE record --address $BUS_ADDRESS -p $work --duration 1.2 -o $TEST_TMP/tty.syscap" "$TEST_TMP/tty.log" </dev/null >/dev/null ||
        { st=$?; cat -v "$TEST_TMP/tty.log"; fail "periscope record on a terminal exited $st"; }
grep -aqE "periscope: recording [0-9.]+ s, [0-9]+ samples, [0-9]+ lost" "$TEST_TMP/tty.log" || { cat -v "$TEST_TMP/tty.log"; fail "no live line on a terminal"; }
echo "ok: live line on a terminal"
