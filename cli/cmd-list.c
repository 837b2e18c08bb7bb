/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-list.c: `periscope list`: what the caller may record, from the
 * service's ListTargets: processes (pid, user, command line), then running
 * Podman containers and Flatpak instances (their name or id is what
 * `periscope record --container` takes); --json for scripts. */
#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "commands.h"
#include "service-connection.h"

#define UNLIMITED_WIDTH 0

typedef struct ListArgs {
        gboolean json;
        gboolean session_bus;
        char *address;
        gboolean private_daemon;
        gboolean verbose;
} ListArgs;

/* The user's name, or the uid as a number. */
static char *user_name(guint32 uid) {
        struct passwd *pw = getpwuid(uid);
        return pw ? g_strdup(pw->pw_name) : g_strdup_printf("%u", uid);
}

/* Columns available on a terminal, or UNLIMITED_WIDTH for a pipe. */
static size_t output_width(void) {
        struct winsize ws;
        if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0 || ws.ws_col < 40)
                return isatty(STDOUT_FILENO) ? 80 : UNLIMITED_WIDTH;
        return ws.ws_col;
}

/* Prints text cut to room characters (with "…"), whole when room is 0. */
static void print_cut(const char *text, size_t room) {
        if (room == UNLIMITED_WIDTH || (size_t) g_utf8_strlen(text, -1) <= room) {
                printf("%s\n", text);
                return;
        }
        g_autofree char *cut = g_utf8_substring(text, 0, room > 1 ? (glong) room - 1 : 0);
        printf("%s…\n", cut);
}

static gint compare_pids(gconstpointer a, gconstpointer b) {
        gint32 pa = 0, pb = 0;
        (void) g_variant_lookup(*(GVariant *const *) a, "pid", "i", &pa);
        (void) g_variant_lookup(*(GVariant *const *) b, "pid", "i", &pb);
        return (pa > pb) - (pa < pb);
}

static void print_processes(GPtrArray *processes, size_t width) {
        printf("Processes you may record: %u\n", processes->len);
        if (!processes->len)
                return;
        g_ptr_array_sort(processes, compare_pids);
        printf("%8s  %-12s %s\n", "PID", "USER", "COMMAND");
        for (guint i = 0; i < processes->len; i++) {
                GVariant *t = processes->pdata[i];
                gint32 pid = 0;
                guint32 uid = 0;
                const char *cmdline = "";
                (void) g_variant_lookup(t, "pid", "i", &pid);
                (void) g_variant_lookup(t, "uid", "u", &uid);
                (void) g_variant_lookup(t, "cmdline", "&s", &cmdline);
                g_autofree char *user = user_name(uid);
                printf("%8d  %-12s ", pid, user);
                print_cut(cmdline, width ? (width > 23 ? width - 23 : 1) : UNLIMITED_WIDTH);
        }
}

static void print_containers(GPtrArray *containers) {
        printf("\nContainers and Flatpak apps: %u\n", containers->len);
        if (!containers->len) {
                printf("  (none running that you may record)\n");
                return;
        }
        int name_width = 4; /* "NAME" */
        for (guint i = 0; i < containers->len; i++) {
                const char *name = "";
                (void) g_variant_lookup(containers->pdata[i], "name", "&s", &name);
                name_width = MAX(name_width, (int) g_utf8_strlen(name, -1));
        }
        printf("  %-8s %-*s %-14s %-12s %9s  %s\n", "ENGINE", name_width, "NAME", "ID", "USER", "PROCESSES", "IMAGE");
        for (guint i = 0; i < containers->len; i++) {
                GVariant *t = containers->pdata[i];
                const char *engine = "?", *name = "", *id = "", *image = "";
                guint32 uid = 0;
                g_autoptr(GVariant) pids = g_variant_lookup_value(t, "pids", G_VARIANT_TYPE("ai"));
                (void) g_variant_lookup(t, "engine", "&s", &engine);
                (void) g_variant_lookup(t, "name", "&s", &name);
                (void) g_variant_lookup(t, "id", "&s", &id);
                (void) g_variant_lookup(t, "image", "&s", &image);
                (void) g_variant_lookup(t, "owner-uid", "u", &uid);
                g_autofree char *user = user_name(uid);
                g_autofree char *short_id = g_strndup(id, 12);
                printf("  %-8s %-*s %-14s %-12s %9zu  %s\n", engine, name_width, name, short_id, user,
                       pids ? g_variant_n_children(pids) : 0, image);
        }
        printf("\nRecord one with `periscope record --container NAME` (or its id).\n");
}

