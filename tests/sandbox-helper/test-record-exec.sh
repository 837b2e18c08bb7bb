#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A process that execs another program mid-recording: the exec replaces all
# its mappings, but the samples taken before it must still be named from
# the old image (its mappings are retired, not forgotten). The workload
# spins in before_exec_spin, then execs sleep; the report names
# before_exec_spin for its samples, with no "no mapping contains this
# address".
. "$(dirname "$0")/../lib/periscoped-bus.sh"
. "$(dirname "$0")/record-workload.sh"
build_workload exec workload-exec.c -O2 -g
record_folded exec 1 /bin/sleep 0.3
python3 - "$TEST_TMP/exec.folded" <<'PY' || { sort -t' ' -k2 -nr "$TEST_TMP/exec.folded" | head -5; fail "samples before the exec are not named"; }
import folded, sys
total = named = lost = 0
for s in folded.stacks(sys.argv[1]):
    total += s.count
    if "main;before_exec_spin" in s.text:
        named += s.count
    if "no mapping contains this address" in s.text:
        lost += s.count
print("%d/%d samples named main;before_exec_spin, %d with an address outside every mapping" % (named, total, lost))
sys.exit(0 if total >= 200 and named >= 0.9 * total and lost <= 0.01 * total else 1)
PY
echo "ok: samples taken before an exec are named from the image they ran"
