#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The Debian package (debian/): `dpkg-buildpackage -us -uc -b` from a clean
# export of the tree builds periscope and periscope-dbgsym; periscope holds what
# a user needs (CLI, daemon, helper, fetcher, unit, D-Bus and polkit files,
# sysusers and tmpfiles entries, man pages, completions); its maintainer
# scripts are debhelper's (sysusers, tmpfiles, systemd); lintian reports
# no error and no warning that debian/ does not explain (an override).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/test-lib.sh"
. "$here/lib.sh"
: "${MESON_SOURCE_ROOT:?}"
command -v lintian >/dev/null || fail "lintian missing: apt-get install -y lintian"

deb_build "$MESON_SOURCE_ROOT"
deb=$(ls "$DEB_DIR"/periscope_*_*.deb)
ls "$DEB_DIR"/periscope-dbgsym_*_*.deb >/dev/null 2>&1 || fail "no periscope-dbgsym package in $DEB_DIR"
echo "ok: built $(cd "$DEB_DIR" && ls ./*.deb | tr '\n' ' ')"

test_tmpdir
tmp=$TEST_TMP
dpkg-deb --contents "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$tmp/contents"
for f in /usr/bin/periscope /usr/libexec/periscoped /usr/libexec/periscope-helper \
         /usr/libexec/periscope-debuginfod-fetch /lib/systemd/system/periscoped.service \
         /usr/share/dbus-1/system.d/org.periscope.Profiler1.conf \
         /usr/share/dbus-1/system-services/org.periscope.Profiler1.service \
         /usr/share/dbus-1/interfaces/org.periscope.Profiler1.xml \
         /usr/share/polkit-1/actions/org.periscope.policy \
         /usr/lib/sysusers.d/periscope.conf /usr/lib/tmpfiles.d/periscope.conf \
         /usr/share/man/man1/periscope.1.gz /usr/share/man/man8/periscoped.8.gz \
         /usr/share/bash-completion/completions/periscope /usr/share/zsh/vendor-completions/_periscope \
         /usr/share/fish/vendor_completions.d/periscope.fish \
         /usr/share/doc/periscope/copyright; do
        grep -qx "$f" "$tmp/contents" || { cat "$tmp/contents"; fail "the package lacks $f"; }
done
echo "ok: the package holds the programs, unit, D-Bus and polkit files, man pages, bash, zsh and fish completions"

mkdir "$tmp/control"
dpkg-deb --control "$deb" "$tmp/control"
grep -q 'systemd-sysusers .*periscope.conf' "$tmp/control/postinst" || fail "postinst does not run systemd-sysusers (dh_installsysusers)"
grep -q 'systemd-tmpfiles .*--create periscope.conf' "$tmp/control/postinst" || fail "postinst does not run systemd-tmpfiles (dh_installtmpfiles)"
grep -q "deb-systemd-helper purge 'periscoped.service'" "$tmp/control/postrm" || fail "postrm lacks dh_installsystemd's purge"
grep -q 'rm -rf /var/cache/periscope$' "$tmp/control/postrm" || fail "postrm does not remove /var/cache/periscope on purge"
depends=$(dpkg-deb --field "$deb" Depends)
for p in bubblewrap dbus polkitd systemd libelf1 libdw1; do
        [[ ",$depends," =~ [,\ ]$p[\ ,\(] ]] || fail "Depends lacks $p: $depends"
done
echo "ok: maintainer scripts from debhelper, Depends: $depends"

# lintian: errors fail; so does any warning debian/ does not override
# (each override says why, in debian/periscope.lintian-overrides).
st=0
lintian --fail-on error,warning --display-info "$DEB_DIR"/periscope_*.changes >"$tmp/lintian" 2>&1 || st=$?
cat "$tmp/lintian"
[ $st = 0 ] || fail "lintian failed (exit $st): the errors and warnings above"
! grep -E '^[EW]: ' "$tmp/lintian" || fail "lintian reports errors or warnings (above)"
echo "ok: lintian: no errors, no unexplained warnings"
