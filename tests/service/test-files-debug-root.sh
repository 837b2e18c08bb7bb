#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 20: debug files in the host's debug root (/usr/lib/debug) that
# periscope-user cannot read name nothing in that user's captures. Root
# keeps a debug file of its secret program there; the user gives a stripped
# program of its own that program's build-id (or .gnu_debuglink name and
# CRC) and records it through the system service:
#   buildid   /usr/lib/debug/.build-id/XX/REST.debug, 0600
#   linked    the same path a symbolic link (inside the debug root) to a
#             0644 file in a 0700 directory of the debug root
#   mirror    /usr/lib/debug/DIR/NAME for the program's .gnu_debuglink NAME
#             in DIR, 0600, its CRC and build-id matching
#   debugdata a root-owned 0711 program with MiniDebugInfo (.gnu_debugdata)
#             that the user runs: its names come from the binary itself
# `cat` of each as the user says "Permission denied"; the capture's bytes,
# `periscope dump --json` and the reports hold none of the secret names and
# none of those paths. Control: the same file made world-readable names the
# user's program with the secret names (the lookup itself works for the
# user). Root recording the same programs gets every name.
FILES_BUILD_ID=none
. "$(dirname "$0")/files-lib.sh"

DEBUG_ROOT=/usr/lib/debug
[ -d "$DEBUG_ROOT" ] || mkdir -p "$DEBUG_ROOT"
TAG=periscope-test-$$
PLANTED=()       # removed at exit
PLANTED_DIRS=()  # removed at exit when empty (a .build-id/XX this test made)
cleanup_planted() {
        local st=$? p
        for p in "${PLANTED[@]}"; do rm -rf -- "$p"; done
        for p in "${PLANTED_DIRS[@]}"; do rmdir -- "$p" 2>/dev/null || true; done
        # $? of the test for periscoped-bus.sh's cleanup (not "(exit $st)":
        # under set -e that would end the trap here)
        _status() { return "$1"; }
        _status "$st" || _periscoped_bus_cleanup # it exits with $st
        _periscoped_bus_cleanup                     # st = 0
}
trap cleanup_planted EXIT

plant_dir() { # dir: made if missing, then removed at exit when empty
        [ -d "$1" ] && return 0
        mkdir -p "$1"
        PLANTED_DIRS+=("$1")
}

