#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The whole test suite, as CI runs it: installs what is missing, builds a
# plain and a sanitizer (ASan+UBSan) tree with -Werror, runs every test once,
# and ends with one line "N passed, N failed, N skipped". A test in the
# 'sanitize' suite runs in the sanitizer tree only (running it in both took
# the suite past 15 minutes); the plain tree runs the rest: the installed
# service under systemd, whole-system sampling budgets, exports checked by
# other tools, the libFuzzer targets (clang's own sanitizers).
set -uo pipefail
top=$(cd "$(dirname "$0")" && pwd)
cd "$top"

if [ "$(id -u)" != 0 ]; then
        echo "test.sh: run as root (perf, bubblewrap, podman and polkit tests need it)" >&2
        exit 1
fi
scripts/install-deps.sh || { echo "test.sh: installing packages failed"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
for s in scripts/setup.d/*.sh; do
        [ -e "$s" ] || continue
        bash "$s" || { echo "test.sh: setup step $s failed"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
done

build_ok=1
configure() { # dir, extra args
        local dir=$1; shift
        if [ ! -f "$dir/build.ninja" ]; then
                meson setup "$dir" -Dwerror=true "$@" >"$dir.setup.log" 2>&1 || { cat "$dir.setup.log"; return 1; }
        else # a tree run.sh set up (no tests, no man pages) gets them now
                meson configure "$dir" -Dtests=true -Dman_pages=enabled >"$dir.setup.log" 2>&1 || { cat "$dir.setup.log"; return 1; }
        fi
        ninja -C "$dir" || return 1
}
mkdir -p build
configure build || build_ok=0
configure build-asan -Db_sanitize=address,undefined -Db_lundef=false || build_ok=0

# ASAN/UBSAN/LSAN options: the default test setup in meson.build.
# The emulated machines (suite vm: Debian's kernels under qemu, niced, a
# quarter of an hour on a new machine) run beside everything else, one at a
# time, with their own log: in the same run, the tests that must run alone
# (is_parallel: false) would wait for them.
rm -f build/meson-logs/testlog.json build/meson-logs/vmlog.json build-asan/meson-logs/testlog.json
no_vm=()
if [ $build_ok = 1 ]; then
        if [ $# = 0 ]; then
                meson test -C build --no-rebuild --suite vm --logbase vmlog --print-errorlogs --num-processes 1 \
                        >build/meson-logs/vm-run.txt 2>&1 &
                vm_run=$!
                no_vm=(--no-suite vm)
        fi
        meson test -C build --no-rebuild --no-suite sanitize "${no_vm[@]}" --print-errorlogs --num-processes 2 "${@}"
        meson test -C build-asan --no-rebuild --suite sanitize --print-errorlogs --num-processes 2 "${@}"
        if [ -n "${vm_run:-}" ]; then
                wait "$vm_run" || true
                cat build/meson-logs/vm-run.txt
        fi
fi

python3 - "$build_ok" build/meson-logs/testlog.json build/meson-logs/vmlog.json build-asan/meson-logs/testlog.json <<'PY'
import json, sys
passed = failed = skipped = 0
durations = []
if sys.argv[1] != "1":
    failed += 1
    print("build failed: see the compiler output above")
for path in sys.argv[2:]:
    try:
        lines = open(path).read().splitlines()
    except OSError:
        continue
    for line in lines:
        t = json.loads(line)
        r = t["result"]
        durations.append((t.get("duration", 0), t["name"]))
        if r in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif r == "SKIP":
            skipped += 1
            print("skipped:", t["name"])
        else:
            failed += 1
            print("failed:", t["name"], r)
if durations:
    print("the ten slowest tests (tests/README.md says what each suite takes):")
    for d, name in sorted(durations, reverse=True)[:10]:
        print(f"  {d:7.1f} s  {name}")
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or not passed else 0)
PY
