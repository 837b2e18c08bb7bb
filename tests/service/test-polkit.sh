#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Authorization through a real polkitd on a private system bus: the rule
# from scripts/setup.d/30-periscope-users.sh lets periscope-admin record the
# whole system and root's processes; periscope-user is denied by polkit
# (no agent can authenticate it) and told so. periscope record finds the
# service on the (private) system bus by itself.
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/tests/lib/private-bus.sh"
. "$(dirname "$0")/../lib/test-lib.sh" # fail, as_user, wait_for
set +e # this test checks exit statuses itself
PYTHON=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
: "${PERISCOPED:?}" "${PERISCOPE:?}" "${CAPTURE_JSON:?}"
trap 'private_bus_stop' EXIT
for u in periscope-user periscope-admin; do
        id -u $u >/dev/null 2>&1 || fail "user $u is missing: run scripts/setup.d/30-periscope-users.sh as root"
done
[ -f /usr/share/polkit-1/actions/org.periscope.policy ] ||
        fail "polkit action org.periscope.profile-system not installed: run scripts/setup.d/30-periscope-users.sh"
private_bus_start || fail "no private bus"
private_polkit_start || fail "no polkitd"
private_periscoped_start || fail "periscoped did not start"
dir=$PRIVATE_BUS_DIR/out
mkdir "$dir" && chmod 777 "$dir"
sleep 60 & root_proc=$!
private_bus_track $root_proc

runuser -u periscope-admin -- "$PERISCOPE" record --system --duration 1 -o "$dir/admin.syscap" 2>"$dir/admin.err" ||
        { cat "$dir/admin.err" "$PRIVATE_BUS_DIR/polkitd.log"; fail "periscope-admin could not record the system"; }
cat "$dir/admin.err"
"$PYTHON" "$src/tests/service/check-capture.py" "$CAPTURE_JSON" "$dir/admin.syscap" readable --min-samples 5 --reason duration
runuser -u periscope-admin -- "$PERISCOPE" record -p $root_proc --duration 0.5 -o "$dir/admin2.syscap" 2>"$dir/admin2.err" ||
        { cat "$dir/admin2.err"; fail "periscope-admin could not record root's process"; }
echo "ok: periscope-admin (authorized by polkit) recorded the system and root's process"

if runuser -u periscope-user -- "$PERISCOPE" record --system --duration 1 -o "$dir/user.syscap" 2>"$dir/user.err"; then
        fail "periscope-user recorded the whole system"
fi
cat "$dir/user.err"
grep -q "polkit denied action org.periscope.profile-system" "$dir/user.err" || fail "no clear polkit denial for periscope-user"
echo "ok: periscope-user denied by polkit"
! grep -qE "Sanitizer|runtime error:" "$PRIVATE_BUS_DIR/periscoped.log" || { cat "$PRIVATE_BUS_DIR/periscoped.log"; fail "periscoped reported memory errors"; }
