# SPDX-License-Identifier: LGPL-2.1-or-later
# control-checks.sh: the assertions on recordings through the control fd,
# sourced by test-record-control.sh and test-record-trace.sh (private
# daemon) and by the installed-service family (tests/service/installed/),
# so that both check the same things. Needs PERISCOPE (the CLI that reads
# captures), fail(); CHECK (test-control-ring) for the control fd, TRACE_CHECK
# (trace-check) for the trace fd.
#   control_check_threads CAP OUT DIR   collector-client threads 4 5000: every mark, log,
#                                       counter value, allocation; report --marks/--counters/--timeline
#   control_check_memory CAP DIR        --memory of memory-workload: the leaks named exactly
#   trace_check_writer MODE CAP OUT ERR trace-writer MODE (env, fd, garbage): the capture and
#                                       what `periscope record` said (ERR) about the merge
#   trace_check_env_report CAP OUT DIR  trace-writer env: report --marks and the JIT names

control_check_threads() { # capture, client's output, dir
        local cap=$1 d=$3
        "$CHECK" verify-threads "$cap" "$2" 4 5000 || fail "threads capture is wrong"
        echo "ok: marks, logs, counters and allocations of 4 threads"
        # The report views on it.
        "$PERISCOPE" report --marks --counters --timeline "$d/threads.svg" "$cap" >"$d/threads.txt" ||
                fail "report --marks --counters --timeline failed"
        cat "$d/threads.txt"
        grep -qE '^ +20000 .* periscope-test +mark$' "$d/threads.txt" || fail "--marks does not count the 20000 marks"
        grep -qE '^ +2000  message +periscope-test$' "$d/threads.txt" || fail "--marks does not count the 2000 logs"
        grep -qE '^periscope-test +counter-a +[0-9]+ +2000 ' "$d/threads.txt" ||
                fail "--counters does not show counter-a's 2000 values"
        grep -qE '^CPU Percent +Combined +system ' "$d/threads.txt" || fail "--counters does not show the CPU counter"
        python3 - "$d/threads.svg" <<'PY' || fail "--timeline wrote a bad SVG"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
texts = [t.text or "" for t in root.iter(ns + "text")]
assert any(t == "Marks (20000)" for t in texts), texts[:5]
assert len(list(root.iter(ns + "polyline"))) >= 3   # CPU, memory and the program's counters
assert len([r for r in root.iter(ns + "rect") if r.find(ns + "title") is not None]) == 5000  # marks drawn (capped)
PY
        echo "ok: report --marks, --counters, --timeline"
}

control_check_memory() { # capture, dir
        local cap=$1 d=$2 leaked
        "$PERISCOPE" report --memory "$cap" >"$d/memory.txt" || fail "report --memory failed"
        cat "$d/memory.txt"
        # The service symbolizes the ALLOCATION stacks at Stop: call sites by name.
        leaked=$(sed -n '/^Leaked/,/^$/p' "$d/memory.txt")
        echo "$leaked" | grep >/dev/null -E '^ +102400 +25  leak_site$' || fail "leak_site's 102400 bytes in 25 blocks not reported as leaked"
        echo "$leaked" | grep >/dev/null -E '^ +2000 +20  leak_in_thread$' || fail "leak_in_thread's 2000 bytes in 20 blocks not reported as leaked"
        if echo "$leaked" | grep >/dev/null -E 'temp_site|grow_site|peak_site|aligned_site|main$'; then
                fail "a call site that freed everything is listed as leaking"
        fi
        sed -n '/^Short-lived/,/^$/p' "$d/memory.txt" | grep >/dev/null -E '^ +1000 +512000  temp_site$' ||
                fail "temp_site's 1000 temporaries not reported"
        sed -n '/^Allocated/,/^$/p' "$d/memory.txt" | grep >/dev/null -E '^ +2024 +2 +0  aligned_site$' ||
                fail "aligned_site's posix_memalign + aligned_alloc not one call site of 2024 bytes"
        echo "ok: memory report names the leaks exactly"
}

trace_check_writer() { # mode, capture, writer's output, periscope record's stderr
        "$TRACE_CHECK" "$2" "$3" || fail "trace-writer $1: the capture is wrong"
        case $1 in
        garbage)
                grep -q "periscope: 14 frames from the program's SYSPROF_TRACE_FD merged, 4 refused" "$4" ||
                        fail "the summary does not count the refused trace frames"
                grep -q "capture written to" "$4" || fail "the recording with a garbage trace fd did not succeed"
                echo "ok: garbage in the trace fd: recording complete, 4 frames refused and explained" ;;
        *)
                grep -q "periscope: 22 frames from the program's SYSPROF_TRACE_FD merged, 0 refused" "$4" ||
                        fail "the summary does not count the merged trace frames"
                echo "ok: trace-writer $1: marks, logs and counters merged" ;;
        esac
}

trace_check_env_report() { # capture, writer's output, dir
        local cap=$1 d=$3 pid
        "$PERISCOPE" report --marks "$cap" >"$d/env.marks" || fail "report --marks failed"
        [ "$(grep -cE '^ +1 .* trace-test +phase-[0-4]$' "$d/env.marks")" = 5 ] ||
                { cat "$d/env.marks"; fail "report --marks does not show the 5 trace marks"; }
        grep -qE '^ +5  warning  trace-test$' "$d/env.marks" || fail "report --marks does not count the 5 trace logs"
        pid=$(sed -n 's/^pid //p' "$2")
        "$PERISCOPE" report --pid "$pid" "$cap" >"$d/env.report" || fail "report --pid failed"
        grep -q "js_render \[jit\]" "$d/env.report" ||
                { cat "$d/env.report"; fail "report does not name the program's JIT samples from its JITMAP"; }
        echo "ok: report --marks shows them, report names the JIT samples"
}
