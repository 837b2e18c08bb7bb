#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Users for the service's authorization tests (tests/service/): an ordinary
# user "periscope-user" that polkit does not authorize, and "periscope-admin"
# that a polkit rule authorizes for org.periscope.profile-system. Installs the
# polkit action so polkitd knows it. Idempotent.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
for u in periscope-user periscope-admin; do
        id -u "$u" >/dev/null 2>&1 || useradd --system --create-home --shell /bin/bash "$u"
done
install -D -m 0644 "$top/dbus/polkit/org.periscope.policy" /usr/share/polkit-1/actions/org.periscope.policy
rules=/etc/polkit-1/rules.d
mkdir -p "$rules"
want='// Installed by Periscope scripts/setup.d/30-periscope-users.sh (tests).
polkit.addRule(function(action, subject) {
    if (action.id == "org.periscope.profile-system" && subject.user == "periscope-admin") {
        return polkit.Result.YES;
    }
});'
rule=$rules/50-periscope-tests.rules
if [ "$(cat "$rule" 2>/dev/null)" != "$want" ]; then
        printf '%s\n' "$want" >"$rule.tmp"
        chmod 0644 "$rule.tmp"
        mv "$rule.tmp" "$rule"
fi
