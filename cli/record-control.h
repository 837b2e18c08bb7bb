/* record-control.h: the control fd side of `periscope record -- COMMAND`:
 * the held command gets SYSPROF_CONTROL_FD (from Recording1.OpenControlFd)
 * with its release, and with --memory an LD_PRELOAD of
 * libperiscope-memory.so. The gate that holds the command before exec is a
 * socket pair so the release can carry the fd. */
#pragma once

#include <gio/gio.h>

/* Creates the gate (a socket pair, close-on-exec). */
int record_control_gate_new(int gate[2]);

/* In the forked child: waits for the release; exports the fd it carries as
 * SYSPROF_CONTROL_FD and, if preload is set, adds it to LD_PRELOAD. Returns
 * 0 to go on with exec, negative if the recording did not start. */
int record_control_child_wait(int gate_fd, const char *preload);

/* Asks the service for a control fd of recording (-1 with a warning on
 * stderr if it cannot give one: the command then runs without). */
int record_control_open(GDBusConnection *conn, const char *owner, const char *recording);

/* Releases the held command, handing it control_fd (if >= 0). */
int record_control_release(int gate_fd, int control_fd);

/* Where libperiscope-memory.so is: $PERISCOPE_MEMORY_LIB, next to the
 * periscope binary (build tree: ../collector/), or LIBDIR/periscope/.
 * NULL with a message in *error if none exists. */
char *record_control_find_memory_lib(GError **error);
