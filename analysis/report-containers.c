/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-containers.c: samples per container/app (see report-containers.h). */
#include "report-containers.h"

#include <errno.h>
#include <string.h>

#include "capture.h"

#define HOST_LABEL "host (no container)"

typedef struct Group {
        char *label;
        guint64 samples;
        GArray *pids; /* int32_t */
} Group;

static void group_free(gpointer p) {
        Group *g = p;
        g_free(g->label);
        g_array_unref(g->pids);
        g_free(g);
}

/* "podman NAME (IMAGE)" / "flatpak APP-ID" from a description chunk. */
static char *label_from_description(const char *text) {
        g_autofree char *engine = NULL, *name = NULL, *image = NULL, *id = NULL;
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        for (char **l = lines; *l; l++) {
                const char *eq = strchr(*l, '=');
                if (!eq)
                        continue;
                g_autofree char *key = g_strndup(*l, (gsize) (eq - *l));
                char **slot = g_str_equal(key, "engine")  ? &engine
                              : g_str_equal(key, "name")  ? &name
                              : g_str_equal(key, "image") ? &image
                              : g_str_equal(key, "id")    ? &id
                                                          : NULL;
                if (slot && !*slot)
                        *slot = g_utf8_make_valid(eq + 1, -1);
        }
        if (!engine)
                return NULL;
        const char *who = name && *name ? name : id && *id ? id : "?";
        if (g_str_equal(engine, "podman") && image && *image)
                return g_strdup_printf("%s %s (%s)", engine, who, image);
        return g_strdup_printf("%s %s", engine, who);
}

static gint cmp_pids(gconstpointer a, gconstpointer b) {
        int32_t x = *(const int32_t *) a, y = *(const int32_t *) b;
        return x < y ? -1 : x > y;
}

static void string_free(gpointer s) {
        g_string_free(s, TRUE);
}

static gint cmp_groups(gconstpointer a, gconstpointer b) {
        const Group *ga = *(Group *const *) a, *gb = *(Group *const *) b;
        if (ga->samples != gb->samples)
                return ga->samples < gb->samples ? 1 : -1;
        return strcmp(ga->label, gb->label);
}

GHashTable *report_containers_chunks_new(void) {
        return g_hash_table_new_full(NULL, NULL, NULL, string_free);
}

void report_containers_collect(ReportProfile *p, GHashTable *chunks, const CaptureFrame *f) {
        gpointer key = GINT_TO_POINTER(f->pid);
        if (f->type != CAPTURE_FRAME_FILE_CHUNK || !g_str_equal(f->file_chunk.path, CAPTURE_CONTAINER_PATH))
                return;
        GString *s = g_hash_table_lookup(chunks, key);
        if (!s) {
                s = g_string_new(NULL);
                g_hash_table_insert(chunks, key, s);
        }
        if (s->len < 64 * 1024)
                g_string_append_len(s, (const char *) f->file_chunk.data, f->file_chunk.len);
        if (f->file_chunk.is_last && !g_hash_table_contains(p->container_labels, key)) {
                char *label = label_from_description(s->str);
                if (label)
                        g_hash_table_insert(p->container_labels, key, label);
        }
}

/* The comm of pid as this view prints it: the basename of its command
 * line's first word, or NULL. */
static char *process_comm(const ReportProfile *p, int32_t pid) {
        const char *cmd = g_hash_table_lookup(p->cmdlines, GINT_TO_POINTER(pid));
        if (!cmd)
                return NULL;
        const char *sp = strchr(cmd, ' ');
        g_autofree char *argv0 = sp ? g_strndup(cmd, (gsize) (sp - cmd)) : g_strdup(cmd);
        const char *base = strrchr(argv0, '/');
        return g_utf8_make_valid(base ? base + 1 : argv0, -1);
}

/* brief: only the processes that belong to a container or app, as one
 * "Processes in containers and apps" section of the default report. */
