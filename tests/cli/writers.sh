# SPDX-License-Identifier: LGPL-2.1-or-later
# writers.sh: sourced by the tests of every writer's -o/-f (record, report
# -f and --timeline, export, symbolize) after tests/lib/periscoped-bus.sh;
# the writers read the fixture capture $TEST_TMP/fx.syscap.
#   WRITER_KINDS             the writers: record flamegraph timeline pprof folded symbolize
#   run_writer KIND OUT      one writer writing OUT, run as "${as[@]}" (empty: as the test);
#                            record records "${record_cmd[@]}" (default: true)
#   check_whole KIND FILE    FILE holds KIND's whole output (a capture `periscope info`
#                            reads, an SVG that ends, a gzip that unpacks, folded stacks)
#   python3 -c "$SOCKET_LISTENER" SOCKET OUT   listens on SOCKET; what one client sends
#                            goes to OUT (made only when a client connects)
: "${PERISCOPE:?}"
WRITER_KINDS="record flamegraph timeline pprof folded symbolize"
as=()
record_cmd=(true)
SOCKET_LISTENER='
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(1)
c, _ = s.accept()
with open(sys.argv[2], "wb") as f:
    while True:
        d = c.recv(65536)
        if not d:
                break
        f.write(d)
'

run_writer() {
        local fx=$TEST_TMP/fx.syscap
        case $1 in
        record) "${as[@]}" "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$2" -- "${record_cmd[@]}" ;;
        flamegraph) "${as[@]}" "$PERISCOPE" report --no-progress -f "$2" "$fx" ;;
        timeline) "${as[@]}" "$PERISCOPE" report --timeline "$2" "$fx" ;;
        pprof) "${as[@]}" "$PERISCOPE" export --format pprof -o "$2" "$fx" ;;
        folded) "${as[@]}" "$PERISCOPE" export --format folded -o "$2" "$fx" ;;
        symbolize) "${as[@]}" "$PERISCOPE" symbolize -o "$2" "$fx" ;;
        esac
}

check_whole() {
        case $1 in
        record | symbolize)
                "$PERISCOPE" info "$2" >"$TEST_TMP/info.txt" 2>&1 ||
                        { cat "$TEST_TMP/info.txt"; fail "$1: $2 is not a whole capture"; } ;;
        flamegraph | timeline)
                head -c 5 "$2" | grep >/dev/null '<?xml' && tail -c 7 "$2" | grep >/dev/null '</svg>' ||
                        fail "$1: $2 is not a whole SVG ($(wc -c <"$2") bytes)" ;;
        pprof)
                gzip -t <"$2" 2>/dev/null || fail "$1: $2 is not a whole gzip file" ;;
        folded)
                grep >/dev/null -E '^main;compute [0-9]+$' "$2" || fail "$1: $2 lacks the folded stacks" ;;
        esac
}
