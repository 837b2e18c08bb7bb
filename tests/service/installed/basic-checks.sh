# SPDX-License-Identifier: LGPL-2.1-or-later
# basic-checks.sh: the installed unit itself and the plain path (sourced by
# test-installed.sh, after lib.sh and the tree's boot).
#   check_unit            systemd-analyze security: exposure at most 3.5
#   check_deep            root and $user record a program built without frame
#                         pointers: names, whole DWARF stacks (>= 95% reach main);
#                         D-Bus activated periscoped.service, which runs --system
#   check_kernel          root's recording of dd: kernel frames named
#   check_system          --system as root (test-record-system.sh's assertions,
#                         check-system-capture.py), and $user's program named in it
#   check_service_journal no helper or sandbox failure in the service's journal

max_exposure=3.5 # 3.4 before CAP_SYS_ADMIN, which the perf opener needs (docs/security.md)

check_unit() {
        in_ct systemd-analyze security --offline=yes --no-pager /usr/lib/systemd/system/periscoped.service \
                >"$tmp/security.txt" 2>&1 || true
        grep '✗' "$tmp/security.txt" || true
        local exposure
        exposure=$(grep -o 'Overall exposure level for periscoped.service: [0-9.]*' "$tmp/security.txt" | grep -o '[0-9.]*$') ||
                { cat "$tmp/security.txt"; fail "no exposure level from systemd-analyze security"; }
        echo "exposure of the installed unit: $exposure"
        awk -v e="$exposure" -v m="$max_exposure" 'BEGIN { exit !(e <= m) }' ||
                fail "the unit's exposure $exposure is above $max_exposure"
}

# check_deep_capture WHO CAPTURE: the deep chain named, >= 95% reach main
# (installed-tree.sh's check_deep_stacks, shared with tests/vm/)
check_deep_capture() {
        local who=$1 capture=$root$2
        "$PERISCOPE" report --no-progress --folded "$capture" >"$tmp/$who.folded" || fail "periscope report ($who) failed"
        "$PERISCOPE" report --no-progress "$capture" >"$tmp/$who.report" || fail "periscope report ($who) failed"
        check_deep_stacks "$who" "$tmp/$who.folded" "$tmp/$who.report"
}

check_deep() {
        ct_record root "$tmp/record.log" -o /root/deep.syscap -- /usr/local/bin/deep-nofp 2000
        check_deep_capture root /root/deep.syscap
        in_ct systemctl status --no-pager periscoped >"$tmp/status.txt" 2>&1 || true
        cat "$tmp/status.txt"
        grep -q "Active: active (running)" "$tmp/status.txt" || fail "periscoped.service is not running after a recording"
        # What the unit runs (the status's process list can be missing: "Failed to
        # dump process list ... Input/output error" inside the container).
        in_ct systemctl show -p ExecStart periscoped >"$tmp/exec.txt" 2>&1 || true
        grep -q "argv\[\]=/usr/libexec/periscoped --system " "$tmp/exec.txt" ||
                { cat "$tmp/exec.txt"; fail "periscoped.service does not run /usr/libexec/periscoped --system"; }
        in_ct journalctl --no-pager -b -u dbus.service >"$tmp/dbus.journal" 2>&1 || true
        grep -q "Activating via systemd: service name='org.periscope.Profiler1' unit='periscoped.service'" "$tmp/dbus.journal" ||
                { cat "$tmp/dbus.journal"; fail "dbus-daemon did not activate periscoped.service"; }
        echo "ok: D-Bus activated periscoped.service"
        # An unprivileged user (their own program, from their home, which the
        # unit sees read-only; no polkit needed).
        ct_record "$user" "$tmp/record.log" -o "/home/$user/deep.syscap" -- "/home/$user/deep-nofp" 2000
        check_deep_capture "$user" "/home/$user/deep.syscap"
}

