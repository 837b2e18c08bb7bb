#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Periscope as installed, on Debian 12's own kernel (linux-image-amd64 under
# qemu, software emulation): the kernel a Debian user runs, whose
# perf_event_paranoid is 3 (a Debian patch: perf_event_open then needs
# CAP_SYS_ADMIN), where this machine's kernel has 2. The image (debootstrap,
# cached under /var/cache/periscope-tests/vm-*, with the package's
# dependencies) is booted twice with -snapshot, and each time Periscope's
# Debian package (tests/debian/lib.sh, built once per tree) installed in
# it with `apt-get install ./periscope_*.deb`, offline:
#  1. fast: a shell script as PID 1; root records the no-frame-pointer
#     workload with a private periscoped;
#  2. systemd as PID 1: the package installed on the running system, and
#     through the D-Bus-activated unit (guest-systemd.sh), with the
#     assertions of the private-daemon and installed-service tests:
#     - the user, in no active local session, is refused by polkit
#       (org.periscope.profile-own, asked at paranoid 3) and told how to
#       allow it; a rules file for a group, as an administrator writes
#       it, lets the user in (docs/security.md);
#     - root and an unprivileged user record the workload: every function
#       named, >= 95% of stacks reach main; the user's has no kernel frame
#       nor kernel address (docs/security.md: paranoid 3 > 1);
#     - --system as root (system-wide events): check-system-capture.py,
#       >= 3 processes sampled, kernel frames named, the user's program named;
#     - --off-cpu (context-switch events) of workload-waits by the user
#       (check-waits.py: each wait within 10%, no kernel frame, no kernel
#       address) and by root (each wait ends in the kernel's: do_nanosleep…);
#     - JIT code: jitdump-writer's jitdump (root) and its perf map (the
#       user) named (tests/sandbox-helper/jit-checks.sh);
#     - the control fd: collector-client threads 4 5000
#       (tests/service/control/control-checks.sh);
#     - the user's private periscoped (no CAP_SYS_ADMIN) is refused by the
#       kernel, and says so naming kernel.perf_event_paranoid=3.
#     The unit's journal has no warning or error.
#
# Needs root, qemu-system-x86, debootstrap, and the Debian mirror on the
# first run (PERISCOPE_DEBIAN_MIRROR, PERISCOPE_TEST_CACHE as in
# tests/service/installed/). tests/README.md, "Tests on
# Debian's own kernel", says how to run it by hand.
set -euo pipefail
. "$(dirname "$0")/../lib/test-lib.sh" # fail, as_user, wait_for
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/installed-tree.sh"
. "$here/vm-lib.sh"
: "${MESON_SOURCE_ROOT:?}" "${MESON_BUILD_ROOT:?}" "${WORKLOAD_SOURCE:?}"
: "${PERISCOPE:?}" "${DEMO:?}" "${CLIENT:?}" "${CHECK:?}" "${CAPTURE_JSON:?}" "${SYSPROF_NAMES:?}"
src=$MESON_SOURCE_ROOT
PYTHON=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
. "$src/tests/sandbox-helper/jit-checks.sh"        # jitdump_check, perf_map_named, perf_map_check
. "$src/tests/service/control/control-checks.sh"   # control_check_threads
start=$SECONDS
elapsed() { echo "$((SECONDS - start)) s"; }

[ "$(id -u)" = 0 ] || fail "needs root (debootstrap, chroot)"
for tool in debootstrap:debootstrap mke2fs:e2fsprogs gcc:gcc \
            dpkg-deb:dpkg flock:util-linux readelf:binutils "$PYTHON":python3; do
        command -v "${tool%%:*}" >/dev/null || fail "${tool%%:*} missing: apt-get install -y ${tool#*:}"
done
# (an arm64 VM needs an arm64 build of Periscope: vm-lib.sh knows the VM)
vm_arch amd64

tmp=$(mktemp -d /var/tmp/periscope-vm.XXXXXX)
share=$tmp/share
mkdir -p "$share"
# PERISCOPE_VM_KEEP=1 keeps the share (the guest's logs, run.sh) and the console logs
trap 'vm_stop; if [ -n "${PERISCOPE_VM_KEEP:-}" ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi' EXIT
trap 'exit 143' TERM INT

