#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A capture Sysprof 48's own sysprof-cli recorded (sysprof48/, made by
# make-sysprof48-fixture.sh in a Debian 13 root; PROVENANCE says with what),
# read as a GNOME developer who is sent one reads it. Sysprof 45+ embeds
# its names in "__symbols__.gz"; its DWARF live unwinder writes the user
# frames of a sample taken in the kernel after the kernel's with no user
# marker between. The workload's functions are those `nm` lists in the
# binary recorded (sysprof48/workload, checked in with the capture):
#   - dump --json: every address in the workload's mapping is named, by the
#     function nm puts there, and none as a kernel frame
#   - report, export (folded, speedscope, pprof through go tool pprof):
#     all the workload's functions by name, none as workload+0x… or [kernel]
#   - info and report agree about the embedded table (__symbols__.gz)
#   - symbolize keeps the names, now in both of Periscope's tables, where
#     Sysprof 3.46's own resolver (libsysprof-4) finds them: before, it
#     reads only __symbols__ and names none
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/test-lib.sh"
PERISCOPE=${1:?usage: test-sysprof48-fixture.sh PERISCOPE FIXTURE-DIR SYSPROF346-NAMES}
fixture=${2:?}
sysprof346_names=${3:?}
cap=$fixture/sysprof48.syscap
for t in nm python3; do command -v $t >/dev/null || fail "$t missing (scripts/packages.txt: binutils, python3)"; done
[ -x /usr/bin/go ] || fail "/usr/bin/go missing: apt-get install -y golang-go (go tool pprof reads the pprof export)"
test_tmpdir
grep >/dev/null '^Sysprof 48\.' "$fixture/PROVENANCE" || fail "$fixture/PROVENANCE does not name Sysprof 48"

# the workload's own functions, from the binary that was recorded
nm -S --defined-only "$fixture/workload" >"$TEST_TMP/nm"
mapfile -t funcs < <(awk '$3 ~ /^[Tt]$/ && $4 ~ /^(fixture_|main$)/ { print $4 }' "$TEST_TMP/nm" | sort)
[ "${funcs[*]}" = "fixture_leaf_spin fixture_middle_step fixture_outer_loop main" ] ||
        fail "nm of the workload lists '${funcs[*]}'"
cmp -s <(nm "$fixture/workload") "$fixture/workload.nm" || fail "the workload binary is not the one whose nm the fixture recorded"

# dump --json: each address of the workload's mapping is named by nm's function there
"$PERISCOPE" dump --json "$cap" >"$TEST_TMP/dump.json" || fail "dump --json failed"
python3 - "$TEST_TMP/dump.json" "$TEST_TMP/nm" "$TEST_TMP/probes" <<'PY' || fail "dump --json does not name the workload's frames as nm does"
import json, sys
doc = json.load(open(sys.argv[1]))
frames = doc["frames"] if isinstance(doc, dict) else doc
syms = []
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) == 4 and f[2] in "Tt":
        syms.append((int(f[0], 16), int(f[1], 16), f[3]))
def nm_name(vaddr):
    for start, size, name in syms:
        if start <= vaddr < start + size:
            return name
pid = next(f["pid"] for f in frames if f["type"] == "PROCESS" and f.get("cmdline", "").endswith("workload"))
maps = [f for f in frames if f["type"] == "MAP" and f["pid"] == pid and f.get("filename", f.get("path", "")).endswith("/fixture/workload")]
assert maps, "no MAP of /fixture/workload: %s" % [f for f in frames if f["type"] == "MAP" and f["pid"] == pid][:2]
def field(m, *names):
    for n in names:
        if n in m:
            v = m[n]
            return int(v, 16) if isinstance(v, str) else v
    raise KeyError(names)
