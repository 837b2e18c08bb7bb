/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-sysprof-resolver.c: Sysprof 3.46's own code reads our "__symbols__".
 * Opens a capture written by make-report-capture (Periscope's writer and
 * symbol table builder) with libsysprof-4's capture reader and its
 * SysprofCaptureSymbolResolver (what the Sysprof GUI uses for symbols
 * embedded in a capture) and checks every fixture address gets the name
 * Periscope's own table gives as the outermost frame.
 *
 *   test-sysprof-resolver MAKE-REPORT-CAPTURE [TEST…] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>
#include <sysprof.h>

#include "report-fixture.h"
#include "test-check.h"

typedef struct Probe {
        int32_t pid;
        uint64_t addr;
        SysprofAddressContext ctx;
        const char *want; /* NULL: Sysprof must find no name */
        const char *tag;
} Probe;

/* The capture make-report-capture writes, loaded once into Sysprof's
 * capture symbol resolver. */
static const char *make_capture;
static char *capture_dir, *capture_path;
static SysprofCaptureReader *reader;
static SysprofSymbolResolver *resolver;

static SysprofSymbolResolver *loaded_resolver(void) {
        if (resolver)
                return resolver;
        capture_dir = g_dir_make_tmp("periscope-sysprof-XXXXXX", NULL);
        MUST(capture_dir ? 0 : -errno);
        capture_path = g_build_filename(capture_dir, "ours.capture", NULL);
        g_autofree char *cmd = g_strdup_printf("'%s' ours '%s'", make_capture, capture_path);
        if (system(cmd) != 0) {
                fprintf(stderr, "FAIL: %s failed\n", cmd);
                exit(1);
        }
        reader = sysprof_capture_reader_new(capture_path);
        if (!reader) {
                fprintf(stderr, "FAIL: libsysprof-4 cannot open %s\n", capture_path);
                exit(1);
        }
        resolver = sysprof_capture_symbol_resolver_new();
        sysprof_symbol_resolver_load(resolver, reader);
        return resolver;
}

/* Each probe gets its name (and tag) from Sysprof, or none. */
static void expect_names(const Probe *probes, size_t n) {
        for (size_t i = 0; i < n; i++) {
                GQuark tag = 0;
                g_autofree char *name = sysprof_symbol_resolver_resolve_with_context(
                        loaded_resolver(), 0, probes[i].pid, probes[i].ctx, probes[i].addr, &tag);
                gboolean ok = g_strcmp0(name, probes[i].want) == 0;
                if (ok && probes[i].tag)
                        ok = tag && strcmp(g_quark_to_string(tag), probes[i].tag) == 0;
                CHECK_MSG(ok, "pid %d %#" G_GINT64_MODIFIER "x: Sysprof says %s [%s], want %s [%s]", probes[i].pid,
                          (guint64) probes[i].addr, name ? name : "(nothing)", tag ? g_quark_to_string(tag) : "",
                          probes[i].want ? probes[i].want : "(nothing)", probes[i].tag ? probes[i].tag : "");
        }
}

TEST(app_functions_named_with_their_tag) {
        static const Probe probes[] = {
                { FX_APP, FX_MAIN, SYSPROF_ADDRESS_CONTEXT_USER, "main", "app" },
                /* add_one/square are inlined into compute: Sysprof shows compute. */
                { FX_APP, FX_COMPUTE_INL, SYSPROF_ADDRESS_CONTEXT_USER, "compute", "app" },
                { FX_APP, FX_COMPUTE, SYSPROF_ADDRESS_CONTEXT_USER, "compute", "app" },
                { FX_APP, FX_WRITE, SYSPROF_ADDRESS_CONTEXT_USER, "write_data", "app" },
                { FX_APP, FX_VECTOR, SYSPROF_ADDRESS_CONTEXT_USER, FX_VECTOR_NAME, NULL },
        };
        expect_names(probes, G_N_ELEMENTS(probes));
}

TEST(unresolved_and_nameless_addresses) {
        static const Probe probes[] = {
                { FX_APP, FX_LIBFOO, SYSPROF_ADDRESS_CONTEXT_USER, "[unresolved: helper failed]", NULL },
                { FX_APP, FX_LIBBAR, SYSPROF_ADDRESS_CONTEXT_USER, NULL, NULL },
                { FX_APP, FX_KUNKNOWN, SYSPROF_ADDRESS_CONTEXT_KERNEL, NULL, NULL },
        };
        expect_names(probes, G_N_ELEMENTS(probes));
}

TEST(kernel_names_in_every_process) {
        static const Probe probes[] = {
                { FX_APP, FX_KSYSCALL, SYSPROF_ADDRESS_CONTEXT_KERNEL, "do_syscall_64", NULL },
                { FX_WORKER, FX_KSYSCALL, SYSPROF_ADDRESS_CONTEXT_KERNEL, "do_syscall_64", NULL },
        };
        expect_names(probes, G_N_ELEMENTS(probes));
}

TEST(each_process_its_own_names) {
        static const Probe probes[] = {
                { FX_WORKER, FX_W_LOOP, SYSPROF_ADDRESS_CONTEXT_USER, "worker_loop", NULL },
                { FX_WORKER, FX_W_COMPUTE, SYSPROF_ADDRESS_CONTEXT_USER, "compute", NULL },
                { FX_WORKER, FX_MAIN, SYSPROF_ADDRESS_CONTEXT_USER, NULL, NULL }, /* main is app's, not worker's */
        };
        expect_names(probes, G_N_ELEMENTS(probes));
}

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: %s MAKE-REPORT-CAPTURE [TEST…]\n", argv[0]);
                return 2;
        }
        make_capture = argv[1];
        argv[1] = argv[0];
        int r = test_main(argc - 1, argv + 1);
        if (resolver)
                g_object_unref(resolver);
        if (reader)
                sysprof_capture_reader_unref(reader);
        if (capture_path)
                g_unlink(capture_path);
        if (capture_dir)
                g_rmdir(capture_dir);
        g_free(capture_path);
        g_free(capture_dir);
        return r;
}
