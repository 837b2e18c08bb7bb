#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `periscope export --format pprof` read by Go's own pprof (golang-go): a
# real recording of workload-export shows the right names, shares, caller
# order, inline frames with file:line, the build-id and the sample count;
# a `record --memory` capture shows its allocations as alloc/inuse space
# and objects with the exact bytes (and the folded export weighs them by
# bytes).
. "$(dirname "$0")/../lib/periscoped-bus.sh"
. "$SRCDIR/lib.sh"
[ -x /usr/bin/go ] || fail "go missing: apt-get install -y golang-go"
# go tool pprof offline, with its caches in the test's directory
# Debian's Go (golang-go), whose pprof is built: a newer Go first on PATH
# (/usr/local/go on some machines) builds its tools anew in every GOCACHE
export HOME=$TEST_TMP/home GOCACHE=$TEST_TMP/gocache GOPATH=$TEST_TMP/gopath GOTOOLCHAIN=local GOFLAGS= GOPROXY=off

record_cpu
cap=$TEST_TMP/cpu.syscap
"$PERISCOPE" export --format pprof -o "$TEST_TMP/cpu.pb.gz" "$cap" || fail "export --format pprof failed"
[ "$(head -c2 "$TEST_TMP/cpu.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "the pprof export is not gzipped"
pprof -top -cum "$TEST_TMP/cpu.pb.gz" >"$TEST_TMP/top.txt"
pprof -traces "$TEST_TMP/cpu.pb.gz" >"$TEST_TMP/traces.txt"
pprof -raw "$TEST_TMP/cpu.pb.gz" >"$TEST_TMP/raw.txt"
pprof -sample_index=samples -top "$TEST_TMP/cpu.pb.gz" >"$TEST_TMP/count.txt"
"$PERISCOPE" dump --json "$cap" >"$TEST_TMP/dump.json" || fail "dump --json failed"
build_id=$(build_id_of "$TEST_TMP/workload-export")

"$PYTHON" - "$TEST_TMP" "$build_id" "$(source_line "$SRCDIR/workload-export.c" 'sink = sink * 2654435761u')" \
        "$(source_line "$SRCDIR/workload-export.c" 'mix_inline(i);')" <<'PY'
import json, re, sys
tmp, build_id, mix_line, heavy_line = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def fail(msg, text=""):
    print(text); sys.exit("FAIL: " + msg)
top = open(tmp + "/top.txt").read()
for want in ["Type: cpu", "File: workload-export", "Build ID: " + build_id]:
    if want not in top:
        fail("go tool pprof -top lacks %r" % want, top)
m = re.search(r"Duration: ([\d.]+)(m?s)", top)
dur = float(m.group(1)) / (1000 if m and m.group(2) == "ms" else 1) if m else 0
if not 1.5 <= dur <= 60:
    fail("duration %r is not the recording's (about 2 s)" % (m.group(0) if m else None), top)
cum = {}
for l in top.splitlines():
    f = l.split(None, 5)
    if len(f) == 6 and f[4].endswith("%"):
        cum[f[5]] = float(f[4][:-1])
for name in ["main", "run_rounds", "hot_heavy", "hot_light", "mix_inline (inline)"]:
    if name not in cum:
        fail("%s is not among the functions" % name, top)
ratio = cum["hot_heavy"] / max(cum["hot_light"], 0.01)
if not 2.0 <= ratio <= 4.5:
    fail("hot_heavy/hot_light = %.2f, the workload does 3x the work in hot_heavy" % ratio, top)
if cum["run_rounds"] < 60 or cum["mix_inline (inline)"] < 0.6 * cum["run_rounds"]:
    fail("run_rounds (%.1f%%) or mix_inline under it (%.1f%%) is too small" % (cum["run_rounds"], cum["mix_inline (inline)"]), top)
print("ok: -top: hot_heavy %.1f%%, hot_light %.1f%% (ratio %.2f), run_rounds %.1f%%" % (cum["hot_heavy"], cum["hot_light"], ratio, cum["run_rounds"]))

# -traces: leaf first, callers after, in order
traces = open(tmp + "/traces.txt").read().split("-----------+")
good = bad = 0
for t in traces:
    frames = [l.split(None, 1)[-1].strip() if re.match(r"\s+[\d.]+\w*s\s", l) else l.strip()
              for l in t.splitlines() if l.startswith("    ") and ":" not in l.split()[0]]
    if "hot_heavy" in frames and "mix_inline (inline)" in frames:
        i = frames.index("mix_inline (inline)")
        if frames[i:i + 4] == ["mix_inline (inline)", "hot_heavy", "run_rounds", "main"]:
            good += 1
        else:
            bad += 1
            print("out of order:", frames)
if good == 0 or bad:
    fail("-traces: %d traces in the order mix_inline, hot_heavy, run_rounds, main; %d not" % (good, bad))
print("ok: -traces: %d traces read mix_inline (inline) ← hot_heavy ← run_rounds ← main" % good)

# -raw: a location whose Lines are mix_inline (file:line), then its caller hot_heavy
raw = open(tmp + "/raw.txt").read()
# (pprof of Go 1.26 writes file:line:column, the column 0 when unknown)
pat = r"M=\d+ mix_inline \S*workload-export\.c:(%d|%d)(:\d+)? s=0\n\s+hot_heavy \S*workload-export\.c:%d(:\d+)? s=0" % (mix_line, mix_line - 1, heavy_line)
if not re.search(pat, raw):
    fail("-raw: no location with mix_inline at workload-export.c:%d inlined into hot_heavy at :%d" % (mix_line, heavy_line), raw[:4000])
if not re.search(r"\S*/workload-export %s \[FN\]\[FL\]\[LN\]\[IN\]" % build_id, raw):
    fail("-raw: the workload's mapping lacks its file name, build-id or flags", raw[-3000:])
print("ok: -raw: inline Lines with file:line, mapping with build-id")

# every SAMPLE frame is one sample
doc = json.load(open(tmp + "/dump.json"))
n = sum(1 for f in doc["frames"] if f["type"] == "SAMPLE" and any(a for a in f["symbols"] if a))
count = open(tmp + "/count.txt").read()
m = re.search(r"Total samples = (\d+)", count)
if not m or int(m.group(1)) != n:
    fail("pprof counts %s samples, the capture has %d" % (m.group(1) if m else "no", n), count)
print("ok: %d samples, as in the capture" % n)
PY

record_memory
"$PERISCOPE" export --format pprof -o "$TEST_TMP/memory.pb.gz" "$TEST_TMP/memory.syscap" 2>"$TEST_TMP/export.err" ||
        { cat "$TEST_TMP/export.err"; fail "export of the memory capture failed"; }
for idx in alloc_space inuse_space; do
        pprof -sample_index=$idx -unit=B -top "$TEST_TMP/memory.pb.gz" >"$TEST_TMP/$idx.txt"
done
for idx in alloc_objects inuse_objects; do
        pprof -sample_index=$idx -top "$TEST_TMP/memory.pb.gz" >"$TEST_TMP/$idx.txt"
done
"$PYTHON" - "$TEST_TMP" <<'PY'
import re, sys
tmp = sys.argv[1]
want = {  # keep_site: 30 x 8192 never freed; temp_site: 1000 x 512, each freed
    "alloc_space": {"keep_site": "245760B", "temp_site": "512000B"},
    "alloc_objects": {"keep_site": "30", "temp_site": "1000"},
    "inuse_space": {"keep_site": "245760B", "temp_site": None},
    "inuse_objects": {"keep_site": "30", "temp_site": None},
}
for idx, sites in want.items():
    text = open("%s/%s.txt" % (tmp, idx)).read()
    flat = {l.split()[-1]: l.split()[0] for l in text.splitlines() if re.match(r"\s*\d+\S*\s+[\d.]+%", l)}
    for site, value in sites.items():
        if flat.get(site) != value:
            print(text); sys.exit("FAIL: %s of %s is %s, expected %s" % (idx, site, flat.get(site), value))
    print("ok: %s: %s" % (idx, ", ".join("%s %s" % (s, flat.get(s)) for s in sites)))
PY
# the other formats weigh allocation stacks by bytes
"$PERISCOPE" export --format folded "$TEST_TMP/memory.syscap" >"$TEST_TMP/memory.folded" 2>/dev/null ||
        fail "folded export of the memory capture failed"
for want in "keep_site 245760" "temp_site 512000"; do
        site=${want% *} bytes=${want#* }
        got=$(awk -v s="$site" '{ n = split($1, f, ";"); if (f[n] == s) t += $2 } END { print t + 0 }' "$TEST_TMP/memory.folded")
        [ "$got" = "$bytes" ] || { cat "$TEST_TMP/memory.folded"; fail "folded: $site allocated $got bytes, expected $bytes"; }
done
echo "ok: folded memory export: keep_site 245760, temp_site 512000 bytes"

# A mapping with named addresses says so even when a few are unnamed (the
# fixture's kernel: do_syscall_64 and a bare 0xffffffff81999999): else
# pprof symbolizes the whole mapping again and blanks the names its tools
# do not find. One with only unnamed addresses (libbar.so) is left to it.
"$MAKE_REPORT_CAPTURE" ours "$TEST_TMP/ours.syscap" >/dev/null || fail "make-report-capture ours failed"
"$PERISCOPE" export --format pprof -o "$TEST_TMP/ours.pb.gz" "$TEST_TMP/ours.syscap" || fail "export of the fixture failed"
pprof -symbolize=none -raw "$TEST_TMP/ours.pb.gz" >"$TEST_TMP/ours-raw.txt"
grep -E '^[0-9]+: \S+ \[kernel\.kallsyms\] +\[FN\]' "$TEST_TMP/ours-raw.txt" >/dev/null ||
        { sed -n '/^Mappings/,$p' "$TEST_TMP/ours-raw.txt"; fail "a mapping with named and unnamed addresses is left to pprof to symbolize again"; }
grep -E '^[0-9]+: \S+ /usr/lib/libbar\.so +$' "$TEST_TMP/ours-raw.txt" >/dev/null ||
        { sed -n '/^Mappings/,$p' "$TEST_TMP/ours-raw.txt"; fail "a mapping with only unnamed addresses claims functions: pprof would not symbolize it"; }
echo "ok: pprof symbolizes again only the mappings with no named address"
echo "ok: go tool pprof reads the CPU and memory exports"
