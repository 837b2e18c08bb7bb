#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# systemd/periscoped.service passes `systemd-analyze verify` (with ExecStart
# pointing at the built daemon) and its `systemd-analyze security` exposure
# is printed and at most 3.5 (service-installed runs it under systemd).
# Issue 10's bar was 3.4; CAP_SETUID and CAP_SETGID, which the child that
# opens files with a caller's rights needs (docs/security.md), cost 0.1,
# which RestrictNamespaces= without cgroup namespaces gave back.
# CAP_SYS_ADMIN in the bounding set, which the perf opener needs on
# Debian's kernels (perf_event_paranoid 3), costs 0.2, of which dropping
# CAP_SETFCAP (no sandbox maps a uid onto root's) gives 0.1 back: 3.5
# (docs/security.md).
# UNIT_BUS_NAME names the unit's bus name when it is another unit made from
# the same template (periscoped-sysprof.service: org.gnome.Sysprof3).
set -euo pipefail
. "$(dirname "$0")/../lib/test-lib.sh" # fail, as_user, wait_for
: "${PERISCOPED_UNIT:?}" "${PERISCOPED:?}"
command -v systemd-analyze >/dev/null || fail "systemd-analyze missing: apt-get install -y systemd"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
sed "s|^ExecStart=[^ ]*|ExecStart=$PERISCOPED|" "$PERISCOPED_UNIT" >"$tmp/periscoped.service"
grep -q "^Type=dbus" "$tmp/periscoped.service" || fail "the unit is not Type=dbus"
grep -qx "BusName=${UNIT_BUS_NAME:-org.periscope.Profiler1}" "$tmp/periscoped.service" || fail "the unit has no BusName"
grep -q "^ExecStart=$PERISCOPED --system${UNIT_BUS_NAME:+ --sysprofd}\$" "$tmp/periscoped.service" || fail "ExecStart does not run periscoped as expected"
out=$(systemd-analyze verify --man=no "$tmp/periscoped.service" 2>&1) || { echo "$out"; fail "systemd-analyze verify failed"; }
# verify also reports problems without failing: any line about our unit is one.
if echo "$out" | grep -i "periscoped.service"; then
        fail "systemd-analyze verify complained about the unit"
fi
echo "ok: systemd-analyze verify"
systemd-analyze security --offline=yes --no-pager "$tmp/periscoped.service" | tail -n 25
exposure=$(systemd-analyze security --offline=yes --no-pager "$tmp/periscoped.service" 2>&1 | grep -o "Overall exposure level for periscoped.service: [0-9.]*" || true)
[ -n "$exposure" ] || fail "no exposure level from systemd-analyze security"
echo "ok: $exposure"
level=${exposure##* }
awk -v e="$level" 'BEGIN { exit !(e <= 3.5) }' || fail "exposure $level is above 3.5"
