# SPDX-License-Identifier: LGPL-2.1-or-later
# lib.sh: shared helpers of the container tests (sourced). Every missing
# prerequisite is a failure with a reason, never a skip.
set -euo pipefail
# With pipefail, `producer | grep -q` fails when grep -q leaves at its first
# match and the producer, still writing, dies of SIGPIPE (CI saw it with
# `echo "$text" | grep -q`): the tests read a pipe to its end with
# `| grep >/dev/null PATTERN`.

. "$(dirname "${BASH_SOURCE[0]}")/../lib/test-lib.sh" # fail, as_user, wait_for

: "${PERISCOPE_RESOLVE:?set by meson: path of periscope-resolve}"
[ "$(id -u)" = 0 ] || fail "container tests run as root (./test.sh does)"
export CONTAINERS_CONF=/etc/periscope-tests/containers.conf
# tests/lib/folded.py for the checks' Python.
export PYTHONPATH="$(cd "$(dirname "${BASH_SOURCE[0]}")/../lib" && pwd)${PYTHONPATH:+:$PYTHONPATH}"
[ -f "$CONTAINERS_CONF" ] || fail "$CONTAINERS_CONF missing: run scripts/setup.d/60-containers.sh (./test.sh does)"

# stop_recording LOG [WHAT]: Ctrl-C to `periscope record` ($rec), which ends
# with 130, its capture complete (else fails naming WHAT); LOG, its stderr,
# reports no memory errors.
stop_recording() {
        kill -INT $rec
        st=0; wait $rec || st=$?
        [ $st = 130 ] || { cat "$1"; fail "${2:-periscope record --container} failed (exit $st after SIGINT, want 130)"; }
        ! grep -qE "Sanitizer|runtime error:" "$1" || { cat "$1"; fail "memory errors in periscoped"; }
}

need() {
        for c in "$@"; do
                command -v "$c" >/dev/null || fail "'$c' not found: apt-get install the packages in scripts/packages.txt (./test.sh does)"
        done
}
need gcc cmp
# build_spin, build_hot_version and the upgrade checks
. "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

