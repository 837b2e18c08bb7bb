#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The package as a user installs it: a fresh Debian 12 tree (debootstrap
# minbase with systemd and D-Bus, cached) booted with systemd as PID 1
# (systemd-nspawn --boot), then inside it `apt install ./periscope_*.deb`
# pulls in the runtime dependencies (bubblewrap, polkitd, the libraries),
# creates the users and /var/cache/periscope, and `periscope record`
# works at once through the D-Bus-activated service, as root and as a
# user; `apt purge periscope` then removes every file the package added
# (its own, /var/cache/periscope) and keeps the system users. The tree's
# file list before and after is compared; what the dependencies brought
# stays (apt purge removes only the package named). Then, with the
# dependencies in place, install, record and purge again must leave the
# file list exactly as it was.
#
# Needs root, the Debian mirror (network) for the tree and the
# dependencies, debootstrap, systemd-container. PERISCOPE_TEST_CACHE holds
# the tree and the package; PERISCOPE_DEBIAN_MIRROR changes the mirror.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# the booted tree's helpers: installed_boot, in_ct, ct_record, service_state,
# $root, $tmp (and their cleanup)
. "$here/../service/installed/lib.sh"
. "$here/lib.sh"

deb_build "$src"
debs=("$DEB_DIR"/periscope_*_*.deb)
echo "ok: package of tree ${DEB_TREE:0:12} ($(elapsed))"

# 1. The fresh tree, made once (a rerun takes seconds).
cache=$cache_top/bookworm-fresh
mkdir -p "$cache_top"
exec 9>"$cache.lock"
flock 9
if [ ! -e "$cache/complete" ]; then
        echo "building a fresh Debian 12 tree in $cache (debootstrap from $mirror)"
        rm -rf "$cache"
        mkdir -p "$cache"
        debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus bookworm "$cache/root" "$mirror" \
                >"$cache/debootstrap.log" 2>&1 || { tail -n 15 "$cache/debootstrap.log"; fail "debootstrap of Debian 12 from $mirror failed"; }
        chroot "$cache/root" apt-get clean
        touch "$cache/complete"
        echo "ok: fresh tree built: $(du -sh "$cache/root" | cut -f1) ($(elapsed))"
fi
flock -u 9
exec 9>&-

# 2. This run's tree: an overlay on the cached one.
mkdir -p "$tmp/upper" "$tmp/work" "$root"
mount -t overlay overlay -o "lowerdir=$cache/root,upperdir=$tmp/upper,workdir=$tmp/work" "$root" ||
        fail "cannot mount an overlay on $cache/root"
for p in bubblewrap polkitd periscope; do
        ! chroot "$root" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep >/dev/null 'ok installed' ||
                fail "the fresh tree already has $p"
done
chroot "$root" useradd --create-home --shell /bin/sh "$user"
mkdir -p "$root/var/tmp/debs"
cp "${debs[@]}" "$root/var/tmp/debs/"
chmod -R a+rX "$root/var/tmp/debs"

# The tree's files as seen from here (the container's /proc, /sys, /run,
# /tmp are its own mounts): what changes by itself (logs, apt's and
# dpkg's state, systemd's, caches of the loader and man) is left out.
files() {
        (cd "$root" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./run -o -path ./tmp -o -path ./dev \
                -o -path ./var/log -o -path ./var/lib/apt -o -path ./var/cache/apt -o -path ./var/lib/dpkg \
                -o -path ./var/cache/debconf -o -path ./var/lib/systemd -o -path ./var/tmp -o -path ./var/cache/man \
                -o -path ./var/cache/ldconfig -o -path ./root \) -prune -o -print) | sed 's|^\.||' | sort
}
files >"$tmp/files.before"

installed_boot

# 3. apt install ./periscope_*.deb, as a user does.
in_ct env DEBIAN_FRONTEND=noninteractive apt-get install -y /var/tmp/debs/"$(basename "${debs[0]}")" \
        >"$tmp/apt-install.log" 2>&1 || { tail -n 30 "$tmp/apt-install.log"; fail "apt install ./$(basename "${debs[0]}") failed"; }
tail -n 3 "$tmp/apt-install.log"
for p in periscope bubblewrap polkitd; do
        in_ct dpkg-query -W -f='${Status}\n' "$p" | grep >/dev/null 'install ok installed' ||
                fail "$p is not installed after apt install ./$(basename "${debs[0]}")"
done
in_ct dpkg-query -W -f='${Package}\n' | sort >"$tmp/packages.installed"
echo "ok: apt installed the package and its dependencies ($(elapsed))"

for u in periscope-helper periscope-debuginfod; do
        in_ct getent passwd "$u" >/dev/null || fail "postinst did not create the user $u"
done
owner=$(in_ct stat -c '%U %a' /var/cache/periscope/debuginfod) || fail "postinst did not create /var/cache/periscope/debuginfod"
[ "$owner" = "periscope-debuginfod 700" ] || fail "/var/cache/periscope/debuginfod is $owner, not periscope-debuginfod 700"
echo "ok: users and /var/cache/periscope created"

