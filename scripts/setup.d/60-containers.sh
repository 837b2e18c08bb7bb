#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Machine setup for the container tests (tests/resolver/), idempotent, as
# root: a Podman configuration that works on this kernel (runc, cgroupfs,
# lower ulimits), and an unprivileged user for rootless Podman with
# fuse-overlayfs. See /work/shared/RECIPES.md and docs/containers.md.
set -euo pipefail

conf_dir=/etc/periscope-tests
mkdir -p "$conf_dir"

# Rootful Podman: crun fails on hybrid cgroups, root lacks CAP_SYS_RESOURCE.
cat >"$conf_dir/containers.conf.new" <<'EOF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
mv -f "$conf_dir/containers.conf.new" "$conf_dir/containers.conf"

# Rootless Podman users (one per test that runs rootless containers, so
# tests can run in parallel): storage through fuse-overlayfs, so host root
# gets EACCES through /proc/PID/root and /proc/PID/map_files.
setup_rootless_user() { # user, first subuid
        local user=$1 sub=$2 uid home
        if ! id -u "$user" >/dev/null 2>&1; then
                useradd -m -s /bin/bash "$user"
        fi
        uid=$(id -u "$user")
        home=$(getent passwd "$user" | cut -d: -f6)
        grep -q "^$user:" /etc/subuid || usermod --add-subuids "$sub-$((sub + 65535))" "$user"
        grep -q "^$user:" /etc/subgid || usermod --add-subgids "$sub-$((sub + 65535))" "$user"
        mkdir -p "/run/user/$uid"
        chown "$user:" "/run/user/$uid"
        chmod 700 "/run/user/$uid"
        runuser -u "$user" -- mkdir -p "$home/.config/containers"
        runuser -u "$user" -- tee "$home/.config/containers/storage.conf" >/dev/null <<'EOF2'
[storage]
driver = "overlay"
[storage.options.overlay]
mount_program = "/usr/bin/fuse-overlayfs"
EOF2
        # The same engine settings as root's.
        runuser -u "$user" -- tee "$home/.config/containers/containers.conf" >/dev/null <"$conf_dir/containers.conf"
}
[ -e /dev/fuse ] && chmod 666 /dev/fuse
setup_rootless_user periscope-rl 200000
setup_rootless_user periscope-rlh 300000
# The rootless-caller test (tests/resolver/test-record-rootless-caller.sh):
# a user recording its own rootless container through periscoped, and
# another user whose container it must not get.
setup_rootless_user periscope-ns 400000
setup_rootless_user periscope-ns2 500000
# tests/resolver/test-podman-hostile-availability.sh pads this user's store.
setup_rootless_user periscope-rla 600000
exit 0