check_kernel() {
        ct_record root "$tmp/record.log" -o /root/dd.syscap -- dd if=/dev/zero of=/dev/null bs=64k count=200000
        "$PERISCOPE" report --no-progress --folded "$root/root/dd.syscap" >"$tmp/dd.folded" || fail "periscope report (dd) failed"
        local kernel_named kernel_all
        kernel_named=$(tr ';' '\n' <"$tmp/dd.folded" | sed 's/ [0-9]*$//' | grep -c '^[A-Za-z_][A-Za-z0-9_.]* \[kernel\]$' || true)
        kernel_all=$(tr ';' '\n' <"$tmp/dd.folded" | sed 's/ [0-9]*$//' | grep -c '\[kernel\]' || true)
        echo "root: $kernel_named of $kernel_all kernel frames named"
        grep -q 'do_syscall_64 \[kernel\]' "$tmp/dd.folded" || { head -n 20 "$tmp/dd.folded"; fail "root's recording of dd has no named kernel frame do_syscall_64"; }
        [ "$kernel_named" -ge $((kernel_all * 95 / 100)) ] || fail "only $kernel_named of $kernel_all kernel frames are named"
}

check_system() {
        : "${CAPTURE_JSON:?}"
        # test-record-system.sh's workloads (the demo workload and dd, which
        # spends its time in the kernel) as root, and $user's program: the
        # service sees and names other users' processes (ProtectProc=invisible
        # leaves it every process it may ptrace).
        ct_bg root "$CT_WORK/demo.pid" /usr/local/bin/demo-workload -t 8000
        ct_bg root "$CT_WORK/dd.pid" dd if=/dev/zero of=/dev/null bs=1 count=100000000
        ct_bg "$user" "$CT_WORK/user-deep.pid" "/home/$user/deep-nofp" 4000
        trap 'ct_kill "$CT_WORK/demo.pid"; ct_kill "$CT_WORK/dd.pid"; ct_kill "$CT_WORK/user-deep.pid"' EXIT
        sleep 0.5
        ct_record root "$tmp/record.log" --system --duration 1.5 -o /root/system.syscap
        local cap=$root/root/system.syscap
        "$PYTHON" "$src/tests/service/check-capture.py" "$CAPTURE_JSON" "$cap" readable --min-samples 50 --reason duration ||
                fail "the system recording is not readable, or has too few samples"
        "$CAPTURE_JSON" "$cap" | "$PYTHON" "$src/tests/service/check-system-capture.py" \
                "$(cat "$root$CT_WORK/demo.pid")" "$(cat "$root$CT_WORK/dd.pid")" ||
                fail "the system recording lacks processes, the workloads or kernel stacks"
        "$PERISCOPE" report --no-progress --folded --comm deep-nofp "$cap" >"$tmp/system.folded" ||
                fail "periscope report --comm deep-nofp of the system recording failed"
        local f
        for f in main chain_a leaf_work; do
                grep -q "\(^\|;\)$f\(;\| \)" "$tmp/system.folded" || { head -n 5 "$tmp/system.folded"; fail "the system recording has no frame named $f in $user's program"; }
        done
        echo "ok: the system recording names $user's program ($(awk '{ n += $NF } END { print n }' "$tmp/system.folded") samples)"
}

# (systemd's own "Failed to configure loopback" for PrivateNetwork= is nspawn
# withholding CAP_NET_ADMIN from the container; the namespace is made all
# the same.)
check_service_journal() {
        in_ct journalctl --no-pager -b -u periscoped.service >"$tmp/periscoped.journal" 2>&1 || true
        grep -E 'periscoped\[[0-9]+\]|periscope-helper\[[0-9]+\]|bwrap' "$tmp/periscoped.journal" >"$tmp/periscoped.own" || true
        if grep -n -i "helper failed\|bwrap:\|exited with status\|not permitted" "$tmp/periscoped.own"; then
                fail "periscoped's journal reports helper failures (lines above)"
        fi
        local symbolized
        symbolized=$(grep -c "symbolized .* 0 helper failures" "$tmp/periscoped.own" || true)
        [ "$symbolized" -ge 4 ] || fail "periscoped logged $symbolized of at least 4 symbolizations with 0 helper failures"
        echo "ok: $symbolized symbolizations with 0 helper failures in the service's journal"
}
