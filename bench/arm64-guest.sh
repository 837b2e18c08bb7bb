#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# run.sh of bench/run-arm64-bench.sh in the arm64 VM (fast boot: a shell
# script as PID 1, root): every program under every profiler, one after
# the other. Per run, in out/: NAME.stacks (Periscope: `periscope report
# --folded`; perf: `perf script`), NAME.bytes (capture or perf.data size),
# NAME.times (ns: the program's end, the report written). Collects only:
# the host computes the table.
. "$1/guest-lib.sh"
ms=${BENCH_MS:-2000}
sec=$(awk -v m="$ms" 'BEGIN { printf "%.3f", m / 1000 }')
w=/usr/local/bin

facts
tar -C "$share/stage" -cf - . | tar -C / -xf - --keep-directory-symlink && cp -a "$share/bin/." "$w/" || exit 1
perf --version >"$out/perf-version" 2>&1 || exit 1
# The kernel lowers perf_event_max_sample_rate when its sampling interrupts
# take long, as they do under emulation: after a few recordings 999 Hz is
# refused. The same rate for every run: no lowering.
echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent || exit 1
# the program, then the time it ended (what "from the end to a report" starts at)
cat >"$w/timed" <<'EOF'
#!/bin/sh
end=$1
shift
"$@"
date +%s%N >"$end"
EOF
chmod 0755 "$w/timed"

# one NAME TOOL PROGRAM ARGS…
one() {
        local name=$1 tool=$2 t1
        shift 2
        local data=/root/$name.data end=/root/$name.end
        case $tool in
        periscope-dwarf | periscope-fp)
                periscope record --private --unwind "${tool#periscope-}" -F 999 -o "$data" -- "$w/timed" "$end" "$@" \
                        >"$out/$name.record" 2>&1 &&
                        periscope report --no-progress --folded --process-root "$data" >"$out/$name.stacks" 2>"$out/$name.report-err"
                ;;
        perf-dwarf | perf-g)
                local cg=dwarf event=cpu-clock
                [ "$tool" = perf-g ] && cg=fp
                # perf 6.1 adds SVE's VG register to --call-graph dwarf's
                # register mask when the CPU has SVE (-cpu max), which a
                # cpu-clock event refuses (EOPNOTSUPP): then the default event.
                # (--no-inline: perf finds inline frames with binutils'
                # addr2line, which the image does not have)
                if ! perf record -q -e cpu-clock --call-graph "$cg" -F 999 -o "$data" -- true >"$out/$name.probe" 2>&1; then
                        event=cycles
                fi
                echo "$event" >"$out/$name.event"
                perf record -q -e "$event" --call-graph "$cg" -F 999 -o "$data" -- "$w/timed" "$end" "$@" >"$out/$name.record" 2>&1 &&
                        perf script --no-inline -i "$data" -F comm,tid,ip,sym,dso >"$out/$name.stacks" 2>"$out/$name.report-err"
                ;;
        esac
        local rc=$?
        t1=$(date +%s%N)
        echo "$(cat "$end" 2>/dev/null || echo 0) $t1" >"$out/$name.times"
        stat -c %s "$data" >"$out/$name.bytes" 2>/dev/null || echo 0 >"$out/$name.bytes"
        echo "$name $rc" >>"$out/runs"
        rm -f "$data" "$end"
}

for tool in periscope-dwarf perf-dwarf perf-g; do
        one "deep-nofp.$tool" "$tool" "$w/deep-nofp" "$ms"
        one "deep-fp.$tool" "$tool" "$w/deep-fp" "$ms"
        [ "$tool" != periscope-dwarf ] || one "deep-fp.periscope-fp" periscope-fp "$w/deep-fp" "$ms"
        one "threads.$tool" "$tool" "$w/threads" $((ms * 2))
        one "go-chain.$tool" "$tool" "$w/go-chain" "$sec"
        one "rust-chain.$tool" "$tool" "$w/rust-chain" "$ms"
        one "python3.$tool" "$tool" /usr/bin/python3 "$w/py-fib.py" "$sec"
done
cat /proc/sys/kernel/perf_event_max_sample_rate >"$out/max-sample-rate"
exit 0
