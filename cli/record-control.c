/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* record-control.c: hands the control fd, the trace fd and the memory
 * profiler to the command `periscope record` runs. */
#include "record-control.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gio/gunixfdlist.h>

#include "basic.h"
#include "protocol.h"

#ifndef PERISCOPE_MEMORY_LIBDIR
#define PERISCOPE_MEMORY_LIBDIR "/usr/local/lib/periscope"
#endif
#define MEMORY_LIB_NAME "libperiscope-memory.so"

int record_control_gate_new(int gate[2]) {
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, gate) < 0)
                return -errno;
        return 0;
}

/* The names a trace fd goes by: Sysprof's writer, GJS and GTK. */
static const char *const trace_fd_variables[] = { "SYSPROF_TRACE_FD", "GJS_TRACE_FD", "GTK_TRACE_FD" };

static void export_fd(const char *name, int fd) {
        char num[16];
        snprintf(num, sizeof(num), "%d", fd);
        setenv(name, num, 1);
}

int record_control_child_wait(int gate_fd, const char *preload) {
        /* Received without MSG_CMSG_CLOEXEC: the command inherits the fds.
         * A trace fd ('t') may come before the release. */
        int fd;
        char byte;
        for (;;) {
                if (fd_receive_with_byte(gate_fd, 0, &byte, &fd) < 0)
                        return -EPIPE;
                if (byte != RECORD_GATE_TRACE_FD)
                        break;
                if (fd >= 0)
                        for (size_t i = 0; i < sizeof(trace_fd_variables) / sizeof(trace_fd_variables[0]); i++)
                                export_fd(trace_fd_variables[i], fd);
        }
        if (fd >= 0)
                export_fd("SYSPROF_CONTROL_FD", fd);
        if (preload) {
                const char *old = getenv("LD_PRELOAD");
                if (old && *old) {
                        size_t n = strlen(preload) + 1 + strlen(old) + 1;
                        char *both = malloc(n);
                        if (!both)
                                return -ENOMEM;
                        snprintf(both, n, "%s:%s", preload, old);
                        setenv("LD_PRELOAD", both, 1);
                        free(both);
                } else
                        setenv("LD_PRELOAD", preload, 1);
        }
        return 0;
}

int record_control_open(GDBusConnection *conn, const char *owner, const char *recording, const char *method,
                        const char *what, const char *without) {
        g_autoptr(GError) error = NULL;
        g_autoptr(GUnixFDList) fds = NULL;
        g_autoptr(GVariant) reply = g_dbus_connection_call_with_unix_fd_list_sync(
                conn, owner, recording, RECORDING_INTERFACE, method, NULL, G_VARIANT_TYPE("(h)"),
                G_DBUS_CALL_FLAGS_NONE, 25000, NULL, &fds, NULL, &error);
        if (!reply) {
                g_dbus_error_strip_remote_error(error);
                fprintf(stderr, "periscope record: no %s for the command (%s): %s\n", what, without, error->message);
                return -1;
        }
        gint32 handle;
        g_variant_get(reply, "(h)", &handle);
        int fd = fds ? g_unix_fd_list_get(fds, handle, &error) : -1;
        if (fd < 0)
                fprintf(stderr, "periscope record: the %s did not arrive: %s\n", what,
                        error ? error->message : "no fd in the reply");
        return fd;
}

int record_control_release(int gate_fd, int control_fd, int trace_fd) {
        if (trace_fd >= 0) {
                int r = fd_send_with_byte(gate_fd, RECORD_GATE_TRACE_FD, trace_fd, MSG_NOSIGNAL);
                if (r < 0)
                        return r;
        }
        return fd_send_with_byte(gate_fd, RECORD_GATE_GO, control_fd, MSG_NOSIGNAL);
}

char *record_control_find_memory_lib(GError **error) {
        const char *env = g_getenv("PERISCOPE_MEMORY_LIB");
        if (env && *env) {
                if (access(env, R_OK) == 0)
                        return g_strdup(env);
                g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "PERISCOPE_MEMORY_LIB=%s: %s", env,
                            g_strerror(errno));
                return NULL;
        }
        g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
        g_autofree char *dir = exe ? g_path_get_dirname(exe) : NULL;
        g_autofree char *beside = dir ? g_build_filename(dir, MEMORY_LIB_NAME, NULL) : NULL;
        g_autofree char *build = dir ? g_build_filename(dir, "..", "collector", MEMORY_LIB_NAME, NULL) : NULL;
        g_autofree char *installed = g_build_filename(PERISCOPE_MEMORY_LIBDIR, MEMORY_LIB_NAME, NULL);
        const char *candidates[] = { beside, build, installed };
        for (size_t i = 0; i < G_N_ELEMENTS(candidates); i++)
                if (candidates[i] && access(candidates[i], R_OK) == 0) {
                        char *real = realpath(candidates[i], NULL);
                        return real ? real : g_strdup(candidates[i]);
                }
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                    "cannot find %s (looked in %s, %s/../collector and %s); build or install periscope, or set "
                    "PERISCOPE_MEMORY_LIB to its path",
                    MEMORY_LIB_NAME, dir ? dir : "?", dir ? dir : "?", PERISCOPE_MEMORY_LIBDIR);
        return NULL;
}
