#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Whole-system recording with real programs of every kind running at once,
# as a desktop engineer records a busy machine:
#   a deep no-frame-pointer chain, Debian's own (stripped) python3, a static
#   binary, a 4-thread program, a Go program (.debug_frame), and an exec
#   storm: 2000 short-lived processes plus 20 runs of a program that lives
#   50 ms.
# Each program's samples must reach its entry (>= 99%; python3 >= 95%: its
# interpreter has stripped frames), the 50 ms programs included, and no
# helper may fail. The record summary and the capture's statistics say how
# many samples were lost (the bench measures that on a quiet machine).
. "$(dirname "$0")/../../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${DEEP:?}" "${DEEP_STATIC:?}" "${THREADS:?}" "${GO_SOURCE:?}" "${PY_SOURCE:?}"
command -v go >/dev/null || fail "go missing: apt-get install -y golang-go (scripts/install-deps.sh does)"
[ -x /usr/bin/python3 ] || fail "Debian's python3 missing: apt-get install -y python3"
private_bus_start
periscoped_start

# The Go program, built here with Debian's Go (its cache in the test's tmp).
GOCACHE="$TEST_TMP/gocache" GOPATH="$TEST_TMP/gopath" go build -o "$TEST_TMP/go-chain" "$GO_SOURCE" ||
        fail "go build of $GO_SOURCE failed"
# The 50 ms program gets a name of its own so its runs can be told apart.
cp "$DEEP" "$TEST_TMP/short-deep"
PY=$(readlink -f /usr/bin/python3)
# The exec storm: 2000 short-lived processes, a run of the 50 ms program
# after every 10 of the first 200; at most 25 s on a loaded machine.
cat >"$TEST_TMP/storm.sh" <<STORM
#!/bin/bash
for i in \$(seq 2000); do
        /bin/true
        [ \$((i % 10)) = 0 ] && [ \$i -le 200 ] && "$TEST_TMP/short-deep" 50
        [ \$SECONDS -ge 25 ] && break
done
exit 0
STORM
chmod +x "$TEST_TMP/storm.sh"

"$DEEP" 600000 & deep=$!
"$PY" "$PY_SOURCE" 600 & py=$!
"$DEEP_STATIC" 600000 & static=$!
"$THREADS" 600000 & threads=$!
"$TEST_TMP/go-chain" 600 & gochain=$!
private_bus_track $deep $py $static $threads $gochain
sleep 0.5

# The whole system while the storm runs.
t0=$SECONDS
"$PERISCOPE" record --address "$BUS_ADDRESS" --system -o "$TEST_TMP/mix.syscap" -- "$TEST_TMP/storm.sh" \
        2>"$TEST_TMP/rec.err" || { cat "$TEST_TMP/rec.err"; fail "system recording failed"; }
cat "$TEST_TMP/rec.err"
echo "(the recording took $((SECONDS - t0)) s)"
kill $deep $py $static $threads $gochain 2>/dev/null || true
pkill -f "$TEST_TMP/storm.sh" 2>/dev/null || true
grep -E "recorded [0-9]+ samples \([0-9]+ lost\)" "$TEST_TMP/rec.err" >/dev/null || fail "no record summary with lost samples"

# No helper failure anywhere: the daemon's log.
if grep -E "helper failed" "$TEST_TMP/periscoped.log"; then
        fail "the sandboxed helper failed during a whole-system recording (see above)"
fi

# Every stack once, with its process as the root frame ("comm (pid N)").
"$PERISCOPE" report --folded --process-root "$TEST_TMP/mix.syscap" >"$TEST_TMP/folded" 2>"$TEST_TMP/report.err" ||
        { cat "$TEST_TMP/report.err"; fail "periscope report --folded failed"; }

