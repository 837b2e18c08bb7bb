#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The installed service, as a user gets it (lib.sh): a Debian 12 tree
# booted once with systemd as PID 1, Periscope's Debian package installed
# into it with `apt-get install ./periscope_*.deb`, and in it the features users
# rely on, each against periscoped under its unit as shipped (D-Bus
# activated), with the same workloads and assertions as its private-daemon
# test (shared through sourced files, named in each *-checks.sh):
# the unit's exposure; DWARF stacks as root and as a user; kernel names;
# --system; JIT code named from a perf map (node) and from a jitdump, a
# perf map's safety; /run/.containerenv in a user's mount namespace; a
# Flatpak-like sandbox; a package upgraded while its program runs; the
# control fd, --memory and the trace fd; sysprof-cli through
# periscoped-sysprof.service; the journal's checks (journal-checks.sh,
# once it exists); last systemctl stop/restart/try-restart during a
# recording, and its perf opener killed during one (Restart=). Each check prints "ok: NAME" or "FAIL: NAME: reason"; the test
# fails if any does, after all ran. A feature whose private-daemon test
# passes and whose check here fails is a failure of both.
#
# Needs root, network to the Debian mirror on the first run (or when the
# package's dependencies change), debootstrap, systemd-container and what
# builds the package (tests/debian/lib.sh).
# PERISCOPE_DEBIAN_MIRROR and PERISCOPE_TEST_CACHE change the mirror and
# where the trees are kept; PERISCOPE_INSTALLED_CHECKS="NAME …" runs only
# those checks (to work on one).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
: "${PERISCOPE:?}" "${WORKLOAD_SOURCE:?}" "${DEMO:?}" "${CLIENT:?}" "${WORKLOAD:?}" "${WRITER:?}"
for f in "$here"/basic-checks.sh "$here"/jit-checks.sh "$here"/container-checks.sh \
         "$here"/control-checks.sh "$here"/sysprof-checks.sh "$here"/stop-checks.sh "$here"/opener-checks.sh; do
        . "$f"
done

for f in "$DEMO" "$CLIENT" "$WORKLOAD" "$WRITER"; do
        ! ldd "$f" | grep >/dev/null -E 'lib(a|ub)san' ||
                fail "$f is built with sanitizers, whose libraries the tree lacks: run service-installed from a build without them"
done
installed_prepare

# The checks' programs, inside: the private-daemon tests' workloads, built
# here (the tree is Debian 12 like this machine) or copied from the build.
gcc -O2 -fomit-frame-pointer -o "$root/usr/local/bin/deep-nofp" "$WORKLOAD_SOURCE" || fail "cannot build the workload"
# the user runs their own copy, from their home (which the unit sees read-only)
install -m 0755 "$root/usr/local/bin/deep-nofp" "$root/home/$user/deep-nofp"
chroot "$root" chown "$user:" "/home/$user/deep-nofp"
cc -O2 -Wall -o "$root/usr/local/bin/jitdump-writer" "$src/tests/sandbox-helper/jitdump-writer.c" || fail "cannot build jitdump-writer"
install -m 0755 "$DEMO" "$root/usr/local/bin/demo-workload"
install -m 0755 "$CLIENT" "$root/usr/local/bin/collector-client"
install -m 0755 "$WORKLOAD" "$root/usr/local/bin/memory-workload"
install -m 0755 "$WRITER" "$root/usr/local/bin/trace-writer"
install -D -m 0644 "$src/tests/lib/fib.js" "$root/usr/local/share/periscope-tests/fib.js"
# root may use org.gnome.sysprof3.* without an agent, as on the machine
# that runs test-sysprof3-cli.sh
cp "$src/scripts/setup.d/20-polkit-sysprof.sh" "$root$CT_WORK/"
chroot "$root" bash "$CT_WORK/20-polkit-sysprof.sh" || fail "scripts/setup.d/20-polkit-sysprof.sh failed in the tree"
echo "ok: the checks' programs installed ($(elapsed))"

installed_boot
installed_apt_install

# run_check NAME FUNCTION [ARGS…]: FUNCTION in a subshell (its fail ends it
# alone); prints "ok: NAME" or "FAIL: NAME: reason" and keeps the result
results=()
n_failed=0
run_check() {
        local name=$1 t0=$SECONDS st=0
        shift
        if [ -n "${PERISCOPE_INSTALLED_CHECKS:-}" ] && ! [[ " $PERISCOPE_INSTALLED_CHECKS " == *" $name "* ]]; then
                return 0
        fi
        echo "=== $name"
        CHECK_REASON=$tmp/reason.$name
        rm -f "$CHECK_REASON"
        set +e
        ( set -euo pipefail; "$@" )
        st=$?
        set -e
        CHECK_REASON=
        local t=$((SECONDS - t0))
        if [ $st = 0 ]; then
                echo "ok: $name ($t s)"
                results+=("ok    $name ($t s)")
        else
                local why="exit status $st"
                [ ! -s "$tmp/reason.$name" ] || why=$(head -c 300 "$tmp/reason.$name")
                echo "FAIL: $name: $why ($t s)"
                results+=("FAIL  $name: $why ($t s)")
                n_failed=$((n_failed + 1))
                service_state
        fi
}

run_check unit check_unit
run_check deep check_deep
run_check kernel check_kernel
run_check system check_system
run_check jit-perf-map check_jit_perf_map
run_check jit-perf-map-safety check_jit_perf_map_safety
run_check jitdump check_jitdump
run_check containerenv check_containerenv
run_check flatpak-info check_flatpak_info
run_check upgrade check_upgrade
run_check control-fd check_control_fd
run_check memory check_memory
run_check trace-fd check_trace_fd
run_check sysprof-cli check_sysprof_cli
run_check service-journal check_service_journal
# journal-checks.sh: levels, structured fields, refusals at notice, and the
# files tmpfiles.d makes
. "$here/journal-checks.sh"
run_check journal journal_checks in_ct "$user"
run_check tmpfiles tmpfiles_checks in_ct
run_check install-hook install_hook_checks in_ct "$root"
# The stops last: they restart the service, whose recording ids then start
# again at 1 (the journal's checks read a recording's entries by its id).
run_check stop-restart stop_checks in_ct
# Its perf opener killed: systemd's Restart=on-failure brings it back.
run_check opener-restart opener_checks in_ct

echo
echo "installed-service checks ($(elapsed) in all):"
printf '  %s\n' "${results[@]}"
[ $n_failed = 0 ] || fail "$n_failed of ${#results[@]} checks failed under the installed unit"
echo "ok: all ${#results[@]} checks passed under the installed unit"
