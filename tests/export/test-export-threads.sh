#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Thread names through a real recording: workload-threads runs "main-loop",
# "worker-1" and a thread that starts as "starting" and renames itself
# "worker-2" halfway (each burning its own function for the same CPU time),
# and a thread worker-1 starts that never names itself (it inherits
# "worker-1", as the kernel copies the creator's comm).
#   - the capture holds every name (periscope info; libsysprof-capture-4
#     reads it like ours);
#   - report --by-thread: one row per thread and name with its share
#     (within 10% of the CPU time each burned) and its hottest function;
#     the renamed thread's samples before the rename carry the old name,
#     after it the new one (not one sample on the wrong side);
#   - --tid selects one thread (report and export);
#   - pprof: `go tool pprof -tags` lists the thread and tid labels,
#     -tagfocus keeps one thread; speedscope: one profile per thread named
#     after it, loaded by the speedscope app; perf-script: the thread's comm
#     and tid in each header; folded --thread-root;
#   - a Sysprof capture (no thread names): threads named after their process.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
. "$SRCDIR/lib.sh"
: "${SYSPROF_COMPARE:?}" "${MAKE_SYSPROF_CAPTURE:?}"
speedscope_app
_record workload-threads workload-threads.c -o "$TEST_TMP/threads.syscap" -- "$TEST_TMP/workload-threads" 2
cap=$TEST_TMP/threads.syscap
tids() { sed -n "s/^tid $1 \([0-9]*\)$/\1/p" "$TEST_TMP/record.out"; }
pid=$(tids main-loop) one=$(tids worker-1) two=$(tids starting) child=$(tids inherited)
[ -n "$pid" ] && [ -n "$one" ] && [ -n "$two" ] && [ -n "$child" ] ||
        { cat "$TEST_TMP/record.out"; fail "the workload did not say its tids"; }
echo "threads: main-loop $pid, worker-1 $one, starting/worker-2 $two, inherited $child"

"$SYSPROF_COMPARE" --compare "$cap" || fail "libsysprof-capture-4 does not read the capture as we do"
"$PERISCOPE" info "$cap" >"$TEST_TMP/info.txt" || fail "info failed"
for t in "main-loop (tid $pid)" "worker-1 (tid $one)" "starting → worker-2 (tid $two)" "worker-1 (tid $child)"; do
        grep -F "$t" "$TEST_TMP/info.txt" >/dev/null || { cat "$TEST_TMP/info.txt"; fail "periscope info does not list $t"; }
done

r() { "$PERISCOPE" report --no-progress "$@" || fail "report $* failed"; }
r --by-thread "$cap" >"$TEST_TMP/by-thread.txt"
r --by-thread --tid "$one" "$cap" >"$TEST_TMP/tid.txt"
r --tid "$two" --thread-root --folded "$cap" >"$TEST_TMP/two.folded"
r --tid "$one,$two" --folded "$cap" >"$TEST_TMP/one-two.folded"
cat "$TEST_TMP/by-thread.txt"
export_to() { "$PERISCOPE" export "$@" || fail "export $* failed"; }
export_to -F perf-script -o "$TEST_TMP/threads.perf" "$cap"
export_to -F speedscope -o "$TEST_TMP/threads.speedscope.json" "$cap"
export_to -F folded --thread-root -o "$TEST_TMP/threads.folded" "$cap"
export_to -F folded --tid "$one" -o "$TEST_TMP/one.folded" "$cap"
export_to -F pprof -o "$TEST_TMP/threads.pb.gz" "$cap"
# Debian's Go (golang-go), whose pprof is built: a newer Go first on PATH
# (/usr/local/go on some machines) builds its tools anew in every GOCACHE
export HOME=$TEST_TMP/home GOCACHE=$TEST_TMP/gocache GOPATH=$TEST_TMP/gopath GOTOOLCHAIN=local GOFLAGS= GOPROXY=off
pprof -tags "$TEST_TMP/threads.pb.gz" >"$TEST_TMP/tags.txt"
pprof -tagfocus "thread=worker-1" -top "$TEST_TMP/threads.pb.gz" >"$TEST_TMP/focus.txt"
pprof -tagfocus "tid=$two" -tagignore "thread=starting" -top "$TEST_TMP/threads.pb.gz" >"$TEST_TMP/focus-tid.txt"

