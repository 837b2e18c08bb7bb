/* cmd-record.c: `periscope record`: records a command, processes or the
 * whole system into a capture through org.periscope.Profiler1, using the
 * system service when it is installed and otherwise a private periscoped
 * spawned for this one recording over a socketpair (peer-to-peer D-Bus). */
#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <gio/gunixfdlist.h>
#include <glib-unix.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "record-control.h"

#define PROFILER_NAME "org.periscope.Profiler1"
#define PROFILER_PATH "/org/periscope/Profiler1"
#define RECORDING_INTERFACE "org.periscope.Recording1"

#ifndef PERISCOPE_LIBEXECDIR
#define PERISCOPE_LIBEXECDIR "/usr/local/libexec"
#endif

typedef struct RecordRun {
        GMainLoop *loop;
        GDBusConnection *conn;
        char *owner;               /* unique name of the service; NULL on a peer connection */
        GPid daemon_pid;           /* the private periscoped, or 0 */
        char *recording;           /* object path */
        guint subscriptions[2];
        guint name_watch;

        GPid child_pid;            /* the command, or 0 */
        gboolean child_exited;
        int child_status;

        gboolean finished;
        gboolean finished_ok;
        char *finished_error;
        GVariant *stats;

        guint64 samples, lost, bytes;
        guint32 processes;
        gint64 start_us;
        gboolean live;             /* stderr is a terminal: show a live line */
        guint live_source;
        int sigints;
} RecordRun;

static void record_run_maybe_quit(RecordRun *run) {
        if (run->finished && (!run->child_pid || run->child_exited))
                g_main_loop_quit(run->loop);
}

static void live_line_clear(RecordRun *run) {
        if (run->live)
                fprintf(stderr, "\r\033[K");
}

static gboolean on_live_tick(gpointer data) {
        RecordRun *run = data;
        double secs = (g_get_monotonic_time() - run->start_us) / 1e6;
        fprintf(stderr, "\r\033[Kperiscope: recording %.1f s, %" G_GUINT64_FORMAT " samples, %" G_GUINT64_FORMAT " lost",
                secs, run->samples, run->lost);
        return G_SOURCE_CONTINUE;
}

static void update_from_properties(RecordRun *run, GVariant *dict) {
        (void) g_variant_lookup(dict, "Samples", "t", &run->samples);
        (void) g_variant_lookup(dict, "LostSamples", "t", &run->lost);
        (void) g_variant_lookup(dict, "Bytes", "t", &run->bytes);
        (void) g_variant_lookup(dict, "Processes", "u", &run->processes);
}

static void on_properties_changed(GDBusConnection *c, const char *sender, const char *path, const char *iface,
                                  const char *signal, GVariant *params, gpointer data) {
        RecordRun *run = data;
        const char *interface;
        g_autoptr(GVariant) changed = NULL;
        g_autoptr(GVariant) invalidated = NULL;
        if (!run->recording || g_strcmp0(path, run->recording) != 0 || !g_variant_is_of_type(params, G_VARIANT_TYPE("(sa{sv}as)")))
                return;
        g_variant_get(params, "(&s@a{sv}@as)", &interface, &changed, &invalidated);
        if (g_strcmp0(interface, RECORDING_INTERFACE) == 0)
                update_from_properties(run, changed);
}

static void on_finished(GDBusConnection *c, const char *sender, const char *path, const char *iface,
                        const char *signal, GVariant *params, gpointer data) {
        RecordRun *run = data;
        if (!run->recording || g_strcmp0(path, run->recording) != 0 || run->finished ||
            !g_variant_is_of_type(params, G_VARIANT_TYPE("(bsa{sv})")))
                return;
        const char *error;
        g_variant_get(params, "(b&s@a{sv})", &run->finished_ok, &error, &run->stats);
        run->finished_error = g_strdup(error);
        (void) g_variant_lookup(run->stats, "samples", "t", &run->samples);
        (void) g_variant_lookup(run->stats, "lost-samples", "t", &run->lost);
        (void) g_variant_lookup(run->stats, "bytes", "t", &run->bytes);
        (void) g_variant_lookup(run->stats, "processes", "u", &run->processes);
        run->finished = TRUE;
        record_run_maybe_quit(run);
}

