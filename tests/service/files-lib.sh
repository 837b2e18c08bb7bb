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
#   capture_text CAPTURE OUT       dump --json, report and report --mappings into OUT
#   assert_no_secret TEXT LABEL [ALLOWED_PATH]  none of the secret's names, paths or CRC
. "$(dirname "$0")/../lib/periscoped-bus.sh"
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

as_user() { runuser -u $user -- "$@"; }

# The user's program: a known call chain that spins for argv[1] seconds.
cat >"$TEST_TMP/prog.c" <<'SRC'
#include <stdlib.h>
#include <time.h>
volatile unsigned long sink;
__attribute__((noinline)) void user_spin_inner(void) { for (int i = 0; i < 20000; i++) sink += i; }
__attribute__((noinline)) void user_spin_outer(void) { user_spin_inner(); }
int main(int argc, char **argv) {
        double secs = argc > 1 ? atof(argv[1]) : 1.0;
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
                user_spin_outer();
                clock_gettime(CLOCK_MONOTONIC, &t);
        } while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
        return 0;
}
SRC
sed -e 's/user_spin_inner/TOPSECRET_payroll_bonus_table/g; s/user_spin_outer/TOPSECRET_salary_outer/g' \
        "$TEST_TMP/prog.c" >"$TEST_TMP/secret.c"
# build ID: the same for both when asked (a root-only copy of a build whose
# build-id the attacker knows)
build_pair() { # build-id option
        gcc -O0 -g -fno-omit-frame-pointer -Wl,--build-id=$1 -o "$TEST_TMP/prog.full" "$TEST_TMP/prog.c"
        gcc -O0 -g -fno-omit-frame-pointer -Wl,--build-id=$1 -o "$TEST_TMP/secret.full" "$TEST_TMP/secret.c"
}
# FILES_BUILD_ID (set before sourcing): "none" (an attacker's own build:
# the .gnu_debuglink CRC alone decides), 0xHEX (both carry that build-id),
# default sha1.
build_pair "${FILES_BUILD_ID:-sha1}"

SECRET_DIR=$TEST_TMP/secret
mkdir -m 0700 "$SECRET_DIR"
install -m 0600 "$TEST_TMP/secret.full" "$SECRET_DIR/payroll"
secret_crc=$("$PYTHON" -c 'import sys, zlib; print("%08x" % zlib.crc32(open(sys.argv[1], "rb").read()))' "$SECRET_DIR/payroll")

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

capture_text() { # capture, out (file chunks decoded too)
        { "$PERISCOPE" dump --json "$1" && "$PERISCOPE" report --no-progress "$1" &&
                  "$PERISCOPE" report --no-progress --mappings "$1" && "$PERISCOPE" report --no-progress --folded "$1"; } >"$2" ||
                fail "periscope could not read $1"
        "$PERISCOPE" dump --json "$1" | "$PYTHON" -c '
import base64, json, sys
for f in json.load(sys.stdin)["frames"]:
    if f["type"] == "FILE_CHUNK" and "data_base64" in f:
        sys.stdout.write("%s:\n" % f["path"])
        sys.stdout.write(base64.b64decode(f["data_base64"]).decode("utf-8", "replace") + "\n")' >>"$2" ||
                fail "cannot decode the file chunks of $1"
}

# Fails when TEXT (a file) holds the secret's names, its directory, its CRC
# (hex either way round, or decimal).
assert_no_secret() { # text, label
        local crc_le
        crc_le=$(echo "$secret_crc" | sed -E 's/(..)(..)(..)(..)/\4\3\2\1/')
        for needle in TOPSECRET payroll_bonus salary_outer "$SECRET_DIR/payroll" "$secret_crc" "$crc_le" \
                "$((16#$secret_crc))" "${secret_crc^^}"; do
                if grep -aqiF -- "$needle" "$1"; then
                        grep -aiF -m3 -- "$needle" "$1" | cut -c1-400 >&2 || true
                        fail "$2: the capture holds '$needle', which only root-only files hold"
                fi
        done
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
