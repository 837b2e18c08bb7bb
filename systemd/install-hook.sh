#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# install-hook.sh SYSUSERS_CONF TMPFILES_CONF: meson install's last step
# (meson.add_install_script). On the running system (no DESTDIR), creates
# what the service needs now rather than at the next boot: the
# periscope-debuginfod user (systemd-sysusers) and /var/cache/periscope
# (systemd-tmpfiles --create), from Periscope's own files only. A package
# build (DESTDIR set) leaves that to the package's scripts (README.md).
set -eu
sysusers=$1 tmpfiles=$2
if [ -n "${DESTDIR:-}" ]; then
        echo "periscope: DESTDIR is set: run 'systemd-sysusers $sysusers' and 'systemd-tmpfiles --create $tmpfiles' when the package is installed"
        exit 0
fi
if [ "$(id -u)" != 0 ]; then
        echo "periscope: not root: run 'systemd-sysusers $sysusers' and 'systemd-tmpfiles --create $tmpfiles' as root"
        exit 0
fi
for tool in systemd-sysusers systemd-tmpfiles; do
        if ! command -v "$tool" >/dev/null 2>&1; then
                echo "periscope: $tool not found: create the user periscope-debuginfod and the directories of $tmpfiles by hand"
                exit 0
        fi
done
echo "periscope: systemd-sysusers $sysusers"
systemd-sysusers "$sysusers"
echo "periscope: systemd-tmpfiles --create $tmpfiles"
systemd-tmpfiles --create "$tmpfiles"
