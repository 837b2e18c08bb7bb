# SPDX-License-Identifier: LGPL-2.1-or-later
# installed-tree.sh: sourced by the tests of Periscope as installed into a
# Debian 12 tree (tests/service/installed/ under systemd-nspawn, tests/vm/
# under Debian's own kernel). Needs fail().
#
#   usr_build_stage BUILD_ROOT SOURCE_ROOT STAGE LOGDIR
#       builds what `meson install` installs, configured with --prefix=/usr
#       and the sysprofd drop-in in BUILD_ROOT/installed-service-usr (kept
#       between runs, shared by the tests under a lock), and installs it
#       into STAGE (--destdir); sets USR_BUILD
#   usr_build_install DESTDIR LOGDIR
#       installs that build into DESTDIR (a tree's root)
#   runtime_packages STAGE LOGDIR
#       prints, one a line, the Debian packages that ship the shared
#       libraries STAGE's programs load (from ldd on this machine)
#   share_reaching_main FOLDED
#       prints the percent of deep.c's samples whose stack reaches main
#   check_deep_stacks WHO FOLDED REPORT
#       a recording of deep.c (tests/service/unwind/workloads), as
#       `periscope report --folded` and `periscope report` gave it: every
#       function named, >= 95% of its stacks reach main, no helper failure

usr_build_stage() {
        local build_root=$1 source_root=$2 stage=$3 logs=$4
        USR_BUILD=$build_root/installed-service-usr
        # one ninja at a time in that tree (tests run in parallel)
        local lock
        exec {lock}>"$USR_BUILD.lock"
        flock "$lock"
        if [ ! -f "$USR_BUILD/build.ninja" ]; then
                rm -rf "$USR_BUILD"
                meson setup --prefix=/usr -Dsysprofd_drop_in=true "$USR_BUILD" "$source_root" >"$logs/setup.log" 2>&1 ||
                        { tail -n 30 "$logs/setup.log"; fail "meson setup --prefix=/usr failed"; }
        elif ! meson introspect --buildoptions "$USR_BUILD" | python3 -c '
import json, sys
sys.exit(0 if any(o["name"] == "sysprofd_drop_in" and o["value"] for o in json.load(sys.stdin)) else 1)'; then
                meson configure "$USR_BUILD" -Dsysprofd_drop_in=true >"$logs/setup.log" 2>&1 ||
                        { tail -n 30 "$logs/setup.log"; fail "meson configure -Dsysprofd_drop_in=true failed"; }
        fi
        local targets
        mapfile -t targets < <(meson introspect --targets "$USR_BUILD" | python3 -c '
import json, os, sys
for t in json.load(sys.stdin):
    if t["installed"]:
        for f in t["filename"]:
            print(os.path.relpath(f, sys.argv[1]))' "$USR_BUILD")
        [ ${#targets[@]} -ge 3 ] || fail "the /usr build lists ${#targets[@]} installed targets"
        nice ninja -C "$USR_BUILD" -j2 "${targets[@]}" >"$logs/ninja.log" 2>&1 ||
                { tail -n 30 "$logs/ninja.log"; fail "building the /usr tree failed"; }
        meson install -C "$USR_BUILD" --no-rebuild --quiet --destdir "$stage" >"$logs/install.log" 2>&1 ||
                { cat "$logs/install.log"; fail "meson install --destdir (staging) failed"; }
        flock -u "$lock"
        exec {lock}>&-
}

usr_build_install() {
        local destdir=$1 logs=$2
        meson install -C "$USR_BUILD" --no-rebuild --quiet --destdir "$destdir" >"$logs/install.log" 2>&1 ||
                { cat "$logs/install.log"; fail "meson install --destdir $destdir failed"; }
}

runtime_packages() {
        local stage=$1 logs=$2 elf lib path libs=() owner
        while IFS= read -r elf; do
                [ "$(head -c4 "$elf" | tail -c3)" = ELF ] || continue
                while read -r lib _ path _; do
                        [ "$path" != "not" ] || fail "$elf: $lib not found on this machine"
                        case $path in /*) libs+=("$(readlink -f "$path")") ;; esac
                done < <(ldd "$elf" | grep '=>')
        done < <(find "$stage" -type f -perm -u+x)
        mapfile -t libs < <(printf '%s\n' "${libs[@]}" | sort -u)
        # dpkg knows a merged-/usr library by one of its two names: ask for both
        dpkg-query -S "${libs[@]}" "${libs[@]#/usr}" >"$logs/owners" 2>/dev/null || true
        for lib in "${libs[@]}"; do
                owner=$(grep -m1 -e ": $lib\$" -e ": ${lib#/usr}\$" "$logs/owners") ||
                        fail "a program needs $lib, which no Debian package ships"
                echo "${owner%%:*}"
        done | sort -u
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
