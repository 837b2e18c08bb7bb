#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# run-quickstart-bench.sh: the README's first command as a new user meets
# it: a fresh Debian 12 root (debootstrap minbase with systemd and D-Bus,
# made once and kept pristine under the cache, each run an overlay on it),
# booted with systemd under systemd-nspawn with what periscoped's unit
# keeps (perf events, kernel symbols, ring locking, map_files), a clone of
# this tree's HEAD in root's home, and `./run.sh` timed from start to its
# report. Prints the time of each phase run.sh names (apt, build, record
# and report) and the packages it installed; RESULTS.md keeps runs.
#
#   bench/run-quickstart-bench.sh      env: RUNS (1), PERISCOPE_BENCH_CACHE
#                                      (/var/cache/periscope-bench),
#                                      PERISCOPE_DEBIAN_MIRROR
#
# Needs root, debootstrap, systemd-container and the network (apt in the
# root fetches from the mirror, as on a new machine).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "run as root (debootstrap, overlay, systemd-nspawn)" >&2; exit 1; }
for t in debootstrap systemd-nspawn nsenter git; do
        command -v $t >/dev/null || { echo "$t missing: scripts/install-deps.sh tests" >&2; exit 1; }
done
mirror=${PERISCOPE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${PERISCOPE_BENCH_CACHE:-/var/cache/periscope-bench}/bookworm-fresh
mkdir -p "$cache"
exec 9>"$cache.lock"
flock 9
if [ ! -e "$cache/complete" ]; then
        echo "making a fresh Debian 12 root in $cache (once)" >&2
        rm -rf "$cache/root"
        debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus bookworm "$cache/root" "$mirror" \
                >"$cache/debootstrap.log" 2>&1 || { tail -n 15 "$cache/debootstrap.log"; exit 1; }
        chroot "$cache/root" apt-get clean
        touch "$cache/complete"
fi

tmp=$(mktemp -d /var/tmp/periscope-quickstart.XXXXXX)
nspawn=
cleanup() {
        [ -z "$nspawn" ] || { kill "$nspawn" 2>/dev/null; wait "$nspawn" 2>/dev/null || true; }
        umount "$tmp/root" 2>/dev/null || true
        rm -rf "$tmp"
}
trap cleanup EXIT

# the seconds since T0 (date +%s.%N), to a tenth
since() { awk -v t0="$1" -v now="$(date +%s.%N)" 'BEGIN { printf "%.1f", now - t0 }'; }

run_once() {
        local n=$1 leader= state=
        mkdir -p "$tmp/upper" "$tmp/work" "$tmp/root"
        mount -t overlay overlay -o "lowerdir=$cache/root,upperdir=$tmp/upper,workdir=$tmp/work" "$tmp/root"
        git clone -q "$top" "$tmp/root/root/periscope"
        cp /etc/resolv.conf "$tmp/root/etc/resolv.conf"
        systemd-nspawn -D "$tmp/root" --register=no --keep-unit --boot --machine="periscope-quickstart-$$" \
                --capability=CAP_PERFMON,CAP_SYSLOG,CAP_IPC_LOCK,CAP_CHECKPOINT_RESTORE \
                --system-call-filter='perf_event_open' >"$tmp/nspawn.log" 2>&1 </dev/null &
        nspawn=$!
        for _ in $(seq 100); do
                leader=$(pgrep -P "$nspawn" -x systemd || true)
                [ -n "$leader" ] && break
                sleep 0.2
        done
        [ -n "$leader" ] || { cat "$tmp/nspawn.log"; exit 1; }
        in_ct() { nsenter -t "$leader" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
        for _ in $(seq 240); do
                state=$(in_ct systemctl is-active multi-user.target 2>/dev/null || true)
                [ "$state" = active ] && break
                sleep 0.5
        done
        # run.sh's own output, each line stamped with the seconds since it began
        local t0 rc=0
        t0=$(date +%s.%N)
        in_ct sh -c 'cd /root/periscope && ./run.sh' 2>&1 | while IFS= read -r line; do
                printf '%s %s\n' "$(since "$t0")" "$line"
        done >"$tmp/run.log" || rc=$?
        local total
        total=$(since "$t0")
        local installed
        installed=$(in_ct grep -c '^Unpacking' /tmp/periscope-install-deps.log 2>/dev/null || echo "?")
        local at_build at_record
        at_build=$(awk '/periscope: building/ { print $1; exit }' "$tmp/run.log")
        at_record=$(awk '/== periscope record/ { print $1; exit }' "$tmp/run.log")
        local report=no
        grep -q 'Hottest functions\|Samples:' "$tmp/run.log" && report=yes
        printf '| %d | %s | %s packages, %s s | %s s | %s s | %s s | %s |\n' "$n" "$(git -C "$top" rev-parse --short HEAD)" \
                "$installed" "${at_build:-?}" "$(awk "BEGIN { print ${at_record:-0} - ${at_build:-0} }")" \
                "$(awk "BEGIN { print $total - ${at_record:-0} }")" "$total" "$report"
        [ "$report" = yes ] || { tail -n 30 "$tmp/run.log" >&2; echo "run.sh exited $rc" >&2; }
        kill "$nspawn" 2>/dev/null; wait "$nspawn" 2>/dev/null || true
        nspawn=
        umount "$tmp/root"
        rm -rf "$tmp/upper" "$tmp/work" "$tmp/root"
}

echo "Quick start from a fresh Debian 12 root, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| run | commit | packages (apt) | build | record + report | total | report shown |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for n in $(seq "${RUNS:-1}"); do
        run_once "$n"
done
