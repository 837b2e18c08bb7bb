/* recording-control.h: what a recording does with the control fd (Sysprof's
 * collector protocol, control-ring.c) and the system counters (counters.c):
 * started with the recording, drained and closed before its post-stop
 * stages so ring addresses get symbolized too; and the D-Bus methods
 * Recording1.OpenControlFd and AddMark. */
#pragma once

#include <systemd/sd-bus.h>

#include "manager.h"

/* Starts the control server and the counters (option `counters`). On
 * failure error says why. */
int recording_control_start(Recording *r, sd_bus_error *error);

/* Last drain of every ring and last counter sample; writes the control
 * statistics (METADATA "periscope.control") and frees both. */
void recording_control_stop(Recording *r);

/* Frees what is left (a recording that failed to start). */
void recording_control_free(Recording *r);

/* Appends the Capabilities entries "counters" (sources this machine has)
 * and "counters-unavailable" (known sources it lacks) to an open a{sv}. */
int recording_control_append_capabilities(sd_bus_message *reply);

/* Handlers for the Recording1 vtable; userdata is the Recording. */
int recording_method_open_control_fd(sd_bus_message *m, void *userdata, sd_bus_error *error);
int recording_method_add_mark(sd_bus_message *m, void *userdata, sd_bus_error *error);
