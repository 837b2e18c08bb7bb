#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# run-symbolize-bench.sh BUILD [BINARY] [N]: time naming N (default 2000)
# random addresses of BINARY's largest executable segment (default node,
# 99 MB) through the sandboxed helper (helper-tool symbolize: bwrap start,
# IDENTIFY-free SYMBOLIZE batches of 256, as the service sends them), with
# `perf report` (a perf.data holding one sample at each address),
# eu-addr2line and addr2line on the same addresses as anchors.
# PERISCOPE_HELPER: another helper binary to time (default BUILD's).
# RUNS (default 5) interleaved runs; prints each run, then per tool the
# median wall time and the median CPU time of the tool and its children
# (perf stat task-clock: on a loaded machine the CPU time is the stabler).
set -euo pipefail
build=${1:?usage: run-symbolize-bench.sh BUILD [BINARY] [N]}
bin=${2:-/usr/bin/node}
n=${3:-2000}
runs=${RUNS:-5}
tool=$build/tests/sandbox-helper/helper-tool
[ -x "$tool" ] || { echo "build $build first (tests/sandbox-helper/helper-tool)"; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/periscope-symbolize-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
read -r off vaddr size < <(readelf -lW "$bin" | awk '$1 == "LOAD" && / R E | RWE / { print $2, $3, $5 }' |
        while read -r o v s; do echo $((o)) $((v)) $((s)); done | sort -k3 -n | tail -1)
mapfile -t offs < <(python3 -c "
import random; random.seed(1)
for a in sorted(random.sample(range($off, $off + $size), $n)): print(hex(a))")
mapfile -t addrs < <(for o in "${offs[@]}"; do printf '0x%x\n' $((o - off + vaddr)); done)
python3 "$here/perf-data-of-addresses.py" "$tmp/perf.data" "$bin" 4242 "${addrs[@]}"

# t NAME CMD...: one run: "NAME wall_s cpu_s" appended to $tmp/times
t() {
        local name=$1 s e
        shift
        s=$(date +%s.%N)
        perf stat -x, -e task-clock -o "$tmp/stat" -- "$@" >/dev/null 2>&1 || true
        e=$(date +%s.%N)
        local cpu_ms
        cpu_ms=$(awk -F, '/task-clock/ { print $1 }' "$tmp/stat")
        printf '%s %.3f %.3f\n' "$name" "$(echo "$e - $s" | bc)" "$(echo "${cpu_ms:-0} / 1000" | bc -l)" | tee -a "$tmp/times"
}
echo "$n addresses in $bin ($(stat -c %s "$bin") bytes), $runs runs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$runs"); do
        PERISCOPE_HELPER=${PERISCOPE_HELPER:-$build/sandbox-helper/periscope-helper} t periscope-helper "$tool" symbolize "$bin" "${offs[@]}"
        t perf-report perf report -i "$tmp/perf.data" --stdio --sort sym
        t eu-addr2line eu-addr2line -f -i -e "$bin" "${addrs[@]}"
        t addr2line addr2line -f -i -e "$bin" "${addrs[@]}"
done
echo "median of $runs (wall s, cpu s):"
for name in periscope-helper perf-report eu-addr2line addr2line; do
        awk -v n="$name" '$1 == n { print $2, $3 }' "$tmp/times" | python3 -c "
import statistics, sys
rows = [tuple(map(float, l.split())) for l in sys.stdin]
print('%-18s %6.3f %6.3f' % ('$name', statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)))"
done
