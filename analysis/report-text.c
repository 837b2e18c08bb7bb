/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-text.c: text outputs of `periscope report`. */
#include "report-text.h"

#include <string.h>

static double pct(guint64 part, guint64 whole) {
        return whole ? 100.0 * (double) part / (double) whole : 0.0;
}

/* A count as the views print it: samples or bytes as a number, off-CPU
 * nanoseconds as a time ("1.002s", "12.3ms", "450us"). */
static const char *count_text(const ReportCallGraph *g, guint64 v, char buf[24]) {
        if (g->profile->weight != REPORT_WEIGHT_OFF_CPU_NS)
                snprintf(buf, 24, "%" G_GUINT64_FORMAT, v);
        else if (v >= 1000000000ull)
                snprintf(buf, 24, "%.3fs", (double) v / 1e9);
        else if (v >= 1000000ull)
                snprintf(buf, 24, "%.1fms", (double) v / 1e6);
        else
                snprintf(buf, 24, "%.0fus", (double) v / 1e3);
        return buf;
}

static const char *label_text(const ReportCallGraph *g, guint id) {
        return report_labels_get(g->labels, id)->text;
}

/* TRUE the first time a mapping (pid, range, file) is seen: a table may
 * record one more than once (one record per lookup). */
static gboolean mapping_first_time(GHashTable *seen, const SymbolMapping *m) {
        char *key = g_strdup_printf("%d %" G_GINT64_MODIFIER "x %" G_GINT64_MODIFIER "x %s", m->pid, (guint64) m->start,
                                    (guint64) m->end, m->path ? m->path : "");
        return g_hash_table_add(seen, key);
}

void report_print_summary(FILE *out, const ReportProfile *p, const ReportCallGraph *g) {
        g_autofree char *path = report_printable(p->path);
        fprintf(out, "Capture: %s\n", path);
        if (report_weight_is_memory(p->weight)) {
                g_autofree char *human = g_format_size_full(g->n_samples, G_FORMAT_SIZE_IEC_UNITS);
                const char *what = p->weight == REPORT_WEIGHT_LEAKED_BYTES ? "Leaked (never freed)"
                                   : p->weight == REPORT_WEIGHT_TEMPORARY_BYTES
                                           ? "Short-lived temporaries (freed before their thread allocated again)"
                                           : "Allocated";
                fprintf(out, "%s: %" G_GUINT64_FORMAT " bytes (%s; trees and tables weigh call sites by bytes)", what,
                        g->n_samples, human);
        } else if (p->weight == REPORT_WEIGHT_OFF_CPU_NS) {
                g_autofree char *t = report_format_ns(g->n_samples);
                guint64 waits = 0;
                for (guint i = 0; i < g->stacks->len; i++)
                        waits += ((const ReportStack *) g_ptr_array_index(g->stacks, i))->events;
                fprintf(out, "Blocked (off the CPU, with a stack): %s in %" G_GUINT64_FORMAT " waits", t, waits);
        } else
                fprintf(out, "Samples: %" G_GUINT64_FORMAT, g->n_samples);
        if (g->n_samples != p->n_samples) {
                g_autofree char *t = report_format_ns(p->n_samples);
                if (p->weight == REPORT_WEIGHT_OFF_CPU_NS)
                        fprintf(out, " (of %s in the capture)", t);
                else
                        fprintf(out, " (of %" G_GUINT64_FORMAT " in the capture)", p->n_samples);
        }
        fprintf(out, " in %u process%s\n", g_hash_table_size(g->pids_seen),
                g_hash_table_size(g->pids_seen) == 1 ? "" : "es");
        if (p->symbols)
                fprintf(out, "Symbols: %s\n",
                        symbol_table_get_kind(p->symbols) == SYMBOL_TABLE_PERISCOPE
                                ? "embedded Periscope table (inline frames, source lines)"
                        : symbol_table_get_kind(p->symbols) == SYMBOL_TABLE_SYSPROF_GZ
                                ? "embedded Sysprof 45+ table (__symbols__.gz)"
                                : "embedded Sysprof table (__symbols__)");
        else {
                g_autofree char *why = report_printable(p->symbols_error);
                fprintf(out, "Symbols: none (%s); addresses shown as module+offset\n", why);
        }
        if (p->symbols && symbol_table_get_n_mappings(p->symbols)) {
                size_t n_records = symbol_table_get_n_mappings(p->symbols), n = 0, verified = 0, shown = 0,
                       helper_failed = 0;
                g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
                g_autofree gboolean *first = g_new0(gboolean, n_records);
                for (size_t i = 0; i < n_records; i++) {
                        const SymbolMapping *m = symbol_table_get_mapping(p->symbols, i);
                        if (!(first[i] = mapping_first_time(seen, m)))
                                continue;
                        n++;
                        /* verified: the file that was mapped, and its symbols read from it */
                        if (m->flags & SYMBOL_MAPPING_HELPER_FAILED)
                                helper_failed++;
                        else
                                verified += (m->flags & SYMBOL_MAPPING_VERIFIED) != 0;
                }
                fprintf(out, "Symbol sources: %zu mapping%s, %zu verified as the file that was mapped\n", n,
                        n == 1 ? "" : "s", verified);
                if (helper_failed)
                        fprintf(out, "%zu file%s unresolved: helper failed (the recording's log says why)\n",
                                helper_failed, helper_failed == 1 ? "" : "s");
                for (size_t i = 0; i < n_records && verified < n; i++) {
                        const SymbolMapping *m = symbol_table_get_mapping(p->symbols, i);
                        if (!first[i] ||
                            ((m->flags & SYMBOL_MAPPING_VERIFIED) && !(m->flags & SYMBOL_MAPPING_HELPER_FAILED)))
                                continue;
                        if (shown++ == 5) {
                                fprintf(out, "  … and %zu more; --mappings lists them all\n", n - verified - 5);
                                break;
                        }
                        g_autofree char *file = report_printable(m->path);
                        g_autofree char *verdict = report_printable(m->verdict ? m->verdict : "no verdict recorded");
                        fprintf(out, "  not verified: %s (pid %d): %s\n", file, m->pid, verdict);
                }
        }
        if (p->load_warning) {
                g_autofree char *warning = report_printable(p->load_warning);
                fprintf(out, "Warning: the capture is damaged after some point; reporting what precedes it: %s\n",
                        warning);
        }
}

