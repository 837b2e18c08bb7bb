# SPDX-License-Identifier: LGPL-2.1-or-later
# lib.sh: sourced by the completion tests (after ../lib/test-lib.sh).
#   completion_test SHELL     what each test needs first: $PERISCOPE,
#                             $PERISCOPED and $COMPLETION (the file under
#                             test, from meson.build) set, SHELL installed
#   fake_flatpak_app APP-ID   (after test_tmpdir) for what `--container
#                             <Tab>` lists: a sandbox `periscope list`
#                             shows as that Flatpak app (bwrap with a
#                             /.flatpak-info), the CLI asking a private
#                             periscoped ($PERISCOPED: no system bus at
#                             the address)

completion_test() {
        : "${PERISCOPE:?}" "${PERISCOPED:?}" "${COMPLETION:?}"
        command -v "$1" >/dev/null || fail "$1 missing: apt-get install -y $1"
}

fake_flatpak_app() {
        local app=$1
        command -v bwrap >/dev/null || fail "bwrap missing: apt-get install -y bubblewrap"
        export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$TEST_TMP/no-such-bus XDG_STATE_HOME=$TEST_TMP/state PERISCOPED
        printf '[Application]\nname=%s\nruntime=runtime/org.example.Platform/x86_64/1\n[Instance]\ninstance-id=42\napp-path=/nonexistent\n' \
                "$app" >"$TEST_TMP/flatpak-info"
        bwrap --unshare-user --die-with-parent --tmpfs / --ro-bind /usr /usr --symlink usr/bin /bin \
                --symlink usr/lib /lib --symlink usr/lib64 /lib64 --proc /proc --dev /dev \
                --ro-bind-data 3 /.flatpak-info sleep 120 3<"$TEST_TMP/flatpak-info" &
        local sandbox=$!
        at_exit kill "$sandbox"
        app_listed() { "$PERISCOPE" list | grep >/dev/null -F "$app"; }
        wait_for 10 app_listed || fail "periscope list does not show the sandbox: $("$PERISCOPE" list 2>&1)"
}
