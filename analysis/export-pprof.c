/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* export-pprof.c: the capture as a pprof profile (profile.proto of
 * github.com/google/pprof, gzipped): samples grouped by thread and stack,
 * locations with their inline chains (innermost Line first, the caller
 * last), functions with file names, mappings with build-ids. */
#include "export-formats.h"

#include <glib.h>
#include <zlib.h>
#include <string.h>

#include "export-protobuf.h"

/* profile.proto field numbers */
enum {
        PROFILE_SAMPLE_TYPE = 1,
        PROFILE_SAMPLE,
        PROFILE_MAPPING,
        PROFILE_LOCATION,
        PROFILE_FUNCTION,
        PROFILE_STRING_TABLE,
        PROFILE_TIME_NANOS = 9,
        PROFILE_DURATION_NANOS,
        PROFILE_PERIOD_TYPE,
        PROFILE_PERIOD,
        PROFILE_COMMENT,
        PROFILE_DEFAULT_SAMPLE_TYPE
};
enum { VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT };
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE, SAMPLE_LABEL };
enum { LABEL_KEY = 1, LABEL_STR, LABEL_NUM };
enum {
        MAPPING_ID = 1,
        MAPPING_MEMORY_START,
        MAPPING_MEMORY_LIMIT,
        MAPPING_FILE_OFFSET,
        MAPPING_FILENAME,
        MAPPING_BUILD_ID,
        MAPPING_HAS_FUNCTIONS,
        MAPPING_HAS_FILENAMES,
        MAPPING_HAS_LINE_NUMBERS,
        MAPPING_HAS_INLINE_FRAMES
};
enum { LOCATION_ID = 1, LOCATION_MAPPING_ID, LOCATION_ADDRESS, LOCATION_LINE };
enum { LINE_FUNCTION_ID = 1, LINE_LINE };
enum { FUNCTION_ID = 1, FUNCTION_NAME, FUNCTION_SYSTEM_NAME, FUNCTION_FILENAME };

#define MAX_VALUES 4

typedef struct Strings {
        GHashTable *index; /* string → index + 1 */
        GPtrArray *list;   /* char*, [0] = "" */
} Strings;

static uint64_t str_id(Strings *s, const char *v) {
        if (!v || !*v)
                return 0;
        gpointer have = g_hash_table_lookup(s->index, v);
        if (have)
                return GPOINTER_TO_UINT(have) - 1;
        char *copy = g_strdup(v);
        g_ptr_array_add(s->list, copy);
        g_hash_table_insert(s->index, copy, GUINT_TO_POINTER(s->list->len));
        return s->list->len - 1;
}

static void add_value_type(GByteArray *b, uint32_t field, Strings *s, const char *type, const char *unit) {
        g_autoptr(GByteArray) vt = g_byte_array_new();
        pb_add_varint(vt, VALUE_TYPE_TYPE, str_id(s, type));
        pb_add_varint(vt, VALUE_TYPE_UNIT, str_id(s, unit));
        pb_add_message(b, field, vt);
}

/* A group of samples with the same thread (under the same name) and stack. */
typedef struct Group {
        const ExportSample *first; /* its pid, tid and stack */
        int64_t values[MAX_VALUES];
} Group;

static gboolean same_stack(const ExportModel *m, const ExportSample *a, const ExportSample *b) {
        if (a->pid != b->pid || a->tid != b->tid || a->thread != b->thread || a->n != b->n)
                return FALSE;
        const guint *la = &g_array_index(m->stack_locations, guint, a->first);
        const guint *lb = &g_array_index(m->stack_locations, guint, b->first);
        return memcmp(la, lb, a->n * sizeof(guint)) == 0;
}

static guint stack_hash(const ExportModel *m, const ExportSample *s) {
        guint h = (guint) s->pid * 31u + (guint) s->tid * 17u + s->thread * 7u + s->n;
        for (guint i = 0; i < s->n; i++)
                h = h * 1000003u ^ g_array_index(m->stack_locations, guint, s->first + i);
        return h;
}

/* *acc += v, held at the int64 limits */
static void add_saturated(int64_t *acc, int64_t v) {
        *acc = export_add(*acc, v);
}

