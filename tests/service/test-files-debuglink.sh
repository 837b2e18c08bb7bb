#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 12, attack 1 (symlink): periscope-user's stripped program carries a
# .gnu_debuglink naming leak.debug, a symlink beside it to a root-only
# program (0600 in a 0700 directory) with the CRC that program has. Recorded
# by that user through the system service, the capture (dump --json,
# report, report --mappings, folded stacks) holds none of the root-only
# program's names, its path or its CRC, and says about the user's program
# exactly what it says when leak.debug points nowhere; a wrong CRC changes
# nothing either. The user's own debug file behind its own link still names
# its program. Root, recording its own program whose debug file lies
# behind a symlink in root-only directories, still gets every name.
FILES_BUILD_ID=none
. "$(dirname "$0")/files-lib.sh"

# (1) the link to the root-only program, its CRC in the user's program
mkdir -m 0755 "$USER_DIR/crc" "$USER_DIR/wrongcrc" "$USER_DIR/control"
linked_prog "$USER_DIR/crc/prog" leak.debug "$SECRET_DIR/payroll"
ln -s "$SECRET_DIR/payroll" "$USER_DIR/crc/leak.debug"
# (2) the same link, the CRC of another file: only a CRC note could tell
linked_prog "$USER_DIR/wrongcrc/prog" leak.debug "$TEST_TMP/prog.c"
ln -s "$SECRET_DIR/payroll" "$USER_DIR/wrongcrc/leak.debug"
# (3) control: the program of (1), its leak.debug pointing nowhere
cp "$USER_DIR/crc/prog" "$USER_DIR/control/prog"
ln -s "$USER_DIR/control/absent" "$USER_DIR/control/leak.debug"
chown -hR $user: "$USER_DIR"

for v in crc wrongcrc control; do
        record_as_user "$USER_DIR/$v.syscap" -- "$USER_DIR/$v/prog" 1
        capture_text "$USER_DIR/$v.syscap" "$TEST_TMP/$v.txt"
        assert_no_secret "$TEST_TMP/$v.txt" "$v"
        n=$(grep -c "prog" "$TEST_TMP/$v.txt" || true)
        [ "$n" -gt 0 ] || fail "$v: the capture does not show the user's program"
done
echo "ok: no name, path or CRC of $SECRET_DIR/payroll in the user's captures"

ctl=$(provenance_of "$USER_DIR/control.syscap" "$USER_DIR/control/prog")
[ -n "$ctl" ] || fail "report --mappings shows nothing for the user's program"
for v in crc wrongcrc; do
        got=$(provenance_of "$USER_DIR/$v.syscap" "$USER_DIR/$v/prog")
        [ "$got" = "$ctl" ] || { printf 'with the link:\n%s\nwithout:\n%s\n' "$got" "$ctl"; fail "$v: the capture says something else than when leak.debug points nowhere"; }
done
echo "ok: the user's program is described as when leak.debug points nowhere: $ctl"

# The user's own debug file behind a link of its own still names its program.
mkdir -m 0755 "$USER_DIR/own" "$USER_DIR/own/.debug" "$USER_DIR/debugfiles"
objcopy --only-keep-debug "$TEST_TMP/prog.full" "$USER_DIR/debugfiles/prog.debug"
linked_prog "$USER_DIR/own/prog" prog.debug "$USER_DIR/debugfiles/prog.debug"
ln -s ../../debugfiles/prog.debug "$USER_DIR/own/.debug/prog.debug"
chown -hR $user: "$USER_DIR"
record_as_user "$USER_DIR/own.syscap" -- "$USER_DIR/own/prog" 1
"$PERISCOPE" report --no-progress --folded "$USER_DIR/own.syscap" | grep >/dev/null "main;user_spin_outer;user_spin_inner" ||
        fail "the user's program is not named from its own debug file behind its own link"
echo "ok: the user's own debug file behind its own link names its program"

# Root keeps everything: its program's debug file behind a symlink into
# root-only directories.
R=$TEST_TMP/rootprog
mkdir -m 0700 "$R" "$R/.debug" "$R/private"
objcopy --only-keep-debug "$TEST_TMP/prog.full" "$R/private/prog.debug"
chmod 0600 "$R/private/prog.debug"
linked_prog "$R/prog" prog.debug "$R/private/prog.debug"
ln -s "$R/private/prog.debug" "$R/.debug/prog.debug"
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$TEST_TMP/root.syscap" -- "$R/prog" 1 2>"$TEST_TMP/root.err" ||
        { cat "$TEST_TMP/root.err"; fail "root could not record"; }
"$PERISCOPE" report --no-progress --folded "$TEST_TMP/root.syscap" >"$TEST_TMP/root.folded" || fail "report failed"
grep -q "main;user_spin_outer;user_spin_inner" "$TEST_TMP/root.folded" ||
        { head -5 "$TEST_TMP/root.folded"; fail "root's program is not named from its root-only debug file"; }
"$PERISCOPE" report --no-progress --mappings "$TEST_TMP/root.syscap" | grep >/dev/null "debug file by debuglink from host: $R/.debug/prog.debug" ||
        fail "report --mappings does not name root's debug file"
echo "ok: root's own program is named from $R/.debug/prog.debug (a symlink into a root-only directory)"
echo PASS
