#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 12, attack 1 (mount namespace): no symlink needed when the user's
# own mount namespace shows root's daemon another file at a path. In
# `unshare -Urm`, periscope-user mounts a tmpfs over root's 0700 directory
# and runs its stripped program from there; the program's .gnu_debuglink
# names "payroll" with the CRC of root's $SECRET_DIR/payroll, which the
# daemon would find beside the binary in its own namespace. Recorded by
# that user through the system service, while the program still runs at
# the end (its root is the namespace's) and after it exited (no root to
# look in), the capture holds nothing of root's payroll and describes the
# program exactly as when the directory it shadows is an empty one.
FILES_BUILD_ID=none
. "$(dirname "$0")/files-lib.sh"

linked_prog "$USER_DIR/prog" payroll "$SECRET_DIR/payroll"
EMPTY_DIR=$TEST_TMP/empty
mkdir -m 0700 "$EMPTY_DIR"
chown -R $user: "$USER_DIR"

# Runs the program from a tmpfs over DIR in a new user+mount namespace of
# the user's; the pid is the program's (setpriv, unshare and sh exec).
shadowed() { # dir, seconds
        exec_as_user unshare -Urm sh -c 'mount -t tmpfs tmpfs "$1" && cp "$2" "$1/prog" && exec "$1/prog" "$3"' sh \
                "$1" "$USER_DIR/prog" "$2"
}

check() { # label, dir the program ran from
        capture_text "$USER_DIR/$1.syscap" "$TEST_TMP/$1.txt"
        assert_no_secret "$TEST_TMP/$1.txt" "$1"
        grep -qF "$2/prog" "$TEST_TMP/$1.txt" || fail "$1: the capture does not show $2/prog"
}

for dir in "$SECRET_DIR" "$EMPTY_DIR"; do
        label=$(basename "$dir")
        # still running when the recording ends: its root is the namespace's
        shadowed "$dir" 4 &
        pid=$!
        private_bus_track $pid
        for _ in $(seq 100); do
                grep -qF "$dir/prog" /proc/$pid/maps 2>/dev/null && break
                sleep 0.05
        done
        grep -qF "$dir/prog" /proc/$pid/maps || fail "the program did not start in its namespace"
        record_as_user "$USER_DIR/live-$label.syscap" -p $pid --duration 1
        check live-$label "$dir"
        kill $pid 2>/dev/null || true
        wait $pid 2>/dev/null || true
        # gone when the recording ends: no root of its to look in
        record_as_user "$USER_DIR/gone-$label.syscap" -- unshare -Urm sh -c \
                'mount -t tmpfs tmpfs "$1" && cp "$2" "$1/prog" && exec "$1/prog" 1' sh "$dir" "$USER_DIR/prog"
        check gone-$label "$dir"
done
echo "ok: no name, path or CRC of $SECRET_DIR/payroll in the user's captures"
for when in live gone; do
        got=$(provenance_of "$USER_DIR/$when-secret.syscap" "$SECRET_DIR/prog")
        ctl=$(provenance_of "$USER_DIR/$when-empty.syscap" "$EMPTY_DIR/prog")
        [ -n "$ctl" ] || fail "$when: report --mappings shows nothing for the program"
        [ "$got" = "$ctl" ] || { printf 'over root'"'"'s directory:\n%s\nover an empty one:\n%s\n' "$got" "$ctl"; fail "$when: the capture tells the two apart"; }
        echo "ok: $when: described as over an empty directory: $ctl"
done
echo PASS
