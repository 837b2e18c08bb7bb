/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-memory-stacks.c: see report-memory-stacks.h. */
#include "report-memory-stacks.h"

#include <string.h>

#include "report-text.h"

typedef struct StackRow {
        char *stack;
        guint64 bytes, allocs;
} StackRow;

static void row_clear(gpointer p) {
        g_free(((StackRow *) p)->stack);
}

static int row_cmp(gconstpointer a, gconstpointer b) {
        const StackRow *x = a, *y = b;
        if (x->bytes != y->bytes)
                return x->bytes > y->bytes ? -1 : 1;
        return strcmp(x->stack, y->stack);
}

static int row_stack_cmp(gconstpointer a, gconstpointer b) {
        return strcmp(((const StackRow *) a)->stack, ((const StackRow *) b)->stack);
}

/* One table: the stacks of g by bytes, the same frames in several
 * processes as one row. */
static void print_table(FILE *out, ReportCallGraph *g, const char *title, guint limit) {
        g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(StackRow));
        g_array_set_clear_func(rows, row_clear);
        for (guint i = 0; i < g->stacks->len; i++) {
                const ReportStack *s = g_ptr_array_index(g->stacks, i);
                StackRow r = { s->n ? report_folded_stack(g, s) : g_strdup("[no stack]"), s->count, s->events };
                g_array_append_val(rows, r);
        }
        g_array_sort(rows, row_stack_cmp);
        guint n = 0;
        for (guint i = 0; i < rows->len; i++) {
                StackRow *r = &g_array_index(rows, StackRow, i);
                if (n && strcmp(r->stack, g_array_index(rows, StackRow, n - 1).stack) == 0) {
                        g_array_index(rows, StackRow, n - 1).bytes += r->bytes;
                        g_array_index(rows, StackRow, n - 1).allocs += r->allocs;
                        continue;
                }
                StackRow *to = &g_array_index(rows, StackRow, n++);
                if (to != r) {
                        g_free(to->stack);
                        *to = *r;
                        r->stack = NULL;
                }
        }
        g_array_set_size(rows, n);
        g_array_sort(rows, row_cmp);

        fprintf(out, "\n%s, by call stack (outermost first):\n%12s %8s  %s\n", title, "BYTES", "ALLOCS", "STACK");
        for (guint i = 0; i < rows->len && i < limit; i++) {
                const StackRow *r = &g_array_index(rows, StackRow, i);
                fprintf(out, "%12" G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT "  %s\n", r->bytes, r->allocs, r->stack);
        }
        if (rows->len == 0)
                fprintf(out, "%12s %8s  (none)\n", "0", "0");
        else if (rows->len > limit)
                fprintf(out,
                        "%12s %8s  (%u more stack%s; --tree or --flamegraph with --leaked/--temporary show them all)\n",
                        "", "", rows->len - limit, rows->len - limit == 1 ? "" : "s");
}

void report_print_memory_stacks(FILE *out, ReportProfile *p, const ReportFilter *filter, guint limit) {
        static const struct {
                ReportWeight weight;
                const char *title;
        } tables[] = {
                { REPORT_WEIGHT_LEAKED_BYTES, "Bytes leaked (still live at the end)" },
                { REPORT_WEIGHT_TEMPORARY_BYTES, "Bytes of short-lived temporaries" },
        };
        ReportFilter f = *filter;
        f.process_root = f.folded_process_root = FALSE; /* the stacks alone */
        f.groups = NULL;
        ReportWeight weight = p->weight;
        for (gsize i = 0; i < G_N_ELEMENTS(tables); i++) {
                report_profile_reweigh(p, tables[i].weight);
                g_autoptr(ReportCallGraph) g = report_callgraph_new(p, &f, FALSE);
                print_table(out, g, tables[i].title, limit);
        }
        report_profile_reweigh(p, weight);
}