/* The service went away (crashed, or the private one died) without Finished:
 * the capture holds what it flushed so far. */
static void service_lost(RecordRun *run) {
        if (run->finished)
                return;
        live_line_clear(run);
        fprintf(stderr, "periscope record: periscoped went away before finishing; the capture holds what it "
                        "wrote until then\n");
        run->finished = TRUE;
        run->finished_ok = FALSE;
        run->finished_error = g_strdup("periscoped went away");
        record_run_maybe_quit(run);
}

static void on_connection_closed(GDBusConnection *c, gboolean remote_peer_vanished, GError *error, gpointer data) {
        service_lost(data);
}

static void on_name_vanished(GDBusConnection *c, const char *name, gpointer data) {
        service_lost(data);
}

static void on_child_exit(GPid pid, int status, gpointer data) {
        RecordRun *run = data;
        run->child_exited = TRUE;
        run->child_status = status;
        g_spawn_close_pid(pid);
        record_run_maybe_quit(run);
}

static void on_stop_reply(GObject *source, GAsyncResult *res, gpointer data) {
        g_autoptr(GError) error = NULL;
        g_autoptr(GVariant) ret = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &error);
        if (!ret) {
                g_dbus_error_strip_remote_error(error);
                fprintf(stderr, "\nperiscope record: stopping failed: %s\n", error->message);
        }
}

static gboolean on_sigint(gpointer data) {
        RecordRun *run = data;
        if (++run->sigints > 1) {
                live_line_clear(run);
                fprintf(stderr, "periscope record: interrupted again, leaving without waiting for the capture\n");
                exit(130);
        }
        if (run->recording && !run->finished)
                g_dbus_connection_call(run->conn, run->owner, run->recording, RECORDING_INTERFACE, "Stop", NULL, NULL,
                                       G_DBUS_CALL_FLAGS_NONE, -1, NULL, on_stop_reply, run);
        return G_SOURCE_CONTINUE;
}

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

static GDBusConnection *spawn_private_daemon(RecordRun *run, GError **error) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
                g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "socketpair: %s", g_strerror(errno));
                return NULL;
        }
        g_autofree char *path = find_periscoped();
        const char *argv[] = { path, "--peer-fd=3", NULL };
        int source_fds[] = { sv[1] }, target_fds[] = { 3 };
        gboolean ok = g_spawn_async_with_pipes_and_fds(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, -1, -1,
                                                       -1, source_fds, target_fds, 1, &run->daemon_pid, NULL, NULL,
                                                       NULL, error);
        close(sv[1]);
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
                g_prefix_error(error, "the private periscoped (%s) does not answer: ", path);
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

typedef struct RecordArgs {
        char *output;
        int frequency;
        gboolean system;
        char **pids;
        char *container;
        double duration;
        gboolean no_kernel;
        char *unwind;
        int stack_size;
        gboolean session_bus;
        char *address;
        gboolean private_daemon;
        char **command;
        gboolean memory;           /* record-control.c: LD_PRELOAD libperiscope-memory.so */
        gboolean no_control_fd;
        char *counters;
} RecordArgs;

static int connect_service(RecordRun *run, const RecordArgs *a, GError **error) {
        if (a->address) {
                run->conn = g_dbus_connection_new_for_address_sync(
                        a->address,
                        G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                        NULL, NULL, error);
        } else if (a->session_bus) {
                run->conn = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, error);
        } else if (!a->private_daemon) {
                g_autoptr(GDBusConnection) system = g_bus_get_sync(G_BUS_TYPE_SYSTEM, NULL, NULL);
                if (system && bus_has_service(system))
                        run->conn = g_steal_pointer(&system);
        }
        if (run->conn) {
                run->owner = get_name_owner(run->conn, error);
                return run->owner ? 0 : -1;
        }
        if (a->address || a->session_bus)
                return -1;
        run->conn = spawn_private_daemon(run, error);
        return run->conn ? 0 : -1;
}

