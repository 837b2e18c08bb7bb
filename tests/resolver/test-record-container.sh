#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# End to end: `periscope record --container NAME` through periscoped on a
# private system bus, for a rootful Podman container whose shell starts a
# second workload process after the recording began. ListTargets lists the
# container with its processes; both workload processes are recorded,
# described as that container, and >= 95% of their samples carry the right
# names. An unknown container name is refused with a message.
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
: "${PERISCOPE:?}" "${PERISCOPED:?}"
need podman runc busctl dbus-daemon nm python3
[ -x /bin/busybox ] || fail "busybox missing: apt-get install -y busybox-static"

spin_sh_image
name=periscope-test-record-ctr-$$
cleanup "podman rm -f -t 0 $name"
mkdir -p "$WORK/trigger"
# The second workload process starts when the test says so (after the
# recording began).
podman run -d --network none -v "$WORK/trigger:/trigger" --name "$name" "$image" \
        /bin/sh -c '/bin/app & until [ -e /trigger/go ]; do sleep 0.1; done; /bin/app & wait' >/dev/null 2>"$WORK/run.err" ||
        { cat "$WORK/run.err"; fail "podman run failed"; }
pid=$(podman inspect -f '{{.State.Pid}}' "$name")
id=$(podman inspect -f '{{.Id}}' "$name")

# A private system bus with periscoped on it.
bus_periscoped_start # sets bus

busctl --address="$bus" --json=short call org.periscope.Profiler1 /org/periscope/Profiler1 org.periscope.Profiler1 ListTargets >"$WORK/targets.json" ||
        fail "ListTargets failed"
python3 - "$WORK/targets.json" "$name" "$id" "$pid" <<'PY' || fail "ListTargets does not list the container"
import json, sys
path, name, cid, pid = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
targets = json.load(open(path))["data"][0]
for t in targets:
    v = {k: x["data"] for k, x in t.items()}
    if v.get("kind") == "container" and v.get("name") == name:
        assert v["engine"] == "podman" and v["id"] == cid and v["owner-uid"] == 0, v
        assert pid in v["pids"], v
        print("ok: ListTargets lists %s (%s) with pids %s" % (name, v["image"], v["pids"]))
        open(path + ".pids", "w").write(" ".join(map(str, v["pids"])))
        sys.exit(0)
sys.exit(1)
PY
# The same through `periscope list`: one readable row, and --json.
"$PERISCOPE" list --address="$bus" >"$WORK/list.txt" || fail "periscope list failed"
grep -qE "^  podman +$name +${id:0:12} +root +[0-9]+  " "$WORK/list.txt" ||
        { cat "$WORK/list.txt"; fail "periscope list does not show the container"; }
"$PERISCOPE" list --address="$bus" --json | jq -e --arg n "$name" --argjson p "$pid" \
        'map(select(.kind == "container" and .engine == "podman" and .name == $n and (.pids | index($p)))) | length == 1' >/dev/null ||
        fail "periscope list --json does not list the container with its process"
echo "ok: periscope list shows $name"

"$PERISCOPE" record --address="$bus" --container="$name" --duration=3 -o "$WORK/c.syscap" 2>"$WORK/rec.err" &
rec=$!
wait_for 30 grep -q "recording .* started" "$WORK/periscoped.log" || { cat "$WORK/periscoped.log" "$WORK/rec.err"; fail "the recording did not start"; }
touch "$WORK/trigger/go"
wait $rec || { cat "$WORK/rec.err" "$WORK/periscoped.log"; fail "periscope record --container failed"; }
"$PERISCOPE" dump --json "$WORK/c.syscap" >"$WORK/c.json" || fail "periscope dump failed"
CAPTURE="$WORK/c.syscap" python3 "$here/check-container-capture.py" "$WORK/c.json" all:2 podman "$name" 0 "$WORK/spin" /bin/app map_files \
        /var/lib/containers/storage/overlay/ || fail "capture check failed"
# One workload process was started by the container's shell after the
# recording began (after ListTargets): it must be in the capture too.
new=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
before = set(map(int, open(sys.argv[2]).read().split()))
print(len({f["pid"] for f in d["frames"] if f["type"] == "MAP" and f["filename"] == "/bin/app"} - before))' "$WORK/c.json" "$WORK/targets.json.pids")
[ "$new" -ge 1 ] || fail "the process started during the recording was not followed"
echo "ok: $new workload process(es) started during the recording were followed"

# periscope report --by-container puts (nearly) every sample under this container.
"$PERISCOPE" report --by-container "$WORK/c.syscap" >"$WORK/by-container.txt" || fail "report --by-container failed"
line=$(grep -F "podman $name (" "$WORK/by-container.txt") || { cat "$WORK/by-container.txt"; fail "report --by-container lacks $name"; }
pct=$(awk '{ print int($2) }' <<<"$line")
[ "$pct" -ge 95 ] || { cat "$WORK/by-container.txt"; fail "only $pct% of samples attributed to $name"; }
grep -q "app\[" <<<"$line" || fail "report --by-container does not list the container's processes"
echo "ok: report --by-container: $line"
# The default report names the container of every workload process.
"$PERISCOPE" report --no-progress "$WORK/c.syscap" >"$WORK/report.txt" || fail "periscope report failed"
n=$(grep -cE "^  app\[[0-9]+\]  podman $name \(" "$WORK/report.txt" || true)
[ "$n" -ge 2 ] || { cat "$WORK/report.txt"; fail "the default report does not name the container of both workload processes"; }
echo "ok: the default report names $name for $n workload processes"

if "$PERISCOPE" record --address="$bus" --container=no-such-container-$$ --duration=1 -o "$WORK/x.syscap" 2>"$WORK/nomatch.err"; then
        fail "recording an unknown container succeeded"
fi
grep -q "no running Podman container or Flatpak app matches 'no-such-container-$$'" "$WORK/nomatch.err" ||
        { cat "$WORK/nomatch.err"; fail "no clear message for an unknown container"; }
! grep -qE "Sanitizer|runtime error:" "$WORK/periscoped.log" || { cat "$WORK/periscoped.log"; fail "memory errors in periscoped"; }
echo "ok: unknown container refused: $(head -c 200 "$WORK/nomatch.err")"
echo "PASS"
