# SPDX-License-Identifier: LGPL-2.1-or-later
# test-lib.sh: what every shell test needs; sourced first, directly or
# through periscoped-bus.sh, private-bus.sh or a folder's lib.sh. A test that
# cannot run fails with the reason; nothing skips (tests/README.md).
#
#   fail MESSAGE          prints "FAIL: MESSAGE" on stderr and exits 1
#   as_user CMD…          CMD as $TEST_USER (default: $user, else
#                         periscope-user), with that user's groups and HOME,
#                         the rest of the environment kept (a private bus's
#                         address too); `as_user CMD &` gives the pid of a
#                         subshell, not CMD's
#   exec_as_user CMD…     as_user, but exec'ing in place (setpriv and env
#                         exec too): `exec_as_user CMD & pid=$!` gives CMD's
#                         pid, which gets the signals sent to it
#   wait_for SECONDS CMD… runs CMD every 0.1 s until it succeeds; returns 1
#                         when SECONDS went by first
#   mapped PID PATTERN    PID's /proc/PID/maps has a line matching PATTERN
#                         (for `wait_for 5 mapped $pid libhot`)
#   test_tmpdir           makes $TEST_TMP (mode 0755, for the test users),
#                         removed at exit unless PERISCOPE_TEST_KEEP is set
#   at_exit CMD…          runs CMD at exit (the last registered first)
#   build_id_of FILE      the GNU build-id of ELF FILE (hex); fails without one
set -euo pipefail
# With pipefail, `producer | grep -q` fails when grep -q leaves at its first
# match and the producer, still writing, dies of SIGPIPE (CI saw it with
# `echo "$text" | grep -q`): the tests read a pipe to its end with
# `| grep >/dev/null PATTERN`.

fail() { echo "FAIL: $*" >&2; exit 1; }

exec_as_user() {
        local u=${TEST_USER:-${user:-periscope-user}} home
        home=$(getent passwd "$u" | cut -d: -f6) || fail "as_user: no user $u (scripts/setup.d/30-periscope-users.sh makes the test users)"
        exec setpriv --reuid="$u" --regid="$u" --init-groups env HOME="$home" USER="$u" LOGNAME="$u" "$@"
}

as_user() {
        local u=${TEST_USER:-${user:-periscope-user}}
        getent passwd "$u" >/dev/null || fail "as_user: no user $u (scripts/setup.d/30-periscope-users.sh makes the test users)"
        (exec_as_user "$@")
}

wait_for() {
        local seconds=$1 i
        shift
        for ((i = 0; i < seconds * 10; i++)); do
                "$@" && return 0
                sleep 0.1
        done
        return 1
}

mapped() { grep -q -- "$2" "/proc/$1/maps" 2>/dev/null; }

build_id_of() {
        local id
        id=$(readelf -n "$1" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
        [ -n "$id" ] || fail "$1 has no build-id"
        echo "$id"
}

_test_lib_at_exit=()
_test_lib_exit() {
        local st=$? i
        for ((i = ${#_test_lib_at_exit[@]} - 1; i >= 0; i--)); do
                eval "${_test_lib_at_exit[i]}" || true
        done
        exit $st
}
at_exit() {
        local cmd
        printf -v cmd '%q ' "$@"
        _test_lib_at_exit+=("$cmd")
        trap _test_lib_exit EXIT
}

test_tmpdir() {
        TEST_TMP=$(mktemp -d /tmp/periscope-test.XXXXXX)
        chmod 755 "$TEST_TMP"
        if [ -z "${PERISCOPE_TEST_KEEP:-}" ]; then
                at_exit rm -rf "$TEST_TMP"
        else
                at_exit echo "kept: $TEST_TMP"
        fi
}
