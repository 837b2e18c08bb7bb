#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 12, attack 2 (pin race): a mapping whose process is gone before its
# MMAP2 record is read (which carries a build-id, not a device and inode)
# used to be pinned by opening its path in the daemon's own namespace as
# root. periscope-user runs many short-lived copies of its program from a
# tmpfs over root's 0700 directory in its own mount namespace; at that path
# the host holds root's 0600 program (same build-id: a root-only copy of a
# build whose build-id is known). Recorded by that user through the system
# service, none of root's names reach the capture, and no mapping of the
# program says anything a file other than the user's own would cause
# ("build-id differs", "changed", "not an ELF").
FILES_BUILD_ID=0x5ec2e7b11dc0ffee5ec2e7b11dc0ffee5ec2e7b1
. "$(dirname "$0")/files-lib.sh"

install -m 0600 "$TEST_TMP/secret.full" "$SECRET_DIR/prog"
install -m 0755 -o $user "$TEST_TMP/prog.full" "$USER_DIR/prog"
[ "$(readelf -n "$SECRET_DIR/prog" | grep 'Build ID')" = "$(readelf -n "$USER_DIR/prog" | grep 'Build ID')" ] ||
        fail "the two programs do not share their build-id"

# 60 programs of 20 ms each: most have exited when the daemon reads their
# MMAP2 records (it drains every 100 ms).
record_as_user "$USER_DIR/race.syscap" -- unshare -Urm sh -c \
        'mount -t tmpfs tmpfs "$1" && cp "$2" "$1/prog" && i=0 && while [ $i -lt 60 ]; do "$1/prog" 0.02; i=$((i + 1)); done' \
        sh "$SECRET_DIR" "$USER_DIR/prog"
capture_text "$USER_DIR/race.syscap" "$TEST_TMP/race.txt"
assert_no_secret "$TEST_TMP/race.txt" "pin race"
n=$("$PERISCOPE" dump --json "$USER_DIR/race.syscap" | "$PYTHON" -c '
import json, sys
frames = json.load(sys.stdin)["frames"]
print(len({f["pid"] for f in frames if f["type"] == "MAP" and f.get("filename") == sys.argv[1]}))' "$SECRET_DIR/prog")
[ "$n" -ge 30 ] || fail "only $n of the 60 short-lived programs in the capture"
maps=$("$PERISCOPE" report --no-progress --mappings "$USER_DIR/race.syscap")
if echo "$maps" | grep -A1 "$SECRET_DIR/prog$" | grep -iE "differ|changed|not an ELF|not a readable"; then
        fail "a mapping of the user's program was checked against another file"
fi
# The race happened: programs gone before they could be pinned, their
# frames unnamed (where the old code named them from root's file).
raced=$("$PERISCOPE" report --no-progress --folded "$USER_DIR/race.syscap" | grep -c "could not be pinned" || true)
[ "$raced" -ge 1 ] || fail "no program exited before its mapping was read: the race did not happen"
pinned=$(echo "$maps" | grep -c "^  pid .* $SECRET_DIR/prog$" || true)
echo "ok: $n programs, $pinned of them with samples pinned while they ran, $raced stacks of programs gone before; no name of root's $SECRET_DIR/prog, no verdict about it"
echo PASS
