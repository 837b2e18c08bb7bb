/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* service-connection.c: reaching periscoped (see service-connection.h). */
#include "service-connection.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <syslog.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#ifndef PERISCOPE_LIBEXECDIR
#define PERISCOPE_LIBEXECDIR "/usr/local/libexec"
#endif

/* Where the private daemon is: $PERISCOPED, next to us in a build tree, or installed. */
static char *find_periscoped(void) {
        const char *env = g_getenv("PERISCOPED");
        if (env && *env)
                return g_strdup(env);
        g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
        if (self) {
                g_autofree char *dir = g_path_get_dirname(self);
                char *candidate = g_build_filename(dir, "..", "service", "periscoped", NULL);
                if (g_file_test(candidate, G_FILE_TEST_IS_EXECUTABLE))
                        return candidate;
                g_free(candidate);
        }
        return g_build_filename(PERISCOPE_LIBEXECDIR, "periscoped", NULL);
}

/* The fd the private daemon's stdout and stderr go to: $PERISCOPED_LOG
 * (a file, or "stderr" for ours: -1) if set, else the journal when one
 * runs, else $XDG_STATE_HOME/periscope/periscoped.log (appended), else
 * /dev/null. *where says which (for messages), *journal whether it is the
 * journal's stream. */
static int open_daemon_log(char **where, gboolean *journal) {
        const char *env = g_getenv("PERISCOPED_LOG");
        if (env && strcmp(env, "stderr") == 0)
                return -1;
        if (env && *env) {
                int fd = open(env, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0600);
                if (fd >= 0) {
                        *where = g_strdup(env);
                        return fd;
                }
                fprintf(stderr, "periscope: PERISCOPED_LOG=%s: %s; logging as without it\n", env, g_strerror(errno));
        }
        int fd = sd_journal_stream_fd("periscoped", LOG_INFO, 0);
        if (fd >= 0) {
                *where = g_strdup("the journal (journalctl -t periscoped)");
                *journal = TRUE;
                return fd;
        }
        g_autofree char *dir = g_build_filename(g_get_user_state_dir(), "periscope", NULL);
        g_autofree char *path = g_build_filename(dir, "periscoped.log", NULL);
        if (g_mkdir_with_parents(dir, 0700) == 0) {
                fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0600);
                if (fd >= 0) {
                        *where = g_steal_pointer(&path);
                        return fd;
                }
        }
        fprintf(stderr, "periscope: cannot write the private periscoped's log %s (%s); it is not kept\n", path,
                g_strerror(errno));
        *where = NULL;
        return open("/dev/null", O_WRONLY | O_CLOEXEC);
}

/* In the daemon's child before exec: its own session and process group,
 * so the terminal's Ctrl-C (SIGINT to the foreground group) and hangup
 * reach `periscope`, which stops the recording, and not the daemon. */
static void daemon_child_setup(gpointer data) {
        (void) setsid();
}

static GDBusConnection *spawn_private_daemon(ServiceConnection *s, gboolean verbose, GError **error) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
                g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "socketpair: %s", g_strerror(errno));
                return NULL;
        }
        gboolean journal = FALSE;
        int log_fd = verbose ? -1 : open_daemon_log(&s->daemon_log, &journal);
        g_autofree char *path = find_periscoped();
        const char *argv[] = { path, "--peer-fd=3", NULL };
        int source_fds[] = { sv[1] }, target_fds[] = { 3 };
        /* On the journal's stream the daemon sends its messages with their
         * levels (service/bus/journal-log.h): tell it, as systemd tells a
         * service, by the stream's device and inode. */
        g_auto(GStrv) envp = g_get_environ();
        struct stat st;
        if (journal && fstat(log_fd, &st) == 0) {
                g_autofree char *stream =
                        g_strdup_printf("%llu:%llu", (unsigned long long) st.st_dev, (unsigned long long) st.st_ino);
                envp = g_environ_setenv(envp, "JOURNAL_STREAM", stream, TRUE);
        }
        gboolean ok = g_spawn_async_with_pipes_and_fds(
                NULL, argv, (const char *const *) envp, G_SPAWN_DO_NOT_REAP_CHILD, daemon_child_setup, NULL, -1, log_fd,
                log_fd, source_fds, target_fds, 1, &s->daemon_pid, NULL, NULL, NULL, error);
        close(sv[1]);
        if (log_fd >= 0)
                close(log_fd);
        if (!ok) {
                close(sv[0]);
                g_prefix_error(error, "starting the private periscoped (%s): ", path);
                return NULL;
        }
        g_autoptr(GSocket) socket = g_socket_new_from_fd(sv[0], error);
        if (!socket) {
                close(sv[0]);
                return NULL;
        }
        g_autoptr(GSocketConnection) stream = g_socket_connection_factory_create_connection(socket);
        g_autoptr(GDBusConnection) conn = g_dbus_connection_new_sync(
                G_IO_STREAM(stream), NULL, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT, NULL, NULL, error);
        if (!conn)
                return NULL;
        /* sd-bus drops a connection whose first message carries an fd in the
         * same read as the end of authentication ("BEGIN"): make one plain
         * round trip before Record passes the capture fd. */
        g_autoptr(GVariant) pong = g_dbus_connection_call_sync(conn, NULL, PROFILER_PATH, "org.freedesktop.DBus.Peer",
                                                               "Ping", NULL, NULL, G_DBUS_CALL_FLAGS_NONE, 10000, NULL,
                                                               error);
        if (!pong) {
                g_prefix_error(error, "the private periscoped (%s) does not answer (its log: %s): ", path,
                               s->daemon_log ? s->daemon_log : verbose ? "above" : "none");
                return NULL;
        }
        return g_steal_pointer(&conn);
}

