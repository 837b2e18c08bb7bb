#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# compare-outputs.sh: runs two builds of the CLI over the same captures and
# says where their offline output differs (report in its views, export in
# every format, dump, info, the capture symbolize writes). A refactoring that must not change what users
# see is checked with it:
#
#   bench/compare-outputs.sh OLD_CLI NEW_CLI CAPTURE...
#   bench/compare-outputs.sh build-old/cli/periscope build/cli/periscope \
#           $(find /tmp/periscope-test.* -name '*.syscap')
#
# The suite leaves its captures behind with PERISCOPE_TEST_KEEP=1. Prints one
# line per differing (capture, command) pair with the first differing line,
# then "N captures, M outputs compared, K differ"; exits 1 when any differ.
set -u
[ $# -ge 3 ] || { echo "usage: $0 OLD_CLI NEW_CLI CAPTURE..." >&2; exit 2; }
old=$1 new=$2
shift 2
tmp=$(mktemp -d /tmp/periscope-compare.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# The views compared: each line is one periscope command line; FILE stands
# for the capture. Outputs that name the capture's path or the time are
# the same for both builds, as both read the same file.
views=(
        "report --no-progress FILE"
        "report --no-progress --tree FILE"
        "report --no-progress --folded FILE"
        "report --no-progress --lines FILE"
        "report --no-progress --by-process FILE"
        "report --no-progress --by-thread FILE"
        "report --no-progress --by-container FILE"
        "report --no-progress --mappings FILE"
        "report --no-progress --marks FILE"
        "report --no-progress --counters FILE"
        "report --no-progress --memory FILE"
        "report --no-progress --off-cpu FILE"
        "report --no-progress --wall FILE"
        "export -F pprof FILE"
        "export -F speedscope FILE"
        "export -F perf-script FILE"
        "export -F folded FILE"
        "dump FILE"
        "dump --json FILE"
        "info FILE"
)

n_caps=0 n_out=0 n_diff=0
for cap in "$@"; do
        [ -f "$cap" ] || continue
        n_caps=$((n_caps + 1))
        for v in "${views[@]}"; do
                read -r -a argv <<<"${v//FILE/$cap}"
                "$old" "${argv[@]}" >"$tmp/old" 2>"$tmp/old.err"
                ro=$?
                "$new" "${argv[@]}" >"$tmp/new" 2>"$tmp/new.err"
                rn=$?
                n_out=$((n_out + 1))
                if [ $ro != $rn ] || ! cmp -s "$tmp/old" "$tmp/new" || ! cmp -s "$tmp/old.err" "$tmp/new.err"; then
                        n_diff=$((n_diff + 1))
                        first=$(diff "$tmp/old" "$tmp/new" | sed -n 2p | cut -c1-160)
                        [ -n "$first" ] || first=$(diff "$tmp/old.err" "$tmp/new.err" | sed -n 2p | cut -c1-160)
                        echo "DIFFERS: $cap: periscope $v (exit $ro vs $rn): $first"
                fi
        done
        # symbolize rewrites the capture: compare the files it writes.
        # Both write the same path, as symbolize names it in what it prints.
        "$old" symbolize -o "$tmp/out.syscap" "$cap" >"$tmp/old" 2>&1
        ro=$?
        mv -f "$tmp/out.syscap" "$tmp/old.syscap" 2>/dev/null
        "$new" symbolize -o "$tmp/out.syscap" "$cap" >"$tmp/new" 2>&1
        rn=$?
        mv -f "$tmp/out.syscap" "$tmp/new.syscap" 2>/dev/null
        n_out=$((n_out + 1))
        if [ $ro != $rn ] || ! cmp -s "$tmp/old" "$tmp/new" ||
                { [ $ro = 0 ] && ! cmp -s "$tmp/old.syscap" "$tmp/new.syscap"; }; then
                n_diff=$((n_diff + 1))
                echo "DIFFERS: $cap: periscope symbolize -o (exit $ro vs $rn)"
        fi
        rm -f "$tmp/old.syscap" "$tmp/new.syscap"
done
echo "$n_caps captures, $n_out outputs compared, $n_diff differ"
[ $n_diff = 0 ]