/* Forks the command, held before exec until the gate fd gets a byte (closed
 * without one: the recording could not start and the child exits 127). */
static int start_held_command(char **command, const char *preload, GPid *ret_pid, int *ret_gate) {
        int gate[2];
        int r = record_control_gate_new(gate);
        if (r < 0)
                return r;
        pid_t pid = fork();
        if (pid < 0) {
                int e = errno;
                close(gate[0]);
                close(gate[1]);
                return -e;
        }
        if (pid == 0) {
                close(gate[1]);
                if (record_control_child_wait(gate[0], preload) < 0)
                        _exit(127);
                close(gate[0]);
                execvp(command[0], command);
                int e = errno;
                (void) !write(STDERR_FILENO, "periscope record: cannot run ", 29);
                (void) !write(STDERR_FILENO, command[0], strlen(command[0]));
                (void) !write(STDERR_FILENO, ": ", 2);
                (void) !write(STDERR_FILENO, strerror(e), strlen(strerror(e)));
                (void) !write(STDERR_FILENO, "\n", 1);
                _exit(127);
        }
        close(gate[0]);
        *ret_pid = pid;
        *ret_gate = gate[1];
        return 0;
}

static GVariant *build_options(const RecordArgs *a, GPid child, GError **error) {
        GVariantBuilder b;
        g_variant_builder_init(&b, G_VARIANT_TYPE("a{sv}"));
        if (a->system)
                g_variant_builder_add(&b, "{sv}", "system", g_variant_new_boolean(TRUE));
        if (a->container)
                g_variant_builder_add(&b, "{sv}", "container", g_variant_new_string(a->container));
        if (a->pids) {
                GVariantBuilder pids;
                g_variant_builder_init(&pids, G_VARIANT_TYPE("ai"));
                for (char **p = a->pids; *p; p++) {
                        g_auto(GStrv) parts = g_strsplit(*p, ",", -1);
                        for (char **q = parts; *q; q++) {
                                char *end;
                                long v = strtol(*q, &end, 10);
                                if (!**q || *end || v <= 0 || v > INT_MAX) {
                                        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                                                    "--pid: '%s' is not a process id", *q);
                                        g_variant_builder_clear(&pids);
                                        g_variant_builder_clear(&b);
                                        return NULL;
                                }
                                g_variant_builder_add(&pids, "i", (gint32) v);
                        }
                }
                g_variant_builder_add(&b, "{sv}", "pids", g_variant_builder_end(&pids));
        }
        if (child)
                g_variant_builder_add(&b, "{sv}", "command-pid", g_variant_new_int32(child));
        if (a->frequency)
                g_variant_builder_add(&b, "{sv}", "frequency", g_variant_new_uint32((guint32) a->frequency));
        if (a->duration > 0)
                g_variant_builder_add(&b, "{sv}", "duration-ms", g_variant_new_uint32((guint32) (a->duration * 1000)));
        if (a->no_kernel)
                g_variant_builder_add(&b, "{sv}", "kernel", g_variant_new_boolean(FALSE));
        if (a->unwind)
                g_variant_builder_add(&b, "{sv}", "unwind", g_variant_new_string(a->unwind));
        if (a->stack_size > 0)
                g_variant_builder_add(&b, "{sv}", "stack-size", g_variant_new_uint32((guint32) a->stack_size));
        if (a->counters) {
                g_auto(GStrv) names = g_strsplit(a->counters, ",", -1);
                /* "--counters none" (or "") turns them off: an empty list */
                if (strcmp(a->counters, "none") == 0)
                        names[0] = (g_free(names[0]), NULL);
                g_variant_builder_add(&b, "{sv}", "counters", g_variant_new_strv((const char *const *) names, -1));
        }
        return g_variant_builder_end(&b);
}

