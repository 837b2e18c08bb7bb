/* recording-control.h: Recording1.OpenControlFd and AddMark. The control-fd
 * server (Sysprof's collector protocol) lives in recording-control.c. */
#pragma once

#include <systemd/sd-bus.h>

/* Handlers for the Recording1 vtable; userdata is the Recording. */
int recording_method_open_control_fd(sd_bus_message *m, void *userdata, sd_bus_error *error);
int recording_method_add_mark(sd_bus_message *m, void *userdata, sd_bus_error *error);
