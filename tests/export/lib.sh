# lib.sh: sourced by the export tests after tests/service/private-bus.sh.
# Builds this folder's workloads and records them through a periscoped on a
# private bus.
#   record_cpu    → $TEST_TMP/cpu.syscap: workload-export for 2 s
#   record_memory → $TEST_TMP/memory.syscap: workload-alloc under --memory
#   source_line FILE PATTERN → the line number of the first line matching
: "${PERISCOPE:?}" "${SRCDIR:?}"

_record() {
        local name=$1 src=$2
        shift 2
        gcc -O2 -g -fno-omit-frame-pointer -o "$TEST_TMP/$name" "$SRCDIR/$src" || fail "cannot build $src (gcc)"
        if [ -z "${PERISCOPED_PID:-}" ]; then
                private_bus_start
                periscoped_start
        fi
        "$PERISCOPE" record --address "$BUS_ADDRESS" "$@" >"$TEST_TMP/record.out" 2>&1 ||
                { cat "$TEST_TMP/record.out"; fail "recording $name failed"; }
}

record_cpu() {
        _record workload-export workload-export.c -o "$TEST_TMP/cpu.syscap" -- "$TEST_TMP/workload-export" 2000
}

record_memory() {
        _record workload-alloc workload-alloc.c --memory -o "$TEST_TMP/memory.syscap" -- "$TEST_TMP/workload-alloc"
}

source_line() {
        grep -n -m1 -F "$2" "$1" | cut -d: -f1
}
