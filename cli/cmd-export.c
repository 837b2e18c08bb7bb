/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-export.c: `periscope export --format FORMAT [-o OUT] CAPTURE`: the
 * capture's samples (or allocations) in a format other tools open: pprof
 * (go tool pprof), speedscope, perf-script text (Firefox Profiler,
 * speedscope, FlameGraph) and folded stacks. docs/exports.md says how to
 * open each. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gio/gio.h>

#include "commands.h"
#include "analysis.h"
#include "id-args.h"
#include "output-file.h"

typedef struct ExportFormat {
        const char *name;
        gboolean binary; /* not for a terminal */
        gboolean (*write)(const ExportModel *m, GByteArray *out, GError **error);
} ExportFormat;

static const ExportFormat formats[] = {
        { "pprof", TRUE, export_pprof },
        { "speedscope", FALSE, export_speedscope },
        { "perf-script", FALSE, export_perf_script },
        { "folded", FALSE, export_folded },
};

#define FORMAT_LIST "pprof, speedscope, perf-script, folded"

static const ExportFormat *find_format(const char *name) {
        for (size_t i = 0; i < G_N_ELEMENTS(formats); i++)
                if (strcmp(formats[i].name, name) == 0)
                        return &formats[i];
        return NULL;
}

/* Writes data to path (output-file.h: a regular file is replaced only once
 * complete, a device or pipe written through) or to stdout for NULL or "-". */
static int write_output(const char *path, const GByteArray *data, gboolean binary) {
        g_autoptr(GError) error = NULL;
        if (output_file_write(path ? path : "-", data->data, data->len, binary ? OUTPUT_BINARY : 0, &error) < 0) {
                fprintf(stderr, "periscope export: %s\n", error->message);
                return -EIO;
        }
        return 0;
}