# 4. A recording at once, through the activated service, as root and as a user.
[ "$(in_ct systemctl is-active periscoped.service || true)" != active ] || fail "periscoped runs before anyone asked (the package starts it)"
ct_record root "$tmp/record.log" -o /var/tmp/root.syscap -- dd if=/dev/zero of=/dev/null bs=64k count=200000
in_ct periscope report --no-progress --folded /var/tmp/root.syscap >"$tmp/root.folded" ||
        fail "periscope report of root's recording failed"
grep -q '^dd' "$tmp/root.folded" || { head "$tmp/root.folded"; fail "root's recording has no stack of dd"; }
in_ct journalctl --no-pager -b -u periscoped.service | grep >/dev/null 'Started periscoped.service\|Started Periscope' ||
        { service_state; fail "the recording did not go through periscoped.service (D-Bus activation)"; }
mkdir -p "$root/home/$user/out"
chroot "$root" chown "$user:" "/home/$user/out"
ct_record "$user" "$tmp/record-user.log" -o "/home/$user/out/user.syscap" -- dd if=/dev/zero of=/dev/null bs=64k count=200000
echo "ok: periscope record through the D-Bus-activated service, as root and as $user ($(elapsed))"

# 5. apt purge: every file the package added goes; the users stay.
rm -rf "$root/home/$user/out"
in_ct env DEBIAN_FRONTEND=noninteractive apt-get purge -y periscope >"$tmp/apt-purge.log" 2>&1 ||
        { tail -n 30 "$tmp/apt-purge.log"; fail "apt purge periscope failed"; }
for u in periscope-helper periscope-debuginfod; do
        in_ct getent passwd "$u" >/dev/null || fail "apt purge removed the system user $u"
done
# files of the packages apt pulled in stay, with what their scripts made
in_ct dpkg-query -W -f='${Package}\n' | sort >"$tmp/packages.after"
comm -13 <(chroot "$cache/root" dpkg-query -W -f='${Package}\n' | sort) "$tmp/packages.after" >"$tmp/packages.new"
while read -r p; do in_ct dpkg-query -L "$p"; done <"$tmp/packages.new" | sort -u >"$tmp/files.deps"
files >"$tmp/files.after"
comm -13 "$tmp/files.before" "$tmp/files.after" | comm -23 - "$tmp/files.deps" >"$tmp/files.left"
# the users' entries: systemd-sysusers keeps the previous files as NAME-
grep -vxE '/etc/(passwd|group|shadow|gshadow)-' "$tmp/files.left" >"$tmp/files.unexplained" || true
# and what the dependencies' own scripts and services made (polkitd's
# user's home, dbus's machine id): not under the package's paths
grep -E '^/(usr/(bin/periscope|libexec/periscope|share/(dbus-1|polkit-1|man|doc|bash-completion|zsh|fish)/.*periscope)|lib/systemd/system/periscoped|usr/lib/(sysusers|tmpfiles)\.d/periscope|var/cache/periscope|usr/lib/[^/]*/periscope)' \
        "$tmp/files.unexplained" >"$tmp/files.ours" || true
if [ -s "$tmp/files.ours" ]; then
        cat "$tmp/files.ours"
        fail "apt purge periscope left the files above"
fi
dpkg-deb --contents "${debs[0]}" | awk '{ print $6 }' | sed 's|^\./|/|' | grep -v '/$' >"$tmp/deb.files"
while read -r f; do
        [ ! -e "$root$f" ] || fail "apt purge periscope left $f"
done <"$tmp/deb.files"
[ ! -e "$root/var/cache/periscope" ] || fail "apt purge periscope left /var/cache/periscope"
echo "ok: apt purge removed every file the package added; the system users stay;" \
     "$(grep -c . "$tmp/files.unexplained" || true) files the dependencies' scripts made stay ($(elapsed))"

# 6. Strictly, with the dependencies in place: the tree's files after
# install, record and purge are exactly those before.
files >"$tmp/files.before2"
in_ct env DEBIAN_FRONTEND=noninteractive apt-get install -y /var/tmp/debs/"$(basename "${debs[0]}")" \
        >"$tmp/apt-install2.log" 2>&1 || { tail -n 30 "$tmp/apt-install2.log"; fail "the second apt install failed"; }
ct_record root "$tmp/record2.log" -o /var/tmp/root2.syscap -- dd if=/dev/zero of=/dev/null bs=64k count=100000
in_ct env DEBIAN_FRONTEND=noninteractive apt-get purge -y periscope >"$tmp/apt-purge2.log" 2>&1 ||
        { tail -n 30 "$tmp/apt-purge2.log"; fail "the second apt purge failed"; }
files >"$tmp/files.after2"
if ! diff -u "$tmp/files.before2" "$tmp/files.after2" >"$tmp/files.diff2"; then
        cat "$tmp/files.diff2"
        fail "install, record and purge with the dependencies in place changed the tree's files (diff above)"
fi
echo "ok: with the dependencies in place, install + record + purge leaves the tree's files as they were ($(elapsed))"
