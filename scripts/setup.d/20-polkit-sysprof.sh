#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Lets root use Sysprof's sysprofd (org.gnome.sysprof3.*) without an
# interactive agent, for the interop test that records with sysprof-cli on a
# private system bus (tests/capture/test-sysprof-cli.sh). Idempotent.
set -euo pipefail
rules=/etc/polkit-1/rules.d
rule=$rules/50-periscope-sysprof-root.rules
mkdir -p "$rules"
want='// Installed by Periscope scripts/setup.d/20-polkit-sysprof.sh: root may use sysprofd.
polkit.addRule(function(action, subject) {
    if (action.id.indexOf("org.gnome.sysprof") == 0 && subject.user == "root") {
        return polkit.Result.YES;
    }
});'
if [ "$(cat "$rule" 2>/dev/null)" != "$want" ]; then
        printf '%s\n' "$want" >"$rule.tmp"
        chmod 0644 "$rule.tmp"
        mv "$rule.tmp" "$rule"
fi
