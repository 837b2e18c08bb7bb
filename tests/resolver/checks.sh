# SPDX-License-Identifier: LGPL-2.1-or-later
# checks.sh: workloads and checks of the container tests that the
# installed-service family (tests/service/installed/) shares with them;
# sourced by tests/resolver/lib.sh and by that family, so that both check
# the same things. Needs fail(), WORK (a directory), PERISCOPE and python3
# with tests/lib on PYTHONPATH (folded.py). check-container-capture.py checks
# a capture of the spin workload in a container or sandbox.
#   build_spin OUT [CC ARGS]       the spin workload: main → hot_outer → hot_inner, forever
# A package upgrade while its program runs (a new file renamed over the old
# one, as dpkg does):
#   build_hot_version V OPT        $WORK/app.V, $WORK/libhot.so.V (rpath $L/lib)
#   upgrade_install DIR            v1 installed: DIR/bin/app, DIR/lib/libhot.so.v1
#                                  (DIR is $L, or where $L is seen from here)
#   upgrade_replace DIR            v2's bytes renamed over both files
#   upgrade_check CAPTURE PID OUT  the recording of PID across the upgrade: its
#                                  names are v1's (>= 95% main;hot_outer_v1;hot_inner_v1,
#                                  none of v2), the library shown verified

# The workload: a known call chain (main → hot_outer → hot_inner) that spins;
# -O0 so that even the leaf sets up a frame and fp callchains name every caller.
build_spin() { # out, [extra cc args]
        local out=$1; shift
        cat >"$WORK/spin.c" <<'SRC'
volatile unsigned long sink;
__attribute__((noinline)) void hot_inner(void) { for (int i = 0; i < 1000000; i++) sink += i; }
__attribute__((noinline)) void hot_outer(void) { hot_inner(); }
int main(void) { for (;;) hot_outer(); }
SRC
        # Paths in the debug info mapped away: the same binary every run, so
        # podman_import finds its image instead of importing one more.
        (cd "$WORK" && gcc -O0 -g -fno-omit-frame-pointer -ffile-prefix-map="$WORK"=/src "$@" -o "$out" spin.c)
}

# One version of the upgrade tests' program: $WORK/app.V (main ->
# hot_outer_V) and the library it needs, $WORK/libhot.so.V (hot_inner_V),
# found in $L/lib once installed. Function names differ between versions.
build_hot_version() { # version, optimization flag
        local v=$1 opt=$2
        cat >"$WORK/hot-$v.c" <<SRC
volatile unsigned long sink;
__attribute__((noinline)) void hot_inner_$v(void) { for (int i = 0; i < 1000000; i++) sink += i; }
SRC
        cat >"$WORK/app-$v.c" <<SRC
void hot_inner_$v(void);
__attribute__((noinline)) void hot_outer_$v(void) { hot_inner_$v(); }
int main(void) { for (;;) hot_outer_$v(); }
SRC
        gcc "$opt" -g -fno-omit-frame-pointer -shared -fPIC -o "$WORK/libhot.so.$v" "$WORK/hot-$v.c" || fail "cannot build libhot.so.$v"
        gcc "$opt" -g -fno-omit-frame-pointer -o "$WORK/app.$v" "$WORK/app-$v.c" -L"$WORK" -l:libhot.so.$v -Wl,-rpath,"$L/lib" ||
                fail "cannot build app.$v"
}

upgrade_install() { # dir
        mkdir -p "$1/lib" "$1/bin"
        cp "$WORK/libhot.so.v1" "$1/lib/libhot.so.v1"
        cp "$WORK/app.v1" "$1/bin/app"
}

upgrade_replace() { # dir
        # new bytes at the same paths (v2 code in both files), new inodes
        cp "$WORK/app.v2" "$1/bin/app.dpkg-new" && mv -f "$1/bin/app.dpkg-new" "$1/bin/app"
        cp "$WORK/libhot.so.v2" "$1/lib/libhot.so.v1.dpkg-new" && mv -f "$1/lib/libhot.so.v1.dpkg-new" "$1/lib/libhot.so.v1"
}

upgrade_check() { # capture, pid, folded output
        "$PERISCOPE" report --folded --no-progress -p "$2" "$1" >"$3" || fail "periscope report failed"
        python3 - "$3" <<'PY' || fail "names are not those of the old (mapped) files"
import folded, sys
total = good = 0
for s in folded.stacks(sys.argv[1]):
    total += s.count
    if "_v2" in s.text:
        print("FAIL: a name from the new version:", s.line); sys.exit(1)
    user = s.user
    if user[-3:] == ["main", "hot_outer_v1", "hot_inner_v1"]:
        good += s.count
print("ok: %d/%d samples (%.1f%%) main;hot_outer_v1;hot_inner_v1, none from v2" % (good, total, 100 * good / max(total, 1)))
sys.exit(0 if total >= 50 and good / total >= 0.95 else 1)
PY
        "$PERISCOPE" report --mappings --no-progress "$1" | grep -A1 "libhot.so.v1" | grep >/dev/null "verified" ||
                fail "the library mapping is not shown as verified"
}
