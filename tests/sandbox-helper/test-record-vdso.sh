#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The vdso has no file: periscoped pins its image out of the process and the
# sandboxed helper names it like any ELF file. A workload that lives in
# clock_gettime is recorded through the real periscoped; the report must
# name the vdso's exported function (__vdso_clock_gettime) under the
# program's own (the image carries no symbols for its local helpers, which
# say so), and count the [vdso] mapping as verified.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
. "$(dirname "$0")/record-workload.sh"
build_workload vdso workload-vdso.c -O2 -g
record_folded vdso 1.5
cap=$TEST_TMP/vdso.syscap
python3 - "$TEST_TMP/vdso.folded" <<'PY' || { sort -t' ' -k2 -nr "$TEST_TMP/vdso.folded" | head -5; fail "vdso frames not named"; }
import folded, sys
total = named = 0
for s in folded.stacks(sys.argv[1], containing="main"):
    frames = s.frames
    total += s.count
    # the image's local functions have no symbol (only .dynsym is mapped),
    # but the vdso must never be "no file"
    if "no file backs this mapping] [vdso]" in s.text:
        print("FAIL: the vdso was not pinned:", s.line)
        sys.exit(1)
    if any(f.endswith("clock_gettime") and "vdso" in f for f in frames):
        named += s.count
print("%d/%d samples under main are in a named vdso function" % (named, total))
sys.exit(0 if total >= 100 and named >= 0.3 * total else 1)
PY
"$PERISCOPE" report --no-progress "$cap" >"$TEST_TMP/report.txt" || fail "report failed"
grep -q "not verified: \[vdso\]" "$TEST_TMP/report.txt" && { cat "$TEST_TMP/report.txt"; fail "the [vdso] mapping is reported as not verified"; }
echo "ok: vdso functions are named from the image read out of the process"
