#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `periscope report --memory` shows whole call stacks, through the real
# chain: workload-memory-paths under `periscope record --memory` (the
# collector's ALLOCATION frames with their stacks), periscoped on a private
# bus (symbolizes them at Stop), then the report:
#   - the text report lists main;leak_path;make_buf with exactly 10000 bytes
#     in 10 blocks among the leaked stacks, and main;temp_path;make_buf with
#     15000 bytes in 50 blocks among the temporaries, each path only there;
#   - --leaked/--temporary with --folded, --tree and --flamegraph weigh just
#     those bytes, by stack;
#   - --pid and --comm select the process in every one of these views.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${WORKLOAD:?}"
private_bus_start
periscoped_start

cap=$TEST_TMP/memory.syscap
"$PERISCOPE" record --address "$BUS_ADDRESS" --memory -o "$cap" -- "$WORKLOAD" >"$TEST_TMP/record.out" 2>&1 ||
        { cat "$TEST_TMP/record.out"; fail "record --memory of the workload failed"; }
pid=$(sed -n 's/^pid \([0-9]*\) base .*$/\1/p' "$TEST_TMP/record.out")
[ -n "$pid" ] || { cat "$TEST_TMP/record.out"; fail "the workload did not print its pid"; }
# the process's name as the capture gives it (`periscope info`): its
# command line's first word, or the kernel's "[comm]" when the service
# caught it before it could read the command line
comm=$("$PERISCOPE" info "$cap" | awk -v pid="$pid" '$1 == pid { print $2; exit }')
comm=$(basename "${comm:-?}")

# 1. The text report: whole stacks, leaks and temporaries apart.
"$PERISCOPE" report --memory "$cap" >"$TEST_TMP/report.txt" || fail "report --memory failed"
cat "$TEST_TMP/report.txt"
leaked=$(sed -n '/^Bytes leaked/,/^$/p' "$TEST_TMP/report.txt")
temps=$(sed -n '/^Bytes of short-lived temporaries/,/^$/p' "$TEST_TMP/report.txt")
echo "$leaked" | grep >/dev/null -E '^ +10000 +10  (.*;)?main;leak_path;make_buf$' ||
        fail "main;leak_path;make_buf is not listed with 10000 leaked bytes in 10 blocks"
echo "$temps" | grep >/dev/null -E '^ +15000 +50  (.*;)?main;temp_path;make_buf$' ||
        fail "main;temp_path;make_buf is not listed with 15000 bytes of temporaries in 50 blocks"
echo "$leaked" | grep >/dev/null 'temp_path' && fail "temp_path freed everything but is listed as leaking"
echo "$temps" | grep >/dev/null 'leak_path' && fail "leak_path's blocks are listed as temporaries"
echo "ok: report --memory lists the leaking and the temporary stack apart, with their bytes"

# 2. --leaked / --temporary in the stack views.
folded() { # FILE STACK-END: the count of the folded line ending so
        sed -n "s/^\(.*;\)\{0,1\}main;$2 \([0-9]*\)$/\2/p" "$1"
}
"$PERISCOPE" report --memory --leaked --folded "$cap" >"$TEST_TMP/leaked.folded" || fail "--leaked --folded failed"
"$PERISCOPE" report --memory --temporary --folded "$cap" >"$TEST_TMP/temp.folded" || fail "--temporary --folded failed"
[ "$(folded "$TEST_TMP/leaked.folded" 'leak_path;make_buf')" = 10000 ] ||
        { cat "$TEST_TMP/leaked.folded"; fail "--leaked --folded: main;leak_path;make_buf is not 10000 bytes"; }
[ -z "$(folded "$TEST_TMP/leaked.folded" 'temp_path;make_buf')" ] || fail "--leaked --folded shows temp_path"
[ "$(folded "$TEST_TMP/temp.folded" 'temp_path;make_buf')" = 15000 ] ||
        { cat "$TEST_TMP/temp.folded"; fail "--temporary --folded: main;temp_path;make_buf is not 15000 bytes"; }
[ -z "$(folded "$TEST_TMP/temp.folded" 'leak_path;make_buf')" ] || fail "--temporary --folded shows leak_path"
echo "ok: --leaked and --temporary fold the stacks by bytes"

