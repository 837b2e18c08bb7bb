#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A root periscoped started by hand (no systemd, full capabilities) keeps
# only the capabilities it uses: CapEff, CapPrm and CapBnd in
# /proc/PID/status are exactly the daemon's set (docs/security.md), with
# CAP_SYS_ADMIN, CAP_DAC_OVERRIDE, CAP_SYS_MODULE, CAP_NET_ADMIN… gone, and
# CAP_PERFMON too: its perf opener (a child) holds that alone (and
# CAP_SYS_ADMIN where perf_event_paranoid is above 2), with no new
# privileges and no fd but stderr and its socket; and the reduced daemon
# still records another user's process with kernel stacks and names its
# functions.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${DEMO:?}"
[ "$(id -u)" = 0 ] || fail "this test starts periscoped as root: run it as root"
command -v setpriv >/dev/null || fail "setpriv (util-linux) is needed"

capmask() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$2/status"; }
# The kept set: SYS_PTRACE 19, CHECKPOINT_RESTORE 40, DAC_READ_SEARCH 2,
# IPC_LOCK 14, SYSLOG 34, SETUID 7, SETGID 6, as far as this shell has them
# (no SETFCAP 31: no sandbox maps a uid onto root's); the opener's: PERFMON
# 38, and SYS_ADMIN 21 at perf_event_paranoid 3.
kept=$(( (1<<19) | (1<<40) | (1<<2) | (1<<14) | (1<<34) | (1<<7) | (1<<6) ))
opener_kept=$(( (1<<38) ))
[ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 2 ] && opener_kept=$(( opener_kept | (1<<21) ))
ours=$(( 16#$(capmask CapBnd $$) ))
want=$(printf '%016x' $(( kept & ours )))
opener_want=$(printf '%016x' $(( opener_kept & ours )))
# The perf opener: periscoped's one child while no recording runs.
opener_of() {
        local kids
        kids=$(cat /proc/"$1"/task/*/children 2>/dev/null | tr -s ' ' '\n' | grep -v '^$' || true)
        [ "$(echo "$kids" | wc -w)" = 1 ] || fail "periscoped $1 should have one child, its perf opener; has: '$kids'"
        echo "$kids"
}
[ $(( 16#$(capmask CapEff $$) & (1<<21) )) != 0 ] || fail "this shell has no CAP_SYS_ADMIN: nothing to drop, the test shows nothing"

private_bus_start
periscoped_start
for set in CapEff CapPrm CapBnd; do
        got=$(capmask $set "$PERISCOPED_PID")
        [ "$got" = "$want" ] || fail "periscoped's $set is $got, expected $want (only the capabilities it uses)"
done
got=$(( 16#$(capmask CapEff "$PERISCOPED_PID") ))
for cap in 1:DAC_OVERRIDE 12:NET_ADMIN 16:SYS_MODULE 21:SYS_ADMIN 0:CHOWN 3:FOWNER 8:SETPCAP 31:SETFCAP; do
        [ $(( got & (1 << ${cap%%:*}) )) = 0 ] || fail "periscoped kept CAP_${cap#*:}"
done
[ "$(capmask CapAmb "$PERISCOPED_PID")" = 0000000000000000 ] || fail "periscoped has ambient capabilities"
echo "ok: periscoped (pid $PERISCOPED_PID) runs with CapEff=CapPrm=CapBnd=$want (this shell: $(capmask CapEff $$))"
opener=$(opener_of "$PERISCOPED_PID")
for set in CapEff CapPrm CapBnd; do
        got=$(capmask $set "$opener")
        [ "$got" = "$opener_want" ] || fail "the perf opener's $set is $got, expected $opener_want"
done
[ "$(capmask CapInh "$opener")$(capmask CapAmb "$opener")" = 00000000000000000000000000000000 ] ||
        fail "the perf opener has inheritable or ambient capabilities"
[ "$(awk '$1 == "NoNewPrivs:" { print $2 }' /proc/"$opener"/status)" = 1 ] || fail "the perf opener may gain privileges"
fds=$(ls /proc/"$opener"/fd | sort -n | tr '\n' ' ')
[ "$fds" = "2 3 " ] || fail "the perf opener holds fds '$fds', expected stderr and its socket (2 3)"
echo "ok: its perf opener (pid $opener) has CapEff=CapPrm=CapBnd=$opener_want, no new privileges, fds $fds"

# Still records: another user's process (ptrace rights), kernel stacks
# (perf and kallsyms rights), names from its mapped binary.
cp "$DEMO" "$TEST_TMP/demo" && chmod 755 "$TEST_TMP/demo"
setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$TEST_TMP/demo" -t 30000 & work=$!
private_bus_track $work
sleep 0.3
"$PERISCOPE" record --address "$BUS_ADDRESS" -p "$work" --duration 1.5 -o "$TEST_TMP/caps.syscap" 2>"$TEST_TMP/rec.err" ||
        { cat "$TEST_TMP/rec.err"; fail "recording with the reduced capabilities failed"; }
"$PERISCOPE" report --no-progress "$TEST_TMP/caps.syscap" >"$TEST_TMP/report" || fail "report failed"
head -20 "$TEST_TMP/report"
grep -q "^Samples: [1-9]" "$TEST_TMP/report" || fail "no samples"
grep -qE "inner_c|inner_e|middle_b" "$TEST_TMP/report" || fail "the workload's functions are not named"
"$PERISCOPE" report --no-progress --folded "$TEST_TMP/caps.syscap" >"$TEST_TMP/folded" || fail "report --folded failed"
grep -qE "\[kernel\]|_raw_spin|syscall|entry_SYSCALL|asm_sysvec|irqentry|do_" "$TEST_TMP/folded" || fail "no named kernel frames"
echo "ok: the reduced daemon recorded nobody's process with kernel stacks and named its functions"

# Started the way the unit starts it (its CapabilityBoundingSet=, no
# CAP_SETPCAP): nothing to drop, and it must still start.
kill "$PERISCOPED_PID"; wait "$PERISCOPED_PID" 2>/dev/null || true
setpriv --bounding-set=-all,+perfmon,+sys_admin,+sys_ptrace,+checkpoint_restore,+dac_read_search,+ipc_lock,+syslog,+setuid,+setgid \
        --inh-caps=-all -- "$PERISCOPED" --address="$BUS_ADDRESS" 2>>"$TEST_TMP/periscoped.log" &
unit_like=$!
private_bus_track $unit_like
for _ in $(seq 100); do
        busctl --address="$BUS_ADDRESS" status org.periscope.Profiler1 >/dev/null 2>&1 && break
        kill -0 $unit_like 2>/dev/null || { cat "$TEST_TMP/periscoped.log"; fail "periscoped with the unit's bounding set exited at start"; }
        sleep 0.05
done
unit_set=$(printf '%016x' $(( ((1<<19) | (1<<40) | (1<<2) | (1<<14) | (1<<34) | (1<<7) | (1<<6)) & ours )))
[ "$(capmask CapEff $unit_like)" = "$unit_set" ] || fail "with the unit's bounding set, CapEff is $(capmask CapEff $unit_like), expected $unit_set"
opener=$(opener_of $unit_like)
[ "$(capmask CapEff "$opener")" = "$opener_want" ] ||
        fail "with the unit's bounding set, the perf opener's CapEff is $(capmask CapEff "$opener"), expected $opener_want"
echo "ok: with the unit's bounding set (no CAP_SETPCAP) periscoped starts with CapEff=$unit_set, its perf opener with $opener_want"
echo PASS
