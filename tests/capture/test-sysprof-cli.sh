#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A REAL capture recorded by Debian's sysprof-cli 3.46 (sysprofd and polkitd
# on a private system bus) is read by `periscope info` with its samples, maps,
# counters and embedded files, and decodes to the same frames with our reader
# as with libsysprof-capture-4's.
# Usage: test-sysprof-cli.sh SOURCE_ROOT PERISCOPE TEST_CAPTURE_INTEROP
set -euo pipefail
src=$1
periscope=$2
interop=$3

. "$(dirname "$0")/../lib/test-lib.sh" # fail, as_user, wait_for
command -v jq >/dev/null || fail "jq is missing (apt-get install -y jq)"
. "$src/tests/lib/private-bus.sh"
tmp=$(mktemp -d)
trap 'private_bus_stop; rm -rf "$tmp"' EXIT
private_sysprofd_start "$tmp" || fail "sysprofd cannot run on a private system bus"

# A workload that burns CPU for about a second; its command line carries a
# marker so it can be found among the system's processes.
marker=periscope-sysprof-cli-workload
rc=0
timeout 60 sysprof-cli --force "$tmp/real.syscap" -- \
        sh -c "i=0; while [ \$i -lt 400000 ]; do i=\$((i+1)); done; : $marker" >"$tmp/cli.log" 2>&1 || rc=$?
if [ $rc -ne 0 ] || [ ! -s "$tmp/real.syscap" ]; then
        cat "$tmp/cli.log" "$tmp/sysprofd.log"
        fail "sysprof-cli failed (exit $rc)"
fi
echo "recorded $(stat -c %s "$tmp/real.syscap") bytes with $(sysprof-cli --version 2>/dev/null | head -1)"

"$periscope" info "$tmp/real.syscap" >"$tmp/info" 2>"$tmp/info.err" || { cat "$tmp/info.err"; fail "periscope info exited $?"; }
field() { sed -n "s/^$1: \\([0-9]*\\).*/\\1/p" "$tmp/info"; }
samples=$(field Samples)
maps=$(field 'Memory maps')
counters=$(field Counters)
files=$(field 'Embedded files')
procs=$(field Processes)
echo "periscope info: $samples samples, $maps maps, $counters counters, $files embedded files, $procs processes"
[ "${samples:-0}" -gt 0 ] || fail "no samples in a sysprof-cli capture"
[ "${maps:-0}" -gt 0 ] || fail "no memory maps"
[ "${counters:-0}" -gt 0 ] || fail "no counters"
[ "${files:-0}" -gt 0 ] || fail "no embedded files"
grep -Eq '^  CPU Percent +Combined +double +[1-9][0-9]* values$' "$tmp/info" || fail "no CPU Percent/Combined counter with values"
grep -Eq '^  /proc/mounts +[1-9][0-9]* bytes$' "$tmp/info" || fail "/proc/mounts not listed as an embedded file"
grep -Eq "^  [0-9]+ +sh -c .*$marker" "$tmp/info" || fail "the recorded command is not among the processes"
grep -Eq '^Symbols embedded: yes \(.*__symbols__.*\)$' "$tmp/info" || fail "sysprof-cli's __symbols__ not detected"
grep -Eq '^Lost samples: unknown' "$tmp/info" || fail "lost samples should be unknown for a Sysprof capture"
grep -Eq '^Duration: [0-9]+\.[0-9]{3} s$' "$tmp/info" || fail "no duration"
echo "ok periscope info reads a sysprof-cli capture"

# The dump agrees with the summary, and both readers agree frame by frame.
"$periscope" dump --json "$tmp/real.syscap" >"$tmp/json" || fail "periscope dump --json exited $?"
n=$(jq '[.frames[] | select(.type == "SAMPLE")] | length' "$tmp/json")
[ "$n" = "$samples" ] || fail "dump has $n SAMPLE frames, info says $samples"
[ "$(jq '.error' "$tmp/json")" = null ] || fail "dump reports an error: $(jq '.error' "$tmp/json")"
"$interop" --compare "$tmp/real.syscap" || fail "libsysprof-capture-4 and our reader disagree on the real capture"
echo "ok dump and libsysprof-capture-4 agree on the real capture"
