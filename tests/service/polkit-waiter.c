/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* polkit-waiter: a user who makes periscoped wait for polkit, many times at
 * once. It registers itself with polkitd as its own authentication agent
 * (for its own process, as pkttyagent --process does) and never answers
 * BeginAuthentication, so every question polkitd gets about it waits for
 * the agent; then it fires N calls that need polkit at once, without
 * waiting for their answers:
 *   record    org.periscope.Profiler1.Record({system: true}, capture fd)
 *   sysprof3  org.gnome.Sysprof3.Service.PerfEventOpen(cpu-clock, pid -1, cpu 0)
 * After SECONDS it prints one line
 *   answered A limit-exceeded L other O pending P agent-asked G
 * then "refusal: MESSAGE" (the first LimitExceeded) and "other: NAME:
 * MESSAGE" lines for other errors, and keeps the calls waiting until it is
 * killed or stdin reaches end of file.
 *
 *   polkit-waiter record|sysprof3 N DIR SECONDS [apart|none]
 *
 * apart: the agent is a child process (registered for this one), which
 * prints "agent: PID" and stays when this one is killed, as a desktop
 * agent would; none: no agent (polkit cannot ask, so it says no at once).
 *
 * The system bus is $DBUS_SYSTEM_BUS_ADDRESS. Exits 1 with the reason when
 * it cannot register or call. */
#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <gio/gunixfdlist.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AGENT_PATH "/org/periscope/TestAgent"

static const char agent_xml[] =
        "<node><interface name='org.freedesktop.PolicyKit1.AuthenticationAgent'>"
        "<method name='BeginAuthentication'><arg type='s' direction='in'/><arg type='s' direction='in'/>"
        "<arg type='s' direction='in'/><arg type='a{ss}' direction='in'/><arg type='s' direction='in'/>"
        "<arg type='a(sa{sv})' direction='in'/></method>"
        "<method name='CancelAuthentication'><arg type='s' direction='in'/></method>"
        "</interface></node>";

typedef struct Waiter {
        unsigned answered, limit_exceeded, other, agent_asked;
        char *first_refusal;
        GString *others;
        GPtrArray *held;           /* BeginAuthentication calls, never answered */
} Waiter;

static void die(const char *what, const GError *error) {
        fprintf(stderr, "FAIL: %s: %s\n", what, error ? error->message : "");
        exit(1);
}

static void on_agent_call(GDBusConnection *bus, const char *sender, const char *path, const char *interface,
                          const char *method, GVariant *params, GDBusMethodInvocation *call, gpointer userdata) {
        Waiter *w = userdata;
        if (strcmp(method, "BeginAuthentication") == 0) {
                w->agent_asked++;
                g_ptr_array_add(w->held, g_object_ref(call)); /* the user never types a password */
                return;
        }
        g_dbus_method_invocation_return_value(call, NULL);
}

/* polkit's start time of a process: field 22 of /proc/PID/stat. */
static guint64 start_time_of(pid_t pid) {
        g_autofree char *stat = NULL, *path = g_strdup_printf("/proc/%d/stat", (int) pid);
        if (!g_file_get_contents(path, &stat, NULL, NULL))
                return 0;
        const char *p = strrchr(stat, ')');
        for (int field = 2; p && field < 22; field++)
                p = strchr(p + 1, ' ');
        return p ? g_ascii_strtoull(p + 1, NULL, 10) : 0;
}