typedef struct Row {
        guint id;
        guint64 self, total;
} Row;

static int row_cmp_self(gconstpointer a, gconstpointer b, gpointer g) {
        const Row *x = a, *y = b;
        if (x->self != y->self)
                return x->self > y->self ? -1 : 1;
        if (x->total != y->total)
                return x->total > y->total ? -1 : 1;
        return strcmp(label_text(g, x->id), label_text(g, y->id));
}

static int row_cmp_total(gconstpointer a, gconstpointer b, gpointer g) {
        const Row *x = a, *y = b;
        if (x->total != y->total)
                return x->total > y->total ? -1 : 1;
        if (x->self != y->self)
                return x->self > y->self ? -1 : 1;
        return strcmp(label_text(g, x->id), label_text(g, y->id));
}

void report_print_hottest(FILE *out, const ReportCallGraph *g, guint limit) {
        g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(Row));
        for (guint id = 0; id < report_labels_count(g->labels); id++) {
                Row r = { id, g->self[id], g->total[id] };
                if (r.total)
                        g_array_append_val(rows, r);
        }

        g_array_sort_with_data(rows, row_cmp_self, (gpointer) g);
        char a[24], b[24];
        gboolean off_cpu = g->profile->weight == REPORT_WEIGHT_OFF_CPU_NS;
        fprintf(out, off_cpu ? "\nWhere threads blocked, by self time (the innermost frame waited):\n"
                             : "\nHottest functions by self time:\n");
        fprintf(out, "%8s %7s %8s %7s  %s\n", "Self", "Self%", "Total", "Total%", "Function");
        for (guint i = 0, shown = 0; i < rows->len && shown < limit; i++) {
                const Row *r = &g_array_index(rows, Row, i);
                if (!r->self)
                        break;
                fprintf(out, "%8s %6.2f%% %8s %6.2f%%  %s\n", count_text(g, r->self, a), pct(r->self, g->n_samples),
                        count_text(g, r->total, b), pct(r->total, g->n_samples), label_text(g, r->id));
                shown++;
        }

        g_array_sort_with_data(rows, row_cmp_total, (gpointer) g);
        fprintf(out, off_cpu ? "\nWhere threads blocked, by total time (the frame or what it called waited):\n"
                             : "\nHottest functions by total time:\n");
        fprintf(out, "%8s %7s %8s %7s  %s\n", "Total", "Total%", "Self", "Self%", "Function");
        for (guint i = 0; i < rows->len && i < limit; i++) {
                const Row *r = &g_array_index(rows, Row, i);
                fprintf(out, "%8s %6.2f%% %8s %6.2f%%  %s\n", count_text(g, r->total, a), pct(r->total, g->n_samples),
                        count_text(g, r->self, b), pct(r->self, g->n_samples), label_text(g, r->id));
        }
}