/* Groups samples by (pid, tid, stack): a hash of stack hashes to chains. */
static GPtrArray *group_samples(const ExportModel *m) {
        GPtrArray *groups = g_ptr_array_new_with_free_func(g_free);
        g_autoptr(GHashTable) by_hash =
                g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify) g_ptr_array_unref);
        for (guint i = 0; i < m->samples->len; i++) {
                const ExportSample *s = &g_array_index(m->samples, ExportSample, i);
                guint h = stack_hash(m, s);
                GPtrArray *chain = g_hash_table_lookup(by_hash, GUINT_TO_POINTER(h));
                if (!chain) {
                        chain = g_ptr_array_new();
                        g_hash_table_insert(by_hash, GUINT_TO_POINTER(h), chain);
                }
                Group *g = NULL;
                for (guint j = 0; j < chain->len && !g; j++) {
                        Group *c = g_ptr_array_index(chain, j);
                        if (same_stack(m, c->first, s))
                                g = c;
                }
                if (!g) {
                        g = g_new0(Group, 1);
                        g->first = s;
                        g_ptr_array_add(chain, g);
                        g_ptr_array_add(groups, g);
                }
                if (m->kind == EXPORT_KIND_CPU && s->off_cpu)
                        add_saturated(&g->values[2], s->value);
                else if (m->kind == EXPORT_KIND_CPU) {
                        add_saturated(&g->values[0], 1);
                        add_saturated(&g->values[1], m->period_ns);
                } else {
                        add_saturated(&g->values[0], 1);
                        add_saturated(&g->values[1], s->value);
                        add_saturated(&g->values[2], s->live ? 1 : 0);
                        add_saturated(&g->values[3], s->live ? s->value : 0);
                }
        }
        return groups;
}

static void add_label(GByteArray *b, Strings *s, const char *key, const char *str, int64_t num) {
        g_autoptr(GByteArray) l = g_byte_array_new();
        pb_add_varint(l, LABEL_KEY, str_id(s, key));
        if (str)
                pb_add_varint(l, LABEL_STR, str_id(s, str));
        else
                pb_add_int64(l, LABEL_NUM, num);
        pb_add_message(b, SAMPLE_LABEL, l);
}

static void add_samples(GByteArray *b, const ExportModel *m, Strings *s) {
        g_autoptr(GPtrArray) groups = group_samples(m);
        guint n_values = m->kind == EXPORT_KIND_CPU ? (m->has_off_cpu ? 3 : 2) : 4;
        g_autofree uint64_t *ids = NULL;
        guint cap = 0;
        for (guint i = 0; i < groups->len; i++) {
                const Group *g = g_ptr_array_index(groups, i);
                const ExportSample *first = g->first;
                if (first->n > cap) {
                        cap = first->n;
                        ids = g_renew(uint64_t, ids, cap);
                }
                for (guint j = 0; j < first->n; j++) /* leaf first, as pprof wants */
                        ids[j] = g_array_index(m->stack_locations, guint, first->first + j) + 1u;
                uint64_t values[MAX_VALUES];
                for (guint j = 0; j < n_values; j++)
                        values[j] = (uint64_t) g->values[j];
                g_autoptr(GByteArray) sample = g_byte_array_new();
                pb_add_packed(sample, SAMPLE_LOCATION_ID, ids, first->n);
                pb_add_packed(sample, SAMPLE_VALUE, values, n_values); /* zeros included */
                add_label(sample, s, "pid", NULL, first->pid);
                add_label(sample, s, "tid", NULL, first->tid);
                add_label(sample, s, "comm", export_model_comm(m, first->pid), 0);
                add_label(sample, s, "thread", export_sample_thread_name(m, first), 0);
                pb_add_message(b, PROFILE_SAMPLE, sample);
        }
}

/* The mapping of the executable of the process with the most samples: pprof
 * names the profile after its first mapping ("File:"). -1 if unknown. */
static int main_mapping(const ExportModel *m) {
        g_autoptr(GHashTable) counts = g_hash_table_new(g_direct_hash, g_direct_equal);
        int32_t best_pid = 0;
        guint best = 0;
        for (guint i = 0; i < m->samples->len; i++) {
                int32_t pid = g_array_index(m->samples, ExportSample, i).pid;
                guint c = GPOINTER_TO_UINT(g_hash_table_lookup(counts, GINT_TO_POINTER(pid))) + 1;
                g_hash_table_insert(counts, GINT_TO_POINTER(pid), GUINT_TO_POINTER(c));
                if (c > best) {
                        best = c;
                        best_pid = pid;
                }
        }
        const char *cmdline = g_hash_table_lookup(m->report->cmdlines, GINT_TO_POINTER(best_pid));
        if (!cmdline)
                return -1;
        g_autofree char *exe = g_strndup(cmdline, strcspn(cmdline, " "));
        g_autofree char *exe_base = g_path_get_basename(exe);
        for (guint i = 0; i < m->mappings->len; i++) {
                const ExportMapping *em = g_ptr_array_index(m->mappings, i);
                g_autofree char *base = g_path_get_basename(em->filename);
                if (!em->kernel && strcmp(base, exe_base) == 0)
                        return (int) i;
        }
        return -1;
}

