#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# run.sh of the systemd boot (run by periscope-vm-run.service after
# multi-user.target): Periscope installed on the running system as the
# README says, then root and an unprivileged user record the
# no-frame-pointer workload through the D-Bus-activated service.
. "$1/guest-lib.sh"
user=periscope-user

add_user() {
        useradd --create-home --shell /bin/sh "$user" &&
                install -o "$user" -g "$user" -m 0755 /usr/local/bin/deep-nofp "/home/$user/deep-nofp"
}

facts
step install install_periscope || exit 1
step activate activate_periscope || exit 1
step useradd add_user || exit 1
if step record-root periscope record -o /root/deep.syscap -- /usr/local/bin/deep-nofp 2000; then
        step report-root report root /root/deep.syscap
fi
if step record-user runuser -u "$user" -- env HOME="/home/$user" \
        periscope record -o "/home/$user/deep.syscap" -- "/home/$user/deep-nofp" 2000; then
        step report-user report user "/home/$user/deep.syscap"
fi
systemctl show -p ActiveState -p Result -p ExecStart periscoped.service >"$out/periscoped.show" 2>&1
journalctl --no-pager -b -u periscoped.service >"$out/periscoped.journal" 2>&1
journalctl --no-pager -b -q -p warning -u periscoped.service >"$out/periscoped.warnings" 2>&1
journalctl --no-pager -b -u dbus.service >"$out/dbus.journal" 2>&1
exit 0