# 1. Periscope's package on the share; the workload beside it.
installed_deb "$MESON_SOURCE_ROOT"
mkdir -p "$share/debs"
cp "$INSTALLED_DEB" "$share/debs/"
gcc -O2 -fomit-frame-pointer -o "$share/deep-nofp" "$WORKLOAD_SOURCE" || fail "cannot build the workload"
# the other checks' programs, as their private-daemon tests build them
mkdir -p "$share/bin"
gcc -O0 -g -fno-omit-frame-pointer -pthread -o "$share/bin/waits" "$src/tests/offcpu/workload-waits.c" ||
        fail "cannot build workload-waits.c"
cc -O2 -Wall -o "$share/bin/jitdump-writer" "$src/tests/sandbox-helper/jitdump-writer.c" || fail "cannot build jitdump-writer"
install -m 0755 "$DEMO" "$share/bin/demo-workload"
install -m 0755 "$CLIENT" "$share/bin/collector-client"
for f in "$share"/bin/*; do
        ! ldd "$f" | grep >/dev/null -E 'lib(a|ub)san' ||
                fail "$f is built with sanitizers, whose libraries the image lacks: run vm-debian-kernel from a build without them"
done
install -m 0644 "$here/guest-lib.sh" "$share/guest-lib.sh"
echo "ok: package $(basename "$INSTALLED_DEB") of tree ${DEB_TREE:0:12} on the share ($(elapsed))"

# 2. The image: what the package depends on (apt then installs it without
# a network, which the VM lacks), plus the base.
read -r -a packages <<<"$INSTALLED_DEPENDS"
vm_image "${packages[@]}"
echo "ok: image $VM_IMAGE ($(elapsed))"

# step_status NAME, step_ms NAME: of a step of the guest's script (guest-lib.sh)
step_status() { awk -v n="$1" '$1 == n { s = $2 } END { print (s == "" ? "missing" : s) }' "$share/out/steps"; }
step_ms() { awk -v n="$1" '$1 == n { print $3 }' "$share/out/steps"; }
# require_step NAME WHAT: the step ran and succeeded, else its log and a reason
require_step() {
        local name=$1 what=$2 st
        st=$(step_status "$name")
        [ "$st" = 0 ] && return 0
        [ ! -f "$share/out/$name.log" ] || tail -n 30 "$share/out/$name.log" >&2
        local why="$what failed in the VM (step $name: $st)"
        if grep 'perf_event_open.*\(Permission denied\|not permitted\)' "$share/out/$name.log" >/dev/null 2>&1; then
                why+=": perf_event_open refused at perf_event_paranoid=$(cat "$share/out/paranoid") on Debian's kernel; there it needs CAP_SYS_ADMIN in the process that opens the events"
        fi
        fail "$why"
}
# the facts every boot checks first: Debian's kernel, at paranoid 3
check_kernel() {
        local kernel paranoid
        kernel=$(cat "$share/out/kernel")
        paranoid=$(cat "$share/out/paranoid")
        echo "kernel $kernel, perf_event_paranoid $paranoid"
        case $kernel in *-amd64 | *-arm64) ;; *) fail "the VM runs kernel $kernel, not Debian's" ;; esac
        [ "$paranoid" = 3 ] || fail "Debian's kernel booted with perf_event_paranoid=$paranoid, not its default 3: the test would not test what a Debian user gets"
}
recorded_ms() { echo "$(($(step_ms "$1") / 1000)).$(($(step_ms "$1") % 1000 / 100)) s"; }

# 3. Fast boot: root with a private periscoped.
install -m 0755 "$here/guest-fast.sh" "$share/run.sh"
vm_boot_fast "$share"
echo "ok: fast boot done in $VM_SECONDS s, the script started at $(cat "$share/out/uptime") s of uptime (status $VM_STATUS)"
cat "$share/out/run.log"
check_kernel
require_step install "apt-get install ./$(basename "$INSTALLED_DEB") in the VM"
[ "$VM_STATUS" = 0 ] || fail "the fast boot's script exited $VM_STATUS"
require_step record-private "periscope record --private as root"
grep "capture written to /root/deep.syscap" "$share/out/record-private.log" >/dev/null ||
        { cat "$share/out/record-private.log"; fail "periscope record --private did not say it wrote the capture"; }
require_step report-private "periscope report of root's private recording"
check_deep_stacks "root (private daemon)" "$share/out/private.folded" "$share/out/private.report"
echo "ok: recorded on Debian's kernel with a private periscoped in $(recorded_ms record-private) ($(elapsed))"

# 4. systemd as PID 1: root and a user through the D-Bus-activated unit.
install -m 0755 "$here/guest-systemd.sh" "$share/run.sh"
vm_boot_systemd "$share"
echo "ok: systemd boot done in $VM_SECONDS s, the script started at $(cat "$share/out/uptime") s of uptime (status $VM_STATUS)"
cat "$share/out/run.log"
check_kernel
require_step install "apt-get install ./$(basename "$INSTALLED_DEB") in the VM"
[ "$VM_STATUS" = 0 ] || fail "the systemd boot's script exited $VM_STATUS"
require_step activate "the package's scripts (its users, /var/cache/periscope/debuginfod)"
grep >/dev/null "^periscope-debuginfod 700 /var/cache/periscope/debuginfod$" "$share/out/activate.log" ||
        { cat "$share/out/activate.log"; fail "the package did not make /var/cache/periscope/debuginfod periscope-debuginfod's"; }
require_step useradd "adding the unprivileged user"
# Debian's paranoid 3: a user outside an active local session records their
# own processes only once polkit grants org.periscope.profile-own.
cat "$share/out/refused-own.log"
case $(step_status refused-own) in
0) fail "the user recorded through the unit at perf_event_paranoid=3 without a session or a polkit rule" ;;
missing) fail "the user's recording without a polkit rule did not run" ;;
esac
grep "polkit denied action org\.periscope\.profile-own" "$share/out/refused-own.log" | grep >/dev/null "/etc/polkit-1/rules.d/" ||
        fail "the user's refusal does not name org.periscope.profile-own and /etc/polkit-1/rules.d/"
require_step grant-own "letting the user record with a polkit rules file for org.periscope.profile-own"
echo "ok: at paranoid 3 the user is refused until a polkit rule grants org.periscope.profile-own"
for who in root user; do
        require_step "record-$who" "periscope record as $who through periscoped.service"
        if grep "private periscoped" "$share/out/record-$who.log"; then
                fail "periscope record as $who used a private periscoped, not the system service"
        fi
        require_step "report-$who" "periscope report of $who's recording"
        check_deep_stacks "$who (periscoped.service)" "$share/out/$who.folded" "$share/out/$who.report"
        echo "ok: $who recorded through the unit in $(recorded_ms "record-$who")"
done
out=$share/out
checks=$tmp/checks
mkdir -p "$checks"
# The user may not see kernel addresses (paranoid 3 > 1, docs/security.md):
# their recording has none, as in test-offcpu-user.sh.
"$PERISCOPE" info "$out/user.syscap" | grep >/dev/null -x "  kernel=false" ||
        fail "the user's recording through the unit says it kept kernel stacks"
if grep '\[kernel\]' "$out/user.folded" >"$checks/user.kernel"; then
        head -n 3 "$checks/user.kernel"
        fail "kernel frames in the user's recording (above)"
fi
"$PERISCOPE" dump --json "$out/user.syscap" >"$checks/user.json" || fail "periscope dump of the user's recording failed"
"$PYTHON" "$src/tests/offcpu/check-no-kernel-addresses.py" "$checks/user.json" --cpu ||
        fail "a kernel address in the user's recording through the unit"
echo "ok: the user's recording has no kernel frame nor address"

# --system as root: system-wide events at paranoid 3 (the installed
# service's check_system: check-system-capture.py), kernel frames named
# (its check_kernel), the user's program named.
require_step record-system "periscope record --system as root through periscoped.service"
cat "$out/record-system.log"
pid_of() { awk -v n="$1" '$1 == n { print $2 }' "$out/system.pids"; }
cap=$out/system.syscap
"$PYTHON" "$src/tests/service/check-capture.py" "$CAPTURE_JSON" "$cap" readable --min-samples 50 --reason duration ||
        fail "the system recording is not readable, or has too few samples"
"$CAPTURE_JSON" "$cap" | "$PYTHON" "$src/tests/service/check-system-capture.py" "$(pid_of demo)" "$(pid_of dd)" ||
        fail "the system recording lacks processes, the workloads or kernel stacks"
"$PERISCOPE" report --no-progress --folded "$cap" >"$checks/system.folded" || fail "periscope report of the system recording failed"
kernel_named=$(tr ';' '\n' <"$checks/system.folded" | sed 's/ [0-9]*$//' | grep -c '^[A-Za-z_][A-Za-z0-9_.]* \[kernel\]$' || true)
kernel_all=$(tr ';' '\n' <"$checks/system.folded" | sed 's/ [0-9]*$//' | grep -c '\[kernel\]' || true)
echo "system: $kernel_named of $kernel_all kernel frames named"
grep 'do_syscall_64 \[kernel\]' "$checks/system.folded" >/dev/null ||
        { head -n 20 "$checks/system.folded"; fail "the system recording has no named kernel frame do_syscall_64"; }
[ "$kernel_all" -ge 5 ] && [ "$kernel_named" -ge $((kernel_all * 95 / 100)) ] ||
        fail "the system recording names $kernel_named of $kernel_all kernel frames"
"$PERISCOPE" report --no-progress --folded --comm deep-nofp "$cap" >"$checks/system-user.folded" ||
        fail "periscope report --comm deep-nofp of the system recording failed"
for f in main chain_a leaf_work; do
        grep "\(^\|;\)$f\(;\| \)" "$checks/system-user.folded" >/dev/null ||
                { head -n 5 "$checks/system-user.folded"; fail "the system recording has no frame named $f in the user's program"; }
done
echo "ok: --system through the unit in $(recorded_ms record-system): root's workloads, the user's program ($(awk '{ n += $NF } END { print n }' "$checks/system-user.folded") samples) and the kernel named"

# --off-cpu: context-switch events at paranoid 3 (tests/offcpu/'s
# check-waits.py: each wait attributed within 10% of its wall-clock length;
# the user's without a kernel frame, root's ending in the kernel's wait)
offcpu_check() { # who, 0|1
        local who=$1 kernel=$2 cap=$out/offcpu-$1.syscap
        require_step "offcpu-$who" "periscope record --off-cpu as $who through periscoped.service"
        "$PERISCOPE" report --no-progress --off-cpu --folded "$cap" >"$checks/offcpu-$who.ns" || fail "report --off-cpu ($who) failed"
        "$PERISCOPE" report --no-progress --folded "$cap" >"$checks/offcpu-$who.samples" || fail "report ($who) failed"
        # (the CPU samples of the compute phase: at least half its CPU time;
        # under emulation the guest's cpu-clock timer misses periods, CI
        # saw 0.75 s of samples for 1.000 s of CPU)
        "$PYTHON" "$src/tests/offcpu/check-waits.py" "$checks/offcpu-$who.ns" "$checks/offcpu-$who.samples" \
                "$out/offcpu-$who.log" "$kernel" 0.10 0.5 || fail "$who's waits were not attributed as they happened through the unit"
}
offcpu_check user 0
"$PERISCOPE" info "$out/offcpu-user.syscap" | grep >/dev/null -x "  kernel=false" ||
        fail "the user's --off-cpu recording says it kept kernel stacks"
"$PERISCOPE" dump --json "$out/offcpu-user.syscap" >"$checks/offcpu-user.json" || fail "periscope dump failed"
"$PYTHON" "$src/tests/offcpu/check-no-kernel-addresses.py" "$checks/offcpu-user.json" ||
        fail "a kernel address in the user's --off-cpu recording through the unit"
echo "ok: the user's off-CPU profile through the unit ($(recorded_ms offcpu-user))"
offcpu_check root 1
echo "ok: root's off-CPU profile through the unit, waits ending in the kernel's ($(recorded_ms offcpu-root))"

# JIT code (tests/sandbox-helper/jit-checks.sh, as test-record-jitdump.sh
# and test-record-jit-perf-map-safety.sh's plain perf map)
require_step jitdump "periscope record of jitdump-writer through periscoped.service"
grep "^done .*/jit-[0-9]*\.dump" "$out/jitdump.log" >/dev/null || fail "jitdump-writer did not finish"
mkdir -p "$checks/jitdump"
jitdump_check "$out/jitdump.syscap" "$checks/jitdump"
echo "ok: the jitdump's functions named through the unit ($(recorded_ms jitdump))"
require_step perf-map "periscope record of jitdump-writer's perf map as the user through periscoped.service"
grep "^done /tmp/perf-[0-9]*\.map$" "$out/perf-map.log" >/dev/null || fail "jitdump-writer (perf map) did not finish"
read -r named total < <(perf_map_named "$out/perf-map.syscap")
perf_map_check file "$named" "$total"
echo "ok: the perf map's functions named in the user's recording through the unit ($(recorded_ms perf-map))"