static void add_mapping(GByteArray *b, const ExportModel *m, Strings *s, guint i, gboolean rich, gboolean unnamed) {
        const ExportMapping *em = g_ptr_array_index(m->mappings, i);
        g_autoptr(GByteArray) mb = g_byte_array_new();
        pb_add_varint(mb, MAPPING_ID, i + 1u);
        pb_add_varint(mb, MAPPING_MEMORY_START, em->start);
        pb_add_varint(mb, MAPPING_MEMORY_LIMIT, em->end);
        pb_add_varint(mb, MAPPING_FILE_OFFSET, em->offset);
        pb_add_varint(mb, MAPPING_FILENAME, str_id(s, em->filename));
        pb_add_varint(mb, MAPPING_BUILD_ID, str_id(s, em->build_id));
        /* A mapping with named locations: pprof must not look for the
         * binaries to symbolize again (it would replace every name of the
         * mapping with what its own tools find, nothing where they find
         * none). One whose every address is unnamed (a stripped binary: named
         * "module+0xOFFSET" meanwhile) is left to pprof, which symbolizes it
         * from the binary or debug file it finds (by path, PPROF_BINARY_PATH,
         * checked by build-id). */
        pb_add_varint(mb, MAPPING_HAS_FUNCTIONS, !unnamed);
        pb_add_varint(mb, MAPPING_HAS_FILENAMES, rich && !unnamed);
        pb_add_varint(mb, MAPPING_HAS_LINE_NUMBERS, rich && !unnamed);
        pb_add_varint(mb, MAPPING_HAS_INLINE_FRAMES, rich && !unnamed);
        pb_add_message(b, PROFILE_MAPPING, mb);
}

/* The main executable first (ids stay the indices + 1). */
static void add_mappings(GByteArray *b, const ExportModel *m, Strings *s) {
        gboolean rich = m->report->symbols && symbol_table_get_kind(m->report->symbols) == SYMBOL_TABLE_PERISCOPE;
        /* unnamed[i]: mapping i has no named location */
        g_autofree gboolean *unnamed = g_new0(gboolean, m->mappings->len + 1);
        g_autofree gboolean *named = g_new0(gboolean, m->mappings->len + 1);
        for (guint i = 0; i < m->locations->len; i++) {
                const ExportLocation *l = g_ptr_array_index(m->locations, i);
                for (guint j = 0; l->mapping >= 0 && j < l->n_lines; j++) {
                        gboolean resolved =
                                !(export_model_function(m, l->lines[j].function)->flags & EXPORT_FUNCTION_UNRESOLVED);
                        named[l->mapping] |= resolved;
                        unnamed[l->mapping] |= !resolved;
                }
        }
        for (guint i = 0; i < m->mappings->len; i++)
                unnamed[i] = unnamed[i] && !named[i];
        int first = main_mapping(m);
        if (first >= 0)
                add_mapping(b, m, s, (guint) first, rich, unnamed[first]);
        for (guint i = 0; i < m->mappings->len; i++)
                if ((int) i != first)
                        add_mapping(b, m, s, i, rich, unnamed[i]);
}

static void add_locations(GByteArray *b, const ExportModel *m) {
        for (guint i = 0; i < m->locations->len; i++) {
                const ExportLocation *l = g_ptr_array_index(m->locations, i);
                g_autoptr(GByteArray) lb = g_byte_array_new();
                pb_add_varint(lb, LOCATION_ID, i + 1u);
                pb_add_varint(lb, LOCATION_MAPPING_ID, l->mapping >= 0 ? (uint64_t) l->mapping + 1u : 0);
                pb_add_varint(lb, LOCATION_ADDRESS, l->address);
                for (guint j = 0; j < l->n_lines; j++) { /* innermost first, the caller last */
                        g_autoptr(GByteArray) line = g_byte_array_new();
                        pb_add_varint(line, LINE_FUNCTION_ID, l->lines[j].function + 1u);
                        pb_add_int64(line, LINE_LINE, l->lines[j].line);
                        pb_add_message(lb, LOCATION_LINE, line);
                }
                pb_add_message(b, PROFILE_LOCATION, lb);
        }
}

