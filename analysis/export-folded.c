/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* export-folded.c: FlameGraph's folded stacks, one "outer;...;inner COUNT"
 * line per distinct stack (sorted), with FlameGraph's annotations: kernel
 * functions end in "_[k]", inlined ones in "_[i]", JIT-compiled ones in
 * "_[j]" (flamegraph.pl colours them). CPU: COUNT is samples; memory:
 * bytes allocated. */
#include "export-formats.h"

#include <stdlib.h>
#include <string.h>

static void append_frame(GString *out, const ExportFunction *f, gboolean inlined) {
        gsize at = out->len;
        g_string_append(out, f->name);
        for (gsize i = at; i < out->len; i++) /* ';' separates frames, ' ' the count */
                if (out->str[i] == ';')
                        out->str[i] = ':';
        if (f->flags & EXPORT_FUNCTION_KERNEL)
                g_string_append(out, "_[k]");
        else if (f->flags & EXPORT_FUNCTION_JIT)
                g_string_append(out, "_[j]");
        else if (inlined)
                g_string_append(out, "_[i]");
}

static char *folded_stack(const ExportModel *m, const ExportSample *s) {
        GString *out = g_string_new(NULL);
        if (m->thread_root) {
                g_string_append_printf(out, "%s (tid %d)", export_sample_thread_name(m, s), s->tid);
                for (gsize i = 0; i < out->len; i++)
                        if (out->str[i] == ';')
                                out->str[i] = ':';
        }
        for (guint i = s->n; i > 0; i--) {
                const ExportLocation *l = export_sample_location(m, s, i - 1);
                for (guint j = l->n_lines; j > 0; j--) {
                        if (out->len)
                                g_string_append_c(out, ';');
                        append_frame(out, export_model_function(m, l->lines[j - 1].function), j - 1 < l->n_lines - 1);
                }
        }
        return g_string_free(out, FALSE);
}

static int str_cmp(gconstpointer a, gconstpointer b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

gboolean export_folded(const ExportModel *m, GByteArray *out, GError **error) {
        (void) error;
        g_autoptr(GHashTable) counts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        for (guint i = 0; i < m->samples->len; i++) {
                const ExportSample *s = &g_array_index(m->samples, ExportSample, i);
                if (s->n == 0)
                        continue;
                char *stack = folded_stack(m, s);
                gint64 *c = g_hash_table_lookup(counts, stack);
                if (c)
                        g_free(stack);
                else {
                        c = g_new0(gint64, 1);
                        g_hash_table_insert(counts, stack, c);
                }
                *c = export_add(*c, s->value);
        }
        guint n = 0;
        g_autofree gpointer *keys = g_hash_table_get_keys_as_array(counts, &n);
        qsort(keys, n, sizeof(gpointer), str_cmp);
        for (guint i = 0; i < n; i++) {
                const char *k = keys[i];
                g_autofree char *line =
                        g_strdup_printf("%s %" G_GINT64_FORMAT "\n", k, *(gint64 *) g_hash_table_lookup(counts, k));
                g_byte_array_append(out, (const guint8 *) line, (guint) strlen(line));
        }
        return TRUE;
}
