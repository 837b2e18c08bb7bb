#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `periscope list` against the private periscoped: the processes the caller
# may record with their pid, user and command line, readable columns on a
# terminal (long lines cut), everything in a pipe, and --json that a script
# parses; another user sees only their own processes.
# Needs root (lists as another user too).
set -euo pipefail
: "${PERISCOPE:?}" "${PERISCOPED:?}"
. "$(dirname "$0")/../lib/test-lib.sh" # fail, as_user, wait_for
[ "$(id -u)" = 0 ] || fail "needs root (lists as another user); run it through ./test.sh"
for t in script jq runuser; do command -v $t >/dev/null || fail "$t is missing"; done
tmp=$(mktemp -d)
marker=periscope-list-marker-$$
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$tmp"' EXIT
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$tmp/no-such-bus XDG_STATE_HOME=$tmp/state
expect() { grep -Eq -- "$2" "$1" || { echo "--- $1:"; cat "$1"; fail "no line matching /$2/ in $1"; }; }

long=$(printf 'x%.0s' $(seq 1 300))
bash -c 'exec -a "$0 $1" sleep 60' "$marker" "$long" &
pids+=($!)
runuser -u nobody -- bash -c 'exec -a "$0" sleep 60' "$marker-nobody" &
sleep 0.3
pids+=("$(pgrep -u nobody -f "^$marker-nobody 60\$")") || fail "nobody's process did not start"

"$PERISCOPE" list >"$tmp/list" 2>"$tmp/err" || { cat "$tmp/err"; fail "list exited $?"; }
expect "$tmp/list" '^Processes you may record: [0-9]+$'
expect "$tmp/list" '^ +PID +USER +COMMAND$'
expect "$tmp/list" "^ +${pids[0]} +root +$marker $long 60\$"
expect "$tmp/list" "^ +${pids[1]} +nobody +$marker-nobody 60\$"
expect "$tmp/list" '^Containers and Flatpak apps: [0-9]+$'
# (ASan's notice that it cannot follow the fibers' stack switches is the
# sanitizer build's, not periscope's)
grep -v "WARNING: ASan doesn't fully support makecontext/swapcontext" "$tmp/err" >"$tmp/err.own" || true
[ ! -s "$tmp/err.own" ] || fail "list wrote to stderr: $(cat "$tmp/err.own")"
echo "ok list: pid, user, whole command line in a pipe"

# on a terminal of 80 columns the long line is cut to fit
COLUMNS=80 script -qefc "stty cols 80; $PERISCOPE list" /dev/null | tr -d '\r' >"$tmp/tty"
line=$(grep -E "^ +${pids[0]} " "$tmp/tty") || { cat "$tmp/tty"; fail "our process is not listed on a terminal"; }
[ "$(printf '%s' "$line" | wc -m)" -le 80 ] || fail "a line is wider than the terminal: $line"
[[ "$line" == *"$marker xxx"*"…" ]] || fail "the long command line is not cut with …: $line"
echo "ok list on a terminal: lines cut to its width"

"$PERISCOPE" list --json >"$tmp/json" || fail "list --json exited $?"
jq -e --argjson p "${pids[0]}" --arg c "$marker $long 60" \
        'map(select(.kind == "process" and .pid == $p and .uid == 0 and .cmdline == $c)) | length == 1' "$tmp/json" >/dev/null ||
        fail "list --json lacks our process"
jq -e 'map(select(.kind == "process")) | length > 2' "$tmp/json" >/dev/null || fail "list --json lists too few processes"
echo "ok list --json"

runuser -u nobody -- env DBUS_SYSTEM_BUS_ADDRESS="$DBUS_SYSTEM_BUS_ADDRESS" XDG_STATE_HOME="$tmp/nobody-state" \
        PERISCOPED="$PERISCOPED" "$PERISCOPE" list --json >"$tmp/json" || fail "list as nobody exited $?"
jq -e --argjson p "${pids[1]}" 'map(select(.pid == $p)) | length == 1' "$tmp/json" >/dev/null || fail "nobody does not see its process"
jq -e 'map(select(.kind == "process" and .uid != 65534)) | length == 0' "$tmp/json" >/dev/null ||
        fail "nobody is offered processes of other users: $(jq -c 'map(select(.uid != 65534))' "$tmp/json")"
echo "ok list as another user: only their own processes"

rc=0; "$PERISCOPE" list extra 2>"$tmp/err" || rc=$?
[ $rc = 2 ] || fail "list with an argument exited $rc, expected 2"
expect "$tmp/err" "^periscope list: unexpected argument 'extra'"
echo "ok list: usage error exits 2"
