#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# watch-signals.py: a D-Bus client that listens to every signal the
# service sends (a match rule on its name, as an eavesdropper would), and
# optionally records or watches a recording itself. Writes JSON to OUT:
#   {"path": the recording it started or watched, "signals": [[path, interface, member], ...],
#    "properties": what GetAll answered (or "error": its D-Bus error)}
# usage: watch-signals.py ADDRESS OUT [--record PID CAPTURE MS] [--watch PATH] [--seconds N] [--path-file FILE]
#                         [--until FILE] [--ready FILE]
#   --record   Record(pids=[PID], duration-ms=MS) into CAPTURE on this connection
#   --watch    GetAll on PATH (root and the owner become watchers of its signals)
#   --seconds  listen this long at most (default 20); stops earlier once the
#              recording it started or watched sent Finished
#   --path-file  write the recording's path there as soon as it is known
#   --until    stop listening once FILE exists (an eavesdropper's window)
#   --ready    create FILE once the match rule is in place
import argparse
import json
import os

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

p = argparse.ArgumentParser()
p.add_argument("address")
p.add_argument("out")
p.add_argument("--record", nargs=3, metavar=("PID", "CAPTURE", "MS"))
p.add_argument("--watch")
p.add_argument("--seconds", type=float, default=20)
p.add_argument("--path-file")
p.add_argument("--until")
p.add_argument("--ready")
a = p.parse_args()

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(a.address)
loop = GLib.MainLoop()
result = {"path": None, "signals": []}


def on_signal(*args, **kw):
    result["signals"].append([kw["path"], kw["interface"], kw["member"]])
    if kw["member"] == "Finished" and kw["path"] == result["path"]:
        GLib.timeout_add(300, loop.quit)  # PropertiesChanged follows Finished


bus.add_signal_receiver(on_signal, bus_name="org.periscope.Profiler1", path_keyword="path",
                        interface_keyword="interface", member_keyword="member")
bus.get_unique_name()  # a round trip: the AddMatch before it is done
if a.ready:
    open(a.ready, "w").close()
if a.record:
    profiler = dbus.Interface(bus.get_object("org.periscope.Profiler1", "/org/periscope/Profiler1"),
                              "org.periscope.Profiler1")
    fd = os.open(a.record[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    result["path"] = str(profiler.Record({"pids": dbus.Array([dbus.Int32(int(a.record[0]))], signature="i"),
                                          "duration-ms": dbus.UInt32(int(a.record[2]))}, dbus.types.UnixFd(fd)))
    os.close(fd)
if a.watch:
    result["path"] = a.watch
    props = dbus.Interface(bus.get_object("org.periscope.Profiler1", a.watch), "org.freedesktop.DBus.Properties")
    try:
        result["properties"] = {str(k): str(v) for k, v in props.GetAll("org.periscope.Recording1").items()}
    except dbus.exceptions.DBusException as e:
        result["error"] = f"{e.get_dbus_name()}: {e.get_dbus_message()}"
if a.path_file and result["path"]:
    with open(a.path_file + ".tmp", "w") as f:
        f.write(result["path"] + "\n")
    os.rename(a.path_file + ".tmp", a.path_file)
GLib.timeout_add(int(a.seconds * 1000), loop.quit)
if a.until:
    GLib.timeout_add(100, lambda: loop.quit() if os.path.exists(a.until) else True)
loop.run()
with open(a.out, "w") as f:
    json.dump(result, f)
