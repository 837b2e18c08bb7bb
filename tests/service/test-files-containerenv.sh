#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
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
        record_as_user "$USER_DIR/$1.syscap" -- env container=podman unshare -Urm sh -c "$CONTAINERENV_SCRIPT" \
                sh "$1" "$PUB/secret.txt" "$USER_DIR/prog"
        capture_text "$USER_DIR/$1.syscap" "$TEST_TMP/$1.txt"
        containerenv_check "$1" "$TEST_TMP/$1.txt"
}
run bind
run own
echo PASS
