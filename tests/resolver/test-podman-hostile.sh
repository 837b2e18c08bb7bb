#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Hostile rootless storage: the store under ~USER belongs to the user, who
# may craft it. Each crafted piece must be rejected with a warning, resolution
# must go on (no crash, other output intact), and nothing else may be
# returned in place of the mapped file:
#   containers.json → /etc/shadow (symlink), a symlink loop, 200 MB, invalid
#   UTF-8; layers.json parent "../../../etc"; a layer file that is a symlink
#   to another user's file; a layer file that is a hard link to /etc/shadow.
# Hostile JSON (parsed by the sandboxed helper, not the daemon): 200 000
# nested arrays, a top level that is no array, ids and parents of the wrong
# type are each rejected with a reason; 10 MB strings in other entries cost
# nothing.
source "$(dirname "$0")/lib.sh"
: "${PERISCOPE:?}" "${PERISCOPED:?}"
need podman runc fuse-overlayfs runuser truncate
rootless_user periscope-rlh
store=$home/.local/share/containers/storage
cd /

name=periscope-test-hostile-$$
rootless_spin_container "$name"
id=$($as_user podman inspect -f '{{.Id}}' "$name")

cj=$store/overlay-containers/containers.json
lj=$store/overlay-layers/layers.json
cp -a "$cj" "$WORK/containers.json.orig"
cp -a "$lj" "$WORK/layers.json.orig"
restore() {
        rm -f "$cj" "$lj"
        cp -a "$WORK/containers.json.orig" "$cj"
        cp -a "$WORK/layers.json.orig" "$lj"
}
cleanup restore

# Baseline: the untouched store resolves.
resolve "$WORK/base" "$WORK/copies" "$pid"
assert_resolved "$WORK/base" /bin/app podman "$WORK/spin" "$WORK/copies"
layer_file=$(map_field "$WORK/base" /bin/app host)

hostile_case() { # description, expected warning regex
        local what=$1 warning=$2 out=$WORK/out-$RANDOM
        resolve "$out" "$WORK/copies" "$pid"
        grep -qE "$warning" "$out.err" || { cat "$out.err"; fail "$what: no warning matching '$warning'"; }
        [ "$(map_field "$out" /bin/app method)" != podman ] || fail "$what: still resolved through the crafted store"
        [ ! -e "$WORK/copies/app" ] || fail "$what: a file was returned"
        grep -q "^map	/usr/lib/x86_64-linux-gnu/libc.so.6	" "$out" || fail "$what: resolution of the other mappings did not go on"
        echo "ok: $what → $(grep -E "$warning" "$out.err" | head -1)"
        restore
}

ln -sf /etc/shadow "$cj.tmp" && mv -f "$cj.tmp" "$cj"
hostile_case "containers.json → /etc/shadow" "rejected .*containers.json: it is a symlink"

rm -f "$cj" && ln -s containers.json "$cj"
hostile_case "containers.json symlink loop" "rejected .*containers.json: it is a symlink"

rm -f "$cj" && truncate -s 200M "$cj"
# The recording itself still succeeds with a hostile store: periscoped warns,
# pins nothing from the store, and the capture is complete and readable.
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$WORK/no-such-bus
PERISCOPED="$PERISCOPED" "$PERISCOPE" record --private -p "$pid" --duration=0.5 -o "$WORK/h.syscap" 2>"$WORK/rec.err" ||
        { cat "$WORK/rec.err"; fail "recording with a hostile store failed"; }
grep -q "rejected .*containers.json: it is larger than the limit" "$WORK/rec.err" || { cat "$WORK/rec.err"; fail "periscoped did not warn about the store"; }
! grep -qE "Sanitizer|runtime error:" "$WORK/rec.err" || { cat "$WORK/rec.err"; fail "memory errors in periscoped"; }
"$PERISCOPE" report --no-progress "$WORK/h.syscap" >"$WORK/h.txt" || fail "report of the hostile-store capture failed"
grep -q "^Samples: [1-9]" "$WORK/h.txt" || { cat "$WORK/h.txt"; fail "no samples recorded"; }
echo "ok: recording with a 200 MB containers.json succeeded: $(grep -m1 'rejected' "$WORK/rec.err")"
hostile_case "200 MB containers.json" "rejected .*containers.json: it is larger than the limit"

sed "s/\"names\":\[\"$name\"\]/\"names\":[\"bad-\xff\xfe-name\"]/" "$WORK/containers.json.orig" >"$cj"
grep -q $'\xff' "$cj" || fail "could not inject invalid UTF-8"
hostile_case "invalid UTF-8 in containers.json" "rejected .*containers.json: it is not valid JSON / UTF-8"

python3 - "$lj" <<'PY'
import json, sys
p = sys.argv[1]
layers = json.load(open(p))
for l in layers:
    if "parent" in l:
        l["parent"] = "../../../../etc"
