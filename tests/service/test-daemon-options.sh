#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# periscoped's command line as an administrator types it (the unit's
# ExecStart=, a drop-in): a number option out of range or not a number
# exits 2 before anything starts, with one line that names the option, the
# value typed and the range it takes; --help and --version exit 0; a good
# value at its bound goes through to the start of the daemon.
set -euo pipefail
: "${PERISCOPED:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect_refused ARGS... -- PATTERN: exit 2, and stderr holds PATTERN on a line of its own.
expect_refused() {
        local args=() rc=0
        while [ "$1" != -- ]; do args+=("$1"); shift; done
        local pattern=$2
        "$PERISCOPED" "${args[@]}" >"$tmp/out" 2>"$tmp/err" || rc=$?
        [ "$rc" = 2 ] || { cat "$tmp/err" >&2; fail "periscoped ${args[*]}: exit $rc, not 2"; }
        grep >/dev/null -x -e "$pattern" "$tmp/err" ||
                { cat "$tmp/err" >&2; fail "periscoped ${args[*]}: no line '$pattern'"; }
        [ "$(grep -c . "$tmp/err")" = 1 ] || { cat "$tmp/err" >&2; fail "periscoped ${args[*]}: more than one line"; }
}

expect_refused --idle-timeout=abc -- "periscoped: --idle-timeout=abc: not a whole number: needs seconds, 0…86400 (0 = never)"
expect_refused --idle-timeout 86401 -- "periscoped: --idle-timeout=86401: out of range: needs seconds, 0…86400 (0 = never)"
expect_refused --idle-timeout=-1 -- "periscoped: --idle-timeout=-1: not a whole number: .*"
expect_refused --idle-timeout= -- "periscoped: --idle-timeout=: not a whole number: .*"
expect_refused --idle-timeout=0x10 -- "periscoped: --idle-timeout=0x10: not a whole number: .*"
expect_refused --peer-fd=65536 -- "periscoped: --peer-fd=65536: out of range: needs an fd number, 0…65535"
expect_refused --peer-fd=3x -- "periscoped: --peer-fd=3x: not a whole number: needs an fd number, 0…65535"
expect_refused --max-recordings-per-user=100001 -- \
        "periscoped: --max-recordings-per-user=100001: out of range: needs a number of recordings, 0…100000 (0 = no limit)"
expect_refused --max-locked-memory-per-user=18446744073709551616 -- \
        "periscoped: --max-locked-memory-per-user=18446744073709551616: out of range: needs MiB, 0…1073741824 (0 = no limit)"
expect_refused --max-control-rings-per-user=+1 -- \
        "periscoped: --max-control-rings-per-user=+1: not a whole number: needs a number of control rings, 0…100000 (0 = no limit)"
expect_refused --max-pending-authorizations-per-user=' 4' -- \
        "periscoped: --max-pending-authorizations-per-user= 4: not a whole number: needs a number of calls, 0…100000 (0 = no limit)"
expect_refused --max-addresses=0 -- \
        "periscoped: --max-addresses=0: out of range: needs a number of addresses, 1…100000000"
expect_refused --symbolize-budget=0.0009 -- \
        "periscoped: --symbolize-budget=0.0009: out of range: needs seconds, 0.001…86400"
expect_refused --symbolize-budget=1e3 -- "periscoped: --symbolize-budget=1e3: not a number: needs seconds, 0.001…86400"
expect_refused --stop-budget=600.5 -- "periscoped: --stop-budget=600.5: out of range: needs seconds, 0…600 (0 = none)"
expect_refused --stop-budget=-0 -- "periscoped: --stop-budget=-0: not a number: needs seconds, 0…600 (0 = none)"
expect_refused --sysprofd --peer-fd=3 -- \
        "periscoped: --sysprofd needs a bus (Sysprof finds sysprofd by its bus name), not --peer-fd"

"$PERISCOPED" --help >"$tmp/help" || fail "--help exited $?"
grep >/dev/null -e "--stop-budget=SECONDS" "$tmp/help" || fail "--help does not list --stop-budget"
"$PERISCOPED" --version | grep >/dev/null '^periscoped [0-9]' || fail "--version says no version"

# Values at their bounds are taken: periscoped gets past its command line
# and fails only where it meets the fd, which is no socket (exit 1, not 2).
rc=0
"$PERISCOPED" --peer-fd=9 --idle-timeout=86400 --max-recordings-per-user=100000 \
        --max-locked-memory-per-user=1073741824 --max-control-rings-per-user=0 \
        --max-pending-authorizations-per-user=100000 --max-addresses=100000000 --symbolize-budget=0.001 \
        --stop-budget=600 9</dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || { cat "$tmp/err" >&2; fail "periscoped with values at their bounds: exit $rc, not 1"; }
grep >/dev/null "^periscoped: cannot connect to the peer: " "$tmp/err" ||
        { cat "$tmp/err" >&2; fail "periscoped with values at their bounds did not get to the peer"; }
echo "ok: periscoped's option errors name the option, the value and its range"
