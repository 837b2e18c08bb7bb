/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* export-speedscope.c: speedscope's file format (schema
 * https://www.speedscope.app/file-format-schema.json, speedscope 1.x): the
 * functions as shared frames (name, file, line) and one "sampled" profile
 * per thread, stacks outermost first. CPU: each sample weighs the time since
 * the thread's previous sample (the sampling period for the first, and
 * after a gap longer than two periods: the thread was off CPU), so the
 * "Time Order" view is a timeline in nanoseconds. Memory: weights are the
 * bytes allocated. */
#include "export-formats.h"

#include <json-glib/json-glib.h>
#include <string.h>

#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"

typedef struct Thread {
        int32_t pid, tid;
        GArray *samples; /* const ExportSample* */
} Thread;

static void thread_free(gpointer p) {
        Thread *t = p;
        g_array_unref(t->samples);
        g_free(t);
}

/* Threads in the order of their first sample. */
static GPtrArray *split_threads(const ExportModel *m) {
        GPtrArray *threads = g_ptr_array_new_with_free_func(thread_free);
        g_autoptr(GHashTable) by_tid = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
        for (guint i = 0; i < m->samples->len; i++) {
                const ExportSample *s = &g_array_index(m->samples, ExportSample, i);
                gint64 key = (gint64) (((guint64) (guint32) s->pid << 32) | (guint32) s->tid);
                Thread *t = g_hash_table_lookup(by_tid, &key);
                if (!t) {
                        t = g_new0(Thread, 1);
                        t->pid = s->pid;
                        t->tid = s->tid;
                        t->samples = g_array_new(FALSE, FALSE, sizeof(const ExportSample *));
                        g_ptr_array_add(threads, t);
                        g_hash_table_insert(by_tid, g_memdup2(&key, sizeof(key)), t);
                }
                g_array_append_val(t->samples, s);
        }
        return threads;
}

static void add_frames(JsonBuilder *b, const ExportModel *m) {
        json_builder_set_member_name(b, "shared");
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "frames");
        json_builder_begin_array(b);
        for (guint i = 0; i < m->functions->len; i++) {
                const ExportFunction *f = export_model_function(m, i);
                json_builder_begin_object(b);
                json_builder_set_member_name(b, "name");
                if (f->flags & EXPORT_FUNCTION_KERNEL) {
                        g_autofree char *name = g_strconcat(f->name, " [kernel]", NULL);
                        json_builder_add_string_value(b, name);
                } else
                        json_builder_add_string_value(b, f->name);
                if (f->file) {
                        json_builder_set_member_name(b, "file");
                        json_builder_add_string_value(b, f->file);
                }
                if (f->line) {
                        json_builder_set_member_name(b, "line");
                        json_builder_add_int_value(b, f->line);
                }
                json_builder_end_object(b);
        }
        json_builder_end_array(b);
        json_builder_end_object(b);
}

static void add_stack(JsonBuilder *b, const ExportModel *m, const ExportSample *s) {
        json_builder_begin_array(b);
        for (guint i = s->n; i > 0; i--) {
                const ExportLocation *l = export_sample_location(m, s, i - 1);
                for (guint j = l->n_lines; j > 0; j--)
                        json_builder_add_int_value(b, l->lines[j - 1].function);
        }
        json_builder_end_array(b);
}

static int64_t sample_weight(const ExportModel *m, const ExportSample *prev, const ExportSample *s) {
        if (m->kind == EXPORT_KIND_MEMORY || s->off_cpu)
                return s->value; /* bytes, or the ns a thread blocked */
        int64_t gap = prev ? export_sub(s->time, prev->time) : 0;
        return gap > 0 && gap <= export_add(m->period_ns, m->period_ns) ? gap : m->period_ns;
}

/* "worker-3 (tid 1234, pid 1200)"; a thread that renamed itself: its names
 * in time order, "starting → worker-2 (tid …)". */
static char *thread_title(const ExportModel *m, const Thread *t) {
        g_autoptr(GString) names = g_string_new(NULL);
        const char *last = NULL;
        for (guint i = 0; i < t->samples->len; i++) {
                const char *name = export_sample_thread_name(m, g_array_index(t->samples, const ExportSample *, i));
                if (last && strcmp(last, name) == 0)
                        continue;
                g_string_append_printf(names, "%s%s", last ? " → " : "", name);
                last = name;
        }
        return g_strdup_printf("%s (tid %d, pid %d)", names->str, t->tid, t->pid);
}

static void add_profile(JsonBuilder *b, const ExportModel *m, const Thread *t) {
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "type");
        json_builder_add_string_value(b, "sampled");
        g_autofree char *name = thread_title(m, t);
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, name);
        json_builder_set_member_name(b, "unit");
        json_builder_add_string_value(b, m->kind == EXPORT_KIND_CPU ? "nanoseconds" : "bytes");

        json_builder_set_member_name(b, "samples");
        json_builder_begin_array(b);
        for (guint i = 0; i < t->samples->len; i++)
                add_stack(b, m, g_array_index(t->samples, const ExportSample *, i));
        json_builder_end_array(b);

        int64_t total = 0;
        json_builder_set_member_name(b, "weights");
        json_builder_begin_array(b);
        for (guint i = 0; i < t->samples->len; i++) {
                const ExportSample *s = g_array_index(t->samples, const ExportSample *, i);
                int64_t w = sample_weight(m, i ? g_array_index(t->samples, const ExportSample *, i - 1) : NULL, s);
                json_builder_add_int_value(b, w);
                total = export_add(total, w);
        }
        json_builder_end_array(b);

        /* CPU: from just before the thread's first sample, in ns since the
         * capture started; memory: 0 to the bytes allocated. */
        int64_t start = 0;
        if (m->kind == EXPORT_KIND_CPU) {
                const ExportSample *first = g_array_index(t->samples, const ExportSample *, 0);
                start = MAX(export_sub(export_sub(first->time, m->period_ns), m->start_time), 0);
        }
        json_builder_set_member_name(b, "startValue");
        json_builder_add_int_value(b, start);
        json_builder_set_member_name(b, "endValue");
        json_builder_add_int_value(b, export_add(start, total));
        json_builder_end_object(b);
}

gboolean export_speedscope(const ExportModel *m, GByteArray *out, GError **error) {
        (void) error;
        g_autoptr(GPtrArray) threads = split_threads(m);
        g_autoptr(JsonBuilder) b = json_builder_new();
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "$schema");
        json_builder_add_string_value(b, SPEEDSCOPE_SCHEMA);
        g_autofree char *base = g_path_get_basename(m->report->path);
        g_autofree char *name = report_printable(base);
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, name);
        json_builder_set_member_name(b, "exporter");
        json_builder_add_string_value(b, "periscope " PERISCOPE_VERSION);
        json_builder_set_member_name(b, "activeProfileIndex");
        json_builder_add_int_value(b, 0);
        add_frames(b, m);
        json_builder_set_member_name(b, "profiles");
        json_builder_begin_array(b);
        for (guint i = 0; i < threads->len; i++)
                add_profile(b, m, g_ptr_array_index(threads, i));
        json_builder_end_array(b);
        json_builder_end_object(b);

        g_autoptr(JsonNode) root = json_builder_get_root(b);
        g_autoptr(JsonGenerator) gen = json_generator_new();
        json_generator_set_root(gen, root);
        gsize len = 0;
        g_autofree char *text = json_generator_to_data(gen, &len);
        g_byte_array_append(out, (const guint8 *) text, (guint) len);
        g_byte_array_append(out, (const guint8 *) "\n", 1);
        return TRUE;
}
