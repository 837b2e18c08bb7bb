#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `periscope export --format speedscope` of a real recording: valid against
# the file format schema the speedscope package ships, one sampled profile
# per thread with time deltas as weights, and loaded by the speedscope app
# itself in headless Chromium, which lists the workload's functions with
# hot_heavy about 3x hot_light. The same check fails on a profile whose
# names are wrong.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
. "$SRCDIR/lib.sh"
speedscope_app
record_cpu
out=$TEST_TMP/cpu.speedscope.json
"$PERISCOPE" export --format speedscope -o "$out" "$TEST_TMP/cpu.syscap" || fail "export --format speedscope failed"
"$PERISCOPE" dump --json "$TEST_TMP/cpu.syscap" >"$TEST_TMP/dump.json" || fail "dump --json failed"

"$PYTHON" - "$out" "$SPEEDSCOPE_APP/file-format-schema.json" "$TEST_TMP/dump.json" "$TEST_TMP/mangled.json" <<'PY'
import collections, json, sys
import jsonschema
path, schema_path, dump_path, mangled = sys.argv[1:]
doc = json.load(open(path))
schema = json.load(open(schema_path))
jsonschema.validate(doc, {**schema, "$ref": "#/definitions/FileFormat.File"})
print("ok: valid against speedscope's file-format-schema.json")
if doc["$schema"] != "https://www.speedscope.app/file-format-schema.json":
    sys.exit("FAIL: $schema is %r" % doc["$schema"])
frames = doc["shared"]["frames"]
names = [f["name"] for f in frames]
mix = [f for f in frames if f["name"] == "mix_inline"]
if not mix or not mix[0].get("file", "").endswith("workload-export.c") or not mix[0].get("line"):
    sys.exit("FAIL: mix_inline has no file and line: %r" % mix)
dump = json.load(open(dump_path))
samples = [f for f in dump["frames"] if f["type"] == "SAMPLE"]
by_thread = collections.Counter((s["pid"], s["tid"]) for s in samples)
profiles = doc["profiles"]
if len(profiles) != len(by_thread):
    sys.exit("FAIL: %d profiles for %d threads" % (len(profiles), len(by_thread)))
for p in profiles:
    if p["type"] != "sampled" or p["unit"] != "nanoseconds":
        sys.exit("FAIL: profile %r is not sampled in nanoseconds" % p["name"])
    if len(p["samples"]) != len(p["weights"]) or sum(p["weights"]) != p["endValue"] - p["startValue"]:
        sys.exit("FAIL: profile %r: weights do not add up to endValue - startValue" % p["name"])
    if min(p["weights"]) <= 0:
        sys.exit("FAIL: profile %r has a weight <= 0" % p["name"])
total = sum(len(p["samples"]) for p in profiles)
if total != len(samples):
    sys.exit("FAIL: %d samples in the profiles, %d in the capture" % (total, len(samples)))
# outermost first: main before run_rounds before hot_heavy before mix_inline
ordered = 0
for p in profiles:
    for st in p["samples"]:
        n = [names[i] for i in st]
        if "hot_heavy" in n:
            i = n.index("hot_heavy")
            if n[i - 2:i + 1] != ["main", "run_rounds", "hot_heavy"] or "mix_inline" in n[:i]:
                sys.exit("FAIL: a stack is not outermost first: %r" % n)
            ordered += 1
if not ordered:
    sys.exit("FAIL: no stack goes through hot_heavy")
print("ok: %d profiles, %d samples (as in the capture), stacks outermost first" % (len(profiles), total))
# the negative control: the same profile with hot_heavy renamed
for f in frames:
    if f["name"] == "hot_heavy":
        f["name"] = "hot_renamed"
json.dump(doc, open(mangled, "w"))
PY
[ $? = 0 ] || fail "the speedscope file is wrong"

"$PYTHON" "$SRCDIR/speedscope_check.py" "$SPEEDSCOPE_APP" "$out" main run_rounds hot_heavy hot_light mix_inline \
        --ratio hot_heavy hot_light 2.0 4.5 || fail "the speedscope app does not show the export right"
"$PYTHON" "$SRCDIR/speedscope_check.py" "$SPEEDSCOPE_APP" "$TEST_TMP/mangled.json" main run_rounds hot_heavy hot_light \
        --expect-fail || fail "the speedscope check cannot tell wrong names"
echo "ok: the speedscope app shows the export's functions and shares"
