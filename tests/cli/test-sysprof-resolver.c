/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-sysprof-resolver.c: Sysprof 3.46's own code reads our "__symbols__".
 * Opens a capture written by make-report-capture (Periscope's writer and
 * symbol table builder) with libsysprof-4's capture reader and its
 * SysprofCaptureSymbolResolver (what the Sysprof GUI uses for symbols
 * embedded in a capture) and checks every fixture address gets the name
 * Periscope's own table gives as the outermost frame.
 *
 *   test-sysprof-resolver MAKE-REPORT-CAPTURE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>
#include <sysprof.h>

#include "report-fixture.h"

int main(int argc, char **argv) {
        if (argc != 2) {
                fprintf(stderr, "usage: %s MAKE-REPORT-CAPTURE\n", argv[0]);
                return 2;
        }
        g_autofree char *dir = g_dir_make_tmp("periscope-sysprof-XXXXXX", NULL);
        g_autofree char *path = g_build_filename(dir, "ours.capture", NULL);
        g_autofree char *cmd = g_strdup_printf("'%s' ours '%s'", argv[1], path);
        if (system(cmd) != 0) {
                fprintf(stderr, "%s failed\n", cmd);
                return 1;
        }

        SysprofCaptureReader *reader = sysprof_capture_reader_new(path);
        if (!reader) {
                fprintf(stderr, "libsysprof-4 cannot open %s\n", path);
                return 1;
        }
        SysprofSymbolResolver *resolver = sysprof_capture_symbol_resolver_new();
        sysprof_symbol_resolver_load(resolver, reader);

        static const struct {
                int32_t pid;
                uint64_t addr;
                SysprofAddressContext ctx;
                const char *want; /* NULL: Sysprof must find no name */
                const char *tag;
        } probes[] = {
                { FX_APP, FX_MAIN, SYSPROF_ADDRESS_CONTEXT_USER, "main", "app" },
                /* add_one/square are inlined into compute: Sysprof shows compute. */
                { FX_APP, FX_COMPUTE_INL, SYSPROF_ADDRESS_CONTEXT_USER, "compute", "app" },
                { FX_APP, FX_COMPUTE, SYSPROF_ADDRESS_CONTEXT_USER, "compute", "app" },
                { FX_APP, FX_WRITE, SYSPROF_ADDRESS_CONTEXT_USER, "write_data", "app" },
                { FX_APP, FX_VECTOR, SYSPROF_ADDRESS_CONTEXT_USER, FX_VECTOR_NAME, NULL },
                { FX_APP, FX_LIBFOO, SYSPROF_ADDRESS_CONTEXT_USER, "[unresolved: helper failed]", NULL },
                { FX_APP, FX_LIBBAR, SYSPROF_ADDRESS_CONTEXT_USER, NULL, NULL },
                { FX_APP, FX_KSYSCALL, SYSPROF_ADDRESS_CONTEXT_KERNEL, "do_syscall_64", NULL },
                { FX_WORKER, FX_KSYSCALL, SYSPROF_ADDRESS_CONTEXT_KERNEL, "do_syscall_64", NULL },
                { FX_APP, FX_KUNKNOWN, SYSPROF_ADDRESS_CONTEXT_KERNEL, NULL, NULL },
                { FX_WORKER, FX_W_LOOP, SYSPROF_ADDRESS_CONTEXT_USER, "worker_loop", NULL },
                { FX_WORKER, FX_W_COMPUTE, SYSPROF_ADDRESS_CONTEXT_USER, "compute", NULL },
                { FX_WORKER, FX_MAIN, SYSPROF_ADDRESS_CONTEXT_USER, NULL, NULL }, /* main is app's, not worker's */
        };
        int failures = 0;
        for (size_t i = 0; i < G_N_ELEMENTS(probes); i++) {
                GQuark tag = 0;
                g_autofree char *name = sysprof_symbol_resolver_resolve_with_context(
                        resolver, 0, probes[i].pid, probes[i].ctx, probes[i].addr, &tag);
                gboolean ok = g_strcmp0(name, probes[i].want) == 0;
                if (ok && probes[i].tag)
                        ok = tag && strcmp(g_quark_to_string(tag), probes[i].tag) == 0;
                if (!ok) {
                        fprintf(stderr, "FAILED: pid %d %#" G_GINT64_MODIFIER "x: Sysprof says %s [%s], want %s [%s]\n",
                                probes[i].pid, (guint64) probes[i].addr, name ? name : "(nothing)",
                                tag ? g_quark_to_string(tag) : "", probes[i].want ? probes[i].want : "(nothing)",
                                probes[i].tag ? probes[i].tag : "");
                        failures++;
                }
        }
        g_object_unref(resolver);
        sysprof_capture_reader_unref(reader);
        g_unlink(path);
        g_rmdir(dir);
        if (failures)
                return 1;
        printf("Sysprof 3.46's capture symbol resolver reads every name from our __symbols__\n");
        return 0;
}
