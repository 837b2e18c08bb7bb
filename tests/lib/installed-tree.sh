# SPDX-License-Identifier: LGPL-2.1-or-later
# installed-tree.sh: sourced by the tests of Periscope as installed into a
# Debian 12 tree (tests/service/installed/ under systemd-nspawn, tests/vm/
# under Debian's own kernel), with apt from its Debian package as users
# install it. Needs fail().
#
#   installed_deb SOURCE_ROOT
#       the Debian package of SOURCE_ROOT's tree (tests/debian/lib.sh's
#       deb_build: built once per tree, shared with tests/debian/): sets
#       INSTALLED_DEB to its periscope_*.deb, INSTALLED_DEPENDS to the
#       packages its Depends names (space-separated), which the trees and
#       images hold beforehand so that `apt-get install ./periscope_*.deb`
#       needs no network
#   sysprofd_drop_in_install BUILD_ROOT SOURCE_ROOT DESTDIR LOGDIR
#       installs the sysprofd drop-in (docs/sysprofd-drop-in.md), which the
#       package leaves out, into DESTDIR as an administrator adds it:
#       `meson install --tags sysprofd-drop-in` of a --prefix=/usr
#       configuration in BUILD_ROOT/installed-sysprofd-drop-in (kept between
#       runs; nothing is compiled: the drop-in is data files)
#   share_reaching_main FOLDED
#       prints the percent of deep.c's samples whose stack reaches main
#   check_deep_stacks WHO FOLDED REPORT
#       a recording of deep.c (tests/service/unwind/workloads), as
#       `periscope report --folded` and `periscope report` gave it: every
#       function named, >= 95% of its stacks reach main, no helper failure

. "$(dirname "${BASH_SOURCE[0]}")/../debian/lib.sh"

installed_deb() {
        deb_build "$1"
        INSTALLED_DEB=$DEB
        INSTALLED_DEPENDS=$(deb_depends "$DEB" | sort -u | paste -sd ' ' -)
        [ -n "$INSTALLED_DEPENDS" ] || fail "$DEB depends on nothing?"
}

sysprofd_drop_in_install() {
        local build_root=$1 source_root=$2 destdir=$3 logs=$4 dir lock
        dir=$build_root/installed-sysprofd-drop-in
        # one configuration at a time in that tree (tests run in parallel)
        exec {lock}>"$dir.lock"
        flock "$lock"
        if [ ! -f "$dir/build.ninja" ]; then
                rm -rf "$dir"
                meson setup --prefix=/usr -Dsysprofd_drop_in=true -Dtests=false -Dman_pages=disabled \
                        "$dir" "$source_root" >"$logs/drop-in-setup.log" 2>&1 ||
                        { tail -n 30 "$logs/drop-in-setup.log"; fail "meson setup -Dsysprofd_drop_in=true failed"; }
        fi
        # (regenerates the configured files when their sources changed)
        ninja -C "$dir" build.ninja >"$logs/drop-in-setup.log" 2>&1 ||
                { tail -n 30 "$logs/drop-in-setup.log"; fail "meson's reconfiguration of $dir failed"; }
        meson install -C "$dir" --no-rebuild --quiet --tags sysprofd-drop-in --destdir "$destdir" \
                >"$logs/drop-in-install.log" 2>&1 ||
                { cat "$logs/drop-in-install.log"; fail "meson install --tags sysprofd-drop-in failed"; }
        flock -u "$lock"
        exec {lock}>&-
}

share_reaching_main() {
        awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";")
               while (k > 0 && f[k] ~ / \[kernel\]$/) k--
               if (k == 0 || f[k] !~ /^(main|chain_[a-d]|leaf_work)$/) next
               total += n; m = 0
               for (i = 1; i <= k; i++) if (f[i] == "main") m = i
               if (m == 0) next
               for (i = m + 1; i <= k; i++) if (f[i] !~ /^(chain_[a-d]|leaf_work)$/) next
               ok += n }
             END { if (total == 0) print 0; else printf "%.1f\n", 100 * ok / total }' "$1"
}

check_deep_stacks() {
        local who=$1 folded=$2 report=$3 f share
        head -n 15 "$report"
        if grep -n "helper failed\|files\? unresolved" "$report"; then
                fail "the report of $who's recording has files the helper could not read (lines above)"
        fi
        for f in main chain_a chain_b chain_c chain_d leaf_work; do
                grep "\(^\|;\)$f\(;\| \)" "$folded" >/dev/null || fail "$who's recording has no frame named $f"
        done
        share=$(share_reaching_main "$folded")
        echo "$who: ${share}% of the workload's samples reach main through the whole chain"
        awk -v s="$share" 'BEGIN { exit !(s >= 95) }' || { head -n 20 "$folded"; fail "$who: only $share% of stacks reach main"; }
}
