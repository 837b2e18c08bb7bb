#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""fd-limits.py: run by trace-fd-client as the recorded command, on the bus
$BUS with the recording $PERISCOPE_RECORDING: opens control fds and trace
fds through Recording1 and keeps them, until the service refuses one.
Each refusal must be org.periscope.Error.LimitExceeded and name the limit.
Prints "control N" and "trace N": how many were opened before it."""
import os
import sys

import dbus

bus = dbus.bus.BusConnection(os.environ["BUS"])
rec = dbus.Interface(bus.get_object("org.periscope.Profiler1", os.environ["PERISCOPE_RECORDING"]),
                     "org.periscope.Recording1")
kept = []
for method, limit in (("OpenControlFd", 64), ("OpenTraceFd", 16)):
    opened = 0
    while True:
        try:
            kept.append(getattr(rec, method)().take())
            opened += 1
        except dbus.exceptions.DBusException as e:
            if e.get_dbus_name() != "org.periscope.Error.LimitExceeded":
                sys.exit(f"{method} after {opened}: {e.get_dbus_name()}: {e.get_dbus_message()}")
            if str(limit) not in e.get_dbus_message():
                sys.exit(f"{method}: the refusal does not name the limit {limit}: {e.get_dbus_message()}")
            break
        if opened > limit:
            sys.exit(f"{method}: {opened} opened, past the limit of {limit}")
    print(method, opened)
for fd in kept:
    os.close(fd)
