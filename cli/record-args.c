/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* record-args.c: the command line of `periscope record` (see record-args.h). */
#include "record-args.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "service-connection.h"

#define MAX_DURATION_S 86400
#define MAX_STACK_SIZE 65528
#define MAX_PIDS 1024

static const char *const counter_names[] = { "cpu", "memory", "disk", "net", "cpufreq", "energy", "battery" };

static gboolean usage_error(GError **error, const char *format, ...) G_GNUC_PRINTF(2, 3);
static gboolean usage_error(GError **error, const char *format, ...) {
        va_list ap;
        va_start(ap, format);
        g_autofree char *msg = g_strdup_vprintf(format, ap);
        va_end(ap);
        g_set_error_literal(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, msg);
        return FALSE;
}

/* A whole decimal number in [min, max] (basic/parse-util.h). */
static gboolean parse_number(const char *s, uint64_t min, uint64_t max, uint64_t *ret) {
        return parse_bounded_u64(s, min, max, ret) == 0;
}

/* The kernel's limit on samples per second (what the service allows). */
static guint32 max_frequency(void) {
        g_autofree char *text = NULL;
        uint64_t v;
        if (g_file_get_contents("/proc/sys/kernel/perf_event_max_sample_rate", &text, NULL, NULL) &&
            parse_number(g_strstrip(text), 1, UINT32_MAX, &v))
                return (guint32) v;
        return 100000;
}

static gboolean on_frequency(const char *name, const char *value, gpointer data, GError **error) {
        RecordArgs *a = data;
        guint32 max = max_frequency();
        uint64_t v;
        if (!parse_number(value, 1, max, &v))
                return usage_error(error,
                                   "%s %s: --frequency must be between 1 and %u samples per second (the limit is "
                                   "/proc/sys/kernel/perf_event_max_sample_rate)",
                                   name, value, max);
        a->frequency = (guint32) v;
        return TRUE;
}

/* Whether pid is a zombie: it has exited and there is nothing left to record. */
static gboolean is_zombie(pid_t pid) {
        g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int) pid);
        g_autofree char *text = NULL;
        if (!g_file_get_contents(path, &text, NULL, NULL))
                return FALSE;
        const char *p = strrchr(text, ')');
        return p && p[1] == ' ' && p[2] == 'Z';
}

static gboolean on_pid(const char *name, const char *value, gpointer data, GError **error) {
        RecordArgs *a = data;
        g_auto(GStrv) parts = g_strsplit(value, ",", -1);
        for (char **p = parts; *p; p++) {
                uint64_t v;
                if (!parse_number(*p, 1, INT_MAX, &v))
                        return usage_error(error, "%s %s: '%s' is not a process id (a number above 0)", name, value,
                                           *p);
                if (kill((pid_t) v, 0) < 0 && errno == ESRCH)
                        return usage_error(error, "%s %s: no such process (`periscope list` shows the processes "
                                           "you may record)", name, *p);
                if (is_zombie((pid_t) v))
                        return usage_error(error, "%s %s: process %s has exited (a zombie its parent has not "
                                           "reaped); there is nothing left to record", name, *p, *p);
                if (a->pids->len >= MAX_PIDS)
                        return usage_error(error, "%s: at most %d processes", name, MAX_PIDS);
                gint32 pid = (gint32) v;
                g_array_append_val(a->pids, pid);
        }
        return TRUE;
}

static gboolean on_duration(const char *name, const char *value, gpointer data, GError **error) {
        RecordArgs *a = data;
        uint64_t usec;
        if (parse_bounded_duration(value, USEC_PER_MSEC, MAX_DURATION_S * USEC_PER_SEC, &usec) < 0)
                return usage_error(error,
                                   "%s %s: --duration must be between 0.001 and %d seconds (a number of seconds, "
                                   "or with ms, s, m or h: 500ms, 1.5s, 2m)",
                                   name, value, MAX_DURATION_S);
        a->duration_ms = (guint32) (usec / USEC_PER_MSEC);
        return TRUE;
}

static gboolean on_unwind(const char *name, const char *value, gpointer data, GError **error) {
        RecordArgs *a = data;
        if (strcmp(value, "dwarf") != 0 && strcmp(value, "fp") != 0 && strcmp(value, "auto") != 0)
                return usage_error(error, "%s %s: --unwind must be dwarf, fp or auto", name, value);
        g_free(a->unwind);
        a->unwind = g_strdup(value);
        return TRUE;
}

