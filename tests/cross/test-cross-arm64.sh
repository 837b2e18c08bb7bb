#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Periscope cross-built for aarch64 as docs/arm64.md says (the cross file,
# the cached Debian 12 arm64 root, scripts/cross-build-arm64.sh) with
# --prefix=/usr, installed with `meson install --destdir`: the daemon, the
# CLI, the helpers and the collector are all there and all aarch64 ELF,
# and the cross tree's own unit tests pass under qemu-aarch64-static
# (meson's exe_wrapper from the cross file).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/test-lib.sh"
. "$here/../vm/arm64-lib.sh"
: "${MESON_SOURCE_ROOT:?}" "${MESON_BUILD_ROOT:?}"
[ "$(id -u)" = 0 ] || fail "needs root (debootstrap builds the arm64 root)"
test_tmpdir
start=$SECONDS

arm64_usr_stage "$MESON_BUILD_ROOT" "$MESON_SOURCE_ROOT" "$TEST_TMP/stage" "$TEST_TMP"
echo "ok: cross-built and installed in $((SECONDS - start)) s (root $ARM64_SYSROOT)"

for f in usr/bin/periscope usr/libexec/periscoped usr/libexec/periscope-helper \
         usr/libexec/periscope-debuginfod-fetch; do
        [ -x "$TEST_TMP/stage/$f" ] || { find "$TEST_TMP/stage" -type f; fail "the install has no /$f"; }
done
n=0
while IFS= read -r f; do
        [ "$(head -c4 "$f" | tail -c3)" = ELF ] || continue
        machine=$(readelf -h "$f" | sed -n 's/^ *Machine: *//p')
        [ "$machine" = AArch64 ] || fail "${f#"$TEST_TMP/stage"} is built for '$machine', not AArch64"
        n=$((n + 1))
done < <(find "$TEST_TMP/stage" -type f)
find "$TEST_TMP/stage" -name 'libperiscope-*.so' | grep >/dev/null . || fail "no collector library in the install"
[ "$n" -ge 5 ] || fail "only $n ELF files installed"
echo "ok: $n installed ELF files, all AArch64"

# unit tests of the cross tree, under qemu-user through meson's exe_wrapper
# (not those that start the sandboxed helper: qemu-user cannot run the
# host's x86-64 bwrap from an aarch64 process)
meson test -C "$ARM64_BUILD" --no-rebuild --print-errorlogs basic-parse-util capture-roundtrip \
        >"$TEST_TMP/meson-test.log" 2>&1 || { cat "$TEST_TMP/meson-test.log"; fail "unit tests of the aarch64 tree failed under qemu-aarch64-static"; }
grep -E "^Ok: +2 *$" "$TEST_TMP/meson-test.log" >/dev/null || { cat "$TEST_TMP/meson-test.log"; fail "meson test ran not 2 tests of the aarch64 tree"; }
readelf -h "$ARM64_BUILD/tests/basic/test-parse-util" | grep >/dev/null 'Machine:.*AArch64' ||
        fail "the unit test that passed is not an aarch64 binary"
echo "ok: the aarch64 unit tests pass under qemu-aarch64-static ($((SECONDS - start)) s)"