static int exit_status_of(int status) {
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        if (WIFSIGNALED(status))
                return 128 + WTERMSIG(status);
        return 1;
}

static void print_summary(RecordRun *run, const char *output) {
        double secs = (g_get_monotonic_time() - run->start_us) / 1e6;
        const char *reason = "?";
        if (run->stats)
                (void) g_variant_lookup(run->stats, "reason", "&s", &reason);
        live_line_clear(run);
        g_autofree char *size = g_format_size(run->bytes);
        fprintf(stderr,
                "periscope: recorded %" G_GUINT64_FORMAT " samples (%" G_GUINT64_FORMAT " lost) from %u processes "
                "in %.1f s (ended: %s)\n",
                run->samples, run->lost, run->processes, secs, reason);
        /* --container: processes that entered it during the recording. */
        guint32 joined = 0;
        gboolean stopped = FALSE;
        if (run->stats && g_variant_lookup(run->stats, "joined-processes", "u", &joined) && joined > 0)
                fprintf(stderr, "periscope: %u of them joined the container during the recording\n", joined);
        if (run->stats && g_variant_lookup(run->stats, "container-stopped", "b", &stopped) && stopped)
                fprintf(stderr, "periscope: the container had no process left at the end\n");
        if (!run->finished_ok)
                fprintf(stderr, "periscope: the recording failed: %s\n", run->finished_error);
        fprintf(stderr, "periscope: capture written to %s (%s); look at it with `periscope info %s`\n", output, size,
                output);
}

