/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysprof-names.c: what Sysprof 3.46 itself shows for the samples of a
 * capture. Reads CAPTURE with libsysprof-4's capture reader and its
 * SysprofCaptureSymbolResolver (what the Sysprof GUI uses for symbols
 * embedded in a capture, "__symbols__") and prints, for each sampled user
 * address, "COUNT NAME" (NAME "-" when Sysprof finds none), most first.
 * With --jitmap, its SysprofJitmapSymbolResolver instead (the names of
 * JITMAP frames).
 *
 *   sysprof-names [--jitmap] CAPTURE */
#include <stdio.h>

#include <sysprof.h>

int main(int argc, char **argv) {
        gboolean jitmap = argc == 3 && g_str_equal(argv[1], "--jitmap");
        if (argc != 2 + jitmap) {
                fprintf(stderr, "usage: %s [--jitmap] CAPTURE\n", argv[0]);
                return 2;
        }
        const char *path = argv[1 + jitmap];
        SysprofCaptureReader *reader = sysprof_capture_reader_new(path);
        if (!reader) {
                fprintf(stderr, "libsysprof-4 cannot open %s\n", path);
                return 1;
        }
        SysprofSymbolResolver *resolver =
                jitmap ? sysprof_jitmap_symbol_resolver_new() : sysprof_capture_symbol_resolver_new();
        sysprof_symbol_resolver_load(resolver, reader);
        sysprof_capture_reader_reset(reader);
        g_autoptr(GHashTable) counts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        SysprofCaptureFrameType type;
        while (sysprof_capture_reader_peek_type(reader, &type)) {
                if (type != SYSPROF_CAPTURE_FRAME_SAMPLE) {
                        if (!sysprof_capture_reader_skip(reader))
                                break;
                        continue;
                }
                const SysprofCaptureSample *s = sysprof_capture_reader_read_sample(reader);
                if (!s)
                        break;
                SysprofAddressContext ctx = SYSPROF_ADDRESS_CONTEXT_NONE;
                for (guint i = 0; i < s->n_addrs; i++) {
                        SysprofAddressContext next;
                        if (sysprof_address_is_context_switch(s->addrs[i], &next)) {
                                ctx = next;
                                continue;
                        }
                        if (ctx == SYSPROF_ADDRESS_CONTEXT_KERNEL)
                                continue;
                        GQuark tag = 0;
                        g_autofree char *name = sysprof_symbol_resolver_resolve_with_context(
                                resolver, s->frame.time, s->frame.pid, SYSPROF_ADDRESS_CONTEXT_USER, s->addrs[i], &tag);
                        char *key = g_strdup(name ? name : "-");
                        guint n = GPOINTER_TO_UINT(g_hash_table_lookup(counts, key));
                        g_hash_table_replace(counts, key, GUINT_TO_POINTER(n + 1));
                }
        }
        GHashTableIter it;
        gpointer k, v;
        g_hash_table_iter_init(&it, counts);
        while (g_hash_table_iter_next(&it, &k, &v))
                printf("%u %s\n", GPOINTER_TO_UINT(v), (const char *) k);
        g_object_unref(resolver);
        sysprof_capture_reader_unref(reader);
        return 0;
}