samples = [f for f in frames if f["type"] == "SAMPLE" and f["pid"] == pid]
assert len(samples) > 100, "only %d samples of the workload" % len(samples)
checked = kernel_samples = 0
probes = {}
for s in samples:
    addrs = [int(a, 16) for a in s["addresses"]]
    kernel_samples += any(a >= 1 << 63 for a in addrs)
    user_seen = False
    for a, names in zip(addrs, s["symbols"]):
        m = next((m for m in maps if field(m, "start") <= a < field(m, "end")), None)
        if m is None:
            continue
        # the innermost user frame is the sampled pc, the others return addresses
        vaddr = a - field(m, "start") + field(m, "file_offset", "offset") - (1 if user_seen else 0)
        user_seen = True
        want = nm_name(vaddr)
        assert names, "sample at %s: %#x (%s) has no name" % (s["time"], a, want)
        got = names[-1]
        assert got["function"] == want, "%#x: dump says %s, nm %s" % (a, got["function"], want)
        assert not got["kernel"], "%#x (%s) is called a kernel frame" % (a, want)
        probes[a] = nm_name(a - field(m, "start") + field(m, "file_offset", "offset")) # as Sysprof looks it up
        checked += 1
assert checked > 4 * 100, "checked only %d addresses" % checked
with open(sys.argv[3], "w") as out:
    out.write("%d\n" % pid)
    for a, name in sorted(probes.items()):
        out.write("%#x %s\n" % (a, name))
assert kernel_samples > 0, "no sample taken in the kernel: the fixture does not have Sysprof 48's lost user marker"
print("ok: dump --json names all %d workload addresses of %d samples as nm does (%d samples with kernel frames)"
      % (checked, len(samples), kernel_samples))
PY

no_offsets() { # FILE WHAT: all the workload's functions by name, none unnamed or kernel
        local f
        for f in "${funcs[@]}"; do
                grep >/dev/null -- "$f" "$1" || fail "$2 lacks $f: $(head -c 2000 "$1")"
                ! grep -E -- "$f(_\[k\]| \[kernel\])" "$1" || fail "$2 calls $f a kernel function"
        done
        ! grep -E -- 'workload\+0x' "$1" || fail "$2 has unnamed workload frames"
}
"$PERISCOPE" report -c workload --folded "$cap" >"$TEST_TMP/report.folded" || fail "report --folded failed"
no_offsets "$TEST_TMP/report.folded" "report --folded"
"$PERISCOPE" report -c workload "$cap" >"$TEST_TMP/report.txt" || fail "report failed"
no_offsets "$TEST_TMP/report.txt" "report"
grep -E >/dev/null '^ +[0-9]+ +[0-9.]+% +[0-9]+ +[0-9.]+% +fixture_leaf_spin$' "$TEST_TMP/report.txt" ||
        fail "report does not rank fixture_leaf_spin: $(cat "$TEST_TMP/report.txt")"
"$PERISCOPE" export -F folded -c workload -o "$TEST_TMP/export.folded" "$cap" || fail "export -F folded failed"
no_offsets "$TEST_TMP/export.folded" "export -F folded"
grep >/dev/null -xE '.*;main;fixture_outer_loop;fixture_middle_step;fixture_leaf_spin [0-9]+' "$TEST_TMP/export.folded" ||
        fail "export -F folded lacks the whole stack main→outer→middle→leaf: $(cat "$TEST_TMP/export.folded")"
"$PERISCOPE" export -F speedscope -c workload -o "$TEST_TMP/export.speedscope.json" "$cap" || fail "export -F speedscope failed"
python3 -c 'import json, sys; print("\n".join(f["name"] for f in json.load(open(sys.argv[1]))["shared"]["frames"]))' \
        "$TEST_TMP/export.speedscope.json" >"$TEST_TMP/speedscope.names"
no_offsets "$TEST_TMP/speedscope.names" "export -F speedscope"
"$PERISCOPE" export -F pprof -c workload -o "$TEST_TMP/export.pb.gz" "$cap" || fail "export -F pprof failed"
export HOME=$TEST_TMP/home GOCACHE=$TEST_TMP/gocache GOPATH=$TEST_TMP/gopath GOTOOLCHAIN=local GOFLAGS= GOPROXY=off
/usr/bin/go tool pprof -top "$TEST_TMP/export.pb.gz" >"$TEST_TMP/pprof.txt" 2>"$TEST_TMP/pprof.err" ||
        { cat "$TEST_TMP/pprof.err"; fail "go tool pprof -top failed"; }
