#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `periscope export --format perf-script` has the line structure of real
# `perf script` output (a real `perf record -g` of the same workload on this
# machine, printed with the same fields), and the perf importer of the
# speedscope app (in headless Chromium) reads it: the workload's functions
# and one profile named after the thread.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
. "$SRCDIR/lib.sh"
command -v perf >/dev/null || fail "perf missing: apt-get install -y linux-perf"
speedscope_app
record_cpu
ours=$TEST_TMP/cpu.perf.txt
"$PERISCOPE" export --format perf-script -o "$ours" "$TEST_TMP/cpu.syscap" || fail "export --format perf-script failed"

# the reference: perf itself on the same workload (-N: no writes to root's
# shared ~/.debug build-id cache, where another perf at the same time made
# this perf abort once in build-id.c)
perf record -N -q -g --sample-cpu -e cpu-clock -o "$TEST_TMP/perf.data" -- "$TEST_TMP/workload-export" 500 \
        >"$TEST_TMP/perf-record.out" 2>&1 || { cat "$TEST_TMP/perf-record.out"; fail "perf record failed"; }
perf script -i "$TEST_TMP/perf.data" -F comm,pid,tid,cpu,time,period,event,ip,sym,symoff,dso \
        >"$TEST_TMP/real.perf.txt" 2>"$TEST_TMP/perf-script.err" || { cat "$TEST_TMP/perf-script.err"; fail "perf script failed"; }

"$PYTHON" - "$TEST_TMP/real.perf.txt" "$ours" <<'PY'
import re, sys
HEADER = re.compile(r"^(\S.*?) +(\d+)/(\d+) +\[(\d{3})\] +(\d+)\.(\d{6}): +(\d+) +([\w:-]+): *$")
FRAME = re.compile(r"^\t *([0-9a-f]+) (.+?)(\+0x[0-9a-f]+)? \((\S+)\)$")

def parse(path):
    """Samples as (header match, [frame matches]); fails on any other line."""
    samples, cur = [], None
    for n, line in enumerate(open(path).read().split("\n"), 1):
        if line == "":
            if cur:
                samples.append(cur)
            cur = None
            continue
        if cur is None:
            h = HEADER.match(line)
            if not h:
                sys.exit("FAIL: %s:%d: not a perf script sample header: %r" % (path, n, line))
            cur = (h, [])
            continue
        f = FRAME.match(line)
        if not f:
            sys.exit("FAIL: %s:%d: not a perf script frame line: %r" % (path, n, line))
        cur[1].append(f)
    if cur:
        samples.append(cur)
    return samples

real, ours = parse(sys.argv[1]), parse(sys.argv[2])
if len(real) < 50 or len(ours) < 50:
    sys.exit("FAIL: too few samples: perf %d, export %d" % (len(real), len(ours)))
def workload_names(samples):
    return {f.group(2) for _, frames in samples for f in frames if f.group(4).endswith("/workload-export")}
want = {"main", "run_rounds", "hot_heavy", "hot_light"}
for what, s in (("perf", real), ("export", ours)):
    if not want <= workload_names(s):
        sys.exit("FAIL: %s names %s, not all of %s" % (what, sorted(workload_names(s)), sorted(want)))
    if not any(f.group(4) == "[kernel.kallsyms]" for _, fr in s for f in fr):
        sys.exit("FAIL: %s has no kernel frame" % what)
    if not all(h.group(1) == "workload-export" and h.group(8) == "cpu-clock" for h, _ in s if h.group(2) == s[-1][0].group(2)):
        sys.exit("FAIL: %s: the workload's samples are not workload-export cpu-clock" % what)
# innermost first: a hot_heavy line comes before run_rounds, main
for h, frames in ours:
    n = [f.group(2) for f in frames]
    if "hot_heavy" in n and not n.index("hot_heavy") < n.index("run_rounds") < n.index("main"):
        sys.exit("FAIL: export frames are not innermost first: %r" % n)
print("ok: every line of perf's own output and of the export has the same structure "
      "(%d and %d samples); both name %s and kernel frames" % (len(real), len(ours), ", ".join(sorted(want))))
PY
[ $? = 0 ] || fail "the perf-script export does not look like perf script"

"$PYTHON" "$SRCDIR/speedscope_check.py" "$SPEEDSCOPE_APP" "$ours" main run_rounds hot_heavy hot_light mix_inline \
        >"$TEST_TMP/speedscope.out" 2>&1 || { cat "$TEST_TMP/speedscope.out"; fail "speedscope's perf importer does not read the export"; }
cat "$TEST_TMP/speedscope.out"
grep -q "title 'workload-export pid: [0-9]* tid: [0-9]* - speedscope'" "$TEST_TMP/speedscope.out" ||
        fail "speedscope did not take the thread from the sample headers"
echo "ok: speedscope's perf script importer reads the export"
