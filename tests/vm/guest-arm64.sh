#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# run.sh of the arm64 boot (systemd as PID 1, run by
# periscope-vm-run.service after multi-user.target): Periscope installed on
# the running system as the README says, then
#  - root records every workload with a private periscoped (priv-*), and
#    python3's allocations with --memory (the preloaded collector);
#  - a capture the host recorded on x86_64 is read: info and report;
#  - root and an unprivileged user record through the D-Bus-activated
#    service (svc-root-*, svc-user-*).
# Collects only: tests/vm/check-arm64.py judges out/*.folded on the host.
. "$1/guest-lib.sh"
user=periscope-user
ms=${WORKLOAD_MS:-1500}
sec=$(awk -v m="$ms" 'BEGIN { printf "%.3f", m / 1000 }')

install_arm64() {
        tar -C "$share/stage" -cf - . | tar -C / -xf - --keep-directory-symlink &&
                cp -a "$share/bin/." /usr/local/bin/
}
add_user() {
        useradd --create-home --shell /bin/sh "$user" &&
                install -o "$user" -g "$user" -m 0755 /usr/local/bin/deep-nofp /usr/local/bin/deep-fp "/home/$user/"
}
# A program spending its time in system calls: kernel stacks.
kernel_load() {
        timeout "$sec" dd if=/dev/zero of=/dev/null bs=4k 2>/dev/null
        return 0
}
export -f kernel_load
export sec

# rec NAME DIR [RECORD-OPTION…] -- COMMAND…: records into DIR/NAME.syscap,
# then out/NAME.folded and out/NAME.report
rec() {
        local name=$1 dir=$2
        shift 2
        step "record-$name" periscope record -o "$dir/$name.syscap" "$@" &&
                step "report-$name" report "$name" "$dir/$name.syscap"
}

facts
uname -m >"$out/machine"
(cd /usr/lib/aarch64-linux-gnu && sha256sum ld-linux-aarch64.so.1 libc.so.6) >"$out/libs.sha256"
step install install_arm64 || exit 1
step activate activate_periscope || exit 1
step useradd add_user || exit 1
w=/usr/local/bin

# 1. a private periscoped as root: every workload
export PERISCOPED_LOG=$out/periscoped-private.log
rec priv-nofp /root --private -- "$w/deep-nofp" "$ms"
rec priv-fp /root --private --unwind fp -- "$w/deep-fp" "$ms"
rec priv-threads /root --private -- "$w/threads" $((ms * 2))
rec priv-go /root --private -- "$w/go-chain" "$sec"
rec priv-rust /root --private -- "$w/rust-chain" "$ms"
rec priv-python /root --private -- /usr/bin/python3 "$w/py-fib.py" "$sec"
# the collector: every allocation of python3 through the preloaded
# libperiscope-memory.so (the control fd protocol on arm64)
step record-priv-memory periscope record --private --memory -o /root/memory.syscap -- \
        /usr/bin/python3 -c 'x = [bytes(1000) for _ in range(20000)]' &&
        step report-priv-memory sh -c "periscope report --no-progress --memory /root/memory.syscap >'$out/priv-memory.report'"
unset PERISCOPED_LOG
# a capture recorded on x86_64 (the host's) opens, says so and reports here
step info-x86 sh -c "periscope info '$share/x86.syscap' >'$out/x86.info'" &&
        step report-x86 report x86-capture "$share/x86.syscap"

# 2. the installed service, as root and as an unprivileged user
rec svc-root-nofp /root -- "$w/deep-nofp" "$ms"
rec svc-root-fp /root --unwind fp -- "$w/deep-fp" "$ms"
rec svc-root-kernel /root -- bash -c kernel_load
home=/home/$user
as_user() { runuser -u "$user" -- env HOME="$home" "$@"; }
# at perf_event_paranoid 3 a user outside an active session needs polkit's
# org.periscope.profile-own (docs/security.md): granted as an admin would
step grant-own grant_profile_own
rec_user() {
        local name=$1
        shift
        step "record-$name" runuser -u "$user" -- env HOME="$home" periscope record -o "$home/$name.syscap" "$@" &&
                step "report-$name" report "$name" "$home/$name.syscap"
}
rec_user svc-user-nofp -- "$home/deep-nofp" "$ms"
rec_user svc-user-fp --unwind fp -- "$home/deep-fp" "$ms"

systemctl show -p ActiveState -p Result -p ExecStart periscoped.service >"$out/periscoped.show" 2>&1
journalctl --no-pager -b -u periscoped.service >"$out/periscoped.journal" 2>&1
journalctl --no-pager -b -q -p warning -u periscoped.service >"$out/periscoped.warnings" 2>&1
journalctl --no-pager -b -u dbus.service >"$out/dbus.journal" 2>&1
exit 0
