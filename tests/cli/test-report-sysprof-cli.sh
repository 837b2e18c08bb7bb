#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `periscope report` on a REAL capture recorded by Debian's sysprof-cli 3.46
# (sysprofd and polkitd on a private system bus): the workload's functions
# come out by name, from the __symbols__ table Sysprof embedded, with the
# right caller/callee relations, in the text report, --folded and the
# flame graph.
# Usage: test-report-sysprof-cli.sh SOURCE_ROOT PERISCOPE WORKLOAD
set -euo pipefail
src=$1
periscope=$2
workload=$3

. "$(dirname "$0")/../lib/test-lib.sh" # fail, as_user, wait_for
. "$src/tests/lib/private-bus.sh"
tmp=$(mktemp -d)
trap 'private_bus_stop; rm -rf "$tmp"' EXIT
private_sysprofd_start "$tmp" || fail "sysprofd cannot run on a private system bus"

cp "$workload" "$tmp/periscope-burn"
rc=0
timeout 90 sysprof-cli --force --no-battery --no-disk --no-network --no-memory --no-cpu "$tmp/real.syscap" -- \
        "$tmp/periscope-burn" 150000 >"$tmp/cli.log" 2>&1 || rc=$?
if [ $rc -ne 0 ] || [ ! -s "$tmp/real.syscap" ]; then
        cat "$tmp/cli.log" "$tmp/sysprofd.log"
        fail "sysprof-cli failed (exit $rc)"
fi
echo "recorded $(stat -c %s "$tmp/real.syscap") bytes"
# The profiled program is gone: names must come from the capture alone.
rm -f "$tmp/periscope-burn"

"$periscope" report --no-progress --comm periscope-burn "$tmp/real.syscap" >"$tmp/report" 2>"$tmp/report.err" ||
        { cat "$tmp/report.err"; fail "periscope report exited $?"; }
cat "$tmp/report"
grep -q '^Symbols: embedded Sysprof table (__symbols__)$' "$tmp/report" || fail "Sysprof's __symbols__ not used"
samples=$(sed -n 's/^Samples: \([0-9]*\) .*/\1/p' "$tmp/report")
[ "${samples:-0}" -ge 20 ] || fail "only ${samples:-0} samples of the workload"
# burn_inner does the work: it is the hottest function by self time.
awk '/^Hottest functions by self time:/{getline; getline; print; exit}' "$tmp/report" | grep >/dev/null -E '  burn_inner$' ||
        fail "burn_inner is not the hottest function by self time"

"$periscope" report --no-progress --comm periscope-burn --folded "$tmp/real.syscap" >"$tmp/folded"
# Most of burn_inner's samples sit under burn_outer under main.
inner=$(awk '/burn_inner [0-9]+$/ {n += $NF} END {print n + 0}' "$tmp/folded")
nested=$(awk '/(^|;)main;burn_outer;burn_inner [0-9]+$/ {n += $NF} END {print n + 0}' "$tmp/folded")
echo "burn_inner: $inner samples, $nested under main;burn_outer"
[ "$inner" -gt 0 ] && [ $((nested * 10)) -ge $((inner * 8)) ] || { head -20 "$tmp/folded"; fail "stacks are not main;burn_outer;burn_inner"; }

"$periscope" report --no-progress --comm periscope-burn --callers burn_inner "$tmp/real.syscap" >"$tmp/callers"
awk '/^Callers of/{getline; getline; print; exit}' "$tmp/callers" | grep >/dev/null -E '  burn_outer$' ||
        { cat "$tmp/callers"; fail "burn_outer is not burn_inner's main caller"; }

"$periscope" report --no-progress --comm periscope-burn --flamegraph "$tmp/flame.svg" "$tmp/real.syscap" >/dev/null
grep -q 'data-name="burn_inner"' "$tmp/flame.svg" || fail "burn_inner not in the flame graph"
echo "ok periscope report names a sysprof-cli recording's functions from its __symbols__"