static void print_node(FILE *out, const ReportCallGraph *g, const ReportNode *n, guint depth, guint64 min,
                       guint64 *hidden) {
        for (guint i = 0; i < n->children->len; i++) {
                const ReportNode *c = g_ptr_array_index(n->children, i);
                if (c->total < min) {
                        (*hidden)++;
                        continue;
                }
                char a[24], b[24];
                fprintf(out, "%6.2f%% %8s %8s  %*s%s\n", pct(c->total, g->n_samples), count_text(g, c->total, a),
                        count_text(g, c->self, b), (int) (depth * 2), "", label_text(g, c->label));
                print_node(out, g, c, depth + 1, min, hidden);
        }
}

void report_print_tree(FILE *out, const ReportCallGraph *g, double min_percent) {
        guint64 min = (guint64) (min_percent / 100.0 * (double) g->n_samples + 0.999999);
        guint64 hidden = 0;
        if (min == 0)
                min = 1;
        fprintf(out, "\nCall tree (from entry points down");
        if (min_percent > 0)
                fprintf(out, "; nodes under %.2f%% hidden", min_percent);
        fprintf(out, "):\n%7s %8s %8s  %s\n", "Total%", "Total", "Self", "Function");
        print_node(out, g, g->root, 0, min, &hidden);
        if (hidden)
                fprintf(out, "(%" G_GUINT64_FORMAT " smaller node%s hidden; --min-percent 0 shows all)\n", hidden,
                        hidden == 1 ? "" : "s");
}

typedef struct Neighbour {
        guint id; /* G_MAXUINT: none */
        guint64 count;
} Neighbour;

static int neighbour_cmp(gconstpointer a, gconstpointer b, gpointer g) {
        const Neighbour *x = a, *y = b;
        if (x->count != y->count)
                return x->count > y->count ? -1 : 1;
        if (x->id == G_MAXUINT || y->id == G_MAXUINT)
                return x->id == G_MAXUINT ? -1 : 1;
        return strcmp(label_text(g, x->id), label_text(g, y->id));
}

static void suggest(const ReportCallGraph *g, const char *name) {
        g_autofree char *needle = g_utf8_casefold(name, -1);
        guint shown = 0;
        for (guint id = 0; id < report_labels_count(g->labels) && shown < 10; id++) {
                const char *t = label_text(g, id);
                g_autofree char *hay = g_utf8_casefold(t, -1);
                if (strstr(hay, needle)) {
                        if (!shown++)
                                fprintf(stderr, "Functions with similar names:\n");
                        fprintf(stderr, "  %s\n", t);
                }
        }
}

gboolean report_print_neighbours(FILE *out, const ReportCallGraph *g, const char *name, gboolean callers) {
        g_autoptr(GArray) targets = report_callgraph_find(g, name);
        if (targets->len == 0) {
                fprintf(stderr, "periscope report: no function named '%s' in the selected samples.\n", name);
                suggest(g, name);
                return FALSE;
        }
        guint64 total = 0;
        g_autoptr(GHashTable) counts = report_callgraph_neighbours(g, targets, callers, &total);
        g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(Neighbour));
        GHashTableIter it;
        gpointer k, v;
        g_hash_table_iter_init(&it, counts);
        while (g_hash_table_iter_next(&it, &k, &v)) {
                Neighbour n = { k ? GPOINTER_TO_UINT(k) - 1 : G_MAXUINT, *(guint64 *) v };
                g_array_append_val(rows, n);
        }
        g_array_sort_with_data(rows, neighbour_cmp, (gpointer) g);

        fprintf(out, "\n%s of %s: %" G_GUINT64_FORMAT " %s (%.2f%% of all)\n", callers ? "Callers" : "Callees", name,
                total, report_callgraph_unit(g, total), pct(total, g->n_samples));
        fprintf(out, "%8s %7s  %s\n", g->profile->weight == REPORT_WEIGHT_SAMPLES ? "Samples" : "Bytes", "Percent",
                callers ? "Caller" : "Callee");
        for (guint i = 0; i < rows->len; i++) {
                const Neighbour *n = &g_array_index(rows, Neighbour, i);
                const char *what = n->id != G_MAXUINT ? label_text(g, n->id) : callers ? "(entry point)" : "(self)";
                fprintf(out, "%8" G_GUINT64_FORMAT " %6.2f%%  %s\n", n->count, pct(n->count, total), what);
        }
        return TRUE;
}

