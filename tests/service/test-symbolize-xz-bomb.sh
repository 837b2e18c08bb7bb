#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A user's program carries an xz bomb as its MiniDebugInfo (issue 12,
# attack 3): a stripped ELF file of about 91 KiB whose .gnu_debugdata
# decompresses to 512 MiB. Recorded by that user through the service: the
# sandboxed helper refuses the file past its 64 MiB limit, the capture says
# so for the file's addresses, and the service answers Properties.Get in
# under 100 ms while the recording finishes (symbolization).
# In a session of its own: availability.sh raises its CPU share.
[ "$(ps -o sid= -p $$ | tr -d ' ')" = $$ ] || exec setsid -w "$0" "$@"
. "$(dirname "$0")/../lib/periscoped-bus.sh"
. "$(dirname "$0")/availability.sh"
: "${PERISCOPE:?}" "${SPIN:?}" "${XZ_BOMB:?}" "${PROBE:?}"
test_user_require periscope-user
dir=$TEST_TMP/$user
mkdir "$dir"; chown $user: "$dir"

# the bomb: the spin workload stripped of every symbol, the xz stream added
strip --strip-all -o "$dir/bomb" "$SPIN"
objcopy --add-section .gnu_debugdata="$XZ_BOMB" "$dir/bomb"
chown $user: "$dir/bomb"
size=$(stat -c %s "$dir/bomb")
echo "bomb: $size bytes, .gnu_debugdata $(stat -c %s "$XZ_BOMB") bytes"
[ "$size" -lt $((128 * 1024)) ] || fail "the bomb is $size bytes: not a small file"

availability_start

runuser -u $user -- "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$dir/bomb.syscap" -- "$dir/bomb" 3000 \
        2>"$TEST_TMP/record.err" &
rec=$!
private_bus_track $rec
recording_of_uid $uid
probe_finishing "$path" 120
wait $rec || { cat "$TEST_TMP/record.err"; fail "recording the bomb failed"; }
grep -E "recording $id( |:)" "$TEST_TMP/periscoped.log"
echo "Properties.Get: $gets calls, slowest $max_ms ms ($finishing_gets while finishing, slowest $max_finishing_ms ms)"
[ "$finishing_gets" -ge 5 ] || fail "only $finishing_gets Gets while the bomb's recording finished: nothing measured"
get_within_100ms "$max_finishing_ms" "while the bomb's recording finished"

# the capture says why the bomb's addresses have no names
"$PERISCOPE" report "$dir/bomb.syscap" >"$TEST_TMP/report" 2>&1 || { cat "$TEST_TMP/report"; fail "no report"; }
grep -m1 "refused: its MiniDebugInfo (.gnu_debugdata) decompresses to more than 64 MiB" "$TEST_TMP/report" ||
        { head -40 "$TEST_TMP/report"; fail "the report does not say that the bomb was refused"; }
echo "ok: the xz bomb was refused and the service did not stall"