static int print_json(GVariant *targets) {
        g_autoptr(JsonNode) node = json_gvariant_serialize(targets);
        g_autoptr(JsonGenerator) gen = json_generator_new();
        json_generator_set_pretty(gen, TRUE);
        json_generator_set_root(gen, node);
        g_autofree char *text = json_generator_to_data(gen, NULL);
        printf("%s\n", text);
        return 0;
}

int cmd_list(int argc, char **argv) {
        ListArgs a = {};
        const GOptionEntry entries[] = {
                { "json", 0, 0, G_OPTION_ARG_NONE, &a.json,
                  "Print ListTargets' answer as JSON: an array of objects with kind (process, container, flatpak) "
                  "and their fields", NULL },
                { "session-bus", 0, 0, G_OPTION_ARG_NONE, &a.session_bus, "Ask periscoped on the session bus", NULL },
                { "address", 0, 0, G_OPTION_ARG_STRING, &a.address, "Ask periscoped on the bus at ADDRESS", "ADDRESS" },
                { "private", 0, 0, G_OPTION_ARG_NONE, &a.private_daemon, "Always ask a private periscoped", NULL },
                { "verbose", 'v', 0, G_OPTION_ARG_NONE, &a.verbose, "Show the private periscoped's log here", NULL },
                {},
        };
        g_autoptr(GOptionContext) ctx = g_option_context_new("");
        g_autoptr(GError) error = NULL;
        g_option_context_set_summary(ctx, "Lists what you may record: processes, Podman containers and Flatpak "
                                          "apps.");
        g_option_context_add_main_entries(ctx, entries, NULL);
        if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
                fprintf(stderr, "periscope list: %s\n", error->message);
                g_free(a.address);
                return 2;
        }
        g_autofree char *address = a.address;
        if (argc > 1) {
                fprintf(stderr, "periscope list: unexpected argument '%s' (it takes only options)\n", argv[1]);
                return 2;
        }
        ServiceConnection service = {};
        const ServiceWhere where = { .address = address, .session_bus = a.session_bus,
                                     .private_daemon = a.private_daemon, .verbose = a.verbose };
        if (service_connect(&service, &where, &error) < 0) {
                fprintf(stderr, "periscope list: cannot reach periscoped: %s\n", error->message);
                service_disconnect(&service);
                return 1;
        }
        g_autoptr(GVariant) reply = g_dbus_connection_call_sync(service.conn, service.owner, PROFILER_PATH,
                                                                PROFILER_NAME, "ListTargets", NULL,
                                                                G_VARIANT_TYPE("(aa{sv})"), G_DBUS_CALL_FLAGS_NONE,
                                                                60000, NULL, &error);
        service_disconnect(&service);
        if (!reply) {
                fprintf(stderr, "periscope list: %s\n", service_error_message(error, NULL));
                return 1;
        }
        g_autoptr(GVariant) targets = g_variant_get_child_value(reply, 0);
        if (a.json)
                return print_json(targets);
        g_autoptr(GPtrArray) processes = g_ptr_array_new_with_free_func((GDestroyNotify) g_variant_unref);
        g_autoptr(GPtrArray) containers = g_ptr_array_new_with_free_func((GDestroyNotify) g_variant_unref);
        for (gsize i = 0; i < g_variant_n_children(targets); i++) {
                GVariant *t = g_variant_get_child_value(targets, i);
                const char *kind = "";
                (void) g_variant_lookup(t, "kind", "&s", &kind);
                g_ptr_array_add(strcmp(kind, "process") == 0 ? processes : containers, t);
        }
        print_processes(processes, output_width());
        print_containers(containers);
        return 0;
}