# A sample's stack is whole when it goes back to where its thread began: the
# program's _start (or ld.so's _dl_start_user before it), a thread's clone,
# Go's goroutine or M start. Some samples have no more stack than they show,
# and count as whole:
#  - no user part at all (a process tearing itself down in exit);
#  - taken inside execve past the point of no return (the old image's stack
#    is gone; only the sampled IP is left);
#  - Go code running on another stack than the goroutine's: signal handlers
#    on the signal stack (runtime.sigtramp, async preemption) and the system
#    stack of vdso calls (time.now): the goroutine's frames are not in the
#    copied stack, as for any unwinder.
"$PYTHON" - "$TEST_TMP/folded" $deep $py $static $threads $gochain <<'PY' || fail "whole-system stacks are not whole"
import sys
from folded import C_ROOTS, GO_ROOTS, by_process
folded, deep, py, static, threads, gochain = sys.argv[1], *map(int, sys.argv[2:])
by_pid, comm_of, rootless = by_process(open(folded))
if rootless:
    sys.exit(f"FAIL: no process root frame in: {rootless[0][:200]}")

# (Go 1.21+ also preempts and grows stacks on g0 through mcall and
# morestack, and calls the vdso there: Go's own traceback stops at them)
GO_OTHER_STACKS = {"runtime.sigtramp.abi0", "runtime.sigreturn.abi0", "time.now",
                   "runtime.mcall", "runtime.morestack.abi0", "runtime.nanotime1.abi0", "runtime.walltime.abi0"}
EXEC = {"load_elf_binary [kernel]", "begin_new_exec [kernel]", "bprm_execve [kernel]"}
ok = True

def has_no_more_stack(frames, go):
    return (all(f.endswith(" [kernel]") for f in frames) or any(f in EXEC for f in frames)
            or (go and any(f in GO_OTHER_STACKS for f in frames)))

def check(label, stacks, names, min_pct, min_samples, go=False):
    global ok
    total = hit = 0
    missing = []
    for frames, n in stacks:
        total += n
        if any(f in names for f in frames) or has_no_more_stack(frames, go):
            hit += n
        else:
            missing.append((n, ";".join(frames)[:240]))
    pct = 100.0 * hit / total if total else 0.0
    print(f"{label}: {hit} of {total} samples reach {'/'.join(sorted(names))} ({pct:.2f}%)")
    if total < min_samples:
        print(f"FAIL: {label} has only {total} samples (want {min_samples})"); ok = False
    elif pct < min_pct:
        print(f"FAIL: {label}: {pct:.2f}% < {min_pct}%; stacks that do not:"); ok = False
        for n, stack in sorted(missing, reverse=True)[:8]:
            print(f"    {n:5d}  {stack}")

short = [e for pid, c in comm_of.items() if c == "short-deep" for e in by_pid[pid]]
# whole stacks ...
check("deep no-frame-pointer chain", by_pid.get(deep, []), C_ROOTS, 99, 20)
check("Debian's python3 (stripped)", by_pid.get(py, []), C_ROOTS, 95, 20)
check("static binary", by_pid.get(static, []), C_ROOTS, 99, 20)
check("4 threads", by_pid.get(threads, []), C_ROOTS, 99, 20)
check("Go (.debug_frame)", by_pid.get(gochain, []), GO_ROOTS, 99, 20, go=True)
check("50 ms programs of the exec storm", short, C_ROOTS, 99, 50)
# ... through the programs' own functions
check("deep: main", by_pid.get(deep, []), {"main"}, 99, 20)
check("python3: Py_BytesMain", by_pid.get(py, []), {"Py_BytesMain"}, 95, 20)
check("static: main", by_pid.get(static, []), {"main"}, 99, 20)
check("4 threads: main or worker_main", by_pid.get(threads, []), {"main", "worker_main"}, 99, 20)
check("Go: main.main or the runtime's own threads", by_pid.get(gochain, []),
      {"main.main", "runtime.mstart1", "runtime.bgsweep", "runtime.bgscavenge", "runtime.gcBgMarkWorker",
       "runtime.forcegchelper", "runtime.runfinq"}, 99, 20, go=True)
# a 50 ms program also starts (exec, ld.so's page faults) and ends (exit
# handlers, teardown) outside main: slow page faults on a VM make that a
# tenth of a short life
check("50 ms programs: main", short, {"main"}, 80, 50)
sys.exit(0 if ok else 1)
PY
echo "ok: every program's stacks reach its entry in a whole-system recording"
