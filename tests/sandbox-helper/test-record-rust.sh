#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# End to end through the real periscoped: a Rust program built with Debian's
# rustc in both symbol manglings (the default, legacy, and v0) is recorded;
# the report names workload::deep::chain_a → chain_b → chain_c demangled
# (no `::h<hash>` suffix, no `_R`/`_ZN` prefix, no `$u7b$` escapes), with
# source lines and inline frames from DWARF like C's.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${SRCDIR:?}"
RUSTC=${RUSTC:-/usr/bin/rustc}
[ -x "$RUSTC" ] || fail "Debian's rustc is missing: apt-get install -y rustc"
private_bus_start
periscoped_start

for mangling in legacy v0; do
        w=$TEST_TMP/workload-$mangling
        flags=(-g -O -C force-frame-pointers=yes --crate-name workload)
        # rustc 1.63 takes only v0 explicitly; legacy is its default
        [ $mangling = v0 ] && flags+=(-C symbol-mangling-version=v0)
        "$RUSTC" "${flags[@]}" -o "$w" "$SRCDIR/workload-rust.rs" 2>"$TEST_TMP/rustc.err" ||
                { cat "$TEST_TMP/rustc.err"; fail "rustc failed ($mangling)"; }
        nm "$w" >"$TEST_TMP/nm.txt" || fail "nm failed"
        if [ $mangling = v0 ]; then
                grep -q " _RNvNtCs.*chain_a$" "$TEST_TMP/nm.txt" || fail "rustc did not use v0 mangling"
        else
                grep -q " _ZN8workload4deep7chain_a17h[0-9a-f]\{16\}E$" "$TEST_TMP/nm.txt" || fail "rustc did not use legacy mangling"
        fi
        cap=$TEST_TMP/$mangling.syscap
        "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$cap" -- "$w" 1500 >"$TEST_TMP/record.out" 2>&1 ||
                { cat "$TEST_TMP/record.out"; fail "record failed ($mangling)"; }
        "$PERISCOPE" report --no-progress --folded "$cap" >"$TEST_TMP/$mangling.folded" || fail "report failed"
        "$PERISCOPE" report --no-progress --folded --lines "$cap" >"$TEST_TMP/$mangling.lines" || fail "report --lines failed"
        "$PYTHON" - "$mangling" "$TEST_TMP/$mangling.folded" "$TEST_TMP/$mangling.lines" <<'PY' ||
import re, sys
mangling, folded, lines = sys.argv[1:]
stacks = []
for l in open(folded):
    s, _, n = l.rstrip("\n").rpartition(" ")
    stacks.append((s.split(";"), int(n)))
total = sum(n for _, n in stacks)
frames = {f for s, _ in stacks for f in s}
mangled = sorted(f for f in frames if re.search(r"::h[0-9a-f]{16}\b|^_R|^_ZN|\$u[0-9a-f]+\$|\$LT\$", f))
if mangled:
    sys.exit("FAIL %s: names left mangled: %s" % (mangling, mangled[:5]))
chain = 0
for s, n in stacks:
    j = ";".join(s)
    if re.search(r"workload::deep::chain_a;workload::deep::chain_b;workload::deep::chain_c(;|$)", j):
        chain += n
if total < 20 or chain / total < 0.5:
    print(open(folded).read()[:3000])
    sys.exit("FAIL %s: %d of %d samples run chain_a -> chain_b -> chain_c (want half)" % (mangling, chain, total))
if not any("std::rt::lang_start" in f for f in frames):
    sys.exit("FAIL %s: std::rt::lang_start (an escaped legacy name in std) not named" % mangling)
src = 0
for l in open(lines):
    s, _, n = l.rstrip("\n").rpartition(" ")
    if re.search(r"(^|;)workload::deep::chain_c at workload-rust\.rs:\d+(;|$)", s):
        src += int(n)
if src / total < 0.5:
    sys.exit("FAIL %s: chain_c has no source lines (%d of %d samples)" % (mangling, src, total))
inl = sorted({f for f in frames if f.endswith("(inlined)")})
if not inl:
    sys.exit("FAIL %s: no inline frame at all" % mangling)
print("ok %s: %d/%d samples in workload::deep::chain_a -> chain_b -> chain_c, %d with chain_c's source line, "
      "inline frames such as %s" % (mangling, chain, total, src, inl[:2]))
PY
                fail "names of the $mangling build"
done
