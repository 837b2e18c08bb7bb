/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-callgraph.c: filters samples, resolves their stacks and builds the
 * call tree and per-function counts. */
#include "report-callgraph.h"

#include <string.h>

#include "report-progress.h"

static ReportNode *node_new(ReportNode *parent, guint label) {
        ReportNode *n = g_new0(ReportNode, 1);
        n->parent = parent;
        n->label = label;
        n->children = g_ptr_array_new();
        return n;
}

static void node_free(ReportNode *n) {
        for (guint i = 0; i < n->children->len; i++)
                node_free(g_ptr_array_index(n->children, i));
        g_ptr_array_unref(n->children);
        g_clear_pointer(&n->by_label, g_hash_table_unref);
        g_free(n);
}

static ReportNode *node_child(ReportNode *n, guint label) {
        if (!n->by_label)
                n->by_label = g_hash_table_new(NULL, NULL);
        ReportNode *c = g_hash_table_lookup(n->by_label, GUINT_TO_POINTER(label + 1));
        if (!c) {
                c = node_new(n, label);
                g_ptr_array_add(n->children, c);
                g_hash_table_insert(n->by_label, GUINT_TO_POINTER(label + 1), c);
        }
        return c;
}

static int node_cmp(gconstpointer a, gconstpointer b, gpointer labels) {
        const ReportNode *x = *(ReportNode *const *) a, *y = *(ReportNode *const *) b;
        if (x->total != y->total)
                return x->total > y->total ? -1 : 1;
        return strcmp(report_labels_get(labels, x->label)->text, report_labels_get(labels, y->label)->text);
}

static void node_sort(ReportNode *n, ReportLabels *labels) {
        g_clear_pointer(&n->by_label, g_hash_table_unref);
        g_ptr_array_sort_with_data(n->children, node_cmp, labels);
        for (guint i = 0; i < n->children->len; i++)
                node_sort(g_ptr_array_index(n->children, i), labels);
}

/* Whether a --comm NAME selects a process shown as comm: its name, or its
 * name in brackets ("[cscope]": a process seen without a command line). */
static gboolean comm_matches(const char *name, const char *comm) {
        if (strcmp(name, comm) == 0)
                return TRUE;
        size_t n = strlen(comm);
        return n > 2 && comm[0] == '[' && comm[n - 1] == ']' && strlen(name) == n - 2 &&
               strncmp(comm + 1, name, n - 2) == 0;
}

gboolean report_filter_match(const ReportProfile *p, const ReportFilter *f, int32_t pid) {
        if (f->pids && f->pids->len) {
                gboolean ok = FALSE;
                for (guint i = 0; i < f->pids->len && !ok; i++)
                        ok = g_array_index(f->pids, int32_t, i) == pid;
                if (!ok)
                        return FALSE;
        }
        if (f->comms && f->comms[0]) {
                const char *comm = report_profile_get_comm(p, pid);
                const char *cmdline = g_hash_table_lookup(p->cmdlines, GINT_TO_POINTER(pid));
                gboolean ok = FALSE;
                for (char **c = f->comms; *c && !ok; c++)
                        ok = comm_matches(*c, comm) || (cmdline && strcmp(*c, cmdline) == 0);
                if (!ok)
                        return FALSE;
        }
        if (report_filter_has_tids(f)) {
                /* frames of a whole process (marks, counters...): those of the threads' processes,
                 * known from their samples or their names */
                for (guint i = 0; i < f->tids->len; i++)
                        if (report_profile_thread_of(p, g_array_index(f->tids, int32_t, i), pid))
                                return TRUE;
                for (guint i = 0; i < p->threads->len; i++) {
                        const ReportThread *t = g_ptr_array_index(p->threads, i);
                        if (t->pid == pid && report_filter_match_thread(p, f, pid, t->tid))
                                return TRUE;
                }
                return FALSE;
        }
        return TRUE;
}

static gboolean tid_listed(const ReportFilter *f, int32_t tid) {
        for (guint i = 0; i < f->tids->len; i++)
                if (g_array_index(f->tids, int32_t, i) == tid)
                        return TRUE;
        return FALSE;
}

gboolean report_filter_match_thread(const ReportProfile *p, const ReportFilter *f, int32_t pid, int32_t tid) {
        if (report_filter_has_tids(f) && !tid_listed(f, tid))
                return FALSE;
        ReportFilter pid_only = *f;
        pid_only.tids = NULL;
        return report_filter_match(p, &pid_only, pid);
}