"$MAKE_SYSPROF_CAPTURE" "$TEST_TMP/sysprof.syscap" || fail "make-sysprof-capture failed"
r --by-thread "$TEST_TMP/sysprof.syscap" >"$TEST_TMP/sysprof.txt"

"$PYTHON" - "$TEST_TMP" "$pid" "$one" "$two" "$child" <<'PY'
import json, re, sys
tmp, pid, one, two, child = sys.argv[1], *map(int, sys.argv[2:6])
from checks import check, finish
def read(name):
    return open(f"{tmp}/{name}").read()

# report --by-thread: "samples share% tid pid name process top (share)"
row = re.compile(r"^\s*(\d+)\s+([\d.]+)%\s+(\d+)\s+(\d+)\s+(\S+)\s+.*?\s(\S+) \(([\d.]+)%\)$")
def rows(text):
    return {(int(m.group(3)), m.group(5)): (int(m.group(1)), float(m.group(2)), m.group(6), float(m.group(7)))
            for m in map(row.match, text.splitlines()) if m}
by = rows(read("by-thread.txt"))
# CPU seconds: 2 + 2 + 1 + 1 + 0.5
want = {(pid, "main-loop"): (200 / 6.5, "main_burn"), (one, "worker-1"): (200 / 6.5, "worker_one_burn"),
        (two, "starting"): (100 / 6.5, "starting_burn"), (two, "worker-2"): (100 / 6.5, "worker_two_burn"),
        (child, "worker-1"): (50 / 6.5, "inherited_burn")}
for key, (share, top) in want.items():
    got = by.get(key)
    check(got is not None, f"--by-thread has no row for {key}", read("by-thread.txt"))
    if got:
        check(abs(got[1] - share) <= share * 0.10, f"{key}: {got[1]}% of the samples, expected {share:.1f}% ±10%")
        check(got[2] == top and got[3] >= 80, f"{key}: hottest {got[2]} ({got[3]}%), expected {top}")
tid_rows = rows(read("tid.txt"))
check(list(tid_rows) == [(one, "worker-1")], f"--tid {one} shows {list(tid_rows)}", read("tid.txt"))

# the rename: before it "starting", after it "worker-2", never mixed
folded = [l.rsplit(" ", 1) for l in read("two.folded").splitlines()]
roots = {s.split(";")[0] for s, _ in folded}
check(roots == {f"starting (tid {two})", f"worker-2 (tid {two})"}, f"--tid {two} --thread-root roots: {roots}")
wrong = sum(int(n) for s, n in folded if ("starting (" in s and "worker_two_burn" in s) or
            ("worker-2 (" in s and "starting_burn" in s))
check(wrong == 0, f"{wrong} samples of the renamed thread carry the other name")
both = {f for s, _ in (l.rsplit(" ", 1) for l in read("one-two.folded").splitlines()) for f in s.split(";")}
check("worker_one_burn" in both and "worker_two_burn" in both and "main_burn" not in both,
      "--tid ONE,TWO: not exactly the two threads' functions")

# folded export: a root frame per thread and name, the counts as the report's
counts = {}
for s, n in (l.rsplit(" ", 1) for l in read("threads.folded").splitlines()):
    counts[s.split(";")[0]] = counts.get(s.split(";")[0], 0) + int(n)
for (tid, name), got in by.items():
    check(counts.get(f"{name} (tid {tid})") == got[0], f"folded --thread-root: {name} (tid {tid}) has "
          f"{counts.get(f'{name} (tid {tid})')} samples, the report {got[0]}")
one_total = sum(int(l.rsplit(" ", 1)[1]) for l in read("one.folded").splitlines())
check(one_total == by[(one, "worker-1")][0], f"export --tid {one}: {one_total} samples")