"$PERISCOPE" report --memory --leaked --tree --min-percent 0 --no-progress "$cap" >"$TEST_TMP/tree.txt" ||
        fail "--memory --leaked --tree failed"
sed -n '/^Capture:/,$p' "$TEST_TMP/tree.txt"
"$PYTHON" - "$TEST_TMP/tree.txt" <<'PY' || fail "--leaked --tree does not nest main > leak_path > make_buf with 10000 bytes"
import re, sys
text = open(sys.argv[1]).read()
tree = text[text.index("Capture:"):]
assert re.search(r"^Leaked \(never freed\): \d+ bytes", tree, re.M), "summary does not say leaked bytes"
lines = tree.splitlines()
def depth(line): return len(line) - len(line.lstrip(" │├└─"))
found = False
for i, l in enumerate(lines):
    if l.rstrip().endswith(" main"):
        kids = [k for k in lines[i + 1:i + 6] if k.rstrip().endswith(" leak_path")]
        for k in kids:
            j = lines.index(k)
            nxt = lines[j + 1] if j + 1 < len(lines) else ""
            if nxt.rstrip().endswith(" make_buf") and re.search(r"\b10000\b", k) and depth(k) > depth(l):
                found = True
assert found, "no main > leak_path (10000) > make_buf in the tree"
assert "temp_path" not in tree, "temp_path in the tree of leaked bytes"
PY
echo "ok: --leaked --tree"

svg=$TEST_TMP/temp.svg
"$PERISCOPE" report --memory --temporary -f "$svg" --no-progress "$cap" >"$TEST_TMP/flame.txt" ||
        fail "--memory --temporary --flamegraph failed"
"$PYTHON" - "$svg" <<'PY' || fail "the flame graph of temporaries does not draw main;temp_path;make_buf as 15000 bytes"
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
assert root.get("data-unit") == "bytes", root.get("data-unit")
titles = [t.text or "" for t in root.iter(ns + "title")]
title = [t.text for t in root.iter(ns + "text") if t.get("id") == "title"]
assert title and title[0].startswith("Bytes of short-lived temporaries"), title
for name in ("temp_path", "make_buf"):
    assert any(t.startswith(name + " ") and "15,000 bytes" in t.replace("15000", "15,000") for t in titles), \
        (name, [t for t in titles if name in t])
assert not any(t.startswith("leak_path ") for t in titles), "leak_path in the flame graph of temporaries"
PY
echo "ok: --temporary --flamegraph"

# 3. --pid and --comm select the process in every view; other names nothing.
"$PERISCOPE" report --memory --pid "$pid" "$cap" >"$TEST_TMP/pid.txt" || fail "report --memory --pid failed"
sed -n '/^Bytes leaked/,/^$/p' "$TEST_TMP/pid.txt" | grep >/dev/null -E '^ +10000 +10  (.*;)?main;leak_path;make_buf$' ||
        fail "--pid $pid lost the leaking stack"
"$PERISCOPE" report --memory --comm "$comm" --temporary --folded "$cap" >"$TEST_TMP/comm.folded" ||
        fail "report --memory --comm --folded failed"
[ "$(folded "$TEST_TMP/comm.folded" 'temp_path;make_buf')" = 15000 ] || fail "--comm $comm lost the temporaries"
"$PERISCOPE" report --memory --comm no-such-program "$cap" >"$TEST_TMP/none.txt" 2>&1 || true
if grep -qE 'leak_path|temp_path' "$TEST_TMP/none.txt"; then
        cat "$TEST_TMP/none.txt"
        fail "--comm no-such-program still shows the workload's stacks"
fi
"$PERISCOPE" report --memory --leaked --pid $((pid + 100000)) --folded "$cap" >"$TEST_TMP/otherpid.folded" ||
        fail "--leaked --folded --pid of another process failed"
[ ! -s "$TEST_TMP/otherpid.folded" ] || fail "--pid of another process still folds stacks"
echo "ok: --pid and --comm"

# 4. Usage errors say what to do.
set +e
"$PERISCOPE" report --memory --leaked --temporary --tree "$cap" 2>"$TEST_TMP/err"
st=$?
set -e
[ $st = 2 ] && grep -q -- "--leaked and --temporary" "$TEST_TMP/err" ||
        fail "--leaked with --temporary was not refused with a reason: $(cat "$TEST_TMP/err")"
echo "ok: usage errors"