static gboolean on_stack_size(const char *name, const char *value, gpointer data, GError **error) {
        RecordArgs *a = data;
        uint64_t v;
        if (!parse_number(value, 8, MAX_STACK_SIZE, &v) || v % 8 != 0)
                return usage_error(error, "%s %s: --stack-size must be a multiple of 8 between 8 and %d bytes", name,
                                   value, MAX_STACK_SIZE);
        a->stack_size = (guint32) v;
        return TRUE;
}

/* --off-cpu-min: NUMBER with ns, us (the default), ms or s. */
static gboolean on_off_cpu_min(const char *name, const char *value, gpointer data, GError **error) {
        RecordArgs *a = data;
        static const struct {
                const char *suffix;
                uint64_t ns;
        } units[] = { { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 } };
        size_t l = strlen(value);
        uint64_t unit = 1000, v;
        g_autofree char *number = g_strdup(value);
        for (size_t i = 0; i < G_N_ELEMENTS(units); i++) {
                size_t sl = strlen(units[i].suffix);
                if (l > sl && g_str_has_suffix(value, units[i].suffix) && g_ascii_isdigit(value[l - sl - 1])) {
                        unit = units[i].ns;
                        number[l - sl] = 0;
                        break;
                }
        }
        if (!parse_number(number, 0, 3600ull * 1000000000ull / unit, &v))
                return usage_error(error,
                                   "%s %s: --off-cpu-min must be a whole number with ns, us, ms or s "
                                   "(default unit us) up to an hour, e.g. 100us",
                                   name, value);
        a->off_cpu_min_ns = v * unit;
        return TRUE;
}

static gboolean on_counters(const char *name, const char *value, gpointer data, GError **error) {
        RecordArgs *a = data;
        g_auto(GStrv) names = strcmp(value, "none") == 0 || !*value ? g_new0(char *, 1) : g_strsplit(value, ",", -1);
        for (char **n = names; *n; n++) {
                gboolean known = FALSE;
                for (size_t i = 0; i < G_N_ELEMENTS(counter_names); i++)
                        known = known || strcmp(*n, counter_names[i]) == 0;
                if (!known)
                        return usage_error(error, "%s %s: '%s' is not a counter source (use a comma-separated list "
                                           "of cpu, memory, disk, net, cpufreq, energy, battery, or none)",
                                           name, value, *n);
        }
        g_strfreev(a->counters);
        a->counters = g_steal_pointer(&names);
        return TRUE;
}

