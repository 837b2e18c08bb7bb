#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""check-introspection.py SERVED.xml [SYSPROF.xml...] [--unwinder]: the
interfaces a running periscoped --sysprofd serves (busctl introspect --xml)
have every method and property of Sysprof's own introspection files (as
Debian's sysprof installs them in /usr/share/dbus-1/interfaces), with the
same argument types in the same order and directions. --unwinder also
checks org.gnome.Sysprof3.Unwinder.Unwind as Sysprof 48 calls it."""
import sys
import xml.etree.ElementTree as ET


def interfaces(path):
    out = {}
    for iface in ET.parse(path).getroot().iter("interface"):
        methods = {}
        for m in iface.findall("method"):
            methods[m.get("name")] = [(a.get("direction") or "in", a.get("type")) for a in m.findall("arg")]
        props = {p.get("name"): (p.get("type"), p.get("access")) for p in iface.findall("property")}
        out[iface.get("name")] = (methods, props)
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    served = {}
    for path in args[0].split(","):
        served.update(interfaces(path))
    expected = {}
    for path in args[1:]:
        expected.update(interfaces(path))
    if "--unwinder" in sys.argv:
        # Sysprof 48: Unwind(u stack_size, a(hi) perf_fds, h event_fd, h capture_fd)
        expected["org.gnome.Sysprof3.Unwinder"] = (
            {"Unwind": [("in", "u"), ("in", "a(hi)"), ("in", "h"), ("in", "h")]}, {})
    ok = True
    n = 0
    for name, (methods, props) in expected.items():
        if name not in served:
            print(f"FAIL: interface {name} is not served")
            ok = False
            continue
        smethods, sprops = served[name]
        for m, sig in methods.items():
            n += 1
            if m not in smethods:
                print(f"FAIL: {name}.{m} is not served")
                ok = False
            elif smethods[m] != sig:
                print(f"FAIL: {name}.{m} has arguments {smethods[m]}, Sysprof calls it with {sig}")
                ok = False
        for p, (t, access) in props.items():
            n += 1
            if p not in sprops or sprops[p][0] != t:
                print(f"FAIL: property {name}.{p} ({t}) is not served as such")
                ok = False
    if not ok:
        sys.exit(1)
    print(f"ok: {n} methods and properties of {len(expected)} interfaces as Sysprof declares them")


main()
