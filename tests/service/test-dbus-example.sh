#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs the example of docs/dbus-api.md (the block after
# "<!-- test: dbus-api-example -->") as written, against periscoped on a
# private bus, and checks the capture it leaves.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${DEMO:?}" "${CAPTURE_JSON:?}" "${DBUS_API_DOC:?}"
private_bus_start
periscoped_start
"$DEMO" -t 20000 & PID=$!
private_bus_track $PID
export PID
mkdir -p "$TEST_TMP/bin"
ln -s "$PERISCOPE" "$TEST_TMP/bin/periscope"
awk '/<!-- test: dbus-api-example -->/ {found=1; next} found && /^```sh/ {inblock=1; next} inblock && /^```/ {exit} inblock {print}' \
        "$DBUS_API_DOC" >"$TEST_TMP/example.sh"
[ -s "$TEST_TMP/example.sh" ] || fail "no example block in $DBUS_API_DOC"
echo "--- running:"; cat "$TEST_TMP/example.sh"; echo "---"
(cd "$TEST_TMP" && PATH="$TEST_TMP/bin:$PATH" bash -euo pipefail example.sh) || fail "the documented example failed"
"$PYTHON" "$(dirname "$0")/check-capture.py" "$CAPTURE_JSON" "$TEST_TMP/app.syscap" readable --min-samples 5 --reason stopped