int record_args_parse(RecordArgs *a, int argc, char **argv) {
        *a = (RecordArgs){ .pids = g_array_new(FALSE, FALSE, sizeof(gint32)), .off_cpu_min_ns = G_MAXUINT64 };
        const GOptionEntry entries[] = {
                { "output", 'o', 0, G_OPTION_ARG_FILENAME, &a->output,
                  "Write the capture to FILE (default periscope-DATE-TIME.syscap)", "FILE" },
                { "frequency", 'F', 0, G_OPTION_ARG_CALLBACK, on_frequency, "Samples per second (default 999)", "HZ" },
                { "system", 0, 0, G_OPTION_ARG_NONE, &a->system, "Record every process", NULL },
                { "pid", 'p', 0, G_OPTION_ARG_CALLBACK, on_pid, "Record process PID (repeat, or PID,PID…)", "PID" },
                { "container", 'c', 0, G_OPTION_ARG_STRING, &a->container,
                  "Record every process of a Podman container (name or id) or Flatpak app (app id), also those "
                  "that join or start it during the recording (`periscope list` shows them)",
                  "NAME|ID|APP-ID" },
                { "duration", 0, 0, G_OPTION_ARG_CALLBACK, on_duration,
                  "Stop after DURATION (seconds, or 500ms, 2m, 1h)", "DURATION" },
                { "no-kernel", 0, 0, G_OPTION_ARG_NONE, &a->no_kernel, "Leave kernel stacks out", NULL },
                { "unwind", 0, 0, G_OPTION_ARG_CALLBACK, on_unwind,
                  "User stacks: dwarf (unwind tables), fp (frame pointers) or auto (default: auto, which unwinds "
                  "with dwarf)",
                  "MODE" },
                { "stack-size", 0, 0, G_OPTION_ARG_CALLBACK, on_stack_size,
                  "Bytes of user stack copied per sample for dwarf (multiple of 8, at most 65528; default 16384)",
                  "BYTES" },
                { "off-cpu", 0, 0, G_OPTION_ARG_NONE, &a->off_cpu,
                  "Also record where threads wait: each time a thread blocks, its stack and how long it stayed "
                  "off the CPU; preemptions as waiting for a CPU (`periscope report --off-cpu`, --wall)",
                  NULL },
                { "off-cpu-min", 0, 0, G_OPTION_ARG_CALLBACK, on_off_cpu_min,
                  "With --off-cpu: shorter waits are counted, their stacks not kept (default 100us)", "DURATION" },
                { "no-python-frames", 0, 0, G_OPTION_ARG_NONE, &a->no_python_frames,
                  "Leave CPython's frames out of its threads' stacks (the interpreter's own functions stay)", NULL },
                { "session-bus", 0, 0, G_OPTION_ARG_NONE, &a->session_bus, "Use periscoped on the session bus", NULL },
                { "address", 0, 0, G_OPTION_ARG_STRING, &a->address, "Use periscoped on the bus at ADDRESS",
                  "ADDRESS" },
                { "private", 0, 0, G_OPTION_ARG_NONE, &a->private_daemon, "Always start a private periscoped", NULL },
                { "verbose", 'v', 0, G_OPTION_ARG_NONE, &a->verbose,
                  "Show the private periscoped's log here (else the journal or "
                  "$XDG_STATE_HOME/periscope/periscoped.log)",
                  NULL },
                { "memory", 0, 0, G_OPTION_ARG_NONE, &a->memory,
                  "Record the command's allocations (LD_PRELOAD of libperiscope-memory.so)", NULL },
                { "counters", 0, 0, G_OPTION_ARG_CALLBACK, on_counters,
                  "System counters: cpu,memory,disk,net,cpufreq,energy,battery or none (default cpu,memory)", "LIST" },
                { "no-control-fd", 0, 0, G_OPTION_ARG_NONE, &a->no_control_fd,
                  "Do not give the command SYSPROF_CONTROL_FD (marks, logs, counters of the program)", NULL },
                { "no-trace-fd", 0, 0, G_OPTION_ARG_NONE, &a->no_trace_fd,
                  "Do not give the command SYSPROF_TRACE_FD, GJS_TRACE_FD and GTK_TRACE_FD (a Sysprof capture "
                  "the program writes itself)",
                  NULL },
                { "no-jit-env", 0, 0, G_OPTION_ARG_NONE, &a->no_jit_env,
                  "Do not turn on the command's runtimes' own perf maps (NODE_OPTIONS="
                  "--perf-basic-prof-only-functions for node, PYTHONPERFSUPPORT=1 for Python 3.12+), which name "
                  "their JIT code",
                  NULL },
                { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &a->command, NULL, "[-- COMMAND ARGS…]" },
                {},
        };
        g_autoptr(GOptionContext) ctx = g_option_context_new("");
        g_autoptr(GError) error = NULL;
        GOptionGroup *group = g_option_group_new(NULL, NULL, NULL, a, NULL);
        g_option_group_add_entries(group, entries);
        g_option_context_set_main_group(ctx, group);
        g_option_context_set_summary(ctx, "Records CPU stacks of a command, processes or the whole system into a "
                                          "Sysprof capture.\nThe exit status is the command's, or 0 without a "
                                          "command; 130 when Ctrl-C ends the recording (its capture complete); "
                                          "2 for a usage error; 1 when the recording failed or its capture is "
                                          "truncated.");
        g_option_context_set_strict_posix(ctx, TRUE);
        if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
                fprintf(stderr, "periscope record: %s\n", error->message);
                return 2;
        }
        if (a->command && a->command[0] && strcmp(a->command[0], "--") == 0) {
                /* strict POSIX parsing leaves a "--" that follows other options */
                char **rest = g_strdupv(a->command + 1);
                g_strfreev(a->command);
                a->command = rest;
        }
        if (a->command && !a->command[0])
                g_clear_pointer(&a->command, g_strfreev);
        if (!a->command && !a->system && !a->pids->len && !a->container) {
                fprintf(stderr, "periscope record: say what to record: -- COMMAND, --pid PID, --container NAME or "
                                "--system\n");
                return 2;
        }
        /* --system -- COMMAND records everything until the command exits */
        if (a->system && (a->pids->len || a->container)) {
                fprintf(stderr, "periscope record: --system already records every process; leave out %s\n",
                        a->pids->len ? "--pid" : "--container");
                return 2;
        }
        if (a->off_cpu_min_ns != G_MAXUINT64 && !a->off_cpu) {
                fprintf(stderr, "periscope record: --off-cpu-min needs --off-cpu\n");
                return 2;
        }
        if (a->memory && !a->command) {
                fprintf(stderr, "periscope record: --memory needs a command to run: -- COMMAND\n");
                return 2;
        }
        return 0;
}

