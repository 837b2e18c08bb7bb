/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* service-connection.h: how `periscope record` and `periscope list` reach
 * org.periscope.Profiler1: the system service when it is installed (or a bus
 * the user names), otherwise a private periscoped spawned for this one
 * command over a socketpair (peer-to-peer D-Bus). The private daemon runs in
 * its own session and process group (a Ctrl-C in the terminal is not its)
 * and logs to the journal or to $XDG_STATE_HOME/periscope/periscoped.log,
 * to the terminal only when asked (--verbose). */
#pragma once

#include <gio/gio.h>

#include "protocol.h"

typedef struct ServiceWhere {
        const char *address;       /* a bus address, or NULL */
        gboolean session_bus;
        gboolean private_daemon;   /* never use a bus: always spawn periscoped */
        gboolean verbose;          /* the private daemon logs to our stderr */
} ServiceWhere;

typedef struct ServiceConnection {
        GDBusConnection *conn;
        char *owner;               /* unique name of the service; NULL on a peer connection */
        GPid daemon_pid;           /* the private periscoped, or 0 */
        char *daemon_log;          /* where the private daemon logs ("the journal", a path), or NULL */
} ServiceConnection;

/* Connects as `where` says; on failure *error says what was tried. */
int service_connect(ServiceConnection *s, const ServiceWhere *where, GError **error);

/* Closes the connection and, for a private daemon, waits until it has
 * finished its recordings and exited. */
void service_disconnect(ServiceConnection *s);

/* The service's error without its D-Bus prefix; *name gets the D-Bus error
 * name (or NULL). */
const char *service_error_message(GError *error, char **name);