/* Registers the agent for process subject. */
static void register_agent(GDBusConnection *bus, pid_t subject, Waiter *w) {
        g_autoptr(GError) error = NULL;
        g_autoptr(GDBusNodeInfo) info = g_dbus_node_info_new_for_xml(agent_xml, &error);
        static const GDBusInterfaceVTable vtable = { .method_call = on_agent_call };
        if (!info || !g_dbus_connection_register_object(bus, AGENT_PATH, info->interfaces[0], &vtable, w, NULL, &error))
                die("exporting the agent", error);
        GVariantBuilder details;
        g_variant_builder_init(&details, G_VARIANT_TYPE("a{sv}"));
        g_variant_builder_add(&details, "{sv}", "pid", g_variant_new_uint32((guint32) subject));
        g_variant_builder_add(&details, "{sv}", "start-time", g_variant_new_uint64(start_time_of(subject)));
        g_autoptr(GVariant) reply = g_dbus_connection_call_sync(
                bus, "org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                "org.freedesktop.PolicyKit1.Authority", "RegisterAuthenticationAgent",
                g_variant_new("((sa{sv})ss)", "unix-process", &details, "C", AGENT_PATH), NULL, G_DBUS_CALL_FLAGS_NONE,
                -1, NULL, &error);
        if (!reply)
                die("RegisterAuthenticationAgent", error);
}

static void on_reply(GObject *source, GAsyncResult *res, gpointer userdata) {
        Waiter *w = userdata;
        g_autoptr(GError) error = NULL;
        g_autoptr(GVariant) reply = g_dbus_connection_call_with_unix_fd_list_finish(G_DBUS_CONNECTION(source), NULL,
                                                                                    res, &error);
        w->answered++;
        if (reply)
                return;
        g_autofree char *name = g_dbus_error_get_remote_error(error);
        g_dbus_error_strip_remote_error(error);
        if (name && strcmp(name, "org.periscope.Error.LimitExceeded") == 0) {
                w->limit_exceeded++;
                if (!w->first_refusal)
                        w->first_refusal = g_strdup(error->message);
                return;
        }
        w->other++;
        g_string_append_printf(w->others, "other: %s: %s\n", name ? name : "?", error->message);
}

static void fire(GDBusConnection *bus, bool record, const char *dir, unsigned i, Waiter *w) {
        g_autoptr(GUnixFDList) fds = g_unix_fd_list_new();
        GVariant *args;
        const char *dest, *path, *interface, *method;
        if (record) {
                g_autofree char *file = g_strdup_printf("%s/wait%u.syscap", dir, i);
                int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                if (fd < 0) {
                        fprintf(stderr, "FAIL: %s: %s\n", file, g_strerror(errno));
                        exit(1);
                }
                GVariantBuilder b;
                g_variant_builder_init(&b, G_VARIANT_TYPE("a{sv}"));
                g_variant_builder_add(&b, "{sv}", "system", g_variant_new_boolean(TRUE));
                g_variant_builder_add(&b, "{sv}", "duration-ms", g_variant_new_uint32(1000));
                args = g_variant_new("(a{sv}h)", &b, g_unix_fd_list_append(fds, fd, NULL));
                close(fd);
                dest = "org.periscope.Profiler1", path = "/org/periscope/Profiler1";
                interface = "org.periscope.Profiler1", method = "Record";
        } else {
                GVariantBuilder b;
                g_variant_builder_init(&b, G_VARIANT_TYPE("a{sv}"));
                g_variant_builder_add(&b, "{sv}", "type", g_variant_new_uint32(1));   /* PERF_TYPE_SOFTWARE */
                g_variant_builder_add(&b, "{sv}", "config", g_variant_new_uint64(0)); /* cpu-clock */
                g_variant_builder_add(&b, "{sv}", "sample_period", g_variant_new_uint64(1000000));
                g_variant_builder_add(&b, "{sv}", "disabled", g_variant_new_boolean(TRUE));
                args = g_variant_new("(a{sv}iiht)", &b, -1, 0, -1, (guint64) 0);
                dest = "org.gnome.Sysprof3", path = "/org/gnome/Sysprof3";
                interface = "org.gnome.Sysprof3.Service", method = "PerfEventOpen";
        }
        g_dbus_connection_call_with_unix_fd_list(bus, dest, path, interface, method, args, NULL,
                                                 G_DBUS_CALL_FLAGS_NONE, G_MAXINT, fds, NULL, on_reply, w);
}

static gboolean on_deadline(gpointer loop) {
        g_main_loop_quit(loop);
        return G_SOURCE_REMOVE;
}