/* True if the bus has (or can activate) the service. */
static gboolean bus_has_service(GDBusConnection *bus) {
        g_autoptr(GVariant) owner = g_dbus_connection_call_sync(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                                "org.freedesktop.DBus", "NameHasOwner",
                                                                g_variant_new("(s)", PROFILER_NAME), G_VARIANT_TYPE("(b)"),
                                                                G_DBUS_CALL_FLAGS_NONE, 5000, NULL, NULL);
        gboolean has = FALSE;
        if (owner)
                g_variant_get(owner, "(b)", &has);
        if (has)
                return TRUE;
        g_autoptr(GVariant) names = g_dbus_connection_call_sync(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                                "org.freedesktop.DBus", "ListActivatableNames", NULL,
                                                                G_VARIANT_TYPE("(as)"), G_DBUS_CALL_FLAGS_NONE, 5000, NULL,
                                                                NULL);
        if (!names)
                return FALSE;
        g_autofree const char **list = NULL;
        g_variant_get(names, "(^a&s)", &list);
        for (size_t i = 0; list && list[i]; i++)
                if (strcmp(list[i], PROFILER_NAME) == 0)
                        return TRUE;
        return FALSE;
}

/* A synchronous call to the bus driver (org.freedesktop.DBus). */
static GVariant *call_bus(GDBusConnection *bus, const char *method, GVariant *args, const char *reply_type,
                          GError **error) {
        return g_dbus_connection_call_sync(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                           method, args, G_VARIANT_TYPE(reply_type), G_DBUS_CALL_FLAGS_NONE, 25000,
                                           NULL, error);
}

/* The service's unique name, activating it when nobody owns the name yet:
 * GetNameOwner alone never activates, so an installed but idle service was
 * "no such name". (StartServiceByName cannot go first: it refuses a name
 * that is owned but has no activation file, as on a test's private bus.) */
static char *get_name_owner(GDBusConnection *bus, GError **error) {
        g_autoptr(GError) not_running = NULL;
        g_autoptr(GVariant) ret = call_bus(bus, "GetNameOwner", g_variant_new("(s)", PROFILER_NAME), "(s)",
                                           &not_running);
        if (!ret) {
                g_autoptr(GVariant) started = call_bus(bus, "StartServiceByName",
                                                       g_variant_new("(su)", PROFILER_NAME, 0u), "(u)", error);
                if (!started)
                        return NULL;
                ret = call_bus(bus, "GetNameOwner", g_variant_new("(s)", PROFILER_NAME), "(s)", error);
                if (!ret)
                        return NULL;
        }
        char *owner;
        g_variant_get(ret, "(s)", &owner);
        return owner;
}

int service_connect(ServiceConnection *s, const ServiceWhere *where, GError **error) {
        if (where->address) {
                s->conn = g_dbus_connection_new_for_address_sync(
                        where->address,
                        G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                        NULL, NULL, error);
        } else if (where->session_bus) {
                s->conn = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, error);
        } else if (!where->private_daemon) {
                g_autoptr(GDBusConnection) system = g_bus_get_sync(G_BUS_TYPE_SYSTEM, NULL, NULL);
                if (system && bus_has_service(system))
                        s->conn = g_steal_pointer(&system);
        }
        if (s->conn) {
                s->owner = get_name_owner(s->conn, error);
                return s->owner ? 0 : -1;
        }
        if (where->address || where->session_bus)
                return -1;
        s->conn = spawn_private_daemon(s, where->verbose, error);
        return s->conn ? 0 : -1;
}

void service_disconnect(ServiceConnection *s) {
        if (s->conn) {
                (void) g_dbus_connection_close_sync(s->conn, NULL, NULL);
                g_clear_object(&s->conn);
        }
        if (s->daemon_pid) {
                int status;
                (void) waitpid(s->daemon_pid, &status, 0);
                g_spawn_close_pid(s->daemon_pid);
                s->daemon_pid = 0;
        }
        g_clear_pointer(&s->owner, g_free);
        g_clear_pointer(&s->daemon_log, g_free);
}

const char *service_error_message(GError *error, char **name) {
        if (name)
                *name = g_dbus_error_get_remote_error(error);
        g_dbus_error_strip_remote_error(error);
        return error->message;
}