# A fresh build-id per case (20 random bytes), so no case finds another's file.
new_build_id() { echo "0x$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')"; }
# The path of the .build-id entry of a build-id "0xHEX".
build_id_path() { local h=${1#0x}; echo "$DEBUG_ROOT/.build-id/${h:0:2}/${h:2}.debug"; }

# case name, then: the user's stripped program at $USER_DIR/NAME/prog built
# with build-id BID from prog.c, and the secret's debug file (secret.c, the
# same build-id) at $TEST_TMP/NAME.secret.debug.
make_case() { # name bid
        files_build_programs "$TEST_TMP" "$2"
        mkdir -m 0755 "$USER_DIR/$1"
        objcopy --only-keep-debug "$TEST_TMP/secret.full" "$TEST_TMP/$1.secret.debug"
        strip --strip-all -o "$USER_DIR/$1/prog" "$TEST_TMP/prog.full"
        chmod 0755 "$USER_DIR/$1/prog"
}

as_user_cannot_read() { # path
        if as_user cat -- "$1" >/dev/null 2>"$TEST_TMP/cat.err"; then fail "$user can read $1: the case tests nothing"; fi
        grep >/dev/null "Permission denied" "$TEST_TMP/cat.err" || { cat "$TEST_TMP/cat.err"; fail "cat $1 as $user: not 'Permission denied'"; }
}

# Neither the secret's names nor PATHS anywhere in the capture's bytes or its text.
assert_clean() { # capture label paths…
        local cap=$1 label=$2; shift 2
        capture_text "$cap" "$cap.txt"
        assert_no_secret "$cap.txt" "$label"
        for needle in TOPSECRET payroll_bonus salary_outer "$TAG" "$@"; do
                if grep -aF -- "$needle" "$cap" >/dev/null || grep -aF -- "$needle" "$cap.txt" >/dev/null; then
                        grep -aF -m3 -- "$needle" "$cap.txt" | cut -c1-300 >&2 || true
                        fail "$label: the capture holds '$needle'"
                fi
        done
        grep >/dev/null "prog" "$cap.txt" || fail "$label: the capture does not show the user's program"
}

has_secret_names() { # capture
        "$PERISCOPE" report --no-progress --folded "$1" | grep >/dev/null "main;TOPSECRET_salary_outer;TOPSECRET_payroll_bonus_table"
}

# (1) buildid: a 0600 file at the build-id path
bid=$(new_build_id)
make_case buildid "$bid"
p=$(build_id_path "$bid")
plant_dir "$(dirname "$p")"
install -m 0600 "$TEST_TMP/buildid.secret.debug" "$p"
PLANTED+=("$p")
paths_buildid=("$p")

# (2) linked: the build-id path a link to a 0644 file in a 0700 directory
bid=$(new_build_id)
make_case linked "$bid"
p=$(build_id_path "$bid")
plant_dir "$(dirname "$p")"
mkdir -m 0700 "$DEBUG_ROOT/$TAG"
PLANTED+=("$DEBUG_ROOT/$TAG")
install -m 0644 "$TEST_TMP/linked.secret.debug" "$DEBUG_ROOT/$TAG/payroll.debug"
ln -s "../../$TAG/payroll.debug" "$p"
PLANTED+=("$p")
paths_linked=("$p" "$DEBUG_ROOT/$TAG/payroll.debug")

# (3) mirror: /usr/lib/debug/DIR/NAME for the program's .gnu_debuglink
bid=$(new_build_id)
make_case mirror "$bid"
linked_prog "$USER_DIR/mirror/prog" payroll.debug "$TEST_TMP/mirror.secret.debug"
[ -e "$DEBUG_ROOT/tmp" ] || PLANTED_DIRS+=("$DEBUG_ROOT/tmp")
mkdir -p "$DEBUG_ROOT$USER_DIR/mirror"
PLANTED+=("$DEBUG_ROOT$TEST_TMP")
install -m 0600 "$TEST_TMP/mirror.secret.debug" "$DEBUG_ROOT$USER_DIR/mirror/payroll.debug"
paths_mirror=("$DEBUG_ROOT$USER_DIR/mirror/payroll.debug")
[ "$(readelf --string-dump=.gnu_debuglink "$USER_DIR/mirror/prog" | grep -c payroll.debug)" = 1 ] ||
        fail "the mirror case's program has no .gnu_debuglink to payroll.debug"
chown -hR $user: "$USER_DIR"

# (4) debugdata: names inside the binary itself (.gnu_debugdata,
# MiniDebugInfo): a root-owned 0711 program the user may run, not read,
# whose MiniDebugInfo names its functions
bid=$(new_build_id)
files_build_programs "$TEST_TMP" "$bid"
nm --format=posix --defined-only "$TEST_TMP/secret.full" | awk '$2 ~ /^[Tt]$/ { print $1 }' >"$TEST_TMP/keep"
objcopy --only-keep-debug "$TEST_TMP/secret.full" "$TEST_TMP/mini.dbg"
objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols="$TEST_TMP/keep" \
        "$TEST_TMP/mini.dbg" "$TEST_TMP/mini_debuginfo"
xz -f "$TEST_TMP/mini_debuginfo"
strip --strip-all --remove-section .comment -o "$TEST_TMP/exec-only" "$TEST_TMP/secret.full"
objcopy --add-section .gnu_debugdata="$TEST_TMP/mini_debuginfo.xz" "$TEST_TMP/exec-only"
exec_only=/usr/local/bin/periscope-exec-only-prog-$$
PLANTED+=("$exec_only")
install -m 0711 "$TEST_TMP/exec-only" "$exec_only"
as_user_cannot_read "$exec_only"
record_as_user "$USER_DIR/debugdata.syscap" -- "$exec_only" 1
capture_text "$USER_DIR/debugdata.syscap" "$USER_DIR/debugdata.syscap.txt"
assert_no_secret "$USER_DIR/debugdata.syscap.txt" debugdata
for needle in TOPSECRET payroll_bonus salary_outer; do
        ! grep -aF -- "$needle" "$USER_DIR/debugdata.syscap" >/dev/null || fail "debugdata: the capture holds '$needle'"
done
echo "ok: debugdata: nothing of the MiniDebugInfo of $exec_only (0711) in $user's capture"
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$TEST_TMP/root-debugdata.syscap" -- "$exec_only" 1 \
        2>"$TEST_TMP/root-debugdata.err" || { cat "$TEST_TMP/root-debugdata.err"; fail "root could not record (debugdata)"; }
# (stripped: its MiniDebugInfo is the only place that names them)
has_secret_names "$TEST_TMP/root-debugdata.syscap" || fail "debugdata: root's capture is not named from the MiniDebugInfo"
echo "ok: debugdata: root's capture of $exec_only is named from its MiniDebugInfo"

for v in buildid linked mirror; do
        declare -n paths=paths_$v
        as_user_cannot_read "${paths[0]}"
        record_as_user "$USER_DIR/$v.syscap" -- "$USER_DIR/$v/prog" 1
        assert_clean "$USER_DIR/$v.syscap" "$v" "${paths[@]}" "${paths[0]#"$DEBUG_ROOT"}"
        echo "ok: $v: nothing of ${paths[*]} in $user's capture"
        unset -n paths
done

# Root keeps everything: the same programs, recorded by root, are named.
for v in buildid linked mirror; do
        "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$TEST_TMP/root-$v.syscap" -- "$USER_DIR/$v/prog" 1 \
                2>"$TEST_TMP/root-$v.err" || { cat "$TEST_TMP/root-$v.err"; fail "root could not record ($v)"; }
        has_secret_names "$TEST_TMP/root-$v.syscap" ||
                { "$PERISCOPE" report --no-progress --mappings "$TEST_TMP/root-$v.syscap" | grep -A3 "$v/prog" | head; fail "$v: root's capture is not named from the root-only debug file"; }
done
echo "ok: root's captures of the same programs are named from the root-only debug files"

# Control: made readable to everyone, the same files name the user's
# programs (the user's lookup reaches them: the checks above can fail).
chmod 0644 "${paths_buildid[0]}" "${paths_mirror[0]}"
chmod 0755 "$DEBUG_ROOT/$TAG"
for v in buildid linked mirror; do
        record_as_user "$USER_DIR/$v-readable.syscap" -- "$USER_DIR/$v/prog" 1
        has_secret_names "$USER_DIR/$v-readable.syscap" ||
                { "$PERISCOPE" report --no-progress --mappings "$USER_DIR/$v-readable.syscap" | grep -A3 "$v/prog" | head; fail "$v: a world-readable debug file does not name $user's program"; }
done
echo "ok: world-readable, the same debug files name $user's programs"
echo PASS
