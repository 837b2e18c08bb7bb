/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysprof346-names.c: the names Sysprof 3.46's own code (libsysprof-4's
 * SysprofCaptureSymbolResolver, what its GUI uses for the symbols a
 * capture embeds) gives user-space addresses of a capture, one a line,
 * "-" for none. test-sysprof48-fixture.sh compares them with nm.
 *
 *   sysprof346-names CAPTURE PID ADDRESS… */
#include <stdio.h>
#include <stdlib.h>

#include <sysprof.h>

int main(int argc, char **argv) {
        if (argc < 4) {
                fprintf(stderr, "usage: %s CAPTURE PID ADDRESS…\n", argv[0]);
                return 2;
        }
        SysprofCaptureReader *reader = sysprof_capture_reader_new(argv[1]);
        if (!reader) {
                fprintf(stderr, "libsysprof-4 cannot open %s\n", argv[1]);
                return 1;
        }
        SysprofSymbolResolver *resolver = sysprof_capture_symbol_resolver_new();
        sysprof_symbol_resolver_load(resolver, reader);
        int pid = atoi(argv[2]);
        for (int i = 3; i < argc; i++) {
                GQuark tag = 0;
                g_autofree char *name = sysprof_symbol_resolver_resolve_with_context(
                        resolver, 0, pid, SYSPROF_ADDRESS_CONTEXT_USER, g_ascii_strtoull(argv[i], NULL, 0), &tag);
                printf("%s\n", name ? name : "-");
        }
        g_object_unref(resolver);
        sysprof_capture_reader_unref(reader);
        return 0;
}
