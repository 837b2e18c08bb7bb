#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `periscope info` and `periscope dump` on captures with known contents:
# the summaries and dumps a user reads, JSON a script parses, and the errors
# (file named, offset given, non-zero exit) on broken input.
# Usage: test-cli.sh PERISCOPE MAKE_TEST_CAPTURE
set -euo pipefail
periscope=$1
make_capture=$2
command -v jq >/dev/null || { echo "FAIL: jq is missing (apt-get install -y jq)"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib/test-lib.sh" # fail, as_user, wait_for
# expect FILE REGEX: the file has a line matching REGEX (extended)
expect() { grep -Eq -- "$2" "$1" || { echo "--- $1:"; cat "$1"; fail "no line matching /$2/ in $1"; }; }

for m in reference rich truncated big-endian; do
        "$make_capture" "$m" "$tmp/$m.syscap"
done

# --- info: every frame type and unknown frames
"$periscope" info "$tmp/reference.syscap" >"$tmp/out" 2>"$tmp/err" || fail "info reference exited $?"
for t in TIMESTAMP SAMPLE MAP PROCESS FORK EXIT JITMAP CTRDEF CTRSET MARK METADATA LOG FILE_CHUNK ALLOCATION OVERLAY; do
        expect "$tmp/out" "^  $t +1\$"
done
expect "$tmp/out" '^Frames: 15$'
expect "$tmp/out" '^Unknown frames skipped: 2$'
expect "$tmp/out" '^  100 +/usr/bin/true --version$'
expect "$tmp/out" '^Lost samples: 3$'
expect "$tmp/out" '^  CPU Percent +Total +int64 +1 value$'
expect "$tmp/out" '^  Memory +Used +double +1 value$'
expect "$tmp/out" '^  gtk +frame +1$'
expect "$tmp/out" '^  /proc/cpuinfo +9 bytes$'
expect "$tmp/out" '^Symbols embedded: no$'
[ ! -s "$tmp/err" ] || fail "info reference wrote to stderr: $(cat "$tmp/err")"
echo "ok info: frame counts, unknown frames"

# --- info: a realistic summary
"$periscope" info "$tmp/rich.syscap" >"$tmp/out" || fail "info rich exited $?"
expect "$tmp/out" '^Duration: 2\.500 s$'
expect "$tmp/out" '^Processes: 4$'
expect "$tmp/out" '^  17 +/usr/lib/systemd/systemd-journald$'
expect "$tmp/out" '^  4242 +/usr/bin/app --flag$'
expect "$tmp/out" '^  900 +/usr/bin/exec-target --x$'
expect "$tmp/out" '^Samples: 100$'
expect "$tmp/out" '^Lost samples: 7$'
expect "$tmp/out" '^Memory maps: 2$'
expect "$tmp/out" '^Counters: 2$'
expect "$tmp/out" '^  CPU Percent +Combined +double +11 values$'
expect "$tmp/out" '^  Memory +Used +int64 +5 values$'
expect "$tmp/out" '^Marks: 4$'
expect "$tmp/out" '^  gtk +frame +3$'
expect "$tmp/out" '^  app +startup +1$'
expect "$tmp/out" '^Embedded files: 3$'
expect "$tmp/out" '^  /proc/4242/mountinfo +6 bytes$'
expect "$tmp/out" '^  __symbols__ +100000 bytes$'
expect "$tmp/out" '^Symbols embedded: yes \(__symbols__, __periscope/symbols\)$'
echo "ok info: processes, samples, lost samples, counters, marks, files, symbols"

# --- big-endian capture gives the same summary (except the endianness line)
"$periscope" info "$tmp/big-endian.syscap" | grep -v -e '^File:' -e '^Format:' -e '^Unknown' -e '^Size:' -e '^Captured' >"$tmp/be"
"$periscope" info "$tmp/reference.syscap" | grep -v -e '^File:' -e '^Format:' -e '^Unknown' -e '^Size:' -e '^Captured' >"$tmp/le"
diff -u "$tmp/le" "$tmp/be" || fail "big-endian summary differs"
"$periscope" info "$tmp/big-endian.syscap" | grep >/dev/null '^Format: Sysprof capture version 1, big-endian$' ||
        fail "big-endian not reported"
echo "ok info: big-endian capture"

# --- info: a hostile periscope.stats block: its lines that are not
# key=value are counted, never echoed (nor their escapes); a repeated key
# counts once, the first time
"$make_capture" hostile-stats "$tmp/hostile-stats.syscap"
"$periscope" info "$tmp/hostile-stats.syscap" >"$tmp/out" || fail "info hostile-stats exited $?"
expect "$tmp/out" '^Lost samples: 5$'
expect "$tmp/out" '^Files unresolved \(helper failed\): 2$'
expect "$tmp/out" '^  lost_samples=5$'
expect "$tmp/out" '^  \(4 malformed lines skipped\)$'
! grep -q -e 'no equals' -e 'Samples=1' -e 'lost_samples=9' -e $'\x1b' "$tmp/out" || fail "a malformed stats line was echoed"
echo "ok info: a hostile stats block"

# --- truncated: what was readable, then the error with the offset, exit non-zero
rc=0
"$periscope" info "$tmp/truncated.syscap" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -ne 0 ] || fail "info on a truncated capture exited 0"
expect "$tmp/out" '^Samples: 100$'
expect "$tmp/out" '^Lost samples: 7$'
expect "$tmp/err" "^periscope info: $tmp/truncated.syscap: offset [0-9]+: frame length [0-9]+ runs past the end of the file \([0-9]+ bytes left\)"
echo "ok info: truncated capture"

