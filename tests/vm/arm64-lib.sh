# SPDX-License-Identifier: LGPL-2.1-or-later
# arm64-lib.sh: sourced (after test-lib.sh) by what runs Periscope in the
# emulated arm64 machine: tests/vm/test-vm-arm64.sh and
# bench/run-arm64-bench.sh. Host side only. Needs fail().
#
#   arm64_usr_stage BUILD_ROOT SOURCE_ROOT STAGE LOGDIR
#       cross-builds the tree for aarch64 with --prefix=/usr in
#       BUILD_ROOT/arm64-usr (scripts/cross-build-arm64.sh; kept between
#       runs, one build at a time under a lock) and installs it into STAGE
#       (meson install --destdir); sets ARM64_SYSROOT (the Debian 12 arm64
#       root it was built against) and ARM64_BUILD
#   arm64_runtime_packages STAGE
#       prints, one a line, the Debian packages that ship the shared
#       libraries STAGE's programs load (their DT_NEEDED, found in the
#       sysroot's file list)
#   arm64_vm_image STAGE [PACKAGE…]
#       the cached arm64 VM image for STAGE and PACKAGEs (vm-lib.sh: VM_IMAGE…)
#   arm64_workloads SOURCE_ROOT OUT LOGDIR
#       builds the test programs for aarch64 into OUT: deep-nofp (-O2
#       -fomit-frame-pointer), deep-fp (-fno-omit-frame-pointer: GCC still
#       gives call-free leaves no frame record), threads, go-chain (Debian's
#       Go, GOARCH=arm64), rust-chain (Debian's rustc with Debian's arm64
#       standard library from the sysroot), py-fib.py

arm64_usr_stage() {
        local build_root=$1 source_root=$2 stage=$3 logs=$4 lock
        ARM64_BUILD=$build_root/arm64-usr
        exec {lock}>"$ARM64_BUILD.lock"
        flock "$lock"
        NINJA_JOBS=2 "$source_root/scripts/cross-build-arm64.sh" "$ARM64_BUILD" --prefix=/usr \
                >"$logs/cross.out" 2>"$logs/cross.log" ||
                { tail -n 30 "$logs/cross.log"; fail "cross-building the tree for aarch64 failed"; }
        ARM64_SYSROOT=$(tail -n 1 "$logs/cross.out")
        [ -f "$ARM64_SYSROOT/.periscope-files" ] || fail "no arm64 sysroot at '$ARM64_SYSROOT'"
        rm -rf "$stage"
        meson install -C "$ARM64_BUILD" --no-rebuild --quiet --destdir "$stage" >"$logs/install.log" 2>&1 ||
                { cat "$logs/install.log"; fail "meson install --destdir of the aarch64 build failed"; }
        flock -u "$lock"
        exec {lock}>&-
}

arm64_runtime_packages() {
        local stage=$1 elf so pkg own
        own=$(find "$stage" -name '*.so*' -printf '%f\n')
        while IFS= read -r elf; do
                [ "$(head -c4 "$elf" | tail -c3)" = ELF ] || continue
                readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'
        done < <(find "$stage" -type f \( -perm -u+x -o -name '*.so*' \)) | sort -u |
                while IFS= read -r so; do
                        grep -qxF "$so" <<<"$own" && continue
                        pkg=$(awk -v so="$so" '$2 ~ "^(/usr)?/lib/(aarch64-linux-gnu/)?" && $2 ~ ("/" so "$") { print $1; exit }' \
                                "$ARM64_SYSROOT/.periscope-files")
                        [ -n "$pkg" ] || fail "an installed program needs $so, which no package of the arm64 sysroot ships"
                        echo "$pkg"
                done | sort -u
}

arm64_workloads() {
        local src=$1 out=$2 logs=$3 w=$1/tests/service/unwind/workloads cc=(aarch64-linux-gnu-gcc "--sysroot=$ARM64_SYSROOT")
        mkdir -p "$out"
        "${cc[@]}" -O2 -fomit-frame-pointer -o "$out/deep-nofp" "$w/deep.c" &&
                "${cc[@]}" -O2 -fno-omit-frame-pointer -o "$out/deep-fp" "$w/deep.c" &&
                "${cc[@]}" -O2 -fomit-frame-pointer -pthread -o "$out/threads" "$w/threads.c" ||
                fail "aarch64-linux-gnu-gcc could not build the workloads"
        # Go's build cache stays in the build tree: its arm64 standard library is built once
        GOARCH=arm64 CGO_ENABLED=0 GOCACHE=$ARM64_BUILD/go-cache GOPATH=$ARM64_BUILD/go-path \
                nice go build -o "$out/go-chain" "$w/go-chain.go" >"$logs/go.log" 2>&1 ||
                { cat "$logs/go.log"; fail "go build GOARCH=arm64 of go-chain.go failed"; }
        # Debian's rustc (not rustup's) cross-compiles with libstd-rust-dev:arm64
        # of the same Debian version, unpacked in the sysroot (its
        # usr/lib/rustlib/aarch64-unknown-linux-gnu)
        [ -x /usr/bin/rustc ] || fail "Debian's rustc is missing: apt-get install -y rustc"
        [ -d "$ARM64_SYSROOT/usr/lib/rustlib/aarch64-unknown-linux-gnu/lib" ] ||
                fail "no Rust standard library for aarch64 in $ARM64_SYSROOT (libstd-rust-dev)"
        /usr/bin/rustc -O --crate-name workload --target aarch64-unknown-linux-gnu --sysroot "$ARM64_SYSROOT/usr" \
                -C linker=aarch64-linux-gnu-gcc -C "link-arg=--sysroot=$ARM64_SYSROOT" \
                -o "$out/rust-chain" "$src/tests/sandbox-helper/workload-rust.rs" >"$logs/rustc.log" 2>&1 ||
                { cat "$logs/rustc.log"; fail "rustc --target aarch64-unknown-linux-gnu failed"; }
        install -m 0644 "$w/py-fib.py" "$out/py-fib.py"
        local f
        for f in deep-nofp deep-fp threads go-chain rust-chain; do
                readelf -h "$out/$f" | grep >/dev/null 'Machine:.*AArch64' || fail "$out/$f is not an aarch64 ELF"
        done
}

# arm64_vm_image STAGE [PACKAGE…]: the cached arm64 image (tests/vm/vm-lib.sh)
# with what STAGE's programs load, Debian's python3 (a workload) and the
# PACKAGEs: the bench adds perf, its baseline (bench/run-arm64-bench.sh);
# the test does without, since perl and its kin cost minutes of the
# image's emulated second stage on a new machine.
arm64_vm_image() {
        local stage=$1 packages
        shift
        mapfile -t packages < <(arm64_runtime_packages "$stage")
        [ ${#packages[@]} -ge 3 ] || fail "the installed programs need ${#packages[@]} packages?"
        vm_arch arm64
        vm_image "${packages[@]}" python3 "$@"
}
