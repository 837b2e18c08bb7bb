#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# service-sysprof3-idle: periscoped --sysprofd exits when idle, as sysprofd
# does (D-Bus activation starts it again), releasing org.gnome.Sysprof3
# first, but never while an Unwind session runs, and the timeout counts
# from the last call (Sysprof opens its events one call at a time): a
# session held open longer than the idle timeout, without any call,
# completes, and the daemon leaves after it.
. "$(dirname "$0")/lib.sh"
: "${DEEP:?}"
sysprof3_start --idle-timeout=10
start=$SECONDS
"$SYSPROF3_CLIENT" unwind --hold 15 --min-full 90 leaf_work,chain_d,chain_c,chain_b,chain_a,main -- "$DEEP" 500 \
        >"$OUT/unwind.out" 2>&1 || { cat "$OUT/unwind.out"; tail -5 "$PRIVATE_BUS_DIR/periscoped.log"; fail "the session did not complete"; }
grep "^ok:" "$OUT/unwind.out"
took=$((SECONDS - start))
[ $took -ge 15 ] || fail "the session took only ${took}s, not longer than the idle timeout"
kill -0 $PERISCOPED_PID 2>/dev/null || fail "periscoped exited during or right after a ${took}s session"
echo "ok: a ${took}s session outlived the 10s idle timeout"
for _ in $(seq 250); do
        kill -0 $PERISCOPED_PID 2>/dev/null || break
        sleep 0.1
done
kill -0 $PERISCOPED_PID 2>/dev/null && fail "periscoped did not exit within 25s of being idle"
private_bus_has_name org.gnome.Sysprof3 && fail "org.gnome.Sysprof3 is still owned after the exit"
grep -q "idle for 10 s, exiting" "$PRIVATE_BUS_DIR/periscoped.log" || fail "periscoped did not say why it exited"
sysprof3_check_log
echo "ok: idle periscoped --sysprofd released org.gnome.Sysprof3 and exited"
