#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `periscope record` with no service on any bus: it spawns a private
# periscoped over a socketpair and still records complete stacks.
set -euo pipefail
. "$(dirname "$0")/../lib/test-lib.sh" # fail, as_user, wait_for
# The system interpreter: a pyenv shim in PATH costs seconds per start.
PYTHON=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
: "${PERISCOPE:?}" "${PERISCOPED:?}" "${DEMO:?}" "${CAPTURE_JSON:?}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# No system bus here: the fallback must be taken.
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$tmp/no-such-bus
PERISCOPED="$PERISCOPED" "$PERISCOPE" record -o "$tmp/demo.syscap" -- "$DEMO" -t 1000 2>"$tmp/err" || { cat "$tmp/err"; fail "record exited $?"; }
cat "$tmp/err"
! grep -qE "Sanitizer|runtime error:" "$tmp/err" || fail "the private periscoped reported memory errors"
grep -q "capture written to $tmp/demo.syscap" "$tmp/err" || fail "no summary naming the capture"
# The reason comes from the Finished signal over the peer-to-peer connection.
grep -q "(ended: command-exited)" "$tmp/err" || fail "the summary does not say why the recording ended"
"$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$tmp/demo.syscap" callchains "$DEMO"
