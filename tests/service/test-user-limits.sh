#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Per-user limits (docs/security.md): an unprivileged user (periscope-user)
# tries to pin the root daemon's memory with 300 recordings, as in the
# review's attack (300 recordings in 8 s pinned 2.4 GB of ring buffers).
# Past the default of 8 recordings every Record is refused with
# org.periscope.Error.LimitExceeded naming the limit and its value; root and
# another user (periscope-admin, through the real polkitd) still record; a
# stopped recording gives its place back. Then the ring memory limit and the
# control ring limit, each alone, with a real polkitd and real users.
# Needs PERISCOPED, PERISCOPE, CLIENT (collector-client), CAPTURE_JSON.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${PERISCOPE:?}" "${CLIENT:?}" "${CAPTURE_JSON:?}"
user=periscope-user
for u in $user periscope-admin; do
        id -u $u >/dev/null 2>&1 || fail "user $u is missing: run scripts/setup.d/30-periscope-users.sh as root"
done
periscoped_start_for_user $user 777
record_as_user() { # CAPTURE [OPTIONS…]: Record on the user's own process; prints gdbus's answer
        local cap=$1; shift
        as_user gdbus call --address "$BUS_ADDRESS" -d org.periscope.Profiler1 -o /org/periscope/Profiler1 \
                -m org.periscope.Profiler1.Record "{'pids': <[$own]>, 'duration-ms': <uint32 60000>$*}" 3 3>"$cap" 2>&1
}
pinned_kib() { awk '/^VmPin:/ { print $2 }' /proc/$PERISCOPED_PID/status; }

setpriv --reuid=$user --regid=$user --clear-groups sleep 300 & own=$!
private_bus_track $own
sleep 60 & root_proc=$!
private_bus_track $root_proc
sleep 0.2

# 1. The attack: 300 recordings as fast as the user can ask, on one connection.
pinned_before=$(pinned_kib)
as_user /usr/bin/python3 "$(dirname "$0")/record-many.py" "$BUS_ADDRESS" $own 300 "$dir" >"$dir/many.json" ||
        fail "record-many.py failed"