# --- errors name the file and what is wrong
rc=0; "$periscope" info "$tmp/absent.syscap" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -ne 0 ] || fail "info on a missing file exited 0"
expect "$tmp/err" "^periscope info: $tmp/absent.syscap: No such file or directory$"
head -c 300 /dev/zero | tr '\0' 'x' >"$tmp/text.syscap"
rc=0; "$periscope" info "$tmp/text.syscap" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -ne 0 ] || fail "info on a text file exited 0"
expect "$tmp/err" "^periscope info: $tmp/text.syscap: offset 0: not a Sysprof capture \(bad magic 0x78787878\)$"
head -c 10 "$tmp/rich.syscap" >"$tmp/short.syscap"
rc=0; "$periscope" dump "$tmp/short.syscap" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -ne 0 ] || fail "dump on a 10-byte file exited 0"
expect "$tmp/err" "^periscope dump: $tmp/short.syscap: file is 10 bytes, shorter than the 256-byte capture header$"
rc=0; "$periscope" info >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 2 ] || fail "info without a file exited $rc, expected 2"
expect "$tmp/err" 'expected exactly one capture file'
echo "ok errors name the file and the problem"

# --- dump, text
"$periscope" dump "$tmp/reference.syscap" >"$tmp/out" || fail "dump exited $?"
[ "$(grep -c '^@' "$tmp/out")" = 15 ] || fail "dump printed $(grep -c '^@' "$tmp/out") frames, expected 15"
expect "$tmp/out" '^@256 TIMESTAMP time=1000000001 cpu=1 pid=100 len=24$'
expect "$tmp/out" '^@[0-9]+ SAMPLE time=1000000002 cpu=0 pid=100 len=80 tid=101 addresses=6$'
expect "$tmp/out" '^    \[kernel\]$'
expect "$tmp/out" '^    0xffffffff81000010$'
expect "$tmp/out" 'MAP .* 0x400000-0x402000 offset=0x1000 inode=12345 "/usr/bin/true"$'
expect "$tmp/out" 'PROCESS .* cmdline="/usr/bin/true --version"$'
expect "$tmp/out" 'FORK .* child_pid=102$'
expect "$tmp/out" '^@[0-9]+ EXIT time=1000000006 cpu=1 pid=102 len=24$'
expect "$tmp/out" '^    0xe000000000000002 "jit_beta_longer_name"$'
expect "$tmp/out" '^    id=1193046 double "Memory" "Used" "Memory used by the system" initial=1.5$'
expect "$tmp/out" '^    id=1193046 2.25$'
expect "$tmp/out" 'MARK .* duration=5000 group="gtk" name="frame" message="drawn 60 fps"$'
expect "$tmp/out" 'METADATA .* id="periscope.stats" metadata="lost_samples=3\\nperiscope_version=0.1.0\\n"$'
expect "$tmp/out" 'LOG .* severity=16 domain="Gtk" message="hello log"$'
expect "$tmp/out" 'FILE_CHUNK .* path="/proc/cpuinfo" data_len=9 is_last=true data="cpu data\\n"$'
expect "$tmp/out" 'ALLOCATION .* tid=101 alloc_addr=0xdead0000 alloc_size=4096 addresses=3$'
expect "$tmp/out" 'OVERLAY .* layer=2 src="/var/lib/containers/storage/overlay/abc/diff" dst="/"$'
expect "$tmp/out" '^# 2 frames of unknown types skipped$'
"$periscope" dump "$tmp/big-endian.syscap" | grep -v '^#' >"$tmp/be"
grep -v '^#' "$tmp/out" >"$tmp/le"
diff -u "$tmp/le" "$tmp/be" || fail "big-endian dump differs"
echo "ok dump: every frame readable"

