#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# record-many.py: the locked-memory attack of docs/security.md as a client:
# one bus connection calls org.periscope.Profiler1.Record N times as fast as
# it can on the caller's own process PID (each into its own capture file in
# DIR, bounded by a duration so it would outlive the client), then prints
# one JSON line: {"ok": [recording paths], "refused": {error name: count},
# "first_refusal": message, "seconds": elapsed}.
# usage: record-many.py ADDRESS PID N DIR [UNWIND]
import json
import os
import sys
import time

import dbus

address, pid, n, out_dir = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
unwind = sys.argv[5] if len(sys.argv) > 5 else "auto"
bus = dbus.bus.BusConnection(address)
profiler = dbus.Interface(bus.get_object("org.periscope.Profiler1", "/org/periscope/Profiler1"),
                          "org.periscope.Profiler1")
ok, refused, first = [], {}, None
start = time.monotonic()
for i in range(n):
    fd = os.open(os.path.join(out_dir, f"r{i}.syscap"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        opts = {"pids": dbus.Array([dbus.Int32(pid)], signature="i"),
                "duration-ms": dbus.UInt32(60000), "unwind": dbus.String(unwind)}
        ok.append(str(profiler.Record(opts, dbus.types.UnixFd(fd))))
    except dbus.exceptions.DBusException as e:
        refused[e.get_dbus_name()] = refused.get(e.get_dbus_name(), 0) + 1
        first = first or f"{e.get_dbus_name()}: {e.get_dbus_message()}"
    finally:
        os.close(fd)
print(json.dumps({"ok": ok, "refused": refused, "first_refusal": first,
                  "seconds": round(time.monotonic() - start, 2)}))