static guint stack_hash(gconstpointer v) {
        const ReportStack *s = v;
        guint h = (s->n * 131u + (guint) s->pid) * 31u + s->thread;
        for (guint i = 0; i < s->n; i++)
                h = h * 31u + s->ids[i];
        return h;
}

static gboolean stack_equal(gconstpointer a, gconstpointer b) {
        const ReportStack *x = a, *y = b;
        return x->pid == y->pid && x->thread == y->thread && x->n == y->n &&
               memcmp(x->ids, y->ids, x->n * sizeof(guint)) == 0;
}

ReportCallGraph *report_callgraph_new(const ReportProfile *profile, const ReportFilter *filter, gboolean progress) {
        ReportCallGraph *g = g_new0(ReportCallGraph, 1);
        g->labels = report_labels_new(profile, filter->lines);
        g->root = node_new(NULL, G_MAXUINT);
        g->stacks = g_ptr_array_new_with_free_func(g_free);
        g->pids_seen = g_hash_table_new(NULL, NULL);
        g->profile = profile;
        g->process_root = filter->process_root;
        g->folded_process_root = filter->folded_process_root;
        g->thread_root = filter->thread_root;
        g->threads_seen = g_hash_table_new(NULL, NULL);
        g->groups = filter->groups;
        g_autoptr(GHashTable) distinct = g_hash_table_new(stack_hash, stack_equal);
        g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(guint));
        g_autoptr(ReportProgress) bar = report_progress_new("Resolving stacks", progress);

        GHashTableIter it;
        gpointer key;
        guint64 done = 0, n_raw = g_hash_table_size(profile->stacks);
        g_hash_table_iter_init(&it, profile->stacks);
        while (g_hash_table_iter_next(&it, &key, NULL)) {
                const ReportRawStack *raw = key;
                if ((++done & 255) == 0)
                        report_progress_update(bar, done, n_raw);
                if (!report_filter_match_thread(profile, filter, raw->pid, raw->tid))
                        continue;
                g_hash_table_add(g->pids_seen, GINT_TO_POINTER(raw->pid));
                if (g_hash_table_add(g->threads_seen, GUINT_TO_POINTER(raw->thread))) {
                        /* intern the grouping frames now: self/total are sized by the labels */
                        guint roots[REPORT_MAX_ROOTS];
                        report_callgraph_roots(g, raw->pid, raw->thread, FALSE, roots);
                        report_callgraph_roots(g, raw->pid, raw->thread, TRUE, roots);
                }
                g_array_set_size(ids, 0);
                report_labels_resolve_stack(g->labels, raw, ids);
                ReportStack *s = g_malloc(sizeof(ReportStack) + ids->len * sizeof(guint));
                s->pid = raw->pid;
                s->thread = raw->thread;
                s->count = raw->count;
                s->events = raw->events;
                s->n = ids->len;
                memcpy(s->ids, ids->data, ids->len * sizeof(guint));
                ReportStack *have = g_hash_table_lookup(distinct, s);
                if (have) {
                        have->count += s->count;
                        have->events += s->events;
                        g_free(s);
                } else {
                        g_hash_table_add(distinct, s);
                        g_ptr_array_add(g->stacks, s);
                }
                g->n_samples += raw->count;
        }

        guint n_labels = report_labels_count(g->labels);
        g->self = g_new0(guint64, n_labels ? n_labels : 1);
        g->total = g_new0(guint64, n_labels ? n_labels : 1);
        g_autofree guint *seen_at = g_new0(guint, n_labels ? n_labels : 1); /* stack index + 1 */
        for (guint si = 0; si < g->stacks->len; si++) {
                const ReportStack *s = g_ptr_array_index(g->stacks, si);
                ReportNode *n = g->root;
                n->total += s->count;
                guint roots[REPORT_MAX_ROOTS], n_roots = report_callgraph_roots(g, s->pid, s->thread, FALSE, roots);
                for (guint i = 0; i < n_roots; i++) {
                        n = node_child(n, roots[i]);
                        n->total += s->count;
                }
                for (guint i = 0; i < s->n; i++) {
                        n = node_child(n, s->ids[i]);
                        n->total += s->count;
                        if (seen_at[s->ids[i]] != si + 1) { /* recursion counts once */
                                seen_at[s->ids[i]] = si + 1;
                                g->total[s->ids[i]] += s->count;
                        }
                }
                n->self += s->count;
                if (s->n)
                        g->self[s->ids[s->n - 1]] += s->count;
        }
        node_sort(g->root, g->labels);
        return g;
}

