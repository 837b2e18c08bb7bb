/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trace-fd-client.c: uses Recording1.OpenTraceFd as an IDE would, on the
 * bus at ADDRESS: Record({pids: [itself]}) into CAPTURE (its children are
 * recorded too), OpenTraceFd, run COMMAND with SYSPROF_TRACE_FD set to the
 * fd (and PERISCOPE_RECORDING to the recording's path), wait for it, Stop.
 * Exits with COMMAND's status, 1 if a call failed.
 *   trace-fd-client ADDRESS CAPTURE COMMAND ARGS… */
#include <fcntl.h>
#include <gio/gio.h>
#include <gio/gunixfdlist.h>
#include <stdio.h>
#include <unistd.h>

#include "protocol.h"

static GVariant *call(GDBusConnection *c, const char *path, const char *iface, const char *method, GVariant *args,
                      const char *type, GUnixFDList *in, GUnixFDList **out) {
        g_autoptr(GError) error = NULL;
        GVariant *v = g_dbus_connection_call_with_unix_fd_list_sync(c, PROFILER_NAME, path, iface, method, args,
                                                                    G_VARIANT_TYPE(type), G_DBUS_CALL_FLAGS_NONE,
                                                                    30000, in, out, NULL, &error);
        if (!v)
                fprintf(stderr, "trace-fd-client: %s: %s\n", method, error->message);
        return v;
}

int main(int argc, char **argv) {
        if (argc < 4) {
                fprintf(stderr, "usage: trace-fd-client ADDRESS CAPTURE COMMAND ARGS…\n");
                return 2;
        }
        g_autoptr(GError) error = NULL;
        g_autoptr(GDBusConnection) c = g_dbus_connection_new_for_address_sync(
                argv[1], G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                NULL, NULL, &error);
        if (!c) {
                fprintf(stderr, "trace-fd-client: %s: %s\n", argv[1], error->message);
                return 1;
        }
        int capture = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (capture < 0) {
                perror(argv[2]);
                return 1;
        }
        g_autoptr(GUnixFDList) in = g_unix_fd_list_new_from_array(&capture, 1);
        GVariantBuilder options;
        g_variant_builder_init(&options, G_VARIANT_TYPE("a{sv}"));
        gint32 self = getpid();
        g_variant_builder_add(&options, "{sv}", "pids",
                              g_variant_new_fixed_array(G_VARIANT_TYPE_INT32, &self, 1, sizeof(gint32)));
        g_autoptr(GVariant) rec = call(c, PROFILER_PATH, PROFILER_NAME, "Record",
                                       g_variant_new("(a{sv}h)", &options, 0), "(o)", in, NULL);
        if (!rec)
                return 1;
        const char *path;
        g_variant_get(rec, "(&o)", &path);

        g_autoptr(GUnixFDList) out = NULL;
        g_autoptr(GVariant) reply = call(c, path, RECORDING_INTERFACE, "OpenTraceFd", NULL, "(h)", NULL, &out);
        if (!reply)
                return 1;
        gint32 handle;
        g_variant_get(reply, "(h)", &handle);
        int fd = out ? g_unix_fd_list_get(out, handle, &error) : -1;
        if (fd < 0) {
                fprintf(stderr, "trace-fd-client: no fd came with OpenTraceFd's reply\n");
                return 1;
        }
        printf("recording %s\n", path);
        fflush(stdout);

        g_autoptr(GSubprocessLauncher) l = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_NONE);
        const int child_fd = 100; /* what the command sees: any number but the one here (close-on-exec) */
        g_autofree char *num = g_strdup_printf("%d", child_fd);
        g_subprocess_launcher_setenv(l, "SYSPROF_TRACE_FD", num, TRUE);
        g_subprocess_launcher_setenv(l, "PERISCOPE_RECORDING", path, TRUE);
        g_subprocess_launcher_take_fd(l, fd, child_fd);
        g_autoptr(GSubprocess) p = g_subprocess_launcher_spawnv(l, (const char *const *) argv + 3, &error);
        if (!p) {
                fprintf(stderr, "trace-fd-client: %s: %s\n", argv[3], error->message);
                return 1;
        }
        if (!g_subprocess_wait(p, NULL, &error)) {
                fprintf(stderr, "trace-fd-client: waiting for %s: %s\n", argv[3], error->message);
                return 1;
        }
        g_autoptr(GVariant) stopped = call(c, path, RECORDING_INTERFACE, "Stop", NULL, "()", NULL, NULL);
        if (!stopped)
                return 1;
        return g_subprocess_get_if_exited(p) ? g_subprocess_get_exit_status(p) : 1;
}
