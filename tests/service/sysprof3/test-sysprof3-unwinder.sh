#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# service-sysprof3-unwinder: org.gnome.Sysprof3.Unwinder.Unwind called as
# Sysprof 48 calls it (perf fds from PerfEventOpen, an eventfd, a pipe for
# the capture) unwinds a program built without frame pointers to whole
# DWARF stacks (leaf_work up to main), and refuses perf events the service
# did not open.
. "$(dirname "$0")/lib.sh"
: "${DEEP:?}"
sysprof3_start
"$SYSPROF3_CLIENT" unwind --min-full 90 leaf_work,chain_d,chain_c,chain_b,chain_a,main -- "$DEEP" 1000 \
        >"$OUT/unwind.out" 2>&1 || { cat "$OUT/unwind.out"; tail -20 "$PRIVATE_BUS_DIR/periscoped.log"; fail "the unwinder check failed"; }
cat "$OUT/unwind.out"
grep -q "unwind session 1: " "$PRIVATE_BUS_DIR/periscoped.log" || fail "periscoped did not log the session's end"
"$SYSPROF3_CLIENT" foreign-fd >"$OUT/foreign.out" 2>&1 || { cat "$OUT/foreign.out"; fail "Unwind took a foreign perf event"; }
cat "$OUT/foreign.out"
grep "sysprof3:" "$PRIVATE_BUS_DIR/periscoped.log" | grep -v PerfEventOpen
sysprof3_check_log
echo "ok: whole DWARF stacks through org.gnome.Sysprof3.Unwinder"
