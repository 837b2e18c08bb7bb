#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# End to end through the real periscoped: a program that generates code
# at run time and describes it in a jitdump file, in the layout perf's JIT
# interface documents (jitdump-writer.c: DEBUG_INFO, LOAD of jit_alpha,
# LOAD of jit_beta elsewhere, MOVE of jit_alpha to a new address after
# which its old page is unmapped, CLOSE). The program maps the dump file,
# so the recording pins it like any mapped file; the sandboxed helper
# reads it: both functions are named [jit] with their shares (alpha ran
# twice as long as beta, at two addresses), alpha's samples carry the
# source line its DEBUG_INFO gives, at the old and at the moved address.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
. "$(dirname "$0")/jit-checks.sh"
: "${PERISCOPE:?}" "${SRCDIR:?}" "${SYSPROF_NAMES:?}"
[ "$(uname -m)" = x86_64 ] || fail "jitdump-writer generates x86-64 code; this machine is $(uname -m)"
command -v cc >/dev/null || fail "cc missing: apt-get install -y gcc"
cc -O2 -Wall -o "$TEST_TMP/jitdump-writer" "$SRCDIR/jitdump-writer.c" || fail "cannot build jitdump-writer"
private_bus_start
periscoped_start

mkdir "$TEST_TMP/dumps"
cap=$TEST_TMP/jit.syscap
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$cap" -- "$TEST_TMP/jitdump-writer" "$TEST_TMP/dumps" 700 \
        >"$TEST_TMP/out" 2>"$TEST_TMP/err" || { cat "$TEST_TMP/err"; fail "recording failed"; }
grep -q "^done .*/jit-[0-9]*\.dump" "$TEST_TMP/out" || { cat "$TEST_TMP/out"; fail "jitdump-writer did not finish"; }
jitdump_check "$cap" "$TEST_TMP"
# The dump file is mapped executable (the JIT interface's marker) but is no
# ELF file: no unwind table, and nothing wrong to warn about (a warning in
# `journalctl -p warning -u periscoped` at every JIT's recording).
if grep "no unwind table for .*jit-[0-9]*\.dump" "$TEST_TMP/periscoped.log"; then
        fail "periscoped warned that the jitdump file (no ELF file) has no unwind table (above)"
fi
echo "ok: the jitdump's functions are named, before and after the move"