static void print_containers(FILE *out, const ReportProfile *p, const ReportPidFilter *filter, gboolean brief,
                             GHashTable *ret_groups) {
        GHashTable *labels = p->container_labels, *parents = p->parents;
        g_autoptr(GHashTable) samples = g_hash_table_new(NULL, NULL); /* pid → guint64* */
        guint64 total = 0;
        GHashTableIter it;
        gpointer key, value;
        g_hash_table_iter_init(&it, p->pid_samples);
        while (g_hash_table_iter_next(&it, &key, &value))
                if (report_pid_wanted(filter, GPOINTER_TO_INT(key))) {
                        g_hash_table_insert(samples, key, value);
                        total += *(guint64 *) value;
                }
        if (p->load_warning)
                fprintf(stderr, "periscope report: warning: %s\n", p->load_warning);

        /* Group pids; a forked child without a description of its own
         * belongs where its parent does. */
        g_autoptr(GHashTable) groups = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, group_free);
        g_hash_table_iter_init(&it, samples);
        while (g_hash_table_iter_next(&it, &key, &value)) {
                const char *label = NULL;
                gpointer at = key;
                for (int depth = 0; depth < 64 && !label && at; depth++) {
                        label = g_hash_table_lookup(labels, at);
                        at = g_hash_table_lookup(parents, at);
                }
                if (!label)
                        label = HOST_LABEL;
                Group *g = g_hash_table_lookup(groups, label);
                if (!g) {
                        g = g_new0(Group, 1);
                        g->label = g_strdup(label);
                        g->pids = g_array_new(FALSE, FALSE, sizeof(int32_t));
                        g_hash_table_insert(groups, g->label, g);
                }
                int32_t pid = GPOINTER_TO_INT(key);
                if (ret_groups)
                        g_hash_table_replace(ret_groups, key, g_strdup(label));
                g->samples += *(guint64 *) value;
                g_array_append_val(g->pids, pid);
        }
        g_autoptr(GPtrArray) sorted = g_ptr_array_new();
        g_hash_table_iter_init(&it, groups);
        while (g_hash_table_iter_next(&it, &key, &value))
                g_ptr_array_add(sorted, value);
        g_ptr_array_sort(sorted, cmp_groups);

        if (!out)
                return;
        if (brief) {
                gboolean header = FALSE;
                for (guint i = 0; i < sorted->len; i++) {
                        Group *g = sorted->pdata[i];
                        if (g_str_equal(g->label, HOST_LABEL))
                                continue;
                        if (!header)
                                fprintf(out, "\nProcesses in containers and apps:\n");
                        header = TRUE;
                        g_array_sort(g->pids, cmp_pids);
                        for (guint j = 0; j < g->pids->len; j++) {
                                int32_t pid = g_array_index(g->pids, int32_t, j);
                                g_autofree char *comm = process_comm(p, pid);
                                guint64 *n = g_hash_table_lookup(samples, GINT_TO_POINTER(pid));
                                fprintf(out, "  %s[%d]  %s  (%" G_GUINT64_FORMAT " sample%s)\n", comm ? comm : "?",
                                        (int) pid, g->label, n ? *n : 0, n && *n == 1 ? "" : "s");
                        }
                }
                return;
        }
        fprintf(out, "Capture: %s\nSamples: %" G_GUINT64_FORMAT "\n\nSamples by container or app:\n", p->path, total);
        fprintf(out, "  Samples       %%  Container/app  [processes]\n");
        for (guint i = 0; i < sorted->len; i++) {
                Group *g = sorted->pdata[i];
                g_array_sort(g->pids, cmp_pids);
                fprintf(out, "%9" G_GUINT64_FORMAT "  %5.1f%%  %s  [", g->samples,
                        total ? 100.0 * (double) g->samples / (double) total : 0.0, g->label);
                for (guint j = 0; j < g->pids->len && j < 16; j++) {
                        int32_t pid = g_array_index(g->pids, int32_t, j);
                        g_autofree char *comm = process_comm(p, pid);
                        fprintf(out, "%s%s[%d]", j ? ", " : "", comm ? comm : "?", (int) pid);
                }
                fprintf(out, "%s]\n", g->pids->len > 16 ? ", …" : "");
        }
        if (sorted->len == 0)
                fprintf(out, "  (no samples)\n");
}

void report_print_by_container(FILE *out, const ReportProfile *p, const ReportPidFilter *filter) {
        print_containers(out, p, filter, FALSE, NULL);
}

void report_print_process_containers(FILE *out, const ReportProfile *p, const ReportPidFilter *filter) {
        print_containers(out, p, filter, TRUE, NULL);
}

GHashTable *report_containers_by_pid(const ReportProfile *p, const ReportPidFilter *filter) {
        GHashTable *groups = g_hash_table_new_full(NULL, NULL, NULL, g_free);
        print_containers(NULL, p, filter, FALSE, groups);
        return groups;
}
