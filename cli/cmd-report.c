/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-report.c: `periscope report FILE`: where the time went in a capture
 * (ours or Sysprof's): hottest functions, processes, call tree,
 * callers/callees, folded stacks, an SVG flame graph, and the comparison of
 * two captures (--diff). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "commands.h"
#include "id-args.h"
#include "output-file.h"
#include "analysis.h"

typedef struct ReportOptions {
        gboolean tree;
        char *callers;
        char *callees;
        char **pids;
        char **tids;
        char **comms;
        char *flamegraph;
        char *flamegraph_to; /* where it is written: flamegraph, or our copy of stdout */
        gboolean folded;
        int limit;
        double min_percent;
        gboolean no_progress;
        gboolean mappings;
        gboolean lines;
        gboolean by_container;
        gboolean by_process;
        gboolean by_thread;
        gboolean process_root, no_process_root, thread_root;
        gboolean marks, counters, memory; /* report-extras.h */
        gboolean leaked, temporary;       /* which allocations the stack views weigh */
        gboolean off_cpu, wall;           /* report-off-cpu.h: blocked time by stack, time per thread */
        char *timeline;
        char *title;
        int width;
        gboolean inverted;
        gboolean diff;
} ReportOptions;

static void options_clear(ReportOptions *o) {
        g_free(o->callers);
        g_free(o->callees);
        g_strfreev(o->pids);
        g_strfreev(o->tids);
        g_strfreev(o->comms);
        g_free(o->flamegraph);
        g_free(o->flamegraph_to);
        g_free(o->timeline);
        g_free(o->title);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(ReportOptions, options_clear)

/* --min-percent's value before parsing: tells whether it was given. */
#define MIN_PERCENT_UNSET (-1e300)

/* Usage errors of the option values and their combinations: FALSE after
 * saying what is wrong. */
static gboolean options_valid(const ReportOptions *o, int n_files) {
        if (o->limit <= 0) {
                fprintf(stderr, "periscope report: --limit must be a positive number of rows (got %d)\n", o->limit);
                return FALSE;
        }
        if (o->min_percent != MIN_PERCENT_UNSET && !o->tree) {
                fprintf(stderr, "periscope report: --min-percent only applies to --tree: add --tree\n");
                return FALSE;
        }
        if (o->min_percent != MIN_PERCENT_UNSET && (o->min_percent < 0 || o->min_percent > 100)) {
                fprintf(stderr, "periscope report: --min-percent must be within 0-100 (got %g)\n", o->min_percent);
                return FALSE;
        }
        if (o->width && (o->width < REPORT_FLAME_MIN_WIDTH || o->width > REPORT_FLAME_MAX_WIDTH)) {
                fprintf(stderr, "periscope report: --width must be %d-%d pixels (got %d)\n", REPORT_FLAME_MIN_WIDTH,
                        REPORT_FLAME_MAX_WIDTH, o->width);
                return FALSE;
        }
        if (o->leaked && o->temporary) {
                fprintf(stderr, "periscope report: --leaked and --temporary weigh different allocations: "
                                "run them as two reports\n");
                return FALSE;
        }
        if (o->process_root && o->no_process_root) {
                fprintf(stderr, "periscope report: --process-root cannot be combined with --no-process-root: "
                                "choose one\n");
                return FALSE;
        }
        const ReportModeOption modes[] = {
                { "--tree", o->tree, REPORT_FAMILY_STACKS },
                { "--callers", o->callers != NULL, REPORT_FAMILY_STACKS },
                { "--callees", o->callees != NULL, REPORT_FAMILY_STACKS },
                { "--mappings", o->mappings, REPORT_FAMILY_STACKS },
                { "--by-process", o->by_process, REPORT_FAMILY_STACKS },
                { "--by-thread", o->by_thread, REPORT_FAMILY_STACKS },
                { "--process-root", o->process_root, REPORT_FAMILY_ROOTS },
                { "--no-process-root", o->no_process_root, REPORT_FAMILY_ROOTS },
                { "--folded", o->folded, REPORT_FAMILY_FOLDED },
                { "--flamegraph", o->flamegraph != NULL, REPORT_FAMILY_FLAME },
                { "--title", o->title != NULL, REPORT_FAMILY_FLAME_LOOK },
                { "--width", o->width != 0, REPORT_FAMILY_FLAME_LOOK },
                { "--inverted", o->inverted, REPORT_FAMILY_FLAME_LOOK },
                { "--marks", o->marks, REPORT_FAMILY_EVENTS },
                { "--counters", o->counters, REPORT_FAMILY_EVENTS },
                { "--timeline", o->timeline != NULL, REPORT_FAMILY_EVENTS },
                { "--memory", o->memory, REPORT_FAMILY_MEMORY },
                { "--leaked", o->leaked, REPORT_FAMILY_MEMORY },
                { "--temporary", o->temporary, REPORT_FAMILY_MEMORY },
                { "--by-container", o->by_container, REPORT_FAMILY_CONTAINER },
                { "--diff", o->diff, REPORT_FAMILY_DIFF },
                { "--lines", o->lines, REPORT_FAMILY_NAMING },
                { "--off-cpu", o->off_cpu, REPORT_FAMILY_OFF_CPU },
                { "--wall", o->wall, REPORT_FAMILY_OFF_CPU },
        };
        if (!report_modes_check(modes, G_N_ELEMENTS(modes)))
                return FALSE;
        const char *look = o->title ? "--title" : o->width ? "--width" : o->inverted ? "--inverted" : NULL;
        if (look && !o->flamegraph) {
                fprintf(stderr, "periscope report: %s only changes how a flame graph looks: add --flamegraph FILE.svg\n",
                        look);
                return FALSE;
        }
        const char *roots = o->process_root      ? "--process-root"
                            : o->no_process_root ? "--no-process-root"
                            : o->thread_root     ? "--thread-root"
                                                 : NULL;
        if (roots && !o->tree && !o->flamegraph && !o->folded) {
                fprintf(stderr, "periscope report: %s shapes --tree, --flamegraph and --folded: add one of them\n", roots);
                return FALSE;
        }
        int want = o->diff ? 2 : 1;
        if (n_files != want) {
                if (o->diff)
                        fprintf(stderr, "periscope report: --diff compares two captures, got %d\n"
                                        "Usage: periscope report --diff [OPTIONS…] BEFORE AFTER\n", n_files);
                else
                        fprintf(stderr, "periscope report: expected one capture file, got %d arguments\n"
                                        "Usage: periscope report [OPTIONS…] FILE\n", n_files);
                return FALSE;
        }
        return TRUE;
}

/* The --pid/--comm selection as a predicate on pids, for the views that
 * read frames one by one; names holds the process names (for --comm). */
typedef struct PidMatch {
        const ReportProfile *names;
        const ReportFilter *filter;
} PidMatch;

static gboolean pid_match(const void *data, int32_t pid) {
        const PidMatch *m = data;
        return report_filter_match(m->names, m->filter, pid);
}

/* Whether the samples that pass the filter come from several processes. */
static gboolean several_processes(const ReportProfile *p, const ReportFilter *f) {
        int32_t first = 0;
        gboolean have = FALSE;
        GHashTableIter it;
        gpointer key;
        g_hash_table_iter_init(&it, p->stacks);
        while (g_hash_table_iter_next(&it, &key, NULL)) {
                const ReportRawStack *raw = key;
                if (!report_filter_match_thread(p, f, raw->pid, raw->tid))
                        continue;
                if (have && raw->pid != first)
                        return TRUE;
                first = raw->pid;
                have = TRUE;
        }
        return FALSE;
}

static int save_file(const char *path, const void *data, size_t size, GError **error) {
        return output_file_write(path, data, size, 0, error);
}

static char *default_title(const char *path, const char *what, const ReportCallGraph *g) {
        g_autofree char *raw_base = g_path_get_basename(path);
        g_autofree char *base = report_printable(raw_base);
        return g_strdup_printf("%s of %s (%" G_GUINT64_FORMAT " %s)", what, base, g->n_samples,
                               report_callgraph_unit(g, g->n_samples));
}

static int write_flamegraph(const ReportOptions *o, const ReportCallGraph *g, const ReportCallGraph *before,
                            const char *title) {
        ReportFlameOptions fo = { .title = o->title ? o->title : title, .width = o->width, .inverted = o->inverted,
                                  .before = before };
        g_autoptr(GError) error = NULL;
        g_autoptr(GString) svg = report_flamegraph_svg(g, &fo);
        if (output_file_write(o->flamegraph_to ? o->flamegraph_to : o->flamegraph, svg->str, svg->len, 0, &error) < 0) {
                fprintf(stderr, "periscope report: cannot write the flame graph: %s\n", error->message);
                return 1;
        }
        if (!o->folded)
                printf("\n%s written to %s (open it in a web browser).\n",
                       before ? "Differential flame graph" : "Flame graph",
                       o->flamegraph_to ? "standard output" : o->flamegraph);
        return 0;
}

/* 1 when the capture at path was damaged and only what precedes the damage
 * was reported (said on stderr, as export and info say it), else 0. */
static int damaged_status(const char *path, const ReportProfile *p) {
        if (!p->load_warning)
                return 0;
        g_autofree char *warning = report_printable(p->load_warning);
        fprintf(stderr, "periscope report: %s is truncated or damaged: %s; reported what precedes it\n", path, warning);
        return 1;
}

/* `--diff BEFORE AFTER [-f DIFF.svg]` */
static int report_diff(const ReportOptions *o, const char *before_path, const char *after_path,
                       const ReportFilter *filter) {
        g_autoptr(GError) error = NULL;
        g_autoptr(ReportProfile) bp = report_profile_load(before_path, REPORT_WEIGHT_SAMPLES, !o->no_progress, &error);
        g_autoptr(ReportProfile) ap = bp ? report_profile_load(after_path, REPORT_WEIGHT_SAMPLES, !o->no_progress, &error)
                                         : NULL;
        if (!ap) {
                fprintf(stderr, "periscope report: %s\n", error->message);
                return 1;
        }
        g_autoptr(ReportCallGraph) before = report_callgraph_new(bp, filter, !o->no_progress);
        g_autoptr(ReportCallGraph) after = report_callgraph_new(ap, filter, !o->no_progress);
        if (o->folded) /* machine output, as FlameGraph's difffolded.pl writes it */
                report_print_folded_diff(stdout, before, after);
        else
                report_print_diff(stdout, before, after, (guint) o->limit);
        if (!o->folded && (!before->n_samples || !after->n_samples))
                printf("\nWarning: %s has no samples%s; every share there is 0.\n",
                       before->n_samples ? "AFTER" : "BEFORE", filter->pids->len || filter->comms ? " that match --pid/--comm" : "");
        int status = damaged_status(before_path, bp) | damaged_status(after_path, ap);
        if (!o->flamegraph)
                return status;
        g_autofree char *title = default_title(after_path, "Differential flame graph", after);
        return write_flamegraph(o, after, before, title) | status;
}

static ReportWeight stacks_weight(const ReportOptions *o) {
        if (o->leaked)
                return REPORT_WEIGHT_LEAKED_BYTES;
        if (o->temporary)
                return REPORT_WEIGHT_TEMPORARY_BYTES;
        if (o->off_cpu)
                return REPORT_WEIGHT_OFF_CPU_NS;
        return o->memory ? REPORT_WEIGHT_ALLOCATED_BYTES : REPORT_WEIGHT_SAMPLES;
}

/* What an empty profile of that weight lacks. */
static const char *empty_profile(ReportWeight w) {
        switch (w) {
        case REPORT_WEIGHT_LEAKED_BYTES:
                return "leaked allocations (every block was freed)";
        case REPORT_WEIGHT_TEMPORARY_BYTES:
                return "short-lived temporaries";
        case REPORT_WEIGHT_ALLOCATED_BYTES:
                return "allocations";
        case REPORT_WEIGHT_OFF_CPU_NS:
                return "blocked waits with a stack (record with --off-cpu)";
        default:
                return "samples";
        }
}

/* The views of the stacks (samples, or bytes with --memory: allocated,
 * --leaked or --temporary). */
static int report_stacks(const ReportOptions *o, ReportProfile *profile, ReportFilter *filter,
                         const ReportPidFilter *pid_filter) {
        const char *path = profile->path;
        ReportWeight weight = profile->weight;
        filter->process_root = o->process_root || (!o->no_process_root && several_processes(profile, filter));
        filter->folded_process_root = o->process_root;
        filter->thread_root = o->thread_root;
        g_autoptr(GHashTable) groups = NULL;
        if (o->by_container) {
                groups = report_containers_by_pid(profile, pid_filter);
                filter->groups = groups;
        }
        g_autoptr(ReportCallGraph) graph = report_callgraph_new(profile, filter, !o->no_progress);

        int status = 0;
        if (o->folded) {
                /* Machine output: nothing else on stdout. */
                report_print_folded(stdout, graph);
        } else {
                if (o->memory || o->by_container)
                        printf("\n"); /* after their own tables */
                report_print_summary(stdout, profile, graph);
                if (o->off_cpu)
                        report_print_off_cpu_summary(stdout, profile, graph);
                if (!o->by_container)
                        report_print_process_containers(stdout, profile, pid_filter);
                if (graph->n_samples == 0) {
                        if (profile->n_samples == 0)
                                printf("\nThe capture holds no %s.\n", empty_profile(weight));
                        else
                                printf("\nNo samples match --pid/--comm/--tid (the capture has %" G_GUINT64_FORMAT
                                       " %s; `periscope info %s` lists its processes).\n",
                                       profile->n_samples, report_profile_unit(profile, profile->n_samples), path);
                }
                gboolean specific = o->tree || o->callers || o->callees || o->flamegraph || o->mappings ||
                                    o->by_process || o->by_thread || o->wall;
                if (o->wall)
                        report_print_wall(stdout, profile, filter, (guint) o->limit);
                if (!specific && graph->n_samples)
                        report_print_hottest(stdout, graph, (guint) o->limit);
                if (o->by_process && graph->n_samples)
                        report_print_by_process(stdout, graph, (guint) o->limit);
                if (o->by_thread && graph->n_samples)
                        report_print_by_thread(stdout, graph, (guint) o->limit);
                if (o->mappings)
                        report_print_mappings(stdout, profile, graph);
                if (o->tree && graph->n_samples)
                        report_print_tree(stdout, graph, o->min_percent);
                if (o->callers && !report_print_neighbours(stdout, graph, o->callers, TRUE))
                        status = 1;
                if (o->callees && !report_print_neighbours(stdout, graph, o->callees, FALSE))
                        status = 1;
        }
        if (o->flamegraph) {
                const char *what = weight == REPORT_WEIGHT_LEAKED_BYTES      ? "Leaked bytes"
                                   : weight == REPORT_WEIGHT_TEMPORARY_BYTES ? "Bytes of short-lived temporaries"
                                   : o->memory                               ? "Allocated bytes"
                                   : o->off_cpu                              ? "Off-CPU time (blocked)"
                                                                             : "Flame graph";
                g_autofree char *title = default_title(path, what, graph);
                status |= write_flamegraph(o, graph, NULL, title);
        }
        return status | damaged_status(path, profile);
}

int cmd_report(int argc, char **argv) {
        g_auto(ReportOptions) o = { .limit = 25, .min_percent = MIN_PERCENT_UNSET };
        GOptionEntry entries[] = {
                { "tree", 't', 0, G_OPTION_ARG_NONE, &o.tree, "Show the call tree from the entry points down", NULL },
                { "callers", 0, 0, G_OPTION_ARG_STRING, &o.callers, "Show who calls FUNCTION", "FUNCTION" },
                { "callees", 0, 0, G_OPTION_ARG_STRING, &o.callees, "Show what FUNCTION calls", "FUNCTION" },
                { "by-process", 0, 0, G_OPTION_ARG_NONE, &o.by_process,
                  "One line per process: samples, share, command, top function", NULL },
                { "by-thread", 0, 0, G_OPTION_ARG_NONE, &o.by_thread,
                  "One line per thread (per name it had): samples, share, tid, pid, thread name, process, top function",
                  NULL },
                { "tid", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o.tids,
                  "Only samples of these threads (repeatable, or comma-separated); every view (marks and counters: of "
                  "their processes)",
                  "TID" },
                { "thread-root", 0, 0, G_OPTION_ARG_NONE, &o.thread_root,
                  "Start the tree, flame graph and folded stacks with one \"name (tid N)\" frame per thread (under the "
                  "process frame if there is one)",
                  NULL },
                { "pid", 'p', 0, G_OPTION_ARG_STRING_ARRAY, &o.pids,
                  "Only samples of these processes (repeatable, or comma-separated); every view", "PID" },
                { "comm", 'c', 0, G_OPTION_ARG_STRING_ARRAY, &o.comms,
                  "Only samples of processes with this name (repeatable); every view", "NAME" },
                { "process-root", 0, 0, G_OPTION_ARG_NONE, &o.process_root,
                  "Start the tree, flame graph and folded stacks with one frame per process (default with several "
                  "processes)",
                  NULL },
                { "no-process-root", 0, 0, G_OPTION_ARG_NONE, &o.no_process_root,
                  "Merge the processes' stacks (the default with one process)", NULL },
                { "flamegraph", 'f', 0, G_OPTION_ARG_FILENAME, &o.flamegraph,
                  "Write an interactive SVG flame graph to FILE", "FILE" },
                { "title", 0, 0, G_OPTION_ARG_STRING, &o.title, "Title of the flame graph", "TEXT" },
                { "width", 0, 0, G_OPTION_ARG_INT, &o.width, "Width of the flame graph in pixels (default 1200)",
                  "PIXELS" },
                { "inverted", 0, 0, G_OPTION_ARG_NONE, &o.inverted,
                  "Draw the flame graph upside down (icicle: roots at the top)", NULL },
                { "folded", 0, 0, G_OPTION_ARG_NONE, &o.folded,
                  "Print folded stacks (\"outer;...;inner COUNT\") for other tools", NULL },
                { "diff", 0, 0, G_OPTION_ARG_NONE, &o.diff,
                  "Compare two captures, BEFORE AFTER: change of each function's self and total share (-f: red/blue "
                  "flame graph)",
                  NULL },
                { "limit", 'n', 0, G_OPTION_ARG_INT, &o.limit,
                  "Rows in the hottest, process and diff tables (default 25)", "N" },
                { "min-percent", 0, 0, G_OPTION_ARG_DOUBLE, &o.min_percent,
                  "Hide call tree nodes under this share of samples (default 0.5)", "PERCENT" },
                { "lines", 'l', 0, G_OPTION_ARG_NONE, &o.lines,
                  "One frame per source line: \"function at file:line\" where the symbols have lines", NULL },
                { "mappings", 0, 0, G_OPTION_ARG_NONE, &o.mappings,
                  "List where each mapping's symbols came from and how the file was verified", NULL },
                { "no-progress", 0, 0, G_OPTION_ARG_NONE, &o.no_progress, "Never draw a progress bar", NULL },
                { "by-container", 0, 0, G_OPTION_ARG_NONE, &o.by_container,
                  "Samples grouped by Podman container or Flatpak app (with -f/--tree: as root frames)", NULL },
                { "marks", 0, 0, G_OPTION_ARG_NONE, &o.marks,
                  "Summarize marks (by group and name, with durations) and logs", NULL },
                { "counters", 0, 0, G_OPTION_ARG_NONE, &o.counters,
                  "Summarize every counter: samples, min, mean, max, last", NULL },
                { "timeline", 0, 0, G_OPTION_ARG_FILENAME, &o.timeline,
                  "Write counters over time with the marks as an SVG to FILE", "FILE" },
                { "memory", 0, 0, G_OPTION_ARG_NONE, &o.memory,
                  "Allocations by call site and by call stack: leaks, temporaries, peak (from `record --memory`); with "
                  "--tree/-f/--folded: by bytes allocated",
                  NULL },
                { "off-cpu", 0, 0, G_OPTION_ARG_NONE, &o.off_cpu,
                  "Where threads waited (from `record --off-cpu`): blocked time by stack; with --tree, -f (widths in "
                  "time), --folded (nanoseconds)",
                  NULL },
                { "wall", 0, 0, G_OPTION_ARG_NONE, &o.wall,
                  "Wall-clock time per thread: on the CPU (samples), waiting for a CPU, blocked (from `record "
                  "--off-cpu`)",
                  NULL },
                { "leaked", 0, 0, G_OPTION_ARG_NONE, &o.leaked,
                  "With --memory: --tree/-f/--folded/--callers weigh the bytes never freed", NULL },
                { "temporary", 0, 0, G_OPTION_ARG_NONE, &o.temporary,
                  "With --memory: --tree/-f/--folded/--callers weigh the short-lived temporaries' bytes", NULL },
                { NULL },
        };
        g_autoptr(GOptionContext) ctx = g_option_context_new("FILE - show where the time went in a capture");
        g_option_context_add_main_entries(ctx, entries, NULL);
        g_option_context_set_description(ctx,
                "Reads captures written by periscope or by Sysprof. Without options, prints the\n"
                "hottest functions by self and total time. Inlined functions appear as frames\n"
                "marked \"(inlined)\", kernel functions are marked \"[kernel]\", and addresses\n"
                "without symbols show as module+0xoffset.\n"
                "`periscope report --diff BEFORE AFTER` compares two captures.");
        g_autoptr(GError) error = NULL;
        g_autofree char *prgname = g_strdup("periscope report");
        char *saved = argv[0];
        argv[0] = prgname;
        gboolean ok = g_option_context_parse(ctx, &argc, &argv, &error);
        argv[0] = saved;
        if (!ok) {
                fprintf(stderr, "periscope report: %s\nRun `periscope report --help` for the options.\n", error->message);
                return 2;
        }
        if (!options_valid(&o, argc - 1))
                return 2;
        if (o.leaked || o.temporary)
                o.memory = TRUE; /* they choose among the allocations */
        if (o.min_percent == MIN_PERCENT_UNSET)
                o.min_percent = 0.5;
        g_autoptr(GArray) pids = g_array_new(FALSE, FALSE, sizeof(int32_t));
        g_autoptr(GArray) tids = g_array_new(FALSE, FALSE, sizeof(int32_t));
        if (!cli_parse_ids("report", "--pid", o.pids, 0, pids) || !cli_parse_ids("report", "--tid", o.tids, 0, tids))
                return 2;

        /* An SVG for standard output is all that goes there: the report's
         * text goes to standard error instead. */
        int svg_fd = -1;
        g_autofree char *svg_to = NULL;
        gboolean flame_out = output_file_is_stdout(o.flamegraph), timeline_out = output_file_is_stdout(o.timeline);
        if (output_file_move_stdout(flame_out ? o.flamegraph : o.timeline, &svg_to, &svg_fd, &error) < 0) {
                fprintf(stderr, "periscope report: %s\n", error->message);
                return 1;
        }
        if (flame_out)
                o.flamegraph_to = g_strdup(svg_to);
        if (timeline_out) {
                g_free(o.timeline);
                o.timeline = g_strdup(svg_to);
        }

        const char *path = argv[1];
        ReportFilter filter = { .pids = pids, .tids = tids, .comms = o.comms, .lines = o.lines };
        /* One load of the capture, the model every view reads. */
        g_autoptr(ReportProfile) model = NULL;
        if (!o.diff) {
                model = report_profile_load(path, stacks_weight(&o), !o.no_progress, &error);
                if (!model) {
                        fprintf(stderr, "periscope report: %s\n", error->message);
                        return 1;
                }
        }
        /* Views of whole processes' frames get the filter as a predicate;
         * --comm needs the capture's process names, --tid its threads. */
        PidMatch match = { model, &filter };
        ReportPidFilter pid_filter = { pid_match, &match };
        const ReportPidFilter *pf = pids->len || tids->len || o.comms ? &pid_filter : NULL;

        int status;
        gboolean stacks = o.tree || o.callers || o.callees || o.mappings || o.by_process || o.by_thread || o.folded ||
                          o.flamegraph;
        if (o.diff)
                status = report_diff(&o, argv[1], argv[2], &filter);
        else if (o.marks || o.counters || o.timeline || (o.memory && !stacks)) {
                int r = report_extras(model, o.marks, o.counters, o.timeline, save_file, o.memory, o.limit, pf, stdout);
                status = r < 0 ? 1 : 0;
                /* then the whole stacks of the leaks and temporaries */
                if (r >= 0 && o.memory)
                        report_print_memory_stacks(stdout, model, &filter, (guint) o.limit);
        } else if (o.by_container && !stacks) {
                report_print_by_container(stdout, model, pf);
                status = damaged_status(path, model);
        } else {
                status = 0;
                /* the table or memory report first, then the stacks (not
                 * with --folded: nothing but folded stacks on stdout) */
                if (o.by_container && !o.folded)
                        report_print_by_container(stdout, model, pf);
                if (o.memory && !o.folded &&
                    report_extras(model, FALSE, FALSE, NULL, save_file, TRUE, o.limit, pf, stdout) < 0)
                        return 1;
                if (status == 0)
                        status = report_stacks(&o, model, &filter, pf);
        }
        fflush(stdout);
        if (ferror(stdout)) {
                fprintf(stderr, "periscope report: cannot write the report: %s\n", g_strerror(errno));
                status = 1;
        }
        if (svg_fd >= 0)
                close(svg_fd);
        return status;
}
