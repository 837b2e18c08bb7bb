/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* record-control.h: the control fd side of `periscope record -- COMMAND`:
 * the held command gets SYSPROF_CONTROL_FD (from Recording1.OpenControlFd)
 * and SYSPROF_TRACE_FD = GJS_TRACE_FD = GTK_TRACE_FD (one fd from
 * Recording1.OpenTraceFd) with its release, and with --memory an
 * LD_PRELOAD of libperiscope-memory.so. The gate that holds the command
 * before exec is a socket pair so the release can carry the fds: a byte 't'
 * with the trace fd, then 'g' with the control fd (or none). */
#pragma once

#include <gio/gio.h>

#define RECORD_GATE_TRACE_FD 't'
#define RECORD_GATE_GO 'g'

/* Creates the gate (a socket pair, close-on-exec). */
int record_control_gate_new(int gate[2]);

/* In the forked child: waits for the release; exports the fds it carries as
 * SYSPROF_CONTROL_FD and SYSPROF_TRACE_FD (also GJS_TRACE_FD, GTK_TRACE_FD)
 * and, if preload is set, adds it to LD_PRELOAD. Returns
 * 0 to go on with exec, negative if the recording did not start. */
int record_control_child_wait(int gate_fd, const char *preload);

/* Asks the service for an fd of recording with method (OpenControlFd,
 * OpenTraceFd); -1 with a warning on stderr naming what and what the
 * command runs without if it cannot give one. */
int record_control_open(GDBusConnection *conn, const char *owner, const char *recording, const char *method,
                        const char *what, const char *without);

/* Releases the held command, handing it control_fd and trace_fd (each if >= 0). */
int record_control_release(int gate_fd, int control_fd, int trace_fd);

/* Where libperiscope-memory.so is: $PERISCOPE_MEMORY_LIB, next to the
 * periscope binary (build tree: ../collector/), or LIBDIR/periscope/.
 * NULL with a message in *error if none exists. */
char *record_control_find_memory_lib(GError **error);
