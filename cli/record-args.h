/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* record-args.h: the command line of `periscope record`: parsing, the
 * checks a user gets before anything starts (each naming the option as it
 * was typed and what it allows), the Record options built from it, and the
 * service's refusals said in the command line's terms. */
#pragma once

#include <gio/gio.h>

typedef struct RecordArgs {
        char *output;
        guint32 frequency;         /* 0: the service's default */
        gboolean system;
        GArray *pids;              /* gint32, from every -p */
        char *container;
        guint32 duration_ms;       /* 0: until stopped */
        gboolean no_kernel;
        char *unwind;
        guint32 stack_size;
        gboolean off_cpu;          /* --off-cpu */
        guint64 off_cpu_min_ns;    /* --off-cpu-min; G_MAXUINT64: the service's default */
        gboolean no_python_frames; /* --no-python-frames */
        gboolean session_bus;
        char *address;
        gboolean private_daemon;
        gboolean verbose;
        char **command;
        gboolean memory;           /* record-control.c: LD_PRELOAD libperiscope-memory.so */
        gboolean no_control_fd;
        gboolean no_trace_fd;
        gboolean no_jit_env;       /* record-jit-env.c: no perf maps turned on for the command */
        char **counters;           /* NULL: default; empty: none */
} RecordArgs;

/* Parses argv into *a. Returns 0, or the exit status (2) after printing
 * the usage error. */
int record_args_parse(RecordArgs *a, int argc, char **argv);

void record_args_clear(RecordArgs *a);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(RecordArgs, record_args_clear)

/* The a{sv} options of Profiler1.Record; child is the held command or 0. */
GVariant *record_args_to_options(const RecordArgs *a, GPid child);

/* Says on stderr why the service refused Record, in the command line's
 * terms; returns the exit status: 2 for what the user asked wrongly
 * (an out-of-range option, no such process or container), 1 otherwise. */
int record_args_report_refusal(const RecordArgs *a, GError *error);