static void add_functions(GByteArray *b, const ExportModel *m, Strings *s) {
        for (guint i = 0; i < m->functions->len; i++) {
                const ExportFunction *f = export_model_function(m, i);
                g_autoptr(GByteArray) fb = g_byte_array_new();
                g_autofree char *name = (f->flags & EXPORT_FUNCTION_KERNEL) ? g_strconcat(f->name, " [kernel]", NULL)
                                                                            : g_strdup(f->name);
                pb_add_varint(fb, FUNCTION_ID, i + 1u);
                pb_add_varint(fb, FUNCTION_NAME, str_id(s, name));
                pb_add_varint(fb, FUNCTION_SYSTEM_NAME, str_id(s, f->name));
                pb_add_varint(fb, FUNCTION_FILENAME, str_id(s, f->file));
                pb_add_message(b, PROFILE_FUNCTION, fb);
        }
}

/* The encoded profile.proto message. */
static GByteArray *encode_profile(const ExportModel *m) {
        Strings s = { g_hash_table_new(g_str_hash, g_str_equal), g_ptr_array_new_with_free_func(g_free) };
        g_ptr_array_add(s.list, g_strdup("")); /* string_table[0] must be "" */
        GByteArray *b = g_byte_array_new();
        if (m->kind == EXPORT_KIND_CPU) {
                add_value_type(b, PROFILE_SAMPLE_TYPE, &s, "samples", "count");
                add_value_type(b, PROFILE_SAMPLE_TYPE, &s, "cpu", "nanoseconds");
                /* `go tool pprof -sample_index=off_cpu`: where threads blocked */
                if (m->has_off_cpu)
                        add_value_type(b, PROFILE_SAMPLE_TYPE, &s, "off_cpu", "nanoseconds");
        } else {
                add_value_type(b, PROFILE_SAMPLE_TYPE, &s, "alloc_objects", "count");
                add_value_type(b, PROFILE_SAMPLE_TYPE, &s, "alloc_space", "bytes");
                add_value_type(b, PROFILE_SAMPLE_TYPE, &s, "inuse_objects", "count");
                add_value_type(b, PROFILE_SAMPLE_TYPE, &s, "inuse_space", "bytes");
        }
        add_samples(b, m, &s);
        add_mappings(b, m, &s);
        add_locations(b, m);
        add_functions(b, m, &s);
        pb_add_int64(b, PROFILE_TIME_NANOS, m->wall_start_ns);
        pb_add_int64(b, PROFILE_DURATION_NANOS, export_sub(m->end_time, m->start_time));
        if (m->kind == EXPORT_KIND_CPU) {
                add_value_type(b, PROFILE_PERIOD_TYPE, &s, "cpu", "nanoseconds");
                pb_add_int64(b, PROFILE_PERIOD, m->period_ns);
        } else {
                add_value_type(b, PROFILE_PERIOD_TYPE, &s, "space", "bytes");
                pb_add_int64(b, PROFILE_PERIOD, 1); /* every allocation is recorded */
        }
        uint64_t comment = str_id(&s, "exported by periscope " PERISCOPE_VERSION);
        pb_add_packed(b, PROFILE_COMMENT, &comment, 1);
        /* the string table last: every id above is known by now */
        for (guint i = 0; i < s.list->len; i++) {
                const char *str = g_ptr_array_index(s.list, i);
                pb_add_bytes(b, PROFILE_STRING_TABLE, str, strlen(str));
        }
        g_hash_table_unref(s.index);
        g_ptr_array_unref(s.list);
        return b;
}

/* gzip (zlib's deflate at level 6 with the gzip wrapper: mtime 0, OS Unix). */
static gboolean gzip_append(const GByteArray *in, GByteArray *out, GError **error) {
        z_stream z = { 0 };
        if (deflateInit2(&z, 6, Z_DEFLATED, MAX_WBITS + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
                g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOMEM, "cannot start gzip: %s", z.msg ? z.msg : "zlib");
                return FALSE;
        }
        z.next_in = (Bytef *) in->data;
        z.avail_in = in->len;
        guint8 buf[65536];
        for (;;) {
                z.next_out = buf;
                z.avail_out = sizeof(buf);
                int r = deflate(&z, Z_FINISH);
                if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR) {
                        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "gzip failed: %s",
                                    z.msg ? z.msg : "zlib");
                        deflateEnd(&z);
                        return FALSE;
                }
                g_byte_array_append(out, buf, (guint) (sizeof(buf) - z.avail_out));
                if (r == Z_STREAM_END) {
                        deflateEnd(&z);
                        return TRUE;
                }
        }
}

gboolean export_pprof(const ExportModel *m, GByteArray *out, GError **error) {
        g_autoptr(GByteArray) proto = encode_profile(m);
        return gzip_append(proto, out, error);
}
