/* cmd-report.c: `periscope report FILE`: where the time went in a capture
 * (ours or Sysprof's): hottest functions, call tree, callers/callees,
 * folded stacks and an SVG flame graph. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "commands.h"
#include "report-callgraph.h"
#include "report-containers.h"
#include "report-extras.h"
#include "report-flamegraph.h"
#include "report-labels.h"
#include "report-profile.h"
#include "report-text.h"

typedef struct ReportOptions {
        gboolean tree;
        char *callers;
        char *callees;
        char **pids;
        char **comms;
        char *flamegraph;
        gboolean folded;
        int limit;
        double min_percent;
        gboolean no_progress;
        gboolean mappings;
        gboolean lines;
        gboolean by_container;
        gboolean marks, counters, memory; /* report-extras.h */
        char *timeline;
} ReportOptions;

static void options_clear(ReportOptions *o) {
        g_free(o->callers);
        g_free(o->callees);
        g_strfreev(o->pids);
        g_strfreev(o->comms);
        g_free(o->flamegraph);
        g_free(o->timeline);
}

/* "--pid 1,2 --pid 3" → int32_t array; FALSE on anything that is not a pid. */
static gboolean parse_pids(char **args, GArray *out) {
        for (char **a = args; a && *a; a++) {
                g_auto(GStrv) parts = g_strsplit(*a, ",", -1);
                for (char **p = parts; *p; p++) {
                        char *end = NULL;
                        errno = 0;
                        long v = strtol(*p, &end, 10);
                        if (errno || end == *p || *end || v < 0 || v > G_MAXINT32) {
                                fprintf(stderr, "periscope report: --pid: '%s' is not a process id\n", *p);
                                return FALSE;
                        }
                        int32_t pid = (int32_t) v;
                        g_array_append_val(out, pid);
                }
        }
        return TRUE;
}

