#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The introspection XML in dbus/ is what the running service serves: same
# interfaces, methods, arguments (names, types, directions), properties
# (types, access) and signals, on the Profiler1 and a Recording1 object.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
: "${DBUS_INTROSPECTION_XML:?}"
private_bus_start
periscoped_start
sleep 30 & target=$!
private_bus_track $target
gdbus call --address "$BUS_ADDRESS" -d org.periscope.Profiler1 -o /org/periscope/Profiler1 \
        -m org.periscope.Profiler1.Record "{'pids': <[$target]>, 'duration-ms': <uint32 20000>}" 3 3>"$TEST_TMP/c.syscap" >"$TEST_TMP/rec"
rec=$(grep -o "/org/periscope/Recording/[0-9]*" "$TEST_TMP/rec") || fail "Record returned no path"
busctl --address="$BUS_ADDRESS" introspect --xml-interface org.periscope.Profiler1 /org/periscope/Profiler1 >"$TEST_TMP/p.xml"
busctl --address="$BUS_ADDRESS" introspect --xml-interface org.periscope.Profiler1 "$rec" >"$TEST_TMP/r.xml"
"$PYTHON" - "$DBUS_INTROSPECTION_XML" "$TEST_TMP/p.xml" "$TEST_TMP/r.xml" <<'PY'
import sys
import xml.etree.ElementTree as ET

def model(path, only=None):
    out = {}
    for iface in ET.parse(path).getroot().iter("interface"):
        name = iface.get("name")
        if name.startswith("org.freedesktop.DBus") or (only and name not in only):
            continue
        items = set()
        for m in iface.findall("method"):
            items.add(("method", m.get("name"), tuple((a.get("name"), a.get("type"), a.get("direction", "in")) for a in m.findall("arg"))))
        for s in iface.findall("signal"):
            items.add(("signal", s.get("name"), tuple((a.get("name"), a.get("type")) for a in s.findall("arg"))))
        for p in iface.findall("property"):
            items.add(("property", p.get("name"), p.get("type"), p.get("access")))
        out[name] = items
    return out

want = model(sys.argv[1])
served = model(sys.argv[2], {"org.periscope.Profiler1"})
served.update(model(sys.argv[3], {"org.periscope.Recording1"}))
ok = True
for iface in sorted(set(want) | set(served)):
    w, s = want.get(iface, set()), served.get(iface, set())
    for x in sorted(w - s, key=str):
        print(f"FAIL: {iface}: in dbus/ XML but not served: {x}"); ok = False
    for x in sorted(s - w, key=str):
        print(f"FAIL: {iface}: served but not in dbus/ XML: {x}"); ok = False
if not ok:
    sys.exit(1)
print(f"ok: {sum(len(v) for v in want.values())} members match across {len(want)} interfaces")
PY
