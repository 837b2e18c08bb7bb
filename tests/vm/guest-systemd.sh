#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# run.sh of the systemd boot (run by periscope-vm-run.service after
# multi-user.target): Periscope's package installed on the running system
# with apt, as the README says, then, through the D-Bus-activated service: root and an
# unprivileged user record the no-frame-pointer workload (the user first
# refused at paranoid 3 without a polkit rule, then let in by one); root records the
# whole system while root's and the user's programs run; the user and root
# record workload-waits with --off-cpu; root records jitdump-writer's
# jitdump, the user its perf map; root records collector-client (the
# control fd); last
# the user's private periscoped, which the kernel refuses. Captures land
# in out/ for the host to check (test-vm-debian-kernel.sh).
. "$1/guest-lib.sh"
user=periscope-user
home=/home/$user
w=/usr/local/bin

add_user() {
        useradd --create-home --shell /bin/sh "$user" &&
                install -o "$user" -g "$user" -m 0755 "$w/deep-nofp" "$w/waits" "$home/"
}
as_user() { runuser -u "$user" -- env HOME="$home" "$@"; }
# keep CAPTURE NAME: the capture where the host reads it
keep() { cp "$1" "$out/$2.syscap"; }

# --system while root's demo workload and dd and the user's program run
record_system() {
        local pids=() st=0
        "$w/demo-workload" -t 20000 & pids+=($!)
        echo "demo $!" >"$out/system.pids"
        dd if=/dev/zero of=/dev/null bs=1 count=1000000000 2>/dev/null & pids+=($!)
        echo "dd $!" >>"$out/system.pids"
        setpriv --reuid="$user" --regid="$user" --init-groups "$home/deep-nofp" 20000 & pids+=($!)
        echo "user $!" >>"$out/system.pids"
        sleep 0.5
        periscope record --system --duration 1.5 -o /root/system.syscap || st=$?
        kill "${pids[@]}" 2>/dev/null
        wait 2>/dev/null
        return $st
}
# the client's stdout (what it sent) apart from periscope's messages
record_control() {
        periscope record -o /root/threads.syscap -- "$w/collector-client" threads 4 5000 >"$out/threads.out"
}

facts
step install install_periscope || exit 1
step activate installed_periscope || exit 1
step useradd add_user || exit 1
# At paranoid 3 recording one's own processes is polkit's
# org.periscope.profile-own, granted to active local sessions only; this
# user has no session (a service runs it, as ssh or cron would): refused,
# told which action and how to allow it. Then the administrator's rule.
step refused-own as_user periscope record -o "$home/own.syscap" -- "$home/deep-nofp" 200
step grant-own grant_profile_own
if step record-root periscope record -o /root/deep.syscap -- "$w/deep-nofp" 2000; then
        step report-root report root /root/deep.syscap
fi
if step record-user as_user periscope record -o "$home/deep.syscap" -- "$home/deep-nofp" 2000; then
        step report-user report user "$home/deep.syscap" && keep "$home/deep.syscap" user
fi
step record-system record_system && keep /root/system.syscap system
# (the workload's `phase` lines go to the step's log, beside periscope's)
step offcpu-user as_user periscope record --off-cpu -o "$home/waits.syscap" -- "$home/waits" 1 &&
        keep "$home/waits.syscap" offcpu-user
step offcpu-root periscope record --off-cpu -o /root/waits.syscap -- "$w/waits" 1 &&
        keep /root/waits.syscap offcpu-root
mkdir -p /var/tmp/dumps /var/tmp/perf-map
step jitdump periscope record -o /root/jitdump.syscap -- "$w/jitdump-writer" /var/tmp/dumps 700 &&
        keep /root/jitdump.syscap jitdump
# (the perf map's JIT as the user: /tmp/perf-PID.map is read with their rights)
step perf-map as_user periscope record -o "$home/perf-map.syscap" -- "$w/jitdump-writer" /var/tmp/perf-map 300 file &&
        keep "$home/perf-map.syscap" perf-map
rm -f /tmp/perf-*.map
step control record_control && keep /root/threads.syscap threads
# The kernel refuses a private periscoped of the user's (no CAP_SYS_ADMIN):
# the step fails, its log has what the user was told.
step refused as_user periscope record --private -o "$home/refused.syscap" -- "$home/deep-nofp" 200
[ ! -e "$home/refused.syscap" ] || echo "refused capture exists" >"$out/refused.capture"
systemctl show -p ActiveState -p Result -p ExecStart periscoped.service >"$out/periscoped.show" 2>&1
journalctl --no-pager -b -u periscoped.service >"$out/periscoped.journal" 2>&1
journalctl --no-pager -b -q -p warning -u periscoped.service >"$out/periscoped.warnings" 2>&1
journalctl --no-pager -b -u dbus.service >"$out/dbus.journal" 2>&1
exit 0
