#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Regenerates tests/capture/sysprof48/: a capture Sysprof 48's own
# sysprof-cli records, with its DWARF live unwinder (--stack-size), of
# workload.c built in a Debian 13 (trixie) root, as Debian builds (no frame
# pointers). Sysprof 45+ embeds the names it resolved in "__symbols__.gz";
# test-sysprof48-fixture.sh reads the capture with every command.
#
#   make-sysprof48-fixture.sh [OUTDIR]   (default: next to this script)
#
# Needs root, debootstrap and the Debian mirror. The root is cached in
# $PERISCOPE_TEST_CACHE/trixie-sysprof48 (about 3 minutes to make, 500 MB).
# The recording runs in it (in_root) with a private system bus of its own
# (sysprofd needs one, and polkit, even for root), polkitd with a rule that
# lets root profile, and sysprofd.
#
# Writes OUTDIR/sysprof48.syscap, OUTDIR/workload (the binary recorded,
# 16 KiB, for `nm` and its build-id at test time), OUTDIR/workload.nm and
# OUTDIR/PROVENANCE (versions of what recorded it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/private-bus.sh"
out=$(realpath -m "${1:-$here/sysprof48}")
cache=${PERISCOPE_TEST_CACHE:-/var/cache/periscope-tests}/trixie-sysprof48
root=$cache/root
[ "$(id -u)" = 0 ] || { echo "make-sysprof48-fixture.sh: needs root (debootstrap, chroot)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "make-sysprof48-fixture.sh: debootstrap missing (apt-get install -y debootstrap)" >&2; exit 1; }
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
mirror=${mirror:-http://deb.debian.org/debian}
packages=sysprof,dbus,polkitd,gcc,libc6-dev,binutils

# in_root CMD…: CMD chrooted into the root, in a PID namespace of its own
# (sysprof-cli then sees only the root's processes in its /proc, not this
# machine's) and a private mount namespace with /proc, /sys and /dev. Not
# systemd-nspawn: Sysprof resolves the files of /proc/PID/maps through
# /proc/PID/mountinfo, and in nspawn the root's mount names this machine's
# directory (/var/cache/…/root), which Sysprof cannot open from inside, so
# it would embed no names.
in_root() {
        unshare --mount --pid --fork --mount-proc="$root/proc" sh -c \
                'mount -t sysfs sysfs "$0/sys" && mount --rbind /dev "$0/dev" && exec chroot "$0" "$@"' "$root" "$@"
}

if [ ! -e "$cache/complete" ]; then
        rm -rf "$root"
        mkdir -p "$cache"
        echo "make-sysprof48-fixture: debootstrap trixie into $root (log: $cache/debootstrap.log)"
        # debootstrap's resolver stops at virtual packages (dconf-service
        # for sysprof's GTK side): apt in the root finishes the install
        debootstrap --variant=minbase --include=$packages trixie "$root" "$mirror" >"$cache/debootstrap.log" 2>&1 || true
        [ -x "$root/usr/bin/apt-get" ] || { tail "$cache/debootstrap.log" >&2; exit 1; }
        echo "deb $mirror trixie main" >"$root/etc/apt/sources.list"
        cp /etc/resolv.conf "$root/etc/resolv.conf"
        in_root sh -c "export DEBIAN_FRONTEND=noninteractive; dpkg --configure -a; apt-get update &&
                apt-get -f install -y && apt-get install -y --no-install-recommends ${packages//,/ }" \
                >>"$cache/debootstrap.log" 2>&1 || { tail "$cache/debootstrap.log" >&2; exit 1; }
        touch "$cache/complete"
fi

work=$root/fixture
rm -rf "$work"
mkdir -p "$work" "$root/etc/polkit-1/rules.d"
cp "$here/sysprof48/workload.c" "$here/sysprof48/no-pmu-shim.c" "$work/"
private_bus_config unix:path=/fixture/bus >"$work/bus.conf"
cat >"$root/etc/polkit-1/rules.d/50-periscope-fixture.rules" <<'EOF'
polkit.addRule(function(action, subject) {
        if (action.id.indexOf("org.gnome.sysprof") == 0 && subject.user == "root")
                return polkit.Result.YES;
});
EOF
cat >"$work/record.sh" <<'EOF'
#!/bin/sh
# inside the container: build, start the bus, polkitd and sysprofd, record
set -eu
cd /fixture
gcc -O2 -o workload workload.c
gcc -O2 -shared -fPIC -o no-pmu-shim.so no-pmu-shim.c
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=/fixture/bus
dbus-daemon --config-file=/fixture/bus.conf --fork --print-pid >dbus.pid
/usr/lib/polkit-1/polkitd --no-debug >polkitd.log 2>&1 &
echo $! >polkitd.pid
sleep 1
# the shim only acts where the cycles event does not exist (no-pmu-shim.c)
LD_PRELOAD=/fixture/no-pmu-shim.so /usr/libexec/sysprofd >sysprofd.log 2>&1 &
echo $! >sysprofd.pid
sleep 1
# the DWARF live unwinder (--stack-size), no counters, names from this
# root's files only (no debuginfod); sysprof-cli records every process of
# the container while the workload runs one second
sysprof-cli --force --no-battery --no-cpu --no-disk --no-memory --no-network --no-debuginfod \
        --stack-size=8192 /fixture/sysprof48.syscap -- /fixture/workload 1 >sysprof-cli.log 2>&1
kill "$(cat sysprofd.pid)" "$(cat polkitd.pid)" "$(cat dbus.pid)"
nm workload >workload.nm
{
        echo "Recorded by make-sysprof48-fixture.sh in a Debian 13 (trixie) root (chroot, PID namespace):"
        sysprof-cli --version
        dpkg-query -W -f='${Package} ${Version}\n' sysprof libsysprof-6-6 gcc-14 libc6 2>/dev/null
        echo "sysprof-cli --stack-size=8192 (DWARF live unwinder), workload built with gcc -O2 (no frame pointers)"
        echo "kernel: $(uname -r) $(uname -m)"
} >PROVENANCE
EOF
chmod 755 "$work/record.sh"

in_root /fixture/record.sh || { cat "$work"/*.log >&2 || true; exit 1; }
grep -v -e 'eglinfo\|glxinfo' -e '^$' -e polkit_agent_listener_register "$work/sysprof-cli.log" | grep -v '^Recording' >&2 || true
mkdir -p "$out"
cp "$work/sysprof48.syscap" "$work/workload" "$work/workload.nm" "$work/PROVENANCE" "$out/"
chmod 644 "$out/sysprof48.syscap"
echo "make-sysprof48-fixture: wrote $out ($(stat -c %s "$out/sysprof48.syscap") bytes of capture)"
