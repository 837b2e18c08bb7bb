# SPDX-License-Identifier: LGPL-2.1-or-later
# files-lib.sh: sourced by the tests of what files the service opens for a
# caller other than root (docs/security.md, "Files opened for a recording").
# The real periscoped on a private system bus with a real polkitd, a real
# second user (periscope-user, scripts/setup.d/30-periscope-users.sh), and a
# root-only program whose names must never reach that user's captures.
#   SECRET_DIR       root's 0700 directory holding payroll (0600): a program
#                    with TOPSECRET_payroll_bonus_table, laid out as the
#                    user's program (same code, names changed), so that its
#                    DWARF would name the user's addresses if it were used
#   USER_DIR         periscope-user's directory (0755); prog.full, the user's
#                    program with symbols, in $TEST_TMP
#   as_user CMD…     runs CMD as periscope-user
#   record_as_user CAPTURE ARGS…   periscope record through the service as the user
#   capture_text, assert_no_secret  from files-checks.sh
. "$(dirname "$0")/../lib/periscoped-bus.sh"
. "$(dirname "$0")/files-checks.sh"
: "${PERISCOPE:?}"
user=periscope-user
id -u $user >/dev/null 2>&1 || fail "user $user is missing: run scripts/setup.d/30-periscope-users.sh as root"
[ "$(id -u)" = 0 ] || fail "runs as root (./test.sh does): it creates root-only files and records as another user"
for c in gcc strip objcopy readelf runuser unshare; do
        command -v $c >/dev/null || fail "'$c' not found: apt-get install the packages in scripts/packages.txt"
done
private_bus_start
private_polkit_start || fail "polkitd did not start on the private bus"
periscoped_start


# The user's program and the secret one (files-checks.sh). FILES_BUILD_ID
# (set before sourcing): "none" (an attacker's own build: the
# .gnu_debuglink CRC alone decides), 0xHEX (both carry that build-id: a
# root-only copy of a build whose build-id the attacker knows), default sha1.
files_build_programs "$TEST_TMP" "${FILES_BUILD_ID:-sha1}"

SECRET_DIR=$TEST_TMP/secret
mkdir -m 0700 "$SECRET_DIR"
install -m 0600 "$TEST_TMP/secret.full" "$SECRET_DIR/payroll"
secret_crc=$(files_secret_crc "$SECRET_DIR/payroll")

USER_DIR=$TEST_TMP/user
mkdir -m 0755 "$USER_DIR"
chown $user: "$USER_DIR"

# The user's stripped program at DEST whose .gnu_debuglink names NAME with
# the CRC of the file CRC_OF (what an attacker learns from one "CRC
# mismatch (file 0x…)" note, or knows from a published build).
linked_prog() { # dest, name, crc_of
        local tmp=$TEST_TMP/link.$$
        mkdir -p "$tmp"
        cp "$3" "$tmp/$2"
        strip --strip-all -o "$tmp/stripped" "$TEST_TMP/prog.full"
        objcopy --add-gnu-debuglink="$tmp/$2" "$tmp/stripped" "$1"
        chmod 0755 "$1"
        rm -rf "$tmp"
}

record_as_user() { # capture, periscope record args…
        local cap=$1; shift
        as_user "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$cap" "$@" 2>"$cap.err" ||
                { cat "$cap.err"; fail "$user could not record: $*"; }
}

# How each mapping of PATH was verified and what was noted about its debug
# files, as report --mappings says, with PATH's directory replaced by DIR;
# pids, addresses and how the mapped file itself was pinned (map_files
# while the process ran, its path once it was gone: load decides) left out,
# for comparing two captures.
provenance_of() { # capture, path
        "$PERISCOPE" report --no-progress --mappings "$1" | awk -v p="$2" -v d="$(dirname "$2")" '
                /^  pid / { on = ($NF == p); next }
                on { gsub(d, "DIR"); sub(/found by (map_files|path|proc-root); /, "found by PIN; "); print }' | sort -u
}