WORK=$(mktemp -d /tmp/periscope-ctr-test.XXXXXX)
chmod 755 "$WORK"
CLEANUPS=()
on_exit() {
        local i
        for ((i = ${#CLEANUPS[@]} - 1; i >= 0; i--)); do
                eval "${CLEANUPS[$i]}" >/dev/null 2>&1 || true
        done
        # PERISCOPE_TEST_KEEP=1 keeps the work directory (captures, logs) to look at
        if [ -n "${PERISCOPE_TEST_KEEP:-}" ]; then echo "kept: $WORK" >&2; else rm -rf "$WORK"; fi
}
trap on_exit EXIT
trap 'exit 1' INT TERM
cleanup() { CLEANUPS+=("$*"); }

# A minimal rootfs with the workload at /bin/app and the libc it needs.
make_rootfs() { # dir, binary
        local d=$1
        mkdir -p "$d/bin" "$d/lib64" "$d/usr/lib/x86_64-linux-gnu" "$d/run"
        cp "$2" "$d/bin/app"
        cp /lib64/ld-linux-x86-64.so.2 "$d/lib64/"
        cp /usr/lib/x86_64-linux-gnu/libc.so.6 "$d/usr/lib/x86_64-linux-gnu/"
        chmod -R a+rX "$d"
}

# The busybox-shell variant of that rootfs (sh and sleep in /bin), imported
# as root's image: sets image.
spin_sh_image() {
        build_spin "$WORK/spin"
        make_rootfs "$WORK/rootfs" "$WORK/spin"
        cp /bin/busybox "$WORK/rootfs/bin/busybox"
        ln -s busybox "$WORK/rootfs/bin/sh"
        ln -s busybox "$WORK/rootfs/bin/sleep"
        image=$(podman_import "" "$WORK/rootfs" localhost/periscope-test-spin-sh)
}

# Runs the spin rootfs as $user's (rootless_user) container name: sets image
# and pid. Rootless Podman leaves a catatonit pause process: it is ended (by
# its pid) last, after the container.
rootless_spin_container() { # name
        build_spin "$WORK/spin"
        make_rootfs "$WORK/rootfs" "$WORK/spin"
        image=$(podman_import "$as_user" "$WORK/rootfs" localhost/periscope-test-spin)
        cleanup 'kill "$(cat /run/user/'$uid'/libpod/tmp/pause.pid)"'
        cleanup "$as_user podman rm -f -t 0 $1"
        $as_user podman run -d --network none --name "$1" "$image" >/dev/null 2>"$WORK/run.err" ||
                { cat "$WORK/run.err"; fail "rootless podman run failed"; }
        pid=$($as_user podman inspect -f '{{.State.Pid}}' "$1")
        [ "$pid" -gt 0 ] || fail "no pid for $1"
}

# Waits (10 s at most) for the `app` exec'd into the container cid: the one
# whose parent is the container's conmon (-c CID), none of the pids in skip.
# Sets app_pid; fails with message when none came.
wait_exec_app() { # cid, message, [pids to skip, space-separated]
        local cid=$1 skip=" ${3:-} " p
        app_pid=
        for _ in $(seq 200); do
                for p in $(pgrep -x app || true); do
                        [[ "$skip" == *" $p "* ]] && continue
                        tr '\0' ' ' <"/proc/$(ps -o ppid= -p "$p" | tr -d ' ')/cmdline" 2>/dev/null | grep >/dev/null -- "-c $cid" && app_pid=$p
                done
                [ -n "$app_pid" ] && break
                sleep 0.05
        done
        [ -n "$app_pid" ] || fail "$2"
}

# A user of scripts/setup.d/60-containers.sh for rootless Podman: sets user,
# uid, home and as_user (the command prefix that runs as that user).
rootless_user() { # name
        user=$1
        uid=$(id -u "$user" 2>/dev/null) || fail "user $user missing: run scripts/setup.d/60-containers.sh"
        home=$(getent passwd "$user" | cut -d: -f6)
        as_user="runuser -u $user -- env XDG_RUNTIME_DIR=/run/user/$uid CONTAINERS_CONF=$home/.config/containers/containers.conf"
}

# Field of the "map" line for path in the resolver output.
map_field() { # output-file, path, field
        awk -F'\t' -v p="$2" -v f="$3" '$1 == "map" && $2 == p { for (i = 3; i <= NF; i++) if (index($i, f "=") == 1) { print substr($i, length(f) + 2); exit } }' "$1"
}

# Asserts that path was resolved by method (regex) to a file with the right
# identity, and that the resolved bytes are those of the expected file.
assert_resolved() { # output-file, path, method-regex, expected-file, copy-dir
        local out=$1 path=$2 method=$3 expected=$4 copies=$5 got verdict
        got=$(map_field "$out" "$path" method)
        verdict=$(map_field "$out" "$path" verdict)
        [[ "$got" =~ ^($method)$ ]] || { cat "$out" >&2; fail "$path resolved by '$got', expected '$method'"; }
        [[ "$verdict" == match || "$verdict" == match-alias ]] || { cat "$out" >&2; fail "$path: verdict '$verdict'"; }
        cmp -s "$copies/$(basename "$path")" "$expected" || fail "$path: resolved file differs from $expected"
        echo "ok: $path → $got ($verdict) $(map_field "$out" "$path" host)"
}

resolve() { # out-file, copy-dir, args...
        local out=$1 copies=$2; shift 2
        rm -rf "$copies"; mkdir -p "$copies"
        "$PERISCOPE_RESOLVE" --copy-to="$copies" "$@" >"$out" 2>"$out.err" || { cat "$out.err" >&2; fail "periscope-resolve $* failed"; }
}

# Imports a rootfs as an image once per content (tag = hash of the rootfs).
podman_import() { # podman-command-prefix (string), rootfs, name
        local pfx=$1 rootfs=$2 name=$3 tag
        tag=$(cd "$rootfs" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-12)
        if ! $pfx podman image exists "$name:$tag" 2>/dev/null; then
                tar -C "$rootfs" -c . | $pfx podman import --change 'CMD ["/bin/app"]' - "$name:$tag" >/dev/null 2>&1 ||
                        fail "podman import of $name failed"
        fi
        echo "$name:$tag"
}

# Asserts that the container/app listing has query → pid, and that a query
# naming nothing fails with a message.
assert_listed() { # query, pid, engine
        local out
        out=$("$PERISCOPE_RESOLVE" --container="$1") || fail "--container=$1 found nothing"
        grep -qP "^instance\tengine=$3\t.*\tpids=(.*,)?$2(,.*)?$" <<<"$out" || { echo "$out"; fail "--container=$1 does not list pid $2"; }
        "$PERISCOPE_RESOLVE" --list | grep >/dev/null -P "^instance\tengine=$3\t.*\tpids=(.*,)?$2(,.*)?$" || fail "--list lacks pid $2"
        if "$PERISCOPE_RESOLVE" --container=no-such-container-$$ 2>"$WORK/nomatch.err"; then fail "an unknown container matched"; fi
        grep -q "no running container or Flatpak app matches" "$WORK/nomatch.err" || fail "no message for an unknown container"
        echo "ok: --container=$1 lists pid $2"
}

# End to end (the tool-level tests with PERISCOPE_E2E=1): records pid through
# a private periscoped with `periscope record -p` and asserts that >= 95% of
# its samples end in main;hot_outer;hot_inner in `periscope report --folded`
# (the service's own symbols) and that the workload's mapping is verified.
record_e2e_spin() { # pid, mapped-path-of-the-workload
        local pid=$1 path=$2
        : "${PERISCOPE:?}" "${PERISCOPED:?}"
        need python3
        export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$WORK/no-such-bus
        PERISCOPED="$PERISCOPED" "$PERISCOPE" record --private -p "$pid" --duration=2 -o "$WORK/e2e.syscap" 2>"$WORK/e2e-rec.err" ||
                { cat "$WORK/e2e-rec.err"; fail "periscope record failed"; }
        ! grep -qE "Sanitizer|runtime error:" "$WORK/e2e-rec.err" || { cat "$WORK/e2e-rec.err"; fail "memory errors in periscoped"; }
        "$PERISCOPE" report --folded --no-progress -p "$pid" "$WORK/e2e.syscap" >"$WORK/e2e-folded.txt" || fail "periscope report failed"
        python3 - "$WORK/e2e-folded.txt" <<'PY' || fail "fewer than 95% of the samples carry the right names"
import folded, sys
total = good = 0
for s in folded.stacks(sys.argv[1]):
    total += s.count
    user = s.user
    if user[-3:] == ["main", "hot_outer", "hot_inner"]:
        good += s.count
print("ok: %d/%d samples (%.1f%%) main;hot_outer;hot_inner" % (good, total, 100 * good / max(total, 1)))
sys.exit(0 if total >= 50 and good / total >= 0.95 else 1)
PY
        "$PERISCOPE" report --mappings --no-progress "$WORK/e2e.syscap" >"$WORK/e2e-maps.txt" || fail "periscope report --mappings failed"
        grep -A1 -F "$path" "$WORK/e2e-maps.txt" | grep >/dev/null "verified" || { cat "$WORK/e2e-maps.txt"; fail "$path is not shown as verified"; }
        echo "ok: $path verified in report --mappings: $(grep -A1 -F "$path" "$WORK/e2e-maps.txt" | tr -s ' \n' ' ')"
}

# Builds a Flatpak app in dir whose command NAME is BINARY (plus busybox as
# sh and sleep when asked) and exports it to repo as branch "stable".
flatpak_build_app() { # dir, app-id, runtime-id, binary, name, repo, [busybox]
        local A=$1 app_id=$2 rt_id=$3 bin=$4 cmd=$5 repo=$6
        flatpak build-init "$A" "$app_id" "$rt_id" "$rt_id" 1.0 >/dev/null || fail "build-init failed"
        mkdir -p "$A/files/bin"
        cp "$bin" "$A/files/bin/$cmd"
        if [ "${7:-}" = busybox ]; then
                cp /bin/busybox "$A/files/bin/busybox"
                ln -s busybox "$A/files/bin/sleep"
                ln -s busybox "$A/files/bin/sh"
        fi
        flatpak build-finish --command="$cmd" "$A" >/dev/null || fail "build-finish failed"
        flatpak build-export "$repo" "$A" stable >/dev/null 2>"$WORK/fp-build.err" ||
                { cat "$WORK/fp-build.err"; fail "app export failed"; }
}

# Installs a Flatpak runtime (libc, ld.so) and an app whose /app/bin holds
# BINARY as NAME (its command) plus busybox as sleep/sh, from a local repo
# (offline), and uninstalls them at exit. Ids and NAME of their own per test:
# tests run in parallel and find their processes by name.
flatpak_install_spin_app() { # app-id, runtime-id, remote, binary, name
        local app_id=$1 rt_id=$2 remote=$3 bin=$4 cmd=$5 R=$WORK/fp-rt A=$WORK/fp-app
        mkdir -p "$R/files" "$R/usr/lib/x86_64-linux-gnu" "$R/usr/lib64"
        cp /usr/lib/x86_64-linux-gnu/libc.so.6 "$R/usr/lib/x86_64-linux-gnu/"
        cp /lib64/ld-linux-x86-64.so.2 "$R/usr/lib64/"
        printf '[Runtime]\nname=%s\nruntime=%s/x86_64/1.0\nsdk=%s/x86_64/1.0\n' "$rt_id" "$rt_id" "$rt_id" >"$R/metadata"
        flatpak uninstall -y --system --noninteractive "$app_id" "$rt_id" >/dev/null 2>&1 || true
        flatpak remote-delete --system --force "$remote" >/dev/null 2>&1 || true
        cleanup "flatpak uninstall -y --system --noninteractive $app_id $rt_id; flatpak remote-delete --system --force $remote"
        flatpak build-export --runtime "$WORK/fp-repo" "$R" 1.0 >/dev/null 2>"$WORK/fp.err" || { cat "$WORK/fp.err"; fail "runtime export failed"; }
        flatpak remote-add --system --no-gpg-verify "$remote" "$WORK/fp-repo" || fail "remote-add failed"
        flatpak install -y --system --noninteractive "$remote" "runtime/$rt_id/x86_64/1.0" >/dev/null 2>"$WORK/fp.err" ||
                { cat "$WORK/fp.err"; fail "runtime install failed"; }
        flatpak_build_app "$A" "$app_id" "$rt_id" "$bin" "$cmd" "$WORK/fp-repo" busybox
        flatpak install -y --system --noninteractive "$remote" "app/$app_id/x86_64/stable" >/dev/null 2>"$WORK/fp.err" ||
                { cat "$WORK/fp.err"; fail "app install failed"; }
}

# A private system bus in $WORK and $PERISCOPED on it, both ended by the
# cleanups: sets bus (its address).
bus_periscoped_start() {
        cat >"$WORK/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
          <type>system</type>
          <listen>unix:path=$WORK/bus.socket</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/> <allow own="*"/> <allow send_type="method_call"/>
            <allow send_destination="*" eavesdrop="true"/> <allow receive_sender="*"/>
          </policy>
</busconfig>
CONF
        dbus-daemon --config-file="$WORK/bus.conf" --nofork --nopidfile --print-address=3 3>"$WORK/bus.address" &
        cleanup "kill $!"
        wait_for 5 test -s "$WORK/bus.address" || true
        bus=$(head -n1 "$WORK/bus.address")
        [ -n "$bus" ] || fail "dbus-daemon did not start"
        "$PERISCOPED" --address="$bus" 2>"$WORK/periscoped.log" &
        cleanup "kill $!"
        wait_for 5 busctl --address="$bus" status org.periscope.Profiler1 >/dev/null 2>&1 || true
}
