# SPDX-License-Identifier: LGPL-2.1-or-later
# lib.sh: the Debian package of the commit under test (sourced; needs fail).
#
#   deb_build SOURCE_ROOT
#       builds periscope_*.deb with `dpkg-buildpackage -us -uc -b` from a
#       clean `git clone` of SOURCE_ROOT's HEAD (uncommitted changes are
#       not in it, as they would not be in a release); sets DEB_DIR to the
#       directory holding the .debs, the .changes and build.log, and
#       DEB_COMMIT to the commit built. Kept per
#       commit under $PERISCOPE_TEST_CACHE/debian-packages, built once under
#       a lock for the tests that share it.

deb_build() {
        local source_root=$1 commit cache_top top lock
        for tool in git:git dpkg-buildpackage:dpkg-dev dh:debhelper flock:util-linux; do
                command -v "${tool%%:*}" >/dev/null || fail "${tool%%:*} missing: apt-get install -y ${tool#*:}"
        done
        commit=$(git -C "$source_root" rev-parse HEAD) || fail "$source_root is not a git checkout"
        cache_top=${PERISCOPE_TEST_CACHE:-/var/cache/periscope-tests}
        top=$cache_top/debian-packages
        mkdir -p "$top"
        exec {lock}>"$top/lock"
        flock "$lock"
        DEB_DIR=$top/$commit
        DEB_COMMIT=$commit
        if [ ! -e "$DEB_DIR/complete" ]; then
                # older commits' packages go: one kept at a time
                find "$top" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
                mkdir -p "$DEB_DIR"
                git clone --quiet --no-hardlinks "$source_root" "$DEB_DIR/periscope" ||
                        fail "git clone of $source_root failed"
                git -C "$DEB_DIR/periscope" checkout --quiet "$commit"
                echo "building the package of $commit (dpkg-buildpackage -us -uc -b; log: $DEB_DIR/build.log)"
                if ! (cd "$DEB_DIR/periscope" && env -u MAKEFLAGS -u DESTDIR nice dpkg-buildpackage -us -uc -b) \
                        >"$DEB_DIR/build.log" 2>&1; then
                        tail -n 40 "$DEB_DIR/build.log"
                        fail "dpkg-buildpackage -us -uc -b failed (log above: $DEB_DIR/build.log)"
                fi
                rm -rf "$DEB_DIR/periscope"
                touch "$DEB_DIR/complete"
        fi
        flock -u "$lock"
        exec {lock}>&-
}