# the control fd (tests/service/control/control-checks.sh, as test-record-control.sh)
require_step control "periscope record of collector-client through periscoped.service"
control_check_threads "$out/threads.syscap" "$out/threads.out" "$checks"
echo "ok: the control fd through the unit ($(recorded_ms control))"

# The kernel refuses a periscoped without CAP_SYS_ADMIN: the user is told
# why, naming the sysctl (service/perf/perf-diagnose.c).
cat "$out/refused.log"
[ "$(step_status refused)" != 0 ] || fail "the user's private periscoped recorded at perf_event_paranoid=3"
[ "$(step_status refused)" != missing ] || fail "the refused recording did not run"
grep "kernel\.perf_event_paranoid=3" "$out/refused.log" | grep >/dev/null "CAP_SYS_ADMIN" ||
        fail "the refusal does not name kernel.perf_event_paranoid=3 and CAP_SYS_ADMIN"
[ ! -e "$out/refused.capture" ] || fail "a refused recording left a capture"
echo "ok: the kernel's refusal names kernel.perf_event_paranoid"

grep "Activating via systemd: service name='org.periscope.Profiler1' unit='periscoped.service'" \
        "$share/out/dbus.journal" >/dev/null ||
        { cat "$share/out/dbus.journal"; fail "dbus-daemon did not activate periscoped.service"; }
