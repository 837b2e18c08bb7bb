/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-diff.c: per-function change between two call graphs. */
#include "report-diff.h"

#include "report-rows.h"
#include "report-text.h"

#include <math.h>
#include <string.h>

typedef struct DiffRow {
        const char *name;         /* borrowed from one of the graphs' labels */
        double self[2], total[2]; /* shares in %, [0] before, [1] after */
} DiffRow;

static double share(guint64 part, guint64 whole) {
        return whole ? 100.0 * (double) part / (double) whole : 0.0;
}

/* Adds the functions of g (side 0 or 1) to rows, keyed by label text. */
static void add_side(GHashTable *rows, const ReportCallGraph *g, int side) {
        for (guint id = 0; id < report_labels_count(g->labels); id++) {
                const ReportLabel *l = report_labels_get(g->labels, id);
                if ((l->flags & REPORT_LABEL_ROOT) || !g->total[id])
                        continue;
                DiffRow *r = g_hash_table_lookup(rows, l->text);
                if (!r) {
                        r = g_new0(DiffRow, 1);
                        r->name = l->text;
                        g_hash_table_insert(rows, (gpointer) r->name, r);
                }
                r->self[side] = share(g->self[id], g->n_samples);
                r->total[side] = share(g->total[id], g->n_samples);
        }
}

/* Largest change first (of self shares if *self, else of total shares). */
static int by_delta(gconstpointer a, gconstpointer b, gpointer self) {
        const DiffRow *x = *(DiffRow *const *) a, *y = *(DiffRow *const *) b;
        const double *vx = *(gboolean *) self ? x->self : x->total, *vy = *(gboolean *) self ? y->self : y->total;
        double dx = fabs(vx[1] - vx[0]), dy = fabs(vy[1] - vy[0]);
        if (dx != dy)
                return dx > dy ? -1 : 1;
        return strcmp(x->name, y->name);
}

static void print_table(FILE *out, GPtrArray *rows, gboolean self, guint limit) {
        fprintf(out, "\nChange in %s time (share of each capture's samples; delta = after - before):\n",
                self ? "self" : "total");
        fprintf(out, "%8s %8s %9s  %s\n", "Before", "After", "Delta", "Function");
        guint shown = 0;
        for (guint i = 0; i < rows->len && shown < limit; i++) {
                const DiffRow *r = rows->pdata[i];
                const double *v = self ? r->self : r->total;
                if (fabs(v[1] - v[0]) < 0.005) /* unchanged at the precision shown */
                        continue;
                fprintf(out, "%7.2f%% %7.2f%% %+8.2f%%  %s\n", v[0], v[1], v[1] - v[0], r->name);
                shown++;
        }
        if (!shown)
                fprintf(out, "%8s %8s %9s  (no function changed by 0.01%% or more)\n", "-", "-", "-");
}

void report_print_diff(FILE *out, const ReportCallGraph *before, const ReportCallGraph *after, guint limit) {
        g_autofree char *bpath = report_printable(before->profile->path);
        g_autofree char *apath = report_printable(after->profile->path);
        fprintf(out, "Before: %s (%" G_GUINT64_FORMAT " %s)\n", bpath, before->n_samples,
                report_callgraph_unit(before, before->n_samples));
        fprintf(out, "After:  %s (%" G_GUINT64_FORMAT " %s)\n", apath, after->n_samples,
                report_callgraph_unit(after, after->n_samples));
        g_autoptr(GHashTable) by_name = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
        add_side(by_name, before, 0);
        add_side(by_name, after, 1);
        g_autoptr(GPtrArray) rows = report_rows_from_table(by_name);
        gboolean self = TRUE; /* the self table, then the total one */
        g_ptr_array_sort_with_data(rows, by_delta, &self);
        print_table(out, rows, self, limit);
        self = FALSE;
        g_ptr_array_sort_with_data(rows, by_delta, &self);
        print_table(out, rows, self, limit);
}

typedef struct FoldedPair {
        guint64 count[2];
} FoldedPair;

static void add_folded(GHashTable *lines, ReportCallGraph *g, int side) {
        for (guint i = 0; i < g->stacks->len; i++) {
                const ReportStack *s = g_ptr_array_index(g->stacks, i);
                if (s->n == 0)
                        continue;
                char *stack = report_folded_stack(g, s);
                FoldedPair *p = g_hash_table_lookup(lines, stack);
                if (!p) {
                        p = g_new0(FoldedPair, 1);
                        g_hash_table_insert(lines, stack, p);
                } else
                        g_free(stack);
                p->count[side] += s->count;
        }
}

void report_print_folded_diff(FILE *out, ReportCallGraph *before, ReportCallGraph *after) {
        g_autoptr(GHashTable) lines = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        add_folded(lines, before, 0);
        add_folded(lines, after, 1);
        g_autoptr(GList) keys = g_list_sort(g_hash_table_get_keys(lines), (GCompareFunc) strcmp);
        for (GList *l = keys; l; l = l->next) {
                const FoldedPair *p = g_hash_table_lookup(lines, l->data);
                fprintf(out, "%s %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT "\n", (const char *) l->data, p->count[0],
                        p->count[1]);
        }
}