int cmd_record(int argc, char **argv) {
        RecordArgs a = {};
        const GOptionEntry entries[] = {
                { "output", 'o', 0, G_OPTION_ARG_FILENAME, &a.output, "Write the capture to FILE", "FILE" },
                { "frequency", 'F', 0, G_OPTION_ARG_INT, &a.frequency, "Samples per second (default 999)", "HZ" },
                { "system", 0, 0, G_OPTION_ARG_NONE, &a.system, "Record every process", NULL },
                { "pid", 'p', 0, G_OPTION_ARG_STRING_ARRAY, &a.pids, "Record process PID (repeat, or PID,PID…)", "PID" },
                { "container", 'c', 0, G_OPTION_ARG_STRING, &a.container,
                  "Record every process of a Podman container (name or id) or Flatpak app (app id), also those "
                  "that join or start it during the recording", "NAME|ID|APP-ID" },
                { "duration", 0, 0, G_OPTION_ARG_DOUBLE, &a.duration, "Stop after SECONDS", "SECONDS" },
                { "no-kernel", 0, 0, G_OPTION_ARG_NONE, &a.no_kernel, "Leave kernel stacks out", NULL },
                { "unwind", 0, 0, G_OPTION_ARG_STRING, &a.unwind,
                  "User stacks: dwarf (unwind tables), fp (frame pointers) or auto (default: dwarf)", "MODE" },
                { "stack-size", 0, 0, G_OPTION_ARG_INT, &a.stack_size,
                  "Bytes of user stack copied per sample for dwarf (multiple of 8, at most 65528; default 16384)",
                  "BYTES" },
                { "session-bus", 0, 0, G_OPTION_ARG_NONE, &a.session_bus, "Use periscoped on the session bus", NULL },
                { "address", 0, 0, G_OPTION_ARG_STRING, &a.address, "Use periscoped on the bus at ADDRESS", "ADDRESS" },
                { "private", 0, 0, G_OPTION_ARG_NONE, &a.private_daemon, "Always start a private periscoped", NULL },
                { "memory", 0, 0, G_OPTION_ARG_NONE, &a.memory, "Record the command's allocations (LD_PRELOAD of libperiscope-memory.so)", NULL },
                { "counters", 0, 0, G_OPTION_ARG_STRING, &a.counters, "System counters: cpu,memory,disk,net,cpufreq,energy,battery or none (default cpu,memory)", "LIST" },
                { "no-control-fd", 0, 0, G_OPTION_ARG_NONE, &a.no_control_fd, "Do not give the command SYSPROF_CONTROL_FD (marks, logs, counters of the program)", NULL },
                { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &a.command, NULL, "[-- COMMAND ARGS…]" },
                {},
        };
        g_autoptr(GOptionContext) ctx = g_option_context_new("");
        g_autoptr(GError) error = NULL;
        g_option_context_set_summary(ctx, "Records CPU stacks of a command, processes or the whole system into a "
                                          "Sysprof capture.\nThe exit status is the command's.");
        g_option_context_add_main_entries(ctx, entries, NULL);
        g_option_context_set_strict_posix(ctx, TRUE);
        if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
                fprintf(stderr, "periscope record: %s\n", error->message);
                return 2;
        }
        if (a.command && a.command[0] && strcmp(a.command[0], "--") == 0) {
                /* strict POSIX parsing leaves a "--" that follows other options */
                char **rest = g_strdupv(a.command + 1);
                g_strfreev(a.command);
                a.command = rest;
        }
        gboolean has_command = a.command && a.command[0];
        if (!has_command && !a.system && !a.pids && !a.container) {
                fprintf(stderr, "periscope record: say what to record: -- COMMAND, --pid PID, --container NAME or --system\n");
                return 2;
        }
        if (a.frequency < 0 || a.duration < 0 || a.duration > 86400) {
                fprintf(stderr, "periscope record: --frequency and --duration must be positive (duration ≤ 86400)\n");
                return 2;
        }
        if (!a.output) {
                g_autoptr(GDateTime) now = g_date_time_new_now_local();
                a.output = g_date_time_format(now, "periscope-%Y%m%d-%H%M%S.syscap");
        }

        RecordRun run = { .start_us = g_get_monotonic_time(), .live = isatty(STDERR_FILENO) };
        g_autoptr(GUnixFDList) fds = NULL;
        g_autoptr(GVariant) reply = NULL;
        int gate = -1, ret = 1;
        g_autofree char *preload = NULL;
        if (a.memory) {
                if (!has_command) {
                        fprintf(stderr, "periscope record: --memory needs a command to run: -- COMMAND\n");
                        return 2;
                }
                preload = record_control_find_memory_lib(&error);
                if (!preload) {
                        fprintf(stderr, "periscope record: --memory: %s\n", error->message);
                        return 1;
                }
        }
        /* Fork before GDBus starts its thread. */
        if (has_command) {
                int r = start_held_command(a.command, preload, &run.child_pid, &gate);
                if (r < 0) {
                        fprintf(stderr, "periscope record: cannot start the command: %s\n", g_strerror(-r));
                        return 1;
                }
        }
        int fd = open(a.output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
        if (fd < 0) {
                fprintf(stderr, "periscope record: cannot create %s: %s\n", a.output, g_strerror(errno));
                goto out;
        }
        if (connect_service(&run, &a, &error) < 0) {
                fprintf(stderr, "periscope record: cannot reach periscoped: %s\n", error->message);
                close(fd);
                goto out;
        }
        run.loop = g_main_loop_new(NULL, FALSE);
        run.subscriptions[0] = g_dbus_connection_signal_subscribe(run.conn, run.owner, RECORDING_INTERFACE, "Finished",
                                                                  NULL, NULL, G_DBUS_SIGNAL_FLAGS_NONE, on_finished,
                                                                  &run, NULL);
        run.subscriptions[1] = g_dbus_connection_signal_subscribe(run.conn, run.owner, "org.freedesktop.DBus.Properties",
                                                                  "PropertiesChanged", NULL, NULL,
                                                                  G_DBUS_SIGNAL_FLAGS_NONE, on_properties_changed, &run,
                                                                  NULL);
        GVariant *options = build_options(&a, run.child_pid, &error);
        if (!options) {
                fprintf(stderr, "periscope record: %s\n", error->message);
                close(fd);
                goto out;
        }
        fds = g_unix_fd_list_new_from_array(&fd, 1); /* takes fd */
        reply = g_dbus_connection_call_with_unix_fd_list_sync(
                run.conn, run.owner, PROFILER_PATH, PROFILER_NAME, "Record", g_variant_new("(@a{sv}h)", options, 0),
                G_VARIANT_TYPE("(o)"), G_DBUS_CALL_FLAGS_ALLOW_INTERACTIVE_AUTHORIZATION, 60000, fds, NULL, NULL, &error);
        if (!reply) {
                g_dbus_error_strip_remote_error(error);
                fprintf(stderr, "periscope record: %s\n", error->message);
                goto out;
        }
        g_variant_get(reply, "(o)", &run.recording);
        run.start_us = g_get_monotonic_time();

        /* Armed: now the command may run. */
        if (gate >= 0) {
                int control_fd = a.no_control_fd ? -1 : record_control_open(run.conn, run.owner, run.recording);
                if (record_control_release(gate, control_fd) < 0)
                        fprintf(stderr, "periscope record: cannot release the command: %s\n", g_strerror(errno));
                if (control_fd >= 0)
                        close(control_fd); /* the command's copy keeps it open; its end ends the rings */
                close(gate);
                gate = -1;
                g_child_watch_add(run.child_pid, on_child_exit, &run);
        }
        g_signal_connect(run.conn, "closed", G_CALLBACK(on_connection_closed), &run);
        if (run.owner)
                run.name_watch = g_bus_watch_name_on_connection(run.conn, run.owner, G_BUS_NAME_WATCHER_FLAGS_NONE, NULL,
                                                                on_name_vanished, &run, NULL);
        g_unix_signal_add(SIGINT, on_sigint, &run);
        g_unix_signal_add(SIGTERM, on_sigint, &run);
        if (run.live)
                run.live_source = g_timeout_add(250, on_live_tick, &run);
        g_main_loop_run(run.loop);
        if (run.live_source)
                g_source_remove(run.live_source);

        print_summary(&run, a.output);
        if (run.child_pid)
                ret = exit_status_of(run.child_status);
        else
                ret = run.finished_ok ? 0 : 1;
        run.child_pid = 0;
out:
        if (gate >= 0)
                close(gate); /* the held command exits 127 without running */
        if (run.child_pid) {
                int status;
                (void) waitpid(run.child_pid, &status, 0);
        }
        if (run.name_watch)
                g_bus_unwatch_name(run.name_watch);
        if (run.conn) {
                g_signal_handlers_disconnect_by_data(run.conn, &run);
                for (size_t i = 0; i < G_N_ELEMENTS(run.subscriptions); i++)
                        if (run.subscriptions[i])
                                g_dbus_connection_signal_unsubscribe(run.conn, run.subscriptions[i]);
                (void) g_dbus_connection_close_sync(run.conn, NULL, NULL);
                g_object_unref(run.conn);
        }
        if (run.daemon_pid) {
                int status;
                (void) waitpid(run.daemon_pid, &status, 0);
                g_spawn_close_pid(run.daemon_pid);
        }
        if (run.loop)
                g_main_loop_unref(run.loop);
        g_clear_pointer(&run.stats, g_variant_unref);
        g_free(run.finished_error);
        g_free(run.recording);
        g_free(run.owner);
        g_free(a.output);
        g_free(a.address);
        g_free(a.unwind);
        g_strfreev(a.pids);
        g_free(a.container);
        g_strfreev(a.command);
        g_free(a.counters);
        return ret;
}