static gboolean on_stdin(GIOChannel *ch, GIOCondition cond, gpointer loop) {
        char buf[64];
        if (read(0, buf, sizeof(buf)) <= 0) {
                g_main_loop_quit(loop);
                return G_SOURCE_REMOVE;
        }
        return G_SOURCE_CONTINUE;
}

/* The agent apart: a child registered for the parent, answering nothing
 * until it is killed. Returns in the parent once the agent is registered. */
static void start_agent_apart(void) {
        int ready[2];
        if (pipe(ready) < 0) {
                perror("pipe");
                exit(1);
        }
        pid_t parent = getpid(), child = fork();
        if (child < 0) {
                perror("fork");
                exit(1);
        }
        if (child > 0) {
                char c;
                close(ready[1]);
                if (read(ready[0], &c, 1) != 1) {
                        fprintf(stderr, "FAIL: the agent process did not register\n");
                        exit(1);
                }
                close(ready[0]);
                printf("agent: %d\n", (int) child);
                fflush(stdout);
                return;
        }
        close(ready[0]);
        g_autoptr(GError) error = NULL;
        g_autoptr(GDBusConnection) bus = g_bus_get_sync(G_BUS_TYPE_SYSTEM, NULL, &error);
        if (!bus)
                die("no system bus (agent)", error);
        Waiter w = { .held = g_ptr_array_new_with_free_func(g_object_unref) };
        register_agent(bus, parent, &w);
        if (write(ready[1], "r", 1) != 1)
                _exit(1);
        g_autoptr(GMainLoop) loop = g_main_loop_new(NULL, FALSE);
        g_main_loop_run(loop);
        _exit(0);
}

int main(int argc, char **argv) {
        if ((argc != 5 && argc != 6) || (strcmp(argv[1], "record") != 0 && strcmp(argv[1], "sysprof3") != 0) ||
            (argc == 6 && strcmp(argv[5], "apart") != 0 && strcmp(argv[5], "none") != 0)) {
                fprintf(stderr, "usage: %s record|sysprof3 N DIR SECONDS [apart|none]\n", argv[0]);
                return 2;
        }
        unsigned n = (unsigned) atoi(argv[2]);
        const char *agent = argc == 6 ? argv[5] : "self";
        if (strcmp(agent, "apart") == 0)
                start_agent_apart();
        g_autoptr(GError) error = NULL;
        g_autoptr(GDBusConnection) bus = g_bus_get_sync(G_BUS_TYPE_SYSTEM, NULL, &error);
        if (!bus)
                die("no system bus", error);
        Waiter w = { .others = g_string_new(""), .held = g_ptr_array_new_with_free_func(g_object_unref) };
        if (strcmp(agent, "self") == 0)
                register_agent(bus, getpid(), &w);
        for (unsigned i = 0; i < n; i++)
                fire(bus, strcmp(argv[1], "record") == 0, argv[3], i, &w);
        g_autoptr(GMainLoop) loop = g_main_loop_new(NULL, FALSE);
        g_timeout_add((guint) (atof(argv[4]) * 1000), on_deadline, loop);
        g_main_loop_run(loop);
        printf("answered %u limit-exceeded %u other %u pending %u agent-asked %u\n", w.answered, w.limit_exceeded,
               w.other, n - w.answered, w.agent_asked);
        if (w.first_refusal)
                printf("refusal: %s\n", w.first_refusal);
        fputs(w.others->str, stdout);
        fflush(stdout);
        /* The calls keep waiting until the test ends this client. */
        GIOChannel *in = g_io_channel_unix_new(0);
        g_io_add_watch(in, G_IO_IN | G_IO_HUP | G_IO_ERR, on_stdin, loop);
        g_main_loop_run(loop);
        g_io_channel_unref(in);
        g_ptr_array_unref(w.held);
        g_string_free(w.others, TRUE);
        g_free(w.first_refusal);
        return 0;
}
