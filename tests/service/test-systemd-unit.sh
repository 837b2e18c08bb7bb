#!/usr/bin/env bash
# systemd/periscoped.service passes `systemd-analyze verify` (with ExecStart
# pointing at the built daemon) and its `systemd-analyze security` exposure
# is printed and at most 3.4, issue 10's bar (service-installed runs it under
# systemd). CAP_SETUID and CAP_SETGID, which the child that opens files with
# a caller's rights needs (docs/security.md), cost 0.1; RestrictNamespaces=
# without cgroup namespaces gives it back.
# UNIT_BUS_NAME names the unit's bus name when it is another unit made from
# the same template (periscoped-sysprof.service: org.gnome.Sysprof3).
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
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
awk -v e="$level" 'BEGIN { exit !(e <= 3.4) }' || fail "exposure $level is above 3.4"