void record_args_clear(RecordArgs *a) {
        g_free(a->output);
        g_free(a->address);
        g_free(a->unwind);
        if (a->pids)
                g_array_unref(a->pids);
        g_free(a->container);
        g_strfreev(a->command);
        g_strfreev(a->counters);
        *a = (RecordArgs) {};
}

GVariant *record_args_to_options(const RecordArgs *a, GPid child) {
        GVariantBuilder b;
        g_variant_builder_init(&b, G_VARIANT_TYPE("a{sv}"));
        if (a->system)
                g_variant_builder_add(&b, "{sv}", "system", g_variant_new_boolean(TRUE));
        if (a->container)
                g_variant_builder_add(&b, "{sv}", "container", g_variant_new_string(a->container));
        if (a->pids->len)
                g_variant_builder_add(&b, "{sv}", "pids",
                                      g_variant_new_fixed_array(G_VARIANT_TYPE_INT32, a->pids->data, a->pids->len,
                                                                sizeof(gint32)));
        if (child)
                g_variant_builder_add(&b, "{sv}", "command-pid", g_variant_new_int32(child));
        if (a->frequency)
                g_variant_builder_add(&b, "{sv}", "frequency", g_variant_new_uint32(a->frequency));
        if (a->duration_ms)
                g_variant_builder_add(&b, "{sv}", "duration-ms", g_variant_new_uint32(a->duration_ms));
        if (a->no_kernel)
                g_variant_builder_add(&b, "{sv}", "kernel", g_variant_new_boolean(FALSE));
        if (a->unwind)
                g_variant_builder_add(&b, "{sv}", "unwind", g_variant_new_string(a->unwind));
        if (a->stack_size)
                g_variant_builder_add(&b, "{sv}", "stack-size", g_variant_new_uint32(a->stack_size));
        if (a->off_cpu)
                g_variant_builder_add(&b, "{sv}", "off-cpu", g_variant_new_boolean(TRUE));
        if (a->off_cpu && a->off_cpu_min_ns != G_MAXUINT64)
                g_variant_builder_add(&b, "{sv}", "off-cpu-min-ns", g_variant_new_uint64(a->off_cpu_min_ns));
        if (a->no_python_frames)
                g_variant_builder_add(&b, "{sv}", "python-frames", g_variant_new_boolean(FALSE));
        if (a->counters)
                g_variant_builder_add(&b, "{sv}", "counters",
                                      g_variant_new_strv((const char *const *) a->counters, -1));
        return g_variant_builder_end(&b);
}

/* Record's option keys as the command line spells them. */
static const struct {
        const char *key, *option;
} option_names[] = {
        { "pids", "--pid" },
        { "command-pid", "the command" },
        { "frequency", "--frequency" },
        { "duration-ms", "--duration" },
        { "unwind", "--unwind" },
        { "stack-size", "--stack-size" },
        { "container", "--container" },
        { "counters", "--counters" },
        { "system", "--system" },
        { "kernel", "--no-kernel" },
        { "off-cpu-min-ns", "--off-cpu-min" },
        { "off-cpu", "--off-cpu" },
        { "python-frames", "--no-python-frames" },
};

/* "option 'KEY': rest" → "--OPTION: rest"; other messages unchanged. */
static char *in_cli_terms(const char *message) {
        for (size_t i = 0; i < G_N_ELEMENTS(option_names); i++) {
                g_autofree char *prefix = g_strdup_printf("option '%s'", option_names[i].key);
                if (g_str_has_prefix(message, prefix))
                        return g_strconcat(option_names[i].option, message + strlen(prefix), NULL);
        }
        return g_strdup(message);
}

int record_args_report_refusal(const RecordArgs *a, GError *error) {
        g_autofree char *name = NULL;
        const char *message = service_error_message(error, &name);
        if (g_strcmp0(name, "org.periscope.Error.NoSuchProcess") == 0 && a->container &&
            strstr(message, "'container'")) {
                fprintf(stderr, "periscope record: --container %s: no running Podman container or Flatpak app "
                                "matches '%s', and no stopped container or installed app has that name; `periscope "
                                "list` shows what you may record\n", a->container, a->container);
                return 2;
        }
        g_autofree char *said = in_cli_terms(message);
        if (g_strcmp0(name, "org.periscope.Error.NoSuchProcess") == 0) {
                fprintf(stderr, "periscope record: %s (`periscope list` shows what you may record)\n", said);
                return 2;
        }
        fprintf(stderr, "periscope record: %s\n", said);
        return g_strcmp0(name, "org.periscope.Error.InvalidOption") == 0 ? 2 : 1;
}