json.dump(layers, open(p, "w"))
PY
hostile_case "layers.json parent ../../../../etc" "rejected layer chain .*is not a layer id"

# Hostile JSON. Deep nesting would overflow a recursive parser's stack.
python3 -c 'import sys; sys.stdout.write("[" * 200000 + "]" * 200000)' >"$cj"
PERISCOPED="$PERISCOPED" "$PERISCOPE" record --private -p "$pid" --duration=0.5 -o "$WORK/deep.syscap" 2>"$WORK/deep.err" ||
        { cat "$WORK/deep.err"; fail "recording with a deeply nested containers.json failed"; }
grep -q "rejected .*containers.json: it is not valid JSON / UTF-8 (nested deeper than 64 levels)" "$WORK/deep.err" ||
        { cat "$WORK/deep.err"; fail "periscoped did not reject the nested containers.json"; }
! grep -qE "Sanitizer|runtime error:|helper failed" "$WORK/deep.err" || { cat "$WORK/deep.err"; fail "the nesting crashed something"; }
"$PERISCOPE" report --no-progress "$WORK/deep.syscap" | grep >/dev/null "^Samples: [1-9]" || fail "no samples recorded next to the nested containers.json"
echo "ok: recording with 200 000 nested arrays in containers.json succeeded: $(grep -m1 'rejected' "$WORK/deep.err")"
hostile_case "200 000 nested arrays in containers.json" "rejected .*containers.json: it is not valid JSON / UTF-8 \(nested deeper than 64 levels\)"

echo '{"containers": []}' >"$cj"
hostile_case "containers.json whose top level is an object" "rejected .*containers.json: its top level is not an array"

edit_json() { # FILE PYTHON-EXPRESSION-ON-d
        python3 - "$1" "$2" "$id" <<'PY'
import json, sys
p, expr, cid = sys.argv[1], sys.argv[2], sys.argv[3]
d = json.load(open(p))
ours = [e for e in d if e.get("id") == cid]
exec(expr)
json.dump(d, open(p, "w"))
PY
}
edit_json "$cj" 'ours[0]["layer"] = 12345'
hostile_case "containers.json: the container's layer is a number" "rejected container entry in .*containers.json: id or layer is not 64 hex digits"

container_layer=$(python3 -c 'import json,sys; print([e for e in json.load(open(sys.argv[1])) if e["id"]==sys.argv[2]][0]["layer"])' "$cj" "$id")
python3 - "$lj" "$container_layer" <<'PY'
import json, sys
p, top = sys.argv[1], sys.argv[2]
layers = json.load(open(p))
for l in layers:
    if l["id"] == top:
        l["parent"] = {"id": l.get("parent")}
json.dump(layers, open(p, "w"))
PY
hostile_case "layers.json: a parent that is an object" "rejected layer chain in .*layers.json: the parent of layer [0-9a-f]{64} is not a string"

# Huge strings elsewhere in the files: the container still resolves, its
# name intact, nothing is rejected.
edit_json "$cj" 'd.append({"id": "f" * 64, "names": ["n" * 10000000], "layer": "0" * 64, "x": "y" * 5000000})'
python3 - "$lj" <<'PY'
import json, sys
p = sys.argv[1]
layers = json.load(open(p))
layers.append({"id": "e" * 64, "names": ["n" * 1000000]})
json.dump(layers, open(p, "w"))
PY
resolve "$WORK/huge" "$WORK/copies" "$pid"
assert_resolved "$WORK/huge" /bin/app podman "$WORK/spin" "$WORK/copies"
! grep -q "rejected" "$WORK/huge.err" || { cat "$WORK/huge.err"; fail "huge strings in other entries were rejected"; }
echo "ok: 15 MB of strings in other entries: the container still resolves"
restore

# The layer file itself replaced: a symlink to another user's file, then a
# hard link to /etc/shadow (what a user could craft with protected_hardlinks
# off). The running process keeps its mapping of the original inode.
mv "$layer_file" "$WORK/app.orig"
cleanup "mv -f $WORK/app.orig $layer_file"
ln -s /home/periscope-rl/.bashrc "$layer_file"
hostile_case "layer file → another user's file (symlink)" "rejected .*/diff/bin/app in the Podman store of uid $uid: symlink"
rm -f "$layer_file"
ln /etc/shadow "$layer_file"
hostile_case "layer file = hard link to /etc/shadow" "ignored .*/diff/bin/app in the Podman store of uid $uid: not the file mapped"
rm -f "$layer_file"
mv -f "$WORK/app.orig" "$layer_file"

resolve "$WORK/after" "$WORK/copies" "$pid"
assert_resolved "$WORK/after" /bin/app podman "$WORK/spin" "$WORK/copies"
echo "PASS"