# perf-script: "comm pid/tid [cpu] time: period event:" with the thread's comm then
hdr = re.compile(r"^(\S.*?)\s+(\d+)/(\d+)\s+\[\d+\]\s+\d+\.\d+:\s+\d+ cpu-clock:\s*$")
names = {}
for l in read("threads.perf").splitlines():
    m = hdr.match(l)
    if m:
        check(int(m.group(2)) == pid, f"perf-script: pid {m.group(2)}")
        key = (int(m.group(3)), m.group(1))
        names[key] = names.get(key, 0) + 1
for (tid, name), got in by.items():
    check(names.get((tid, name)) == got[0], f"perf-script: {names.get((tid, name))} samples of {name} {tid}, "
          f"the report {got[0]}")

# speedscope: one profile per thread, named after it
doc = json.load(open(f"{tmp}/threads.speedscope.json"))
profiles = {p["name"]: len(p["samples"]) for p in doc["profiles"]}
expect = {f"main-loop (tid {pid}, pid {pid})": by[(pid, "main-loop")][0],
          f"worker-1 (tid {one}, pid {pid})": by[(one, "worker-1")][0],
          f"worker-1 (tid {child}, pid {pid})": by[(child, "worker-1")][0],
          f"starting → worker-2 (tid {two}, pid {pid})": by[(two, "starting")][0] + by[(two, "worker-2")][0]}
for name, n in expect.items():
    # the main thread may have a sample under its exec name first: "workload-thread → main-loop (…)"
    got = [k for k in profiles if k == name or k.endswith(" → " + name)]
    check(len(got) == 1 and profiles[got[0]] >= n, f"speedscope: profile {name!r} has "
          f"{profiles.get(got[0]) if got else None} samples, expected {n}: {profiles}")
first = doc["profiles"][0]
frames = doc["shared"]["frames"]
burns = {frames[i]["name"] for st in first["samples"] for i in st} & {
    "main_burn", "worker_one_burn", "starting_burn", "worker_two_burn", "inherited_burn"}
open(f"{tmp}/first-profile-functions", "w").write(" ".join(sorted(burns)) + "\n")

# pprof: labels thread (string) and tid (number)
tags = read("tags.txt")
for name in ("main-loop", "worker-1", "starting", "worker-2"):
    check(re.search(r"\):\s+" + re.escape(name) + r"\s*$", tags, re.M), f"pprof -tags lacks thread {name}", tags)
for tid in (pid, one, two, child):
    check(re.search(r"\):\s+%d\s*$" % tid, tags, re.M), f"pprof -tags lacks tid {tid}", tags)
check(re.search(r"^\s*thread: Total", tags, re.M) and re.search(r"^\s*tid: Total", tags, re.M),
      "pprof -tags has no thread or tid label", tags)
def top_function(name):
    lines = [l.split() for l in read(name).splitlines() if re.match(r"^\s*[\d.]+\w*\s+[\d.]+%", l)]
    return lines[0][-1] if lines else None
check(top_function("focus.txt") == "worker_one_burn", "pprof -tagfocus thread=worker-1: top is "
      f"{top_function('focus.txt')}", read("focus.txt"))
check(top_function("focus-tid.txt") == "worker_two_burn", f"pprof -tagfocus tid={two} -tagignore thread=starting: "
      f"top is {top_function('focus-tid.txt')}", read("focus-tid.txt"))

# a capture from Sysprof's writer has no thread names: the process's
sp = rows(read("sysprof.txt"))
check(set(sp) == {(100, "app"), (200, "worker")}, f"Sysprof capture's threads: {set(sp)}", read("sysprof.txt"))
finish()
PY
[ $? = 0 ] || fail "thread names are wrong somewhere (above)"
read -r -a first_burns <"$TEST_TMP/first-profile-functions"
[ ${#first_burns[@]} -gt 0 ] || fail "the first speedscope profile has none of the burn functions"
"$PYTHON" "$SRCDIR/speedscope_check.py" "$SPEEDSCOPE_APP" "$TEST_TMP/threads.speedscope.json" "${first_burns[@]}" ||
        fail "the speedscope app does not show the thread profile"
echo "ok: thread names in the capture, the report and every export"