static void append_folded_frame(GString *str, const char *text) {
        if (str->len)
                g_string_append_c(str, ';');
        gsize at = str->len;
        g_string_append(str, text);
        for (gsize j = at; j < str->len; j++)
                if (str->str[j] == ';')
                        str->str[j] = ':';
}

char *report_folded_stack(ReportCallGraph *g, const ReportStack *s) {
        GString *str = g_string_new(NULL);
        guint roots[REPORT_MAX_ROOTS], n_roots = report_callgraph_roots(g, s->pid, s->thread, TRUE, roots);
        for (guint i = 0; i < n_roots; i++)
                append_folded_frame(str, label_text(g, roots[i]));
        for (guint i = 0; i < s->n; i++)
                append_folded_frame(str, label_text(g, s->ids[i]));
        return g_string_free(str, FALSE);
}

typedef struct FoldedLine {
        char *stack;
        guint64 count;
} FoldedLine;

static int folded_cmp(gconstpointer a, gconstpointer b) {
        return strcmp(((const FoldedLine *) a)->stack, ((const FoldedLine *) b)->stack);
}

void report_print_folded(FILE *out, ReportCallGraph *g) {
        g_autoptr(GArray) lines = g_array_new(FALSE, FALSE, sizeof(FoldedLine));
        for (guint i = 0; i < g->stacks->len; i++) {
                const ReportStack *s = g_ptr_array_index(g->stacks, i);
                if (s->n == 0)
                        continue;
                FoldedLine l = { report_folded_stack(g, s), s->count };
                g_array_append_val(lines, l);
        }
        g_array_sort(lines, folded_cmp);
        /* The same frames in several processes make one line (without
         * process roots). */
        for (guint i = 0; i < lines->len; i++) {
                FoldedLine *l = &g_array_index(lines, FoldedLine, i);
                guint64 count = l->count;
                while (i + 1 < lines->len && strcmp(l->stack, g_array_index(lines, FoldedLine, i + 1).stack) == 0) {
                        count += g_array_index(lines, FoldedLine, i + 1).count;
                        g_free(g_array_index(lines, FoldedLine, i + 1).stack);
                        i++;
                }
                fprintf(out, "%s %" G_GUINT64_FORMAT "\n", l->stack, count);
                g_free(l->stack);
        }
}

void report_print_mappings(FILE *out, const ReportProfile *p, const ReportCallGraph *g) {
        fprintf(out, "\nSymbol sources:\n");
        if (!p->symbols || symbol_table_get_kind(p->symbols) != SYMBOL_TABLE_PERISCOPE) {
                fprintf(out,
                        "  (the capture has no Periscope symbol table; Sysprof's __symbols__ does not record them)\n");
                return;
        }
        size_t shown = 0;
        g_autoptr(GHashTable) listed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        for (size_t i = 0; i < symbol_table_get_n_mappings(p->symbols); i++) {
                const SymbolMapping *m = symbol_table_get_mapping(p->symbols, i);
                if (!g_hash_table_contains(g->pids_seen, GINT_TO_POINTER(m->pid)))
                        continue;
                if (!mapping_first_time(listed, m))
                        continue;
                shown++;
                g_autofree char *path = report_printable(m->path);
                g_autofree char *method = report_printable(m->method ? m->method : "?");
                g_autofree char *verdict = report_printable(m->verdict ? m->verdict : "no verdict recorded");
                g_autofree char *build_id = report_printable(m->build_id ? m->build_id : "none");
                fprintf(out, "  pid %d  0x%" G_GINT64_MODIFIER "x-0x%" G_GINT64_MODIFIER "x  %s\n", m->pid,
                        (guint64) m->start, (guint64) m->end, path);
                fprintf(out, "    found by %s; %s: %s; build-id %s\n", method,
                        (m->flags & SYMBOL_MAPPING_VERIFIED) ? "verified" : "NOT verified", verdict, build_id);
        }
        if (!shown)
                fprintf(out, "  (no mapping records for the selected processes)\n");
}

typedef struct ProcessRow {
        int32_t pid;
        guint64 count;
        guint top; /* label with the most self samples, G_MAXUINT: none */
        guint64 top_self;
} ProcessRow;