no_offsets "$TEST_TMP/pprof.txt" "export -F pprof (go tool pprof -top)"
echo "ok: report, report --folded, export folded/speedscope/pprof name ${funcs[*]}"

"$PERISCOPE" info "$cap" >"$TEST_TMP/info.txt" || fail "info failed"
grep >/dev/null -x 'Symbols embedded: yes (__symbols__.gz)' "$TEST_TMP/info.txt" || fail "info: $(grep Symbols "$TEST_TMP/info.txt")"
grep >/dev/null -E '^Symbols usable: yes, [1-9][0-9]* address ranges \(__symbols__\.gz\)$' "$TEST_TMP/info.txt" ||
        fail "info: $(grep Symbols "$TEST_TMP/info.txt")"
grep >/dev/null -x 'Symbols: embedded Sysprof 45+ table (__symbols__.gz)' "$TEST_TMP/report.txt" ||
        fail "info says __symbols__.gz, report: $(grep Symbols "$TEST_TMP/report.txt")"
echo "ok: info and report agree: __symbols__.gz"

cp "$cap" "$TEST_TMP/in.syscap"
"$PERISCOPE" symbolize -o "$TEST_TMP/symbolized.syscap" "$TEST_TMP/in.syscap" >"$TEST_TMP/symbolize.out" 2>&1 ||
        fail "symbolize failed: $(cat "$TEST_TMP/symbolize.out")"
cmp -s "$cap" "$TEST_TMP/in.syscap" || fail "symbolize -o changed its input"
grep >/dev/null "has Sysprof's symbol table (__symbols__.gz)" "$TEST_TMP/symbolize.out" || fail "symbolize: $(cat "$TEST_TMP/symbolize.out")"
"$PERISCOPE" info "$TEST_TMP/symbolized.syscap" | grep >/dev/null -x 'Symbols embedded: yes (__symbols__, __periscope/symbols)' ||
        fail "the symbolized capture: $("$PERISCOPE" info "$TEST_TMP/symbolized.syscap" | grep Symbols)"
"$PERISCOPE" export -F folded -c workload -o "$TEST_TMP/symbolized.folded" "$TEST_TMP/symbolized.syscap" ||
        fail "export of the symbolized capture failed"
no_offsets "$TEST_TMP/symbolized.folded" "export -F folded of the symbolized capture"
cmp -s "$TEST_TMP/export.folded" "$TEST_TMP/symbolized.folded" || fail "symbolize changed the stacks: $(diff "$TEST_TMP/export.folded" "$TEST_TMP/symbolized.folded")"
echo "ok: symbolize keeps Sysprof's names, in both tables"

# Sysprof 3.46 (Debian 12's sysprof, libsysprof-4) reads __symbols__ only
{ read -r pid; cat >"$TEST_TMP/probes.list"; } <"$TEST_TMP/probes"
mapfile -t addrs < <(cut -d' ' -f1 "$TEST_TMP/probes.list")
cut -d' ' -f2 "$TEST_TMP/probes.list" >"$TEST_TMP/probes.want"
"$sysprof346_names" "$cap" "$pid" "${addrs[@]}" >"$TEST_TMP/sysprof346.before" || fail "sysprof346-names failed"
! grep -v >/dev/null -x -- - "$TEST_TMP/sysprof346.before" || fail "Sysprof 3.46 names the unsymbolized capture: the test cannot tell"
"$sysprof346_names" "$TEST_TMP/symbolized.syscap" "$pid" "${addrs[@]}" >"$TEST_TMP/sysprof346.after" || fail "sysprof346-names failed"
cmp -s "$TEST_TMP/probes.want" "$TEST_TMP/sysprof346.after" ||
        fail "Sysprof 3.46 names the symbolized capture's addresses otherwise than nm: $(paste -d' ' "$TEST_TMP/probes.list" "$TEST_TMP/sysprof346.after")"
echo "ok: Sysprof 3.46's resolver names all ${#addrs[@]} workload addresses of the symbolized capture as nm does (none before)"