int cmd_report(int argc, char **argv) {
        ReportOptions o = { .limit = 25, .min_percent = 0.5 };
        GOptionEntry entries[] = {
                { "tree", 't', 0, G_OPTION_ARG_NONE, &o.tree, "Show the call tree from the entry points down", NULL },
                { "callers", 0, 0, G_OPTION_ARG_STRING, &o.callers, "Show who calls FUNCTION", "FUNCTION" },
                { "callees", 0, 0, G_OPTION_ARG_STRING, &o.callees, "Show what FUNCTION calls", "FUNCTION" },
                { "pid", 'p', 0, G_OPTION_ARG_STRING_ARRAY, &o.pids, "Only samples of these processes (repeatable, or comma-separated)", "PID" },
                { "comm", 'c', 0, G_OPTION_ARG_STRING_ARRAY, &o.comms, "Only samples of processes with this name (repeatable)", "NAME" },
                { "flamegraph", 'f', 0, G_OPTION_ARG_FILENAME, &o.flamegraph, "Write an interactive SVG flame graph to FILE", "FILE" },
                { "folded", 0, 0, G_OPTION_ARG_NONE, &o.folded, "Print folded stacks (\"outer;...;inner COUNT\") for other tools", NULL },
                { "limit", 'n', 0, G_OPTION_ARG_INT, &o.limit, "Functions listed in the hottest tables (default 25)", "N" },
                { "min-percent", 0, 0, G_OPTION_ARG_DOUBLE, &o.min_percent, "Hide call tree nodes under this share of samples (default 0.5)", "PERCENT" },
                { "lines", 'l', 0, G_OPTION_ARG_NONE, &o.lines, "One frame per source line: \"function at file:line\" where the symbols have lines", NULL },
                { "mappings", 0, 0, G_OPTION_ARG_NONE, &o.mappings, "List where each mapping's symbols came from and how the file was verified", NULL },
                { "no-progress", 0, 0, G_OPTION_ARG_NONE, &o.no_progress, "Never draw a progress bar", NULL },
                { "by-container", 0, 0, G_OPTION_ARG_NONE, &o.by_container, "Samples grouped by Podman container or Flatpak app", NULL },
                { "marks", 0, 0, G_OPTION_ARG_NONE, &o.marks, "Summarize marks (by group and name, with durations) and logs", NULL },
                { "counters", 0, 0, G_OPTION_ARG_NONE, &o.counters, "Summarize every counter: samples, min, mean, max, last", NULL },
                { "timeline", 0, 0, G_OPTION_ARG_FILENAME, &o.timeline, "Write counters over time with the marks as an SVG to FILE", "FILE" },
                { "memory", 0, 0, G_OPTION_ARG_NONE, &o.memory, "Allocations by call site: leaks, temporaries, peak (from `record --memory`)", NULL },
                { NULL },
        };
        g_autoptr(GOptionContext) ctx = g_option_context_new("FILE - show where the time went in a capture");
        g_option_context_add_main_entries(ctx, entries, NULL);
        g_option_context_set_description(ctx,
                "Reads captures written by periscope or by Sysprof. Without options, prints the\n"
                "hottest functions by self and total time. Inlined functions appear as frames\n"
                "marked \"(inlined)\", kernel functions are marked \"[kernel]\", and addresses\n"
                "without symbols show as module+0xoffset.");
        g_autoptr(GError) error = NULL;
        g_autofree char *prgname = g_strdup("periscope report");
        char *saved = argv[0];
        argv[0] = prgname;
        gboolean ok = g_option_context_parse(ctx, &argc, &argv, &error);
        argv[0] = saved;
        if (!ok) {
                fprintf(stderr, "periscope report: %s\nRun `periscope report --help` for the options.\n", error->message);
                options_clear(&o);
                return 2;
        }
        if (argc != 2) {
                fprintf(stderr, "periscope report: expected one capture file, got %d arguments\n"
                                "Usage: periscope report [OPTIONS…] FILE\n", argc - 1);
                options_clear(&o);
                return 2;
        }
        if (o.limit <= 0 || o.min_percent < 0 || o.min_percent > 100) {
                fprintf(stderr, "periscope report: --limit must be positive and --min-percent within 0-100\n");
                options_clear(&o);
                return 2;
        }
        g_autoptr(GArray) pids = g_array_new(FALSE, FALSE, sizeof(int32_t));
        if (!parse_pids(o.pids, pids)) {
                options_clear(&o);
                return 2;
        }

        const char *path = argv[1];
        if (o.by_container) {
                gboolean done = report_print_by_container(stdout, path, &error);
                if (!done)
                        fprintf(stderr, "periscope report: %s\n", error->message);
                options_clear(&o);
                return done ? 0 : 1;
        }
        if (o.marks || o.counters || o.timeline || o.memory) {
                int k = report_extras_path(path, o.marks, o.counters, o.timeline, o.memory, o.limit, stdout);
                options_clear(&o);
                return k < 0 ? 1 : 0;
        }
        g_autoptr(ReportProfile) profile = report_profile_load(path, !o.no_progress, &error);
        if (!profile) {
                fprintf(stderr, "periscope report: %s\n", error->message);
                options_clear(&o);
                return 1;
        }
        ReportFilter filter = { .pids = pids, .comms = o.comms, .lines = o.lines };
        g_autoptr(ReportCallGraph) graph = report_callgraph_new(profile, &filter, !o.no_progress);

        int status = 0;
        if (o.folded) {
                /* Machine output: nothing else on stdout. */
                report_print_folded(stdout, graph);
        } else {
                report_print_summary(stdout, profile, graph);
                g_autoptr(GError) cerror = NULL;
                if (!report_print_process_containers(stdout, path, &cerror))
                        fprintf(stderr, "periscope report: warning: %s\n", cerror->message);
                if (graph->n_samples == 0) {
                        if (profile->n_samples == 0)
                                printf("\nThe capture holds no samples.\n");
                        else
                                printf("\nNo samples match --pid/--comm (the capture has %" G_GUINT64_FORMAT
                                       " samples; `periscope info %s` lists its processes).\n",
                                       profile->n_samples, path);
                }
                gboolean specific = o.tree || o.callers || o.callees || o.flamegraph || o.mappings;
                if (!specific && graph->n_samples)
                        report_print_hottest(stdout, graph, (guint) o.limit);
                if (o.mappings)
                        report_print_mappings(stdout, profile, graph);
                if (o.tree && graph->n_samples)
                        report_print_tree(stdout, graph, o.min_percent);
                if (o.callers && !report_print_neighbours(stdout, graph, o.callers, TRUE))
                        status = 1;
                if (o.callees && !report_print_neighbours(stdout, graph, o.callees, FALSE))
                        status = 1;
        }
        if (o.flamegraph) {
                g_autofree char *raw_base = g_path_get_basename(path);
                g_autofree char *base = report_printable(raw_base);
                g_autofree char *title = g_strdup_printf("Flame graph of %s (%" G_GUINT64_FORMAT " samples)", base,
                                                         graph->n_samples);
                if (!report_write_flamegraph(graph, o.flamegraph, title, &error)) {
                        fprintf(stderr, "periscope report: cannot write the flame graph: %s\n", error->message);
                        status = 1;
                } else if (!o.folded)
                        printf("\nFlame graph written to %s (open it in a web browser).\n", o.flamegraph);
        }
        fflush(stdout);
        if (ferror(stdout)) {
                fprintf(stderr, "periscope report: cannot write the report: %s\n", g_strerror(errno));
                status = 1;
        }
        options_clear(&o);
        return status;
}
