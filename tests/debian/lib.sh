# SPDX-License-Identifier: LGPL-2.1-or-later
# lib.sh: the Debian package of the tree under test (sourced; needs fail).
#
#   deb_build SOURCE_ROOT
#       builds periscope_*.deb with `dpkg-buildpackage -us -uc -b` from a
#       clean export (git archive) of SOURCE_ROOT's tracked files as they
#       are, committed or not (untracked files are not in it, as they would
#       not be in a release); sets DEB_DIR to the
#       directory holding the .debs, the .changes and build.log, DEB_TREE
#       to the git tree id built (its content's hash) and DEB (the path of
#       periscope_*.deb). Kept per tree under
#       $PERISCOPE_TEST_CACHE/debian-packages, built once under a lock for
#       the tests that share it (tests/debian/, tests/service/installed/,
#       tests/vm/): one build per suite run.
#   deb_depends DEB
#       prints, one a line, the packages DEB's Depends names (the first of
#       each alternative, without versions)

deb_build() {
        local source_root=$1 index tree cache_top top lock
        for tool in git:git dpkg-buildpackage:dpkg-dev dh:debhelper flock:util-linux; do
                command -v "${tool%%:*}" >/dev/null || fail "${tool%%:*} missing: apt-get install -y ${tool#*:}"
        done
        git -C "$source_root" rev-parse HEAD >/dev/null 2>&1 || fail "$source_root is not a git checkout"
        # the working tree's tracked files as a git tree, through a copy of
        # the index (the checkout's own index and stash stay as they are)
        index=$(mktemp)
        cp "$(git -C "$source_root" rev-parse --path-format=absolute --git-path index)" "$index" &&
                GIT_INDEX_FILE=$index git -C "$source_root" add -u &&
                tree=$(GIT_INDEX_FILE=$index git -C "$source_root" write-tree) ||
                { rm -f "$index"; fail "cannot write $source_root's working tree as a git tree"; }
        rm -f "$index"
        cache_top=${PERISCOPE_TEST_CACHE:-/var/cache/periscope-tests}
        top=$cache_top/debian-packages
        mkdir -p "$top"
        exec {lock}>"$top/lock"
        flock "$lock"
        DEB_DIR=$top/$tree
        DEB_TREE=$tree
        if [ ! -e "$DEB_DIR/complete" ]; then
                # older trees' packages go: one kept at a time
                find "$top" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
                mkdir -p "$DEB_DIR/periscope"
                git -C "$source_root" archive "$tree" | tar -C "$DEB_DIR/periscope" -xf - ||
                        fail "git archive of $source_root's tree failed"
                echo "building the package of tree ${tree:0:12} (dpkg-buildpackage -us -uc -b; log: $DEB_DIR/build.log)"
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
        DEB=$(ls "$DEB_DIR"/periscope_*_*.deb) || fail "no periscope_*.deb in $DEB_DIR"
}

deb_depends() {
        dpkg-deb --field "$1" Depends | tr ',' '\n' | sed -E 's/\|.*//; s/\(.*\)//; s/:any//; s/[[:space:]]//g' |
                grep . || fail "$1 has no Depends"
}
