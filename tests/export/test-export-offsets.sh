#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A stripped program's frames keep their addresses in every export: a real
# recording of a stripped workload-export exports its unnamed frames one by
# one as workload-stripped+0xOFFSET (folded, perf-script, speedscope, pprof),
# never merged into one "[unresolved…] MODULE" frame, the same distinct
# offsets as `periscope report --folded`; in pprof they are Locations with
# their address in a Mapping that carries the build-id and is not marked as
# symbolized, so `go tool pprof` names them itself from the unstripped
# binary it finds at the mapping's path.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
. "$SRCDIR/lib.sh"
[ -x /usr/bin/go ] || fail "go missing: apt-get install -y golang-go"
# Debian's Go (golang-go), whose pprof is built: a newer Go first on PATH
# (/usr/local/go on some machines) builds its tools anew in every GOCACHE
export HOME=$TEST_TMP/home GOCACHE=$TEST_TMP/gocache GOPATH=$TEST_TMP/gopath GOTOOLCHAIN=local GOFLAGS= GOPROXY=off

gcc -O2 -g -fno-omit-frame-pointer -o "$TEST_TMP/workload-export" "$SRCDIR/workload-export.c" || fail "cannot build the workload"
strip -o "$TEST_TMP/workload-stripped" "$TEST_TMP/workload-export" || fail "strip failed"
build_id=$(build_id_of "$TEST_TMP/workload-stripped")
cap=$TEST_TMP/stripped.syscap
record_to "$cap" "$TEST_TMP/workload-stripped" 1500

"$PERISCOPE" report --no-progress --folded "$cap" >"$TEST_TMP/report.folded" || fail "report --folded failed"
for f in folded perf-script speedscope; do
        "$PERISCOPE" export --format $f -o "$TEST_TMP/out.$f" "$cap" || fail "export --format $f failed"
done
"$PERISCOPE" export --format pprof -o "$TEST_TMP/out.pb.gz" "$cap" || fail "export --format pprof failed"
pprof -symbolize=none -top -nodecount=1000 -nodefraction=0 "$TEST_TMP/out.pb.gz" >"$TEST_TMP/top-none.txt"
pprof -symbolize=none -raw "$TEST_TMP/out.pb.gz" >"$TEST_TMP/raw.txt"
# the unstripped build (same build-id) where the mapping says the file was;
# not through PPROF_BINARY_PATH: Debian's Go 1.19 pprof reads no build-id
# from binaries whose first PT_NOTE is 8-aligned (gcc 12's), and refuses them
cp "$TEST_TMP/workload-export" "$TEST_TMP/workload-stripped"
pprof -top -nodecount=1000 -nodefraction=0 "$TEST_TMP/out.pb.gz" >"$TEST_TMP/top-named.txt"

"$PYTHON" - "$TEST_TMP" "$build_id" <<'PY'
import json, re, sys
tmp, build_id = sys.argv[1], sys.argv[2]
def fail(msg, text=""):
    print(text[:4000]); sys.exit("FAIL: " + msg)
OFF = r"workload-stripped\+0x[0-9a-f]+"
def offsets(text):
    return set(re.findall(OFF, text))
report = offsets(open(tmp + "/report.folded").read())
if len(report) < 3:
    fail("report --folded has %d distinct workload-stripped+0x frames; the workload has main, run_rounds, hot_heavy, hot_light" % len(report))
for f in ["folded", "perf-script", "speedscope"]:
    text = open("%s/out.%s" % (tmp, f)).read()
    if re.search(r"\[unresolved[^\]]*\] workload-stripped", text):
        fail("%s merges unnamed frames into one '[unresolved…] workload-stripped' frame" % f, text)
    got = offsets(text)
    if got != report:
        fail("%s: %d distinct offsets, report --folded %d (only in export: %s; only in report: %s)" %
             (f, len(got), len(report), sorted(got - report)[:5], sorted(report - got)[:5]), text)
    print("ok: %s keeps the %d distinct workload-stripped+0xOFFSET frames" % (f, len(got)))
doc = json.load(open(tmp + "/out.speedscope"))
names = {fr["name"] for fr in doc["shared"]["frames"]}
if not report <= names:
    fail("speedscope's frames lack some module+0xOFFSET names")

top = open(tmp + "/top-none.txt").read()
got = offsets(top)
if got != report:
    fail("go tool pprof -top (no symbolization) lists %d distinct offsets, the report %d" % (len(got), len(report)), top)
print("ok: pprof -top without symbolization: the %d offsets" % len(got))
raw = open(tmp + "/raw.txt").read()
m = re.search(r"^\s*(\d+): 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ \S*/workload-stripped %s(.*)$" % build_id, raw, re.M)
if not m:
    fail("-raw: no mapping of workload-stripped with its build-id", raw[-3000:])
if "[FN]" in m.group(2):
    fail("-raw: the mapping with unnamed addresses says it has function names ([FN]): pprof would not symbolize it", m.group(0))
mid = m.group(1)
locs = re.findall(r"^\s*\d+: 0x([0-9a-f]+) M=%s (%s)" % (mid, OFF), raw, re.M)
if len({a for a, _ in locs}) < 3:
    fail("-raw: fewer than 3 locations with an address in the workload's mapping", raw[:4000])
print("ok: -raw: %d locations with their address in mapping %s (build-id %s, not marked symbolized)" % (len(locs), mid, build_id))
named = open(tmp + "/top-named.txt").read()
for fn in ["hot_heavy", "hot_light", "run_rounds"]:
    if not re.search(r"\s%s\s*$" % fn, named, re.M):
        fail("go tool pprof did not name %s itself from the unstripped binary" % fn, named)
print("ok: go tool pprof names hot_heavy, hot_light, run_rounds itself from the unstripped binary")
PY
