# SPDX-License-Identifier: LGPL-2.1-or-later
# lib.sh: the installed service, as a user gets it, for the checks of
# test-installed.sh (sourced). A Debian 12 tree (debootstrap, cached under
# /var/cache/periscope-tests/), booted once with systemd as PID 1
# (systemd-nspawn --boot), into which `apt-get install ./periscope_*.deb`
# installs the Debian package of this tree (debian/; the sysprofd drop-in,
# which it leaves out, is added beside it): every check runs against that
# one boot.
#
#   installed_prepare          builds the package, makes or reuses the cached tree (with the
#                              package's dependencies), overlays it, puts the package and the
#                              drop-in in: sets root (the tree, seen from here)
#   installed_boot             boots it: sets leader (the container's systemd)
#   installed_apt_install      apt-get install ./periscope_*.deb in the booted tree
#   in_ct CMD…                 CMD inside the booted tree, as root, in a bare environment
#   as_user_ct CMD…            CMD inside, as $user (periscope-user), HOME set
#   ct_record WHO LOG ARGS…    `periscope record ARGS…` inside as WHO (root or $user) through
#                              the installed service (D-Bus activated); fails unless it
#                              exits 0 and used the system service; LOG gets its output
#   ct_bg WHO PIDFILE CMD…     starts CMD inside as WHO, in the background (host job);
#                              PIDFILE (a path inside) gets its pid there once it runs
#   ct_kill PIDFILE            ends what ct_bg started, by its pid
#   service_state [UNIT]       what systemd and the journal say about UNIT, on failure
#   fail MESSAGE               prints "FAIL: MESSAGE" (and keeps it for the summary), exits 1
#
# Paths: a path P inside is $root$P from here. CT_WORK (inside) is a work
# directory every user may write; $tmp (here) holds logs. The check files
# (*-checks.sh) use these and the programs the meson test passes in its
# environment (PERISCOPE, the CLI that reads the captures here, and the test
# programs of the private-daemon tests, copied inside by installed_prepare).

. "$(dirname "${BASH_SOURCE[0]}")/../../lib/installed-tree.sh"