guint report_callgraph_roots(ReportCallGraph *g, int32_t pid, guint32 thread, gboolean folded,
                             guint out[REPORT_MAX_ROOTS]) {
        guint n = 0;
        const char *group = g->groups ? g_hash_table_lookup(g->groups, GINT_TO_POINTER(pid)) : NULL;
        if (group)
                out[n++] = report_labels_root(g->labels, group);
        if (folded ? g->folded_process_root : g->process_root) {
                const char *comm = report_profile_get_comm(g->profile, pid);
                g_autofree char *text = g_strdup_printf("%s (pid %d)", *comm ? comm : "?", pid);
                out[n++] = report_labels_root(g->labels, text);
        }
        if (g->thread_root && thread < g->profile->threads->len) {
                const ReportThread *t = g_ptr_array_index(g->profile->threads, thread);
                g_autofree char *text = report_thread_title(t);
                out[n++] = report_labels_root(g->labels, text);
        }
        return n;
}

char *report_thread_title(const ReportThread *t) {
        g_autofree char *name = report_printable(t->name);
        return g_strdup_printf("%s (tid %d)", name, t->tid);
}

const char *report_callgraph_unit(const ReportCallGraph *g, guint64 n) {
        return report_profile_unit(g->profile, n);
}

void report_callgraph_free(ReportCallGraph *g) {
        if (!g)
                return;
        node_free(g->root);
        g_ptr_array_unref(g->stacks);
        g_hash_table_unref(g->pids_seen);
        g_hash_table_unref(g->threads_seen);
        g_free(g->self);
        g_free(g->total);
        report_labels_free(g->labels);
        g_free(g);
}

GArray *report_callgraph_find(const ReportCallGraph *g, const char *name) {
        GArray *out = g_array_new(FALSE, FALSE, sizeof(guint));
        for (guint id = 0; id < report_labels_count(g->labels); id++) {
                const ReportLabel *l = report_labels_get(g->labels, id);
                if (l->flags & REPORT_LABEL_ROOT)
                        continue;
                if (strcmp(l->text, name) == 0 || strcmp(l->function, name) == 0)
                        g_array_append_val(out, id);
        }
        return out;
}

GHashTable *report_callgraph_neighbours(const ReportCallGraph *g, GArray *targets, gboolean callers,
                                        guint64 *ret_total) {
        GHashTable *counts = g_hash_table_new_full(NULL, NULL, NULL, g_free);
        g_autoptr(GHashTable) is_target = g_hash_table_new(NULL, NULL);
        for (guint i = 0; i < targets->len; i++)
                g_hash_table_add(is_target, GUINT_TO_POINTER(g_array_index(targets, guint, i) + 1));
        g_autoptr(GHashTable) once = g_hash_table_new(NULL, NULL);
        guint64 total = 0;

        for (guint si = 0; si < g->stacks->len; si++) {
                const ReportStack *s = g_ptr_array_index(g->stacks, si);
                gboolean hit = FALSE;
                g_hash_table_remove_all(once);
                for (guint i = 0; i < s->n; i++) {
                        if (!g_hash_table_contains(is_target, GUINT_TO_POINTER(s->ids[i] + 1)))
                                continue;
                        hit = TRUE;
                        guint nb;
                        if (callers)
                                nb = i == 0 ? G_MAXUINT : s->ids[i - 1];
                        else
                                nb = i + 1 == s->n ? G_MAXUINT : s->ids[i + 1];
                        gpointer k = GUINT_TO_POINTER(nb == G_MAXUINT ? 0 : nb + 1);
                        if (g_hash_table_contains(once, k))
                                continue;
                        g_hash_table_add(once, k);
                        guint64 *c = g_hash_table_lookup(counts, k);
                        if (!c) {
                                c = g_new0(guint64, 1);
                                g_hash_table_insert(counts, k, c);
                        }
                        *c += s->count;
                }
                if (hit)
                        total += s->count;
        }
        *ret_total = total;
        return counts;
}