grep "argv\[\]=/usr/libexec/periscoped --system " "$share/out/periscoped.show" >/dev/null ||
        { cat "$share/out/periscoped.show"; fail "periscoped.service does not run /usr/libexec/periscoped --system"; }
cat "$share/out/periscoped.journal"
# Under software emulation everything runs 10-20 times slower: the fiber's
# warning that a slice overran its 5 ms (service/fiber/fiber.c) is expected
# here and no fault of the service; every other warning fails the test.
grep -v "without giving way to the event loop" "$share/out/periscoped.warnings" >"$share/out/periscoped.faults" || true
if [ -s "$share/out/periscoped.faults" ]; then
        cat "$share/out/periscoped.faults"
        fail "periscoped.service's journal has warnings or errors (above)"
fi
# (its lines all carry priority info until it logs with levels: read them too)
if grep -i -n "helper failed\|bwrap:\|exited with status\|not permitted\|permission denied\|failed:\|error:" \
        "$share/out/periscoped.journal"; then
        fail "periscoped.service's journal reports failures (lines above)"
fi
symbolized=$(grep -c "symbolized .* 0 helper failures" "$share/out/periscoped.journal" || true)
[ "$symbolized" -ge 8 ] || fail "periscoped.service's journal shows $symbolized of 8 symbolizations with 0 helper failures"
echo "ok: installed service recorded root and a user, the system, off-CPU, JIT code and the control fd on Debian's kernel ($(elapsed))"
