#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# run-analysis-bench.sh NEW_BUILD OLD_BUILD [SIZES_MB...]: times the offline
# analysis (`periscope report`, `export -F pprof`, `export -F speedscope`)
# and its peak RSS on synthetic captures of growing size (default 125 250
# 500 1000 MB, made by tests/cli/make-report-capture big N: one process,
# 5000 distinct stacks of 1-40 frames, a symbol table), with two builds'
# `periscope` (before/after a change). Captures go to $BENCH_DIR
# (/var/tmp/periscope-analysis-bench), which needs ~2 GB free; RUNS (3)
# runs each, the median is printed as a Markdown table. speedscope's JSON
# tree takes ~12× the capture in memory: it runs up to SPEEDSCOPE_MAX_MB
# (500) only. CPU seconds (user + system) are printed beside the wall
# time: on a machine shared with other work they vary far less.
set -euo pipefail
new=$1 old=$2
shift 2
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(125 250 500 1000)
dir=${BENCH_DIR:-/var/tmp/periscope-analysis-bench}
runs=${RUNS:-3}
speedscope_max=${SPEEDSCOPE_MAX_MB:-500}
mkdir -p "$dir"
maker=$new/tests/cli/make-report-capture
for b in "$new" "$old"; do
        [ -x "$b/cli/periscope" ] || { echo "FAIL: no $b/cli/periscope"; exit 1; }
done
need_mb=$(( ${sizes[-1]} * 2 + 200 ))
free_mb=$(df -Pm "$dir" | awk 'NR==2 {print $4}')
if [ "$free_mb" -lt "$need_mb" ]; then
        echo "FAIL: $dir has $free_mb MB free, the largest capture needs about $need_mb MB"
        exit 1
fi

# the median of the numbers on stdin
median() {
        sort -n | sed -n "$(( (runs + 1) / 2 ))p"
}

# median wall s, CPU s and peak RSS MB of RUNS runs of "$@" (output to /dev/null)
measure() {
        local walls=() cpus=() rsss=()
        for _ in $(seq "$runs"); do
                /usr/bin/time -f '%e %U %S %M' -o "$dir/time" "$@" >/dev/null 2>"$dir/stderr" ||
                        { echo "FAIL: $*: $(tail -3 "$dir/stderr")" >&2; exit 1; }
                read -r w u s r <"$dir/time"
                walls+=("$w")
                cpus+=("$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')")
                rsss+=("$r")
        done
        local mw mc mr
        mw=$(printf '%s\n' "${walls[@]}" | median)
        mc=$(printf '%s\n' "${cpus[@]}" | median)
        mr=$(printf '%s\n' "${rsss[@]}" | median)
        printf '%s %s %d' "$mw" "$mc" $(( mr / 1024 ))
}

echo "| capture MB | samples | command | before s | after s | before CPU s | after CPU s | before MB RSS | after MB RSS |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for mb in "${sizes[@]}"; do
        # ~190 bytes per SAMPLE frame of this generator
        n=$(( mb * 1024 * 1024 / 190 ))
        cap=$dir/big-$mb.cap
        [ -s "$cap" ] || "$maker" big "$cap" "$n" >/dev/null
        real_mb=$(( $(stat -c %s "$cap") / 1024 / 1024 ))
        for cmd in "report" "export -F pprof" "export -F speedscope"; do
                [ "$cmd" != "export -F speedscope" ] || [ "$mb" -le "$speedscope_max" ] || continue
                read -r bw bc br <<<"$(measure nice "$old/cli/periscope" $cmd "$cap")"
                read -r aw ac ar <<<"$(measure nice "$new/cli/periscope" $cmd "$cap")"
                echo "| $real_mb | $n | \`$cmd\` | $bw | $aw | $bc | $ac | $br | $ar |"
        done
done
rm -f "$dir/time" "$dir/stderr"
echo "(captures kept in $dir: remove them by hand)"
