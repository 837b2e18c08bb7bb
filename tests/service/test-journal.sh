#!/usr/bin/env bash
# The journal of the installed service, and its install-time files, in a
# booted Debian 12 tree (systemd as PID 1 in systemd-nspawn --boot, Periscope
# installed with `meson install --destdir` from a --prefix=/usr build, as
# test-installed-service.sh makes it; the same cached tree and build):
#   - tmpfiles.d made /var/cache/periscope/debuginfod, the fetcher's, 0700;
#   - systemd/install-hook.sh, run as `meson install` runs it on a live
#     system (no DESTDIR), creates the user and the directories again;
#   - journal_checks (installed/journal-checks.sh): levels, RECORDING=,
#     UID=, MESSAGE_ID=, a refused Record logged at notice, an error shown
#     by `journalctl -p warning -u periscoped`.
# With an argument, the file it names is sourced instead of booting a tree
# here: it must define `in_ct` (run a command in a booted tree as root, see
# journal-checks.sh), `user` (an unprivileged user there) and `root` (the
# tree's directory on the host), as the installed-service family's shared
# boot does.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
: "${MESON_SOURCE_ROOT:?}"
. "$MESON_SOURCE_ROOT/tests/service/installed/journal-checks.sh"
start=$(date +%s)
elapsed() { echo "$(($(date +%s) - start)) s"; }

if [ $# -ge 1 ]; then
        # shellcheck disable=SC1090
        . "$1"
else
: "${MESON_BUILD_ROOT:?}"
mirror=${PERISCOPE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache_top=${PERISCOPE_TEST_CACHE:-/var/cache/periscope-tests}
[ "$(id -u)" = 0 ] || fail "needs root (debootstrap, overlay mount, systemd-nspawn)"
for tool in debootstrap:debootstrap systemd-nspawn:systemd-container nsenter:util-linux \
            meson:meson ninja:ninja-build gcc:gcc dpkg-query:dpkg flock:util-linux; do
        command -v "${tool%%:*}" >/dev/null || fail "${tool%%:*} missing: apt-get install -y ${tool#*:}"
done

tmp=$(mktemp -d /var/tmp/periscope-journal.XXXXXX)
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
sub=$MESON_BUILD_ROOT/installed-service-usr
if [ ! -f "$sub/build.ninja" ]; then
        rm -rf "$sub"
        meson setup --prefix=/usr "$sub" "$MESON_SOURCE_ROOT" >"$tmp/setup.log" 2>&1 ||
                { tail -n 30 "$tmp/setup.log"; fail "meson setup --prefix=/usr failed"; }
fi
mapfile -t targets < <(meson introspect --targets "$sub" | python3 -c '
import json, os, sys
for t in json.load(sys.stdin):
    if t["installed"]:
        for f in t["filename"]:
            print(os.path.relpath(f, sys.argv[1]))' "$sub")
[ ${#targets[@]} -ge 3 ] || fail "the /usr build lists ${#targets[@]} installed targets"
ninja -C "$sub" "${targets[@]}" >"$tmp/ninja.log" 2>&1 || { tail -n 30 "$tmp/ninja.log"; fail "building the /usr tree failed"; }
meson install -C "$sub" --no-rebuild --quiet --destdir "$tmp/stage" >"$tmp/install.log" 2>&1 ||
        { cat "$tmp/install.log"; fail "meson install --destdir (staging) failed"; }
echo "ok: built and staged for /usr ($(elapsed))"

# 2. The Debian packages the installed programs need at run time (from
# their shared libraries), plus systemd, D-Bus, polkit and bubblewrap.
packages="systemd systemd-sysv libpam-systemd dbus polkitd bubblewrap"
libs=()
while IFS= read -r elf; do
        [ "$(head -c4 "$elf" | tail -c3)" = ELF ] || continue
        while read -r lib _ path _; do
                [ "$path" != "not" ] || fail "$elf: $lib not found on this machine"
                case $path in /*) libs+=("$(readlink -f "$path")") ;; esac
        done < <(ldd "$elf" | grep '=>')
done < <(find "$tmp/stage" -type f -perm -u+x)
mapfile -t libs < <(printf '%s\n' "${libs[@]}" | sort -u)
# dpkg knows a merged-/usr library by one of its two names: ask for both
dpkg-query -S "${libs[@]}" "${libs[@]#/usr}" >"$tmp/owners" 2>/dev/null || true
for lib in "${libs[@]}"; do
        owner=$(grep -m1 -e ": $lib\$" -e ": ${lib#/usr}\$" "$tmp/owners") ||
                fail "a program needs $lib, which no Debian package ships"
        packages+=" ${owner%%:*}"
done
packages=$(tr ' ' '\n' <<<"$packages" | sort -u | paste -sd, -)
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
meson install -C "$sub" --no-rebuild --quiet --destdir "$root" >"$tmp/install.log" 2>&1 ||
        { cat "$tmp/install.log"; fail "meson install --destdir $root failed"; }
for f in /usr/share/dbus-1/system.d/org.periscope.Profiler1.conf \
         /usr/share/dbus-1/system-services/org.periscope.Profiler1.service \
         /usr/share/polkit-1/actions/org.periscope.policy \
         /usr/lib/systemd/system/periscoped.service \
         /usr/libexec/periscoped /usr/bin/periscope /usr/share/man/man8/periscoped.8; do
        [ -e "$root$f" ] || fail "meson install did not put $f where dbus-daemon, polkitd or systemd look"
done
user=periscope-user
chroot "$root" useradd --create-home --shell /bin/sh "$user"
echo "ok: installed into the tree ($(elapsed))"

# 5. Boot it: systemd as PID 1. The container gets what periscoped's unit
# keeps (perf events, kernel symbols, ring buffer locking, map_files); the
# unit takes away the rest.
machine=periscope-journal-$$
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

fi

tmpfiles_checks in_ct || fail "the install-time files are not as tmpfiles.d says"

# install-hook.sh as meson install runs it on the running system: the user
# and the cache come back from Periscope's own files alone.
in_ct systemctl stop periscoped.service 2>/dev/null || true
in_ct rm -rf /var/cache/periscope
in_ct userdel periscope-debuginfod 2>/dev/null || in_ct sh -c 'sed -i "/^periscope-debuginfod:/d" /etc/passwd /etc/group /etc/shadow /etc/gshadow'
in_ct id periscope-debuginfod >/dev/null 2>&1 && fail "cannot remove the user periscope-debuginfod from the tree"
cp "$MESON_SOURCE_ROOT/systemd/install-hook.sh" "$root/root/periscope-install-hook.sh"
in_ct sh /root/periscope-install-hook.sh /usr/lib/sysusers.d/periscope.conf /usr/lib/tmpfiles.d/periscope.conf ||
        fail "install-hook.sh failed in the tree"
in_ct id periscope-debuginfod >/dev/null || fail "install-hook.sh did not create the user periscope-debuginfod"
tmpfiles_checks in_ct || fail "install-hook.sh did not create the cache as tmpfiles.d says"
echo "ok: install-hook.sh made the user and the cache ($(elapsed))"

journal_checks in_ct "$user" || fail "the journal of periscoped is not as an administrator needs it"
echo "ok: journal ($(elapsed))"
