# SPDX-License-Identifier: LGPL-2.1-or-later
# guest-lib.sh: sourced, inside the VM, by the run.sh scripts of
# tests/vm/ (guest-fast.sh, guest-systemd.sh), as `. SHARE/guest-lib.sh`
# with SHARE as $1. Collects, decides nothing: the host checks what lands
# in SHARE/out/.
#   step NAME CMD…          runs CMD, output in out/NAME.log; appends
#                           "NAME STATUS MILLISECONDS" to out/steps
#   facts                   out/uptime (when the script started),
#                           out/kernel (uname -r), out/paranoid
#   grant_profile_own       a polkit rule granting org.periscope.profile-own
#                           to a group with $user in it, as an admin would
#                           at perf_event_paranoid 3; waits until it applies
#   install_periscope       `apt-get install ./periscope_*.deb` of the package
#                           in SHARE/debs/ (offline: the image holds its
#                           dependencies), SHARE/deep-nofp and the programs
#                           in SHARE/bin/ (if any) into /usr/local/bin
#   installed_periscope     what the package's scripts made: its users and
#                           /var/cache/periscope/debuginfod
#   activate_periscope      what a `meson install` (the arm64 guest's cross
#                           build) leaves to a live system: users, state
#                           directories, the unit and the bus policy
#   report NAME CAPTURE     out/NAME.folded and out/NAME.report
share=$1
out=$share/out
mkdir -p "$out"
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8

step() {
        local name=$1 t0 rc=0
        shift
        t0=$(date +%s%N)
        "$@" >"$out/$name.log" 2>&1 || rc=$?
        echo "$name $rc $((($(date +%s%N) - t0) / 1000000))" >>"$out/steps"
        return $rc
}

facts() {
        cut -d ' ' -f 1 /proc/uptime >"$out/uptime"
        uname -r >"$out/kernel"
        cat /proc/sys/kernel/perf_event_paranoid >"$out/paranoid"
}

install_periscope() {
        # the image is booted with -snapshot: this never reaches the cache.
        # (no Recommends: debuginfod is not in the image, which has no
        # network; apt would only say so)
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$share"/debs/periscope_*.deb &&
                dpkg-query -W -f='${Status}\n' periscope | grep 'install ok installed' &&
                install -m 0755 "$share/deep-nofp" /usr/local/bin/deep-nofp &&
                if [ -d "$share/bin" ]; then install -m 0755 "$share"/bin/* /usr/local/bin/; fi
}

# What the package's maintainer scripts (debhelper's) did on the running
# system: the users and the cache (systemd-sysusers, systemd-tmpfiles);
# systemd and dbus-daemon find the unit and the bus policy by themselves.
installed_periscope() {
        getent passwd periscope-helper && getent passwd periscope-debuginfod &&
                stat -c '%U %a %n' /var/cache/periscope/debuginfod
}

activate_periscope() {
        systemd-sysusers &&
                systemd-tmpfiles --create &&
                systemctl daemon-reload &&
                systemctl reload dbus.service
}

report() {
        periscope report --no-progress --folded "$2" >"$out/$1.folded" &&
                periscope report --no-progress "$2" >"$out/$1.report"
}

# What an administrator of a Debian machine does to let users outside an
# active local session (ssh, cron, services) record their own processes
# at perf_event_paranoid 3 (docs/security.md): a polkit rule for a group.
grant_profile_own() { # (uses $user, $home, as_user)
        local i
        groupadd --system profiling && usermod -a -G profiling "$user" && mkdir -p /etc/polkit-1/rules.d &&
                printf '%s\n' 'polkit.addRule(function(action, subject) {' \
                        '    if (action.id == "org.periscope.profile-own" && subject.isInGroup("profiling")) {' \
                        '        return polkit.Result.YES;' '    }' '});' \
                        >/etc/polkit-1/rules.d/50-periscope-profile-own.rules || return 1
        # polkitd reads its rules again when the directory changes
        for i in $(seq 40); do
                as_user periscope record -o "$home/granted.syscap" -- true && return 0
                sleep 0.5
        done
        return 1
}
