#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# End to end through the real periscoped: Debian's stripped python3.11 has
# no symbols for most of its code; each such frame is its own row,
# python3.11+0xOFFSET (the file offset), and the capture keeps the file's
# build-id beside them so the frames can be named later.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}"
py=/usr/bin/python3.11
[ -x $py ] || fail "$py missing: apt-get install -y python3.11"
private_bus_start
periscoped_start
cap=$TEST_TMP/python.syscap
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$cap" -- $py -c '
import time
t = time.time()
while time.time() - t < 1.5:
    sum(i * i for i in range(1000))
' >"$TEST_TMP/record.out" 2>&1 || { cat "$TEST_TMP/record.out"; fail "record failed"; }
"$PERISCOPE" report --no-progress --folded "$cap" >"$TEST_TMP/folded" || fail "report failed"
"$PERISCOPE" report --no-progress --mappings "$cap" >"$TEST_TMP/mappings" || fail "report --mappings failed"
want=$(build_id_of $py)
grep -A1 " $(readlink -f $py)\$" "$TEST_TMP/mappings" | grep >/dev/null "build-id $want" ||
        { cat "$TEST_TMP/mappings"; fail "the capture does not keep $py's build-id $want"; }
"$PYTHON" - "$TEST_TMP/folded" <<'PY' || fail "python3.11's unnamed frames"
import re, sys
total = offs = 0
rows = set()
for l in open(sys.argv[1]):
    s, _, n = l.rstrip("\n").rpartition(" ")
    frames, n = s.split(";"), int(n)
    total += n
    if any("no symbol covers" in f for f in frames):
        sys.exit("FAIL: an unnamed frame is still a per-module row: " + s)
    user = [f for f in frames if not f.endswith("[kernel]")]
    if user and re.fullmatch(r"python3\.11\+0x[0-9a-f]+", user[-1]):
        offs += n
    rows.update(f for f in frames if re.fullmatch(r"python3\.11\+0x[0-9a-f]+", f))
print("ok: %d of %d samples end in a python3.11+0xOFFSET frame, %d distinct offsets" % (offs, total, len(rows)))
sys.exit(0 if total >= 50 and offs / total >= 0.1 and len(rows) >= 20 else 1)
PY
echo "ok: $py's build-id $want is in the capture"