static int process_row_cmp(gconstpointer a, gconstpointer b) {
        const ProcessRow *x = a, *y = b;
        if (x->count != y->count)
                return x->count > y->count ? -1 : 1;
        return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The first max_chars characters of a printable copy of s, "…" if cut. */
static char *shortened(const char *s, glong max_chars) {
        g_autofree char *p = report_printable(s);
        if (g_utf8_strlen(p, -1) <= max_chars)
                return g_steal_pointer(&p);
        g_autofree char *cut = g_utf8_substring(p, 0, max_chars - 1);
        return g_strconcat(cut, "…", NULL);
}

/* Adds count to the self count of leaf within a group (key: the group and
 * the leaf label), and makes leaf the group's top function when it leads
 * (a tie goes to the name first in order). */
static void group_note_self(const ReportCallGraph *g, GHashTable *self, gint64 key, guint leaf, guint64 count,
                            guint64 *top_self, guint *top) {
        guint64 *c = g_hash_table_lookup(self, &key);
        if (!c) {
                c = g_new0(guint64, 1);
                g_hash_table_insert(self, g_memdup2(&key, sizeof(key)), c);
        }
        *c += count;
        const char *text = label_text(g, leaf);
        if (*c > *top_self || (*c == *top_self && *top != G_MAXUINT && strcmp(text, label_text(g, *top)) < 0)) {
                *top_self = *c;
                *top = leaf;
        }
}

/* The rows (values of rows, each size bytes) in an array, to sort. */
static GArray *rows_array(GHashTable *rows, guint size) {
        GArray *a = g_array_new(FALSE, FALSE, size);
        GHashTableIter it;
        gpointer v;
        g_hash_table_iter_init(&it, rows);
        while (g_hash_table_iter_next(&it, NULL, &v))
                g_array_append_vals(a, v, 1);
        return a;
}

/* A row's last column: its top function and that one's share of the row. */
static void print_top(FILE *out, const ReportCallGraph *g, guint top, guint64 top_self, guint64 count) {
        if (top != G_MAXUINT)
                fprintf(out, "%s (%.2f%%)\n", label_text(g, top), pct(top_self, count));
        else
                fprintf(out, "(no frames)\n");
}

/* "(N more processes; --limit N shows more)" when limit cut n rows. */
static void print_more(FILE *out, guint n, guint limit, const char *what, const char *plural) {
        if (n > limit)
                fprintf(out, "(%u more %s%s; --limit N shows more)\n", n - limit, what, n - limit == 1 ? "" : plural);
}

void report_print_by_process(FILE *out, const ReportCallGraph *g, guint limit) {
        /* (pid, innermost label) → self count, and pid → count */
        g_autoptr(GHashTable) rows = g_hash_table_new_full(NULL, NULL, NULL, g_free);
        g_autoptr(GHashTable) self = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
        for (guint i = 0; i < g->stacks->len; i++) {
                const ReportStack *s = g_ptr_array_index(g->stacks, i);
                ProcessRow *r = g_hash_table_lookup(rows, GINT_TO_POINTER(s->pid));
                if (!r) {
                        r = g_new0(ProcessRow, 1);
                        r->pid = s->pid;
                        r->top = G_MAXUINT;
                        g_hash_table_insert(rows, GINT_TO_POINTER(s->pid), r);
                }
                r->count += s->count;
                if (!s->n)
                        continue;
                group_note_self(g, self, (gint64) (((guint64) (guint32) s->pid << 32) | s->ids[s->n - 1]),
                                s->ids[s->n - 1], s->count, &r->top_self, &r->top);
        }
        g_autoptr(GArray) sorted = rows_array(rows, sizeof(ProcessRow));
        g_array_sort(sorted, process_row_cmp);

        gboolean bytes = g->profile->weight == REPORT_WEIGHT_ALLOCATED_BYTES;
        gboolean blocked = g->profile->weight == REPORT_WEIGHT_OFF_CPU_NS;
        char c[24];
        fprintf(out, "\nProcesses by %s:\n", bytes ? "allocated bytes" : blocked ? "time blocked" : "samples");
        fprintf(out, "%8s %10s %7s  %-32s  %s\n", "PID",
                bytes     ? "Bytes"
                : blocked ? "Blocked"
                          : "Samples",
                "Share", "Command", "Top function (self, share of the process)");
        for (guint i = 0; i < sorted->len && i < limit; i++) {
                const ProcessRow *r = &g_array_index(sorted, ProcessRow, i);
                /* the program's name, then its arguments: a long path would hide both */
                const char *cmdline = g_hash_table_lookup(g->profile->cmdlines, GINT_TO_POINTER(r->pid));
                const char *args = cmdline ? strchr(cmdline, ' ') : NULL;
                g_autofree char *whole =
                        g_strconcat(report_profile_get_comm(g->profile, r->pid), args ? args : "", NULL);
                g_autofree char *cmd = shortened(*whole ? whole : "?", 32);
                fprintf(out, "%8d %10s %6.2f%%  %s%*s  ", r->pid, count_text(g, r->count, c),
                        pct(r->count, g->n_samples), cmd, (int) (32 - MIN(g_utf8_strlen(cmd, -1), 32)), "");
                print_top(out, g, r->top, r->top_self, r->count);
        }
        print_more(out, sorted->len, limit, "process", "es");
}

typedef struct ThreadRow {
        guint32 thread; /* index into ReportProfile.threads */
        guint64 count;
        guint top; /* label with the most self samples, G_MAXUINT: none */
        guint64 top_self;
} ThreadRow;

static int thread_row_cmp(gconstpointer a, gconstpointer b, gpointer profile) {
        const ThreadRow *x = a, *y = b;
        if (x->count != y->count)
                return x->count > y->count ? -1 : 1;
        const ReportProfile *p = profile;
        const ReportThread *tx = g_ptr_array_index(p->threads, x->thread),
                           *ty = g_ptr_array_index(p->threads, y->thread);
        if (tx->tid != ty->tid)
                return tx->tid < ty->tid ? -1 : 1;
        return strcmp(tx->name, ty->name);
}

void report_print_by_thread(FILE *out, const ReportCallGraph *g, guint limit) {
        /* (thread, innermost label) → self count, and thread → row */
        g_autoptr(GHashTable) rows = g_hash_table_new_full(NULL, NULL, NULL, g_free);
        g_autoptr(GHashTable) self = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
        for (guint i = 0; i < g->stacks->len; i++) {
                const ReportStack *s = g_ptr_array_index(g->stacks, i);
                ThreadRow *r = g_hash_table_lookup(rows, GUINT_TO_POINTER(s->thread + 1));
                if (!r) {
                        r = g_new0(ThreadRow, 1);
                        r->thread = s->thread;
                        r->top = G_MAXUINT;
                        g_hash_table_insert(rows, GUINT_TO_POINTER(s->thread + 1), r);
                }
                r->count += s->count;
                if (!s->n)
                        continue;
                group_note_self(g, self, (gint64) (((guint64) s->thread << 32) | s->ids[s->n - 1]), s->ids[s->n - 1],
                                s->count, &r->top_self, &r->top);
        }
        g_autoptr(GArray) sorted = rows_array(rows, sizeof(ThreadRow));
        g_array_sort_with_data(sorted, thread_row_cmp, (gpointer) g->profile);

        gboolean bytes = g->profile->weight == REPORT_WEIGHT_ALLOCATED_BYTES;
        gboolean blocked = g->profile->weight == REPORT_WEIGHT_OFF_CPU_NS;
        char c[24];
        fprintf(out, "\nThreads by %s:\n", bytes ? "allocated bytes" : blocked ? "time blocked" : "samples");
        fprintf(out, "%10s %7s %8s %8s  %-16s  %-16s  %s\n",
                bytes     ? "Bytes"
                : blocked ? "Blocked"
                          : "Samples",
                "Share", "TID", "PID", "Thread", "Process", "Top function (self, share of the thread)");
        for (guint i = 0; i < sorted->len && i < limit; i++) {
                const ThreadRow *r = &g_array_index(sorted, ThreadRow, i);
                const ReportThread *t = g_ptr_array_index(g->profile->threads, r->thread);
                const char *comm = report_profile_get_comm(g->profile, t->pid);
                g_autofree char *name = shortened(t->name, 16);
                g_autofree char *process = shortened(*comm ? comm : "?", 16);
                fprintf(out, "%10s %6.2f%% %8d %8d  %s%*s  %s%*s  ", count_text(g, r->count, c),
                        pct(r->count, g->n_samples), t->tid, t->pid, name,
                        (int) (16 - MIN(g_utf8_strlen(name, -1), 16)), "", process,
                        (int) (16 - MIN(g_utf8_strlen(process, -1), 16)), "");
                print_top(out, g, r->top, r->top_self, r->count);
        }
        print_more(out, sorted->len, limit, "thread", "s");
}
