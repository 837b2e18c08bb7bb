# SPDX-License-Identifier: LGPL-2.1-or-later
# record-workload.sh (sourced by the end-to-end helper tests, after
# tests/lib/periscoped-bus.sh): builds a workload of this folder, records
# it through a periscoped on a private bus, and folds the report.
#   build_workload NAME SOURCE [CC FLAGS…]   → $TEST_TMP/NAME
#   record_folded NAME [WORKLOAD ARGS…]      → $TEST_TMP/NAME.syscap, $TEST_TMP/NAME.folded
: "${PERISCOPE:?}" "${SRCDIR:?}"

build_workload() {
        local name=$1 src=$2
        shift 2
        gcc "$@" -o "$TEST_TMP/$name" "$SRCDIR/$src" || fail "cannot build $src (gcc)"
}

record_folded() {
        local name=$1
        shift
        record_to "$TEST_TMP/$name.syscap" "$TEST_TMP/$name" "$@"
        "$PERISCOPE" report --no-progress --folded "$TEST_TMP/$name.syscap" >"$TEST_TMP/$name.folded" ||
                fail "report of $name failed"
}
