#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `periscope --version` and `periscoped --version`: the project's version,
# then one feature line ("+NAME" built in, "-NAME" not), the same for both,
# and each feature as this build really is: the machine the binaries are
# for, the libraries they link (readelf's NEEDED), the meson options the
# build directory was configured with. A feature this test does not know
# fails it, so a new one comes with its check.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/test-lib.sh"
: "${PERISCOPE:?}" "${PERISCOPED:?}" "${VERSION:?}" "${BUILD_ROOT:?}" "${FETCHER:?}" "${MEMORY_LIB:?}"

cli=$("$PERISCOPE" --version) || fail "periscope --version failed"
daemon=$("$PERISCOPED" --version) || fail "periscoped --version failed"
[ "$(sed -n 1p <<<"$cli")" = "periscope $VERSION" ] || fail "periscope --version: '$cli'"
[ "$(sed -n 1p <<<"$daemon")" = "periscoped $VERSION" ] || fail "periscoped --version: '$daemon'"
[ "$(wc -l <<<"$cli")" = 2 ] && [ "$(wc -l <<<"$daemon")" = 2 ] || fail "not two lines: '$cli' / '$daemon'"
features=$(sed -n 2p <<<"$cli")
[ "$features" = "$(sed -n 2p <<<"$daemon")" ] || fail "the feature lines differ: '$features' / '$(sed -n 2p <<<"$daemon")'"
grep >/dev/null -xE '([+-][A-Z0-9_]+)( [+-][A-Z0-9_]+)*' <<<"$features" || fail "feature line '$features'"
echo "ok: both print $VERSION and '$features'"

needs() { # FILE LIB: FILE is linked against LIB
        readelf -d "$1" | grep >/dev/null -E "\(NEEDED\) +Shared library: \[$2\.so"
}
machine=$(readelf -h "$PERISCOPED" | sed -n -E 's/^ *Machine: +//p')
option() { # NAME: the build directory's value of meson option NAME
        python3 -c 'import json, sys
print(str(next(o["value"] for o in json.load(open(sys.argv[1])) if o["name"] == sys.argv[2])).lower())' \
                "$BUILD_ROOT/meson-info/intro-buildoptions.json" "$1"
}
n=0
for f in $features; do
        name=${f#?}
        case $name in
        X86_64_UNWIND) [[ $machine == *X86-64 ]] && want=+ || want=- ;;
        ARM64_UNWIND) [[ $machine == AArch64 ]] && want=+ || want=- ;;
        DEBUGINFOD) needs "$FETCHER" libdebuginfod && want=+ || want=- ;;
        SECCOMP) needs "$PERISCOPED" libseccomp && want=+ || want=- ;;
        LIBCAP) needs "$PERISCOPED" libcap && want=+ || want=- ;;
        LIBUNWIND) needs "$MEMORY_LIB" libunwind && want=+ || want=- ;;
        SYSPROFD_DROP_IN) [ "$(option sysprofd_drop_in)" = true ] && want=+ || want=- ;;
        *) fail "feature $name: this test does not know how to check it" ;;
        esac
        [ "${f:0:1}" = "$want" ] || fail "--version says $f, the build has $want$name (machine '$machine')"
        n=$((n + 1))
done
[ "$n" -ge 7 ] || fail "only $n features: '$features'"
grep >/dev/null -- "+X86_64_UNWIND\|+ARM64_UNWIND" <<<"$features" || fail "no unwinder for this machine: '$features'"
echo "ok: all $n features match the build ($machine)"
