#!/usr/bin/env bash
# The files a recording copies into the capture from a process's root
# (/run/.containerenv, /.flatpak-info) are read with the caller's rights:
# periscope-user, in `unshare -Urm`, mounts a tmpfs over /run and binds a
# root-only file (0600 in a world-searchable directory: looking it up needs
# no read right) onto /run/.containerenv, says container=podman in its
# environment and runs its program. Recorded by that user through the
# system service, the capture holds nothing of the root-only file; its own
# /run/.containerenv, a plain file of its own, is still copied.
. "$(dirname "$0")/files-lib.sh"

PUB=$TEST_TMP/pub
mkdir -m 0755 "$PUB"
echo "TOPSECRET_payroll_bonus_table=42 (root only)" >"$PUB/secret.txt"
chmod 0600 "$PUB/secret.txt"
install -m 0755 -o $user "$TEST_TMP/prog.full" "$USER_DIR/prog"

run() { # what to put at /run/.containerenv: "bind" (root's file) or "own"
        # container=podman from the start: every process classified as a
        # Podman one when first seen, the program after the mounts
        record_as_user "$USER_DIR/$1.syscap" -- env container=podman unshare -Urm sh -c '
                mount -t tmpfs tmpfs /run && touch /run/.containerenv || exit 1
                if [ "$1" = bind ]; then mount --bind "$2" /run/.containerenv || exit 1
                else echo "engine=\"podman-$1\"" >/run/.containerenv; fi
                "$3" 1' sh "$1" "$PUB/secret.txt" "$USER_DIR/prog"
        capture_text "$USER_DIR/$1.syscap" "$TEST_TMP/$1.txt"
}
run bind
assert_no_secret "$TEST_TMP/bind.txt" "a root-only file bound onto /run/.containerenv"
grep -aq "(root only)" "$TEST_TMP/bind.txt" && fail "the capture holds the root-only file"
echo "ok: nothing of the root-only file bound onto /run/.containerenv"
run own
grep -aq 'podman-own' "$TEST_TMP/own.txt" || fail "the user's own /run/.containerenv is not in the capture"
echo "ok: the user's own /run/.containerenv is copied"
echo PASS