int cmd_export(int argc, char **argv) {
        g_autofree char *format_name = NULL, *output = NULL;
        g_auto(GStrv) pid_args = NULL, tid_args = NULL, comms = NULL;
        gboolean memory = FALSE, cpu = FALSE, thread_root = FALSE, off_cpu = FALSE;
        const GOptionEntry entries[] = {
                { "format", 'F', 0, G_OPTION_ARG_STRING, &format_name, "Output format: " FORMAT_LIST, "FORMAT" },
                { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write to FILE (default: standard output)",
                  "FILE" },
                { "pid", 'p', 0, G_OPTION_ARG_STRING_ARRAY, &pid_args,
                  "Only samples of these processes (repeatable, or comma-separated)", "PID" },
                { "comm", 'c', 0, G_OPTION_ARG_STRING_ARRAY, &comms,
                  "Only samples of processes with this name (repeatable)", "NAME" },
                { "tid", 0, 0, G_OPTION_ARG_STRING_ARRAY, &tid_args,
                  "Only samples of these threads (repeatable, or comma-separated)", "TID" },
                { "thread-root", 0, 0, G_OPTION_ARG_NONE, &thread_root,
                  "folded: start each stack with a \"name (tid N)\" frame for its thread", NULL },
                { "memory", 0, 0, G_OPTION_ARG_NONE, &memory,
                  "Export the allocations (periscope record --memory); the default when the capture has any", NULL },
                { "off-cpu", 0, 0, G_OPTION_ARG_NONE, &off_cpu,
                  "Export where threads blocked (periscope record --off-cpu), each wait weighing its nanoseconds "
                  "(pprof has them beside the CPU samples anyway: -sample_index=off_cpu)",
                  NULL },
                { "cpu", 0, 0, G_OPTION_ARG_NONE, &cpu,
                  "Export the CPU samples of a capture that also has allocations (by default its allocations are "
                  "exported)",
                  NULL },
                { NULL },
        };
        g_autoptr(GOptionContext) ctx = g_option_context_new("CAPTURE — convert a capture for other profilers' tools");
        g_option_context_set_summary(ctx, "Formats: " FORMAT_LIST ". See docs/exports.md for how to open each.");
        g_option_context_add_main_entries(ctx, entries, NULL);
        g_autoptr(GError) gerr = NULL;
        if (!g_option_context_parse(ctx, &argc, &argv, &gerr)) {
                fprintf(stderr, "periscope export: %s\n", gerr->message);
                return 2;
        }
        if (!format_name) {
                fprintf(stderr, "periscope export: which format? --format FORMAT, one of: " FORMAT_LIST "\n");
                return 2;
        }
        const ExportFormat *format = find_format(format_name);
        if (!format) {
                fprintf(stderr, "periscope export: unknown format '%s'; the formats are: " FORMAT_LIST "\n",
                        format_name);
                return 2;
        }
        if (argc != 2) {
                fprintf(stderr, "periscope export: expected exactly one capture file "
                                "(periscope export --format FORMAT [-o OUT] CAPTURE)\n");
                return 2;
        }
        if (memory && cpu) {
                fprintf(stderr, "periscope export: --memory and --cpu exclude each other\n");
                return 2;
        }
        if (format->binary && (!output || strcmp(output, "-") == 0) && isatty(STDOUT_FILENO)) {
                fprintf(stderr, "periscope export: %s is binary: write it to a file with -o FILE\n", format->name);
                return 2;
        }
        if (thread_root && format->write != export_folded) {
                fprintf(stderr, "periscope export: --thread-root shapes folded stacks; the other formats keep the "
                                "thread of every sample already\n");
                return 2;
        }
        g_autoptr(GArray) pids = g_array_new(FALSE, FALSE, sizeof(int32_t));
        g_autoptr(GArray) tids = g_array_new(FALSE, FALSE, sizeof(int32_t));
        if (!cli_parse_ids("export", "--pid", pid_args, 1, pids) ||
            !cli_parse_ids("export", "--tid", tid_args, 1, tids))
                return 2;
        const char *path = argv[1];

        ReportFilter filter = { .pids = pids, .tids = tids, .comms = comms };
        if (off_cpu && memory) {
                fprintf(stderr, "periscope export: --off-cpu exports waits, --memory allocations: choose one\n");
                return 2;
        }
        ExportOptions o = { .filter = &filter,
                            .memory = memory           ? 1
                                      : cpu || off_cpu ? 0
                                                       : -1,
                            .thread_root = thread_root,
                            .off_cpu = off_cpu                         ? EXPORT_OFF_CPU_ONLY
                                       : format->write == export_pprof ? EXPORT_OFF_CPU_WITH
                                                                       : EXPORT_OFF_CPU_NONE };
        g_autoptr(ExportModel) m = export_model_load(path, &o, &gerr);
        if (!m) {
                fprintf(stderr, "periscope export: cannot read the capture: %s\n", gerr->message);
                return 1;
        }
        if (m->samples->len == 0) {
                gboolean filtered = pids->len || tids->len || (comms && comms[0]);
                if (m->kind == EXPORT_KIND_MEMORY)
                        fprintf(stderr, "periscope export: %s has no allocation records%s\n", path,
                                filtered ? " of the processes selected by --pid/--comm/--tid" : "");
                else
                        fprintf(stderr, "periscope export: %s has no CPU samples%s%s\n", path,
                                filtered ? " of the processes selected by --pid/--comm/--tid" : "",
                                m->report->load_warning ? " before the damage" : "");
                if (m->report->load_warning)
                        fprintf(stderr, "periscope export: %s is damaged: %s\n", path, m->report->load_warning);
                return 1;
        }
        if (m->report->symbols_error)
                fprintf(stderr, "periscope export: note: %s: no usable symbol table (%s); frames are named "
                                "module+offset\n", path, m->report->symbols_error);
        if (m->n_other_kind && o.memory < 0)
                fprintf(stderr, "periscope export: note: exporting the allocations; the capture also has %" G_GUINT64_FORMAT
                                " CPU samples, --cpu exports those\n", m->n_other_kind);

        g_autoptr(GByteArray) data = g_byte_array_new();
        if (!format->write(m, data, &gerr)) {
                fprintf(stderr, "periscope export: %s: %s\n", format->name, gerr->message);
                return 1;
        }
        if (write_output(output, data, format->binary) < 0)
                return 1;
        if (m->report->load_warning) {
                /* What could be read is exported; the status says it is not all. */
                fprintf(stderr, "periscope export: %s is truncated or damaged: %s; exported the %u %s before it\n",
                        path, m->report->load_warning, m->samples->len,
                        m->kind == EXPORT_KIND_MEMORY ? "allocations" : "samples");
                return 1;
        }
        return 0;
}
