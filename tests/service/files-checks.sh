# SPDX-License-Identifier: LGPL-2.1-or-later
# files-checks.sh: the programs and assertions of the tests of what files the
# service opens for a caller other than root, sourced by files-lib.sh (private
# daemon) and by the installed-service family (tests/service/installed/), so
# that both check the same things. Needs PERISCOPE (the CLI that reads
# captures), PYTHON and fail().
#   files_build_programs DIR BUILD_ID   DIR/prog.full (the user's program: user_spin_outer →
#                                       user_spin_inner, spins argv[1] s) and DIR/secret.full
#                                       (the same code, TOPSECRET_* names)
#   files_secret_crc FILE               the .gnu_debuglink CRC of FILE, in hex
#   capture_text CAPTURE OUT            dump --json, report and report --mappings into OUT
#   assert_no_secret TEXT LABEL         none of the secret's names, paths ($SECRET_DIR/payroll)
#                                       or CRC ($secret_crc)
#   CONTAINERENV_SCRIPT                 sh -c script: MODE SECRET PROG: a tmpfs on /run and at
#                                       /run/.containerenv the root-only SECRET bound (bind) or
#                                       the user's own file (own), then PROG 1; run it as the
#                                       user in `env container=podman unshare -Urm sh -c`
#   containerenv_check MODE TEXT        the capture (capture_text) of that run

files_build_programs() { # dir, build-id option
        cat >"$1/prog.c" <<'SRC'
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
                "$1/prog.c" >"$1/secret.c"
        gcc -O0 -g -fno-omit-frame-pointer -Wl,--build-id="$2" -o "$1/prog.full" "$1/prog.c" || fail "cannot build prog.c"
        gcc -O0 -g -fno-omit-frame-pointer -Wl,--build-id="$2" -o "$1/secret.full" "$1/secret.c" || fail "cannot build secret.c"
}

files_secret_crc() { # file
        "$PYTHON" -c 'import sys, zlib; print("%08x" % zlib.crc32(open(sys.argv[1], "rb").read()))' "$1"
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
                if grep -aiF -- "$needle" "$1" >/dev/null; then
                        grep -aiF -m3 -- "$needle" "$1" | cut -c1-400 >&2 || true
                        fail "$2: the capture holds '$needle', which only root-only files hold"
                fi
        done
}

# container=podman from the start: every process classified as a Podman one
# when first seen, the program after the mounts.
CONTAINERENV_SCRIPT='
mount -t tmpfs tmpfs /run && touch /run/.containerenv || exit 1
if [ "$1" = bind ]; then mount --bind "$2" /run/.containerenv || exit 1
else echo "engine=\"podman-$1\"" >/run/.containerenv; fi
"$3" 1'

containerenv_check() { # mode, text
        case $1 in
        bind)
                assert_no_secret "$2" "a root-only file bound onto /run/.containerenv"
                ! grep -aq "(root only)" "$2" || fail "the capture holds the root-only file"
                echo "ok: nothing of the root-only file bound onto /run/.containerenv" ;;
        own)
                grep -aq 'podman-own' "$2" || fail "the user's own /run/.containerenv is not in the capture"
                echo "ok: the user's own /run/.containerenv is copied" ;;
        *) fail "containerenv_check: unknown mode $1" ;;
        esac
}