# fail MESSAGE: the reason goes to $CHECK_REASON too, for the summary.
fail() {
        echo "FAIL: $*" >&2
        [ -z "${CHECK_REASON:-}" ] || echo "$*" >"$CHECK_REASON"
        exit 1
}
: "${MESON_SOURCE_ROOT:?}" "${MESON_BUILD_ROOT:?}"
src=$MESON_SOURCE_ROOT
mirror=${PERISCOPE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache_top=${PERISCOPE_TEST_CACHE:-/var/cache/periscope-tests}
PYTHON=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
export PYTHONPATH="$src/tests/lib${PYTHONPATH:+:$PYTHONPATH}"
user=periscope-user
CT_WORK=/var/tmp/periscope-checks
start=$(date +%s)
elapsed() { echo "$(($(date +%s) - start)) s"; }

[ "$(id -u)" = 0 ] || fail "needs root (debootstrap, overlay mount, systemd-nspawn)"
for tool in debootstrap:debootstrap systemd-nspawn:systemd-container nsenter:util-linux \
            meson:meson ninja:ninja-build gcc:gcc dpkg-deb:dpkg flock:util-linux; do
        command -v "${tool%%:*}" >/dev/null || fail "${tool%%:*} missing: apt-get install -y ${tool#*:}"
done

tmp=$(mktemp -d /var/tmp/periscope-installed.XXXXXX)
chmod 755 "$tmp"
root=$tmp/root
nspawn_pid=
leader=
_installed_cleanup() {
        local st=$?
        if [ -n "$nspawn_pid" ] && kill -0 "$nspawn_pid" 2>/dev/null; then
                kill -TERM "$nspawn_pid" 2>/dev/null || true
                for _ in $(seq 50); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.2; done
                kill -KILL "$nspawn_pid" 2>/dev/null || true
                wait "$nspawn_pid" 2>/dev/null || true
        fi
        if mountpoint -q "$root"; then umount "$root" || umount -l "$root"; fi
        # PERISCOPE_TEST_KEEP=1 keeps the logs and the tree's changes to look at
        if [ -n "${PERISCOPE_TEST_KEEP:-}" ]; then echo "kept: $tmp" >&2; else rm -rf "$tmp"; fi
        exit $st
}
trap _installed_cleanup EXIT

# The Debian packages the tree gets beyond what the installed programs need
# at run time: what the checks run (node for a JIT's perf map, Sysprof for
# sysprof-cli through the drop-in, procps's kill and pgrep), installed with
# apt after debootstrap. Measured: +180 MB (420 MB in all), the first run
# about 6 minutes longer.
extra_packages="nodejs sysprof procps"

installed_prepare() {
        # 1. The Debian package of this tree (tests/debian/lib.sh: built once
        # per tree, shared with the package's own tests and tests/vm/).
        installed_deb "$src"
        echo "ok: package $(basename "$INSTALLED_DEB") of tree ${DEB_TREE:0:12} ($(elapsed))"

        # 2. The tree holds what the package depends on beforehand (and what
        # booting needs), so that apt installs it offline at every run.
        local packages
        packages=$(echo systemd systemd-sysv libpam-systemd dbus polkitd bubblewrap $INSTALLED_DEPENDS |
                tr ' ' '\n' | sort -u | paste -sd, -)
        local key cache
        key=$(printf 'bookworm minbase %s extra %s' "$packages" "$extra_packages" | sha256sum | cut -c1-16)
        cache=$cache_top/bookworm-$key
        echo "packages: $packages; then $extra_packages"

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
                echo "ok: Debian tree bootstrapped ($(elapsed))"
                # apt resolves what debootstrap's resolver does not (virtual
                # packages); nothing is started in the chroot
                printf '#!/bin/sh\nexit 101\n' >"$cache/root/usr/sbin/policy-rc.d"
                chmod 755 "$cache/root/usr/sbin/policy-rc.d"
                mount -t proc proc "$cache/root/proc"
                local st=0
                chroot "$cache/root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
                        apt-get install -y --no-install-recommends $extra_packages >"$cache/apt.log" 2>&1 || st=$?
                umount "$cache/root/proc"
                rm -f "$cache/root/usr/sbin/policy-rc.d"
                [ $st = 0 ] || { tail -n 20 "$cache/apt.log" >&2; fail "apt-get install $extra_packages in the tree failed"; }
                chroot "$cache/root" apt-get clean
                touch "$cache/complete"
                echo "ok: Debian tree built: $(du -sh "$cache/root" | cut -f1) ($(elapsed))"
        fi
        flock -u 9
        exec 9>&-

        # 4. This run's tree: an overlay on the cached one, so the cache stays clean.
        mkdir -p "$tmp/upper" "$tmp/work" "$root"
        mount -t overlay overlay -o "lowerdir=$cache/root,upperdir=$tmp/upper,workdir=$tmp/work" "$root" ||
                fail "cannot mount an overlay on $cache/root"
        ! chroot "$root" dpkg-query -W -f='${Status}' periscope 2>/dev/null | grep >/dev/null 'ok installed' ||
                fail "the cached tree already has the package periscope"
        mkdir -p "$root/var/tmp/debs"
        cp "$INSTALLED_DEB" "$root/var/tmp/debs/"
        chmod -R a+rX "$root/var/tmp/debs"
        # the sysprofd drop-in, which the package does not ship (the
        # sysprof-cli check), added as an administrator would
        sysprofd_drop_in_install "$MESON_BUILD_ROOT" "$src" "$root" "$tmp"
        chroot "$root" useradd --create-home --shell /bin/sh "$user"
        mkdir -p "$root$CT_WORK"
        chmod 1777 "$root$CT_WORK"
        echo "ok: the tree is ready, the package in /var/tmp/debs ($(elapsed))"
}

# installed_apt_install: in the booted tree, `apt-get install
# ./periscope_*.deb` as a user does on a running system (offline: its
# dependencies are in the tree; Recommends are left out, debuginfod is not
# in it); then its files are where dbus-daemon, polkitd and systemd look.
installed_apt_install() {
        local deb f
        deb=/var/tmp/debs/$(basename "$INSTALLED_DEB")
        in_ct env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$deb" \
                >"$tmp/apt-install.log" 2>&1 || { tail -n 30 "$tmp/apt-install.log"; fail "apt-get install $deb failed"; }
        in_ct dpkg-query -W -f='${Status}\n' periscope | grep >/dev/null 'install ok installed' ||
                fail "periscope is not installed after apt-get install $deb"
        grep >/dev/null '^0 upgraded, 1 newly installed' "$tmp/apt-install.log" ||
                { cat "$tmp/apt-install.log"; fail "apt-get install $deb installed more than the package: the tree lacks a dependency"; }
        for f in /usr/share/dbus-1/system.d/org.periscope.Profiler1.conf \
                 /usr/share/dbus-1/system-services/org.periscope.Profiler1.service \
                 /usr/share/polkit-1/actions/org.periscope.policy \
                 /usr/lib/systemd/system/periscoped.service \
                 /usr/lib/systemd/system/periscoped-sysprof.service \
                 /usr/local/share/dbus-1/system-services/org.gnome.Sysprof3.service \
                 /usr/libexec/periscoped /usr/bin/periscope /usr/share/man/man8/periscoped.8.gz; do
                [ -e "$root$f" ] || fail "the package or the drop-in did not put $f where dbus-daemon, polkitd or systemd look"
        done
        echo "ok: apt-get installed $(basename "$INSTALLED_DEB") into the booted tree ($(elapsed))"
}

installed_boot() {
        # systemd as PID 1. The container gets what periscoped's unit keeps
        # (perf events, kernel symbols, ring buffer locking, map_files); the
        # unit takes away the rest.
        systemd-nspawn -D "$root" --register=no --keep-unit --boot --machine="periscope-test-$$" \
                --capability=CAP_PERFMON,CAP_SYSLOG,CAP_IPC_LOCK,CAP_CHECKPOINT_RESTORE \
                --system-call-filter='perf_event_open' \
                >"$tmp/nspawn.log" 2>&1 </dev/null &
        nspawn_pid=$!
        for _ in $(seq 100); do
                kill -0 "$nspawn_pid" 2>/dev/null || { cat "$tmp/nspawn.log"; fail "systemd-nspawn exited"; }
                leader=$(pgrep -P "$nspawn_pid" -x systemd || true)
                [ -n "$leader" ] && break
                sleep 0.2
        done
        [ -n "$leader" ] || { cat "$tmp/nspawn.log"; fail "no systemd in the container after 20 s"; }
        local state=
        for _ in $(seq 240); do
                state=$(in_ct systemctl is-active multi-user.target 2>/dev/null || true)
                [ "$state" = active ] && break
                sleep 0.5
        done
        [ "$state" = active ] || { tail -n 40 "$tmp/nspawn.log"; fail "multi-user.target not reached in 120 s ($state)"; }
        echo "ok: booted to multi-user.target ($(elapsed))"
}

in_ct() {
        nsenter -t "$leader" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"
}

as_user_ct() {
        in_ct runuser -u "$user" -- env HOME="/home/$user" "$@"
}

ct_record() { # who, log, periscope record arguments…
        local who=$1 log=$2
        shift 2
        if [ "$who" = root ]; then
                in_ct periscope record "$@"
        else
                in_ct runuser -u "$who" -- env HOME="/home/$who" periscope record "$@"
        fi >"$log" 2>&1 || { cat "$log"; service_state; fail "periscope record as $who failed: $*"; }
        cat "$log"
        ! grep -q "private periscoped" "$log" || fail "periscope record as $who used a private periscoped"
}

ct_bg() { # who, pidfile (inside), command…
        local who=$1 pidfile=$2
        shift 2
        rm -f "$root$pidfile"
        if [ "$who" = root ]; then
                in_ct sh -c 'echo $$ >"$0.tmp" && mv "$0.tmp" "$0" && exec "$@"' "$pidfile" "$@" &
        else
                in_ct runuser -u "$who" -- env HOME="/home/$who" sh -c 'echo $$ >"$0.tmp" && mv "$0.tmp" "$0" && exec "$@"' "$pidfile" "$@" &
        fi
        for _ in $(seq 100); do [ -s "$root$pidfile" ] && return 0; sleep 0.05; done
        fail "$* did not start inside the tree"
}

ct_kill() { # pidfile (inside)
        local pid
        pid=$(cat "$root$1" 2>/dev/null) || return 0
        in_ct sh -c "kill $pid" 2>/dev/null || true
}

service_state() { # [unit]
        local unit=${1:-periscoped.service}
        in_ct systemctl status --no-pager "$unit" 2>&1 | head -n 20 || true
        in_ct journalctl --no-pager -b -n 30 -u dbus.service -u "$unit" 2>&1 || true
}