# --- dump, JSON
"$periscope" dump --json "$tmp/reference.syscap" >"$tmp/json" || fail "dump --json exited $?"
check_jq() { # FILTER: must print true
        local v
        v=$(jq -e "$1" "$tmp/json") || { echo "jq: $1 -> $v"; fail "JSON check failed: $1"; }
}
check_jq '.frames | length == 15'
check_jq '[.frames[].type_id] == [range(1;16)]'
check_jq '.header.version == 1 and .header.little_endian == true and .header.start_time == 1000000000'
check_jq '.skipped_frames == 2 and .error == null'
check_jq '.frames[1] | .type == "SAMPLE" and .tid == 101 and .addresses[0] == "0xffffffffffffff80" and .addresses[4] == "0x401000"'
check_jq '.frames[2] | .start == "0x400000" and .end == "0x402000" and .file_offset == "0x1000" and .inode == 12345 and .filename == "/usr/bin/true"'
check_jq '.frames[6].entries[1] == {"address": "0xe000000000000002", "name": "jit_beta_longer_name"}'
check_jq '.frames[7].counters[1] | .id == 1193046 and .value_type == "double" and .value == 1.5 and .category == "Memory"'
check_jq '.frames[8].values[1] == {"id": 1193046, "value": 2.25} and .frames[8].values[0] == {"id": 1, "value": -7}'
check_jq '.frames[10].metadata == "lost_samples=3\nperiscope_version=0.1.0\n"'
check_jq '.frames[12] | .path == "/proc/cpuinfo" and .is_last and .data_len == 9 and (.data_base64 | @base64d) == "cpu data\n"'
check_jq '.frames[13] | .alloc_addr == "0xdead0000" and .alloc_size == 4096 and (.addresses | length) == 3'
check_jq '.frames[14] | .layer == 2 and .dst == "/"'
# the option may also follow the file (as in the README)
"$periscope" dump "$tmp/reference.syscap" --json | cmp -s - "$tmp/json" || fail "dump FILE --json differs from dump --json FILE"
# non-finite doubles become null, non-UTF-8 strings get U+FFFD: still valid JSON
"$periscope" dump --json "$tmp/rich.syscap" >"$tmp/json" || fail "dump --json rich exited $?"
check_jq '[.frames[] | select(.type == "CTRSET") | .values[] | select(.id == 1) | .value] | map(select(. == null)) | length == 1'
check_jq '[.frames[] | select(.type == "PROCESS" and .pid == 31337) | .cmdline] == ["bad\ufffd\ufffd-utf8"]'
check_jq '[.frames[] | select(.type == "SAMPLE")] | length == 100'
rc=0; "$periscope" dump --json "$tmp/truncated.syscap" >"$tmp/json" 2>"$tmp/err" || rc=$?
[ $rc -ne 0 ] || fail "dump --json on a truncated capture exited 0"
check_jq '(.frames | length) > 100 and (.error | test("^offset [0-9]+: frame length"))'
expect "$tmp/err" "^periscope dump: $tmp/truncated.syscap: offset [0-9]+: "
echo "ok dump --json: stable fields, valid document on errors"
