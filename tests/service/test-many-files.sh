#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A process that maps 2000 distinct files: periscoped pins each one (one fd
# each), so it starts its sandboxed helper while holding more than 2000 fds.
# The helper must start all the same (its socket is moved into place before
# its fd limit is lowered, every other fd is closed): no helper failure in
# the daemon's log or the capture, the program's functions named, its stacks
# whole.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${MANY_MAPS:?}"
private_bus_start
periscoped_start

mkdir "$TEST_TMP/files"
# 2000 files of one page each, all different (so none is the same inode)
"$PYTHON" -c '
import os, sys
for i in range(1, 2001):
    with open(os.path.join(sys.argv[1], f"f{i}.bin"), "wb") as f:
        f.write(str(i).encode().ljust(4096, b"\0"))' "$TEST_TMP/files" || fail "cannot write the files"
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$TEST_TMP/many.syscap" -- \
        "$MANY_MAPS" 1500 "$TEST_TMP"/files/f*.bin >"$TEST_TMP/out" 2>"$TEST_TMP/err" ||
        { cat "$TEST_TMP/err"; fail "recording the program failed"; }
cat "$TEST_TMP/out" "$TEST_TMP/err"
grep -q "mapped 2000 files" "$TEST_TMP/out" || fail "the program did not map its 2000 files"
pins=$(sed -n 's/.*pinned_files=\([0-9]*\).*/\1/p' < <("$PERISCOPE" dump --json "$TEST_TMP/many.syscap" | grep -o 'pinned_files=[0-9]*' | head -1))
echo "pinned files: ${pins:-?}"
[ "${pins:-0}" -ge 2000 ] || fail "periscoped pinned only ${pins:-0} files (want 2000 and more: the test needs it to hold them)"
if grep -E "helper failed|exited with status 127" "$TEST_TMP/periscoped.log"; then
        fail "the helper failed while periscoped held ${pins} pinned files"
fi
grep -E "symbolized .* 0 helper failures" "$TEST_TMP/periscoped.log" >/dev/null ||
        { cat "$TEST_TMP/periscoped.log"; fail "no symbolization without helper failures in the daemon's log"; }
"$PERISCOPE" report --folded "$TEST_TMP/many.syscap" >"$TEST_TMP/folded" || fail "report failed"
"$PYTHON" - "$TEST_TMP/folded" <<'PY' || fail "the program's stacks are not named and whole"
import sys
total = named = whole = 0
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    frames = stack.split(";")
    total += int(n)
    if "main" in frames and "_start" in frames:
        whole += int(n)
    if "many_maps_leaf" in frames:
        named += int(n)
pct = 100.0 * whole / total if total else 0
print(f"{whole} of {total} samples go back through main to _start ({pct:.1f}%), {named} in many_maps_leaf")
sys.exit(0 if total >= 100 and pct >= 95 and named >= total // 2 else 1)
PY
echo "ok: helpers start and name everything while periscoped holds 2000 pinned files"