pinned_after=$(pinned_kib)
read -r ok refused other first_refusal secs < <(/usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
n = r["refused"].pop("org.periscope.Error.LimitExceeded", 0)
print(len(r["ok"]), n, json.dumps(r["refused"]).replace(" ", ""), json.dumps(r["first_refusal"]).replace(" ", "_"), r["seconds"])' "$dir/many.json")
paths=($(/usr/bin/python3 -c 'import json, sys; print(" ".join(json.load(open(sys.argv[1]))["ok"]))' "$dir/many.json"))
echo "300 Record calls in ${secs}s: $ok recordings, $refused refused with LimitExceeded, others $other;" \
        "daemon's pinned memory ${pinned_before} -> ${pinned_after} KiB"
echo "the refusal: ${first_refusal//_/ }"
[ "$ok" = 8 ] || fail "$ok recordings started for $user; the default limit is 8"
[ "$refused" = 292 ] && [ "$other" = "{}" ] || fail "$refused LimitExceeded refusals (292 expected), other errors: $other"
[[ ${first_refusal//_/ } == *"uid $(id -u $user) holds 8 recordings"*"the limit is 8 recordings per user (periscoped --max-recordings-per-user)"* ]] ||
        fail "the refusal does not say which limit and its value"
# 8 recordings with DWARF rings (4 MiB + a page per CPU)
max_kib=$(( pinned_before + 8 * $(nproc --all) * 4100 ))
[ "$pinned_after" -le "$max_kib" ] || fail "daemon pins $pinned_after KiB after the attack (at most $max_kib expected)"
echo "ok: the 9th to 300th recording refused with LimitExceeded; pinned memory bounded"

# 2. Root and another user still record while periscope-user is at its limit.
"$PERISCOPE" record --address "$BUS_ADDRESS" -p $root_proc --duration 0.5 -o "$TEST_TMP/root.syscap" 2>"$TEST_TMP/root.err" ||
        { cat "$TEST_TMP/root.err"; fail "root could not record while $user is at its limit"; }
runuser -u periscope-admin -- "$PERISCOPE" record --address "$BUS_ADDRESS" -p $root_proc --duration 0.5 \
        -o "$TEST_TMP/admin.syscap" 2>"$TEST_TMP/admin.err" ||
        { cat "$TEST_TMP/admin.err"; fail "periscope-admin (polkit) could not record while $user is at its limit"; }
"$CAPTURE_JSON" "$TEST_TMP/admin.syscap" >/dev/null || fail "periscope-admin's capture is unreadable"
echo "ok: root and periscope-admin recorded meanwhile"

# 3. A stopped recording gives its place back.
as_user gdbus call --address "$BUS_ADDRESS" -d org.periscope.Profiler1 -o "${paths[0]}" \
        -m org.periscope.Recording1.Stop >/dev/null || fail "$user could not stop its recording"
out=$(record_as_user "$dir/again.syscap" || true)
[[ $out == *"/org/periscope/Recording/"* ]] || fail "after a Stop, $user still cannot record: $out"
echo "ok: after a Stop the user records again"
kill $PERISCOPED_PID; wait $PERISCOPED_PID 2>/dev/null || true

# 4. The ring memory limit alone: room for one DWARF recording's rings, not two.
ring_kib=$(( $(nproc --all) * (4096 + 4) ))
limit_mib=$(( ring_kib * 3 / 2 / 1024 + 1 ))
periscoped_start --max-recordings-per-user=0 --max-locked-memory-per-user=$limit_mib
out=$(record_as_user "$dir/m1.syscap" || true)
[[ $out == *"/org/periscope/Recording/"* ]] || fail "one DWARF recording refused under a ${limit_mib} MiB limit: $out"
out=$(record_as_user "$dir/m2.syscap" || true)
echo "the refusal: $out"
[[ $out == *"org.periscope.Error.LimitExceeded"*"MiB of perf ring memory"*"the limit is ${limit_mib}.0 MiB of perf ring memory per user (periscoped --max-locked-memory-per-user)"* ]] ||
        fail "a second DWARF recording was not refused for its ring memory: $out"
out=$(record_as_user "$dir/m3.syscap" ", 'unwind': <'fp'>" || true)
[[ $out == *"/org/periscope/Recording/"* ]] || fail "a frame-pointer recording (small rings) refused: $out"
echo "ok: ring memory limit: a second DWARF recording refused, a small one fits"
kill $PERISCOPED_PID; wait $PERISCOPED_PID 2>/dev/null || true

# 5. The control ring limit: 2 rings for the user, its program asks for 6
# (one per thread); root's program gets all of its own.
periscoped_start --max-control-rings-per-user=2
as_user "$PERISCOPE" record --address "$BUS_ADDRESS" -o "$dir/rings.syscap" -- "$CLIENT" threads 6 50 \
        >"$dir/rings.out" 2>"$dir/rings.err" || { cat "$dir/rings.err"; fail "$user's recording of the collector client failed"; }
"$PERISCOPE" dump "$dir/rings.syscap" >"$dir/rings.dump" || fail "periscope dump failed on $user's capture"
grep -q 'message="control ring refused: per-user limit reached: uid '"$(id -u $user)"' holds 2 control rings; the limit is 2 control rings per user (periscoped --max-control-rings-per-user)' "$dir/rings.dump" ||
        fail "no LOG frame saying the control ring limit refused a ring"
refused=$("$CAPTURE_JSON" "$dir/rings.syscap" | grep -o 'rings_refused=[0-9]*' | cut -d= -f2)
[ "${refused:-0}" -ge 1 ] || fail "no ring of $user's program was refused"
"$PERISCOPE" record --address "$BUS_ADDRESS" -o "$TEST_TMP/rings-root.syscap" -- "$CLIENT" threads 6 50 \
        >/dev/null 2>"$TEST_TMP/rings-root.err" || { cat "$TEST_TMP/rings-root.err"; fail "root's recording of the collector client failed"; }
"$CAPTURE_JSON" "$TEST_TMP/rings-root.syscap" >"$TEST_TMP/rings-root.json" || fail "root's capture is unreadable"
grep -q 'rings_refused=0\\u000a' "$TEST_TMP/rings-root.json" || fail "a ring of root's program was refused"
echo "ok: control rings: $refused of $user's program's rings refused, with a LOG frame saying why; none of root's"
