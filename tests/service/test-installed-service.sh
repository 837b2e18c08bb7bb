#!/usr/bin/env bash
# The installed service, as a user gets it: a Debian 12 tree (debootstrap,
# cached under /var/cache/periscope-tests/), Periscope installed into it with
# `meson install --destdir` from a build configured with --prefix=/usr, booted
# with systemd as PID 1 (systemd-nspawn --boot). Inside, D-Bus activates
# periscoped under its unit unchanged, and the installed `periscope record`
# records, as root and as an unprivileged user, a program built without frame
# pointers: names, whole DWARF stacks (>= 95% reach main), kernel names for
# root, no helper failure in the journal, and the unit's `systemd-analyze
# security` exposure at most 3.5 (3.4 before CAP_SYS_ADMIN, which the perf
# opener needs on Debian's kernels: test-systemd-unit.sh, docs/security.md).
#
# Needs root, network to the Debian mirror on the first run (or when the
# package list changes), debootstrap and systemd-container.
# PERISCOPE_DEBIAN_MIRROR and PERISCOPE_TEST_CACHE change the mirror and
# where the trees are kept.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$(dirname "$0")/../lib/installed-tree.sh"
: "${MESON_SOURCE_ROOT:?}" "${MESON_BUILD_ROOT:?}" "${WORKLOAD_SOURCE:?}"
mirror=${PERISCOPE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache_top=${PERISCOPE_TEST_CACHE:-/var/cache/periscope-tests}
max_exposure=3.5
start=$(date +%s)
elapsed() { echo "$(($(date +%s) - start)) s"; }

[ "$(id -u)" = 0 ] || fail "needs root (debootstrap, overlay mount, systemd-nspawn)"
for tool in debootstrap:debootstrap systemd-nspawn:systemd-container nsenter:util-linux \
            meson:meson ninja:ninja-build gcc:gcc dpkg-query:dpkg flock:util-linux; do
        command -v "${tool%%:*}" >/dev/null || fail "${tool%%:*} missing: apt-get install -y ${tool#*:}"
done

tmp=$(mktemp -d /var/tmp/periscope-installed.XXXXXX)
root=$tmp/root
nspawn_pid=
cleanup() {
        if [ -n "$nspawn_pid" ] && kill -0 "$nspawn_pid" 2>/dev/null; then
                kill -TERM "$nspawn_pid" 2>/dev/null || true
                for _ in $(seq 50); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.2; done
                kill -KILL "$nspawn_pid" 2>/dev/null || true
                wait "$nspawn_pid" 2>/dev/null || true
        fi
        if mountpoint -q "$root"; then umount "$root" || umount -l "$root"; fi
        rm -rf "$tmp"
}
trap cleanup EXIT

# 1. A build of this tree for /usr, next to the test's build tree (kept, so
# a rerun only rebuilds what changed); only what gets installed is built.
usr_build_stage "$MESON_BUILD_ROOT" "$MESON_SOURCE_ROOT" "$tmp/stage" "$tmp"
echo "ok: built and staged for /usr ($(elapsed))"

# 2. The Debian packages the installed programs need at run time (from
# their shared libraries), plus systemd, D-Bus, polkit and bubblewrap.
packages=$( (echo systemd systemd-sysv libpam-systemd dbus polkitd bubblewrap | tr ' ' '\n'
             runtime_packages "$tmp/stage" "$tmp") | sort -u | paste -sd, -)
key=$(printf 'bookworm minbase %s' "$packages" | sha256sum | cut -c1-16)
cache=$cache_top/bookworm-$key
echo "packages: $packages"

# 3. The Debian tree, made once per package list (a rerun takes seconds).
mkdir -p "$cache_top"
exec 9>"$cache.lock"
flock 9
if [ ! -e "$cache/complete" ]; then
        echo "building the Debian 12 tree in $cache (debootstrap from $mirror)"
        rm -rf "$cache"
        mkdir -p "$cache"
        if ! debootstrap --variant=minbase --include="$packages" bookworm "$cache/root" "$mirror" >"$cache/debootstrap.log" 2>&1; then
                tail -n 15 "$cache/debootstrap.log" >&2
                tail -n 15 "$cache/root/debootstrap/debootstrap.log" >&2 2>/dev/null || true
                fail "debootstrap of Debian 12 from $mirror failed (is the mirror reachable? set PERISCOPE_DEBIAN_MIRROR to another)"
        fi
        touch "$cache/complete"
        echo "ok: Debian tree built ($(elapsed))"
fi
flock -u 9

# 4. This run's tree: an overlay on the cached one, so the cache stays clean.
mkdir -p "$tmp/upper" "$tmp/work" "$root"
mount -t overlay overlay -o "lowerdir=$cache/root,upperdir=$tmp/upper,workdir=$tmp/work" "$root" ||
        fail "cannot mount an overlay on $cache/root"
usr_build_install "$root" "$tmp"
for f in /usr/share/dbus-1/system.d/org.periscope.Profiler1.conf \
         /usr/share/dbus-1/system-services/org.periscope.Profiler1.service \
         /usr/share/polkit-1/actions/org.periscope.policy \
         /usr/lib/systemd/system/periscoped.service \
         /usr/libexec/periscoped /usr/bin/periscope /usr/share/man/man8/periscoped.8; do
        [ -e "$root$f" ] || fail "meson install did not put $f where dbus-daemon, polkitd or systemd look"
done
user=periscope-user
chroot "$root" useradd --create-home --shell /bin/sh "$user"
gcc -O2 -fomit-frame-pointer -o "$root/usr/local/bin/deep-nofp" "$WORKLOAD_SOURCE" || fail "cannot build the workload"
# the user runs their own copy, from their home (which the unit sees read-only)
install -m 0755 "$root/usr/local/bin/deep-nofp" "$root/home/$user/deep-nofp"
chroot "$root" chown "$user:" "/home/$user/deep-nofp"
echo "ok: installed into the tree ($(elapsed))"

# 5. Boot it: systemd as PID 1. The container gets what periscoped's unit
# keeps (perf events, kernel symbols, ring buffer locking, map_files); the
# unit takes away the rest.
machine=periscope-test-$$
systemd-nspawn -D "$root" --register=no --keep-unit --boot --machine="$machine" \
        --capability=CAP_PERFMON,CAP_SYSLOG,CAP_IPC_LOCK,CAP_CHECKPOINT_RESTORE \
        --system-call-filter='perf_event_open' \
        >"$tmp/nspawn.log" 2>&1 </dev/null &
nspawn_pid=$!
leader=
for _ in $(seq 100); do
        kill -0 "$nspawn_pid" 2>/dev/null || { cat "$tmp/nspawn.log"; fail "systemd-nspawn exited"; }
        leader=$(pgrep -P "$nspawn_pid" -x systemd || true)
        [ -n "$leader" ] && break
        sleep 0.2
done
[ -n "$leader" ] || { cat "$tmp/nspawn.log"; fail "no systemd in the container after 20 s"; }
in_ct() {
        nsenter -t "$leader" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"
}
state=
for _ in $(seq 240); do
        state=$(in_ct systemctl is-active multi-user.target 2>/dev/null || true)
        [ "$state" = active ] && break
        sleep 0.5
done
[ "$state" = active ] || { tail -n 40 "$tmp/nspawn.log"; fail "multi-user.target not reached in 120 s ($state)"; }
echo "ok: booted to multi-user.target ($(elapsed))"

# 6. The unit as installed: exposure printed, at most $max_exposure.
in_ct systemd-analyze security --offline=yes --no-pager /usr/lib/systemd/system/periscoped.service \
        >"$tmp/security.txt" 2>&1 || true
grep '✗' "$tmp/security.txt" || true
exposure=$(grep -o 'Overall exposure level for periscoped.service: [0-9.]*' "$tmp/security.txt" | grep -o '[0-9.]*$') ||
        { cat "$tmp/security.txt"; fail "no exposure level from systemd-analyze security"; }
echo "exposure of the installed unit: $exposure"
awk -v e="$exposure" -v m="$max_exposure" 'BEGIN { exit !(e <= m) }' ||
        fail "the unit's exposure $exposure is above $max_exposure"

# 7. Record as root: the deep chain, and dd for kernel stacks.
# what the container's systemd and D-Bus say about the service, on failure
service_state() {
        in_ct systemctl status --no-pager periscoped.service 2>&1 | head -n 20 || true
        in_ct journalctl --no-pager -b -n 30 -u dbus.service -u periscoped.service 2>&1 || true
}
record() {
        local who=$1 out=$2
        shift 2
        if [ "$who" = root ]; then
                in_ct periscope record -o "$out" -- "$@"
        else
                in_ct runuser -u "$who" -- env HOME="/home/$who" periscope record -o "$out" -- "$@"
        fi >"$tmp/record.log" 2>&1 || { cat "$tmp/record.log"; service_state; fail "periscope record as $who failed"; }
        cat "$tmp/record.log"
        grep -q "private periscoped" "$tmp/record.log" && fail "periscope record as $who used a private periscoped"
        return 0
}
check_deep_in_ct() {
        local who=$1 capture=$2
        in_ct periscope report --no-progress --folded "$capture" >"$tmp/$who.folded" || fail "periscope report ($who) failed"
        in_ct periscope report --no-progress "$capture" >"$tmp/$who.report" || fail "periscope report ($who) failed"
        check_deep "$who" "$tmp/$who.folded" "$tmp/$who.report"
}
record root /root/deep.syscap /usr/local/bin/deep-nofp 2000
check_deep_in_ct root /root/deep.syscap
in_ct systemctl status --no-pager periscoped >"$tmp/status.txt" 2>&1 || true
cat "$tmp/status.txt"
grep -q "Active: active (running)" "$tmp/status.txt" || fail "periscoped.service is not running after a recording"
# What the unit runs (the status's process list can be missing: "Failed to
# dump process list ... Input/output error" inside the container).
in_ct systemctl show -p ExecStart periscoped >"$tmp/exec.txt" 2>&1 || true
grep -q "argv\[\]=/usr/libexec/periscoped --system " "$tmp/exec.txt" ||
        { cat "$tmp/exec.txt"; fail "periscoped.service does not run /usr/libexec/periscoped --system"; }
in_ct journalctl --no-pager -b -u dbus.service >"$tmp/dbus.journal" 2>&1 || true
grep -q "Activating via systemd: service name='org.periscope.Profiler1' unit='periscoped.service'" "$tmp/dbus.journal" ||
        { cat "$tmp/dbus.journal"; fail "dbus-daemon did not activate periscoped.service"; }
echo "ok: D-Bus activated periscoped.service ($(elapsed))"

record root /root/dd.syscap dd if=/dev/zero of=/dev/null bs=64k count=200000
in_ct periscope report --no-progress --folded /root/dd.syscap >"$tmp/dd.folded" || fail "periscope report (dd) failed"
kernel_named=$(tr ';' '\n' <"$tmp/dd.folded" | sed 's/ [0-9]*$//' | grep -c '^[A-Za-z_][A-Za-z0-9_.]* \[kernel\]$' || true)
kernel_all=$(tr ';' '\n' <"$tmp/dd.folded" | sed 's/ [0-9]*$//' | grep -c '\[kernel\]' || true)
echo "root: $kernel_named of $kernel_all kernel frames named"
grep -q 'do_syscall_64 \[kernel\]' "$tmp/dd.folded" || { head -n 20 "$tmp/dd.folded"; fail "root's recording of dd has no named kernel frame do_syscall_64"; }
[ "$kernel_named" -ge $((kernel_all * 95 / 100)) ] || fail "only $kernel_named of $kernel_all kernel frames are named"

# 8. Record as an unprivileged user (their own program, no polkit needed).
record "$user" "/home/$user/deep.syscap" "/home/$user/deep-nofp" 2000
check_deep_in_ct "$user" "/home/$user/deep.syscap"

# 9. The whole system as root while the user's program runs: the service
# sees and names other users' processes (ProtectProc=invisible leaves it
# every process it may ptrace).
in_ct runuser -u "$user" -- "/home/$user/deep-nofp" 4000 &
user_workload=$!
sleep 0.5
in_ct periscope record --system --duration 2 -o /root/system.syscap >"$tmp/record.log" 2>&1 ||
        { cat "$tmp/record.log"; service_state; fail "periscope record --system as root failed"; }
cat "$tmp/record.log"
wait "$user_workload" || fail "the user's workload failed while the system was recorded"
in_ct periscope report --no-progress --folded --comm deep-nofp /root/system.syscap >"$tmp/system.folded" ||
        fail "periscope report --comm deep-nofp of the system recording failed"
for f in main chain_a leaf_work; do
        grep -q "\(^\|;\)$f\(;\| \)" "$tmp/system.folded" || { head -n 5 "$tmp/system.folded"; fail "the system recording has no frame named $f in $user's program"; }
done
echo "ok: the system recording names $user's program ($(awk '{ n += $NF } END { print n }' "$tmp/system.folded") samples)"

# 10. The service's journal: no helper or sandbox failure. (systemd's own
# "Failed to configure loopback" for PrivateNetwork= is nspawn withholding
# CAP_NET_ADMIN from the container; the namespace is made all the same.)
in_ct journalctl --no-pager -b -u periscoped.service >"$tmp/periscoped.journal" 2>&1 || true
cat "$tmp/periscoped.journal"
grep -E 'periscoped\[[0-9]+\]|bwrap' "$tmp/periscoped.journal" >"$tmp/periscoped.own" || true
if grep -n -i "helper failed\|bwrap:\|exited with status\|not permitted" "$tmp/periscoped.own"; then
        fail "periscoped's journal reports helper failures (lines above)"
fi
symbolized=$(grep -c "symbolized .* 0 helper failures" "$tmp/periscoped.own" || true)
[ "$symbolized" -ge 4 ] || fail "periscoped logged $symbolized of 4 symbolizations with 0 helper failures"
echo "ok: installed service recorded root and $user ($(elapsed))"
