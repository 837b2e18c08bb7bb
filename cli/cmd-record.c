/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-record.c: `periscope record`: records a command, processes or the
 * whole system into a capture through org.periscope.Profiler1
 * (service-connection.c finds the service or starts a private one), shows
 * a live line and the post-stop progress on a terminal, and ends as a user
 * expects: Ctrl-C stops the recording and completes the capture (exit 130),
 * a second one leaves without waiting and says what it leaves behind. */
#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <gio/gunixfdlist.h>
#include <glib-unix.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis.h"
#include "commands.h"
#include "record-args.h"
#include "output-file.h"
#include "record-control.h"
#include "record-jit-env.h"
#include "service-connection.h"

#define CHILD_GRACE_MS 1000 /* after an interrupted recording, how long the command gets to exit */
/* Signals this close to the first are one burst: timeout(1) and kill(1)
 * with a process group send the same signal to us directly and again to
 * our group, microseconds apart. Nobody types two Ctrl-C this fast. */
#define SIGNAL_BURST_US 20000
#define CHILD_EXIT_WAIT_MS 100 /* leaving: how long to see whether the command dies of the signal too */

typedef struct RecordRun {
        GMainLoop *loop;
        ServiceConnection service;
        OutputFile output;
        char *recording;           /* object path */
        guint subscriptions[3];
        guint name_watch;

        GPid child_pid;            /* the command, or 0 */
        int child_pidfd;
        guint child_source;
        gboolean child_exited;     /* exited, not reaped yet (reaped after Finished) */
        gboolean child_reaped;
        int child_status;
        int exec_error;            /* errno of a failed exec, or 0 */

        gboolean grace_over;       /* interrupted, and the command had its moment to exit */
        gboolean leave_command;    /* the service stopped: no waiting for the command */
        gboolean finished;
        gboolean finished_ok;
        gboolean cut_short; /* ended by the service's stop, or stages cut short (said in the summary) */
        char *finished_error;
        gboolean summary_printed; /* said once the recording ended (the command may run on) */
        char *service_died;       /* how periscoped went away without Finished, or NULL */
        GError *relay_error;      /* copying the capture to a device or pipe failed */
        GVariant *stats;

        guint64 samples, lost, bytes;
        guint32 processes;
        gint64 start_us;
        gboolean live;             /* stderr is a terminal: live line and progress */
        gboolean stopping;         /* the service said State=stopping */
        guint live_source;
        guint grace_source;
        int sigints;               /* interrupts so far (a burst counts once) */
        int first_signal;          /* the first one: the exit status is 128 + it */
        gint64 first_signal_us;    /* when it came */
} RecordRun;

static void report_recording_end(RecordRun *run);

static void record_run_maybe_quit(RecordRun *run) {
        if (!run->finished)
                return;
        if (run->child_pid && !run->child_exited && !run->grace_over && !run->leave_command) {
                /* Interrupted: the command had its signal too; it gets a
                 * moment to exit, then we leave without it. Else the
                 * recording ended first (--duration): say so now, not once
                 * the command exits, and wait for its exit status. */
                if (!run->first_signal && !run->summary_printed) {
                        report_recording_end(run);
                        fprintf(stderr,
                                "periscope: the command (pid %d) runs on, no longer recorded; waiting for it to "
                                "exit (its exit status will be record's)\n",
                                (int) run->child_pid);
                }
                return;
        }
        g_main_loop_quit(run->loop);
}

static void live_line_clear(RecordRun *run) {
        if (run->live)
                fprintf(stderr, "\r\033[K");
}

/* Whether the command writes where the live line is drawn: its output
 * would land after the line, on the same terminal line. */
static gboolean command_shares_terminal(const RecordRun *run) {
        return run->child_pid && !run->child_exited && (isatty(STDOUT_FILENO) || isatty(STDERR_FILENO));
}

static gboolean on_live_tick(gpointer data) {
        RecordRun *run = data;
        if (command_shares_terminal(run))
                return G_SOURCE_CONTINUE; /* the command's output has the terminal */
        double secs = (g_get_monotonic_time() - run->start_us) / 1e6;
        fprintf(stderr, "\r\033[Kperiscope: recording %.1f s, %" G_GUINT64_FORMAT " samples, %" G_GUINT64_FORMAT " lost",
                secs, run->samples, run->lost);
        return G_SOURCE_CONTINUE;
}

/* No more live line ticks. */
static void live_line_stop(RecordRun *run) {
        if (run->live_source)
                g_source_remove(run->live_source);
        run->live_source = 0;
}

/* The recording is over; from now on the terminal shows the post-stop
 * stages' progress instead of the live line. */
static void enter_stopping(RecordRun *run) {
        if (run->stopping)
                return;
        run->stopping = TRUE;
        live_line_stop(run);
        if (run->live)
                fprintf(stderr, "\r\033[Kperiscope: finishing the capture (%" G_GUINT64_FORMAT " samples)…",
                        run->samples);
}

static void update_from_properties(RecordRun *run, GVariant *dict) {
        const char *state;
        (void) g_variant_lookup(dict, "Samples", "t", &run->samples);
        (void) g_variant_lookup(dict, "LostSamples", "t", &run->lost);
        (void) g_variant_lookup(dict, "Bytes", "t", &run->bytes);
        (void) g_variant_lookup(dict, "Processes", "u", &run->processes);
        if (g_variant_lookup(dict, "State", "&s", &state) && strcmp(state, "recording") != 0)
                enter_stopping(run);
}

static gboolean is_our_recording(RecordRun *run, const char *path, GVariant *params, const char *type) {
        return run->recording && g_strcmp0(path, run->recording) == 0 &&
               g_variant_is_of_type(params, G_VARIANT_TYPE(type));
}

static void on_properties_changed(GDBusConnection *c, const char *sender, const char *path, const char *iface,
                                  const char *signal, GVariant *params, gpointer data) {
        RecordRun *run = data;
        const char *interface;
        g_autoptr(GVariant) changed = NULL;
        g_autoptr(GVariant) invalidated = NULL;
        if (!is_our_recording(run, path, params, "(sa{sv}as)"))
                return;
        g_variant_get(params, "(&s@a{sv}@as)", &interface, &changed, &invalidated);
        if (g_strcmp0(interface, RECORDING_INTERFACE) == 0)
                update_from_properties(run, changed);
}

/* Progress(s stage, t done, t total) of a post-stop stage, on a terminal only. */
static void on_progress(GDBusConnection *c, const char *sender, const char *path, const char *iface,
                        const char *signal, GVariant *params, gpointer data) {
        RecordRun *run = data;
        const char *stage;
        guint64 done, total;
        if (!is_our_recording(run, path, params, "(stt)"))
                return;
        enter_stopping(run);
        if (!run->live)
                return;
        g_variant_get(params, "(&stt)", &stage, &done, &total);
        if (strcmp(stage, "symbolize") == 0)
                fprintf(stderr, "\r\033[Kperiscope: symbolizing %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " addresses",
                        done, total);
        else if (strcmp(stage, "control-rings") == 0)
                fprintf(stderr, "\r\033[Kperiscope: copying what the programs wrote to their control rings %.1f/%.1f MiB",
                        done / 1048576.0, total / 1048576.0);
        else if (strcmp(stage, "trace-fds") == 0)
                fprintf(stderr, "\r\033[Kperiscope: merging the programs' trace fds %" G_GUINT64_FORMAT "/%"
                        G_GUINT64_FORMAT, done, total);
        else if (strcmp(stage, "unwind-tables") == 0)
                fprintf(stderr, "\r\033[Kperiscope: unwinding samples that waited for unwind tables %" G_GUINT64_FORMAT
                        "/%" G_GUINT64_FORMAT, done, total);
        else if (strcmp(stage, "container-descriptions") == 0)
                fprintf(stderr,
                        "\r\033[Kperiscope: describing sandboxed processes %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT,
                        done, total);
        else if (strcmp(stage, "pinned-files") == 0)
                fprintf(stderr, "\r\033[Kperiscope: recording which files were mapped %" G_GUINT64_FORMAT "/%"
                        G_GUINT64_FORMAT, done, total);
        else
                fprintf(stderr, "\r\033[Kperiscope: %s %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT, stage, done, total);
}

static void on_finished(GDBusConnection *c, const char *sender, const char *path, const char *iface,
                        const char *signal, GVariant *params, gpointer data) {
        RecordRun *run = data;
        if (run->finished || !is_our_recording(run, path, params, "(bsa{sv})"))
                return;
        const char *error;
        g_variant_get(params, "(b&s@a{sv})", &run->finished_ok, &error, &run->stats);
        run->finished_error = g_strdup(error);
        (void) g_variant_lookup(run->stats, "samples", "t", &run->samples);
        (void) g_variant_lookup(run->stats, "lost-samples", "t", &run->lost);
        (void) g_variant_lookup(run->stats, "bytes", "t", &run->bytes);
        (void) g_variant_lookup(run->stats, "processes", "u", &run->processes);
        run->finished = TRUE;
        /* The service is stopping (systemctl stop/restart): the recording
         * is over and the command, the user's program, runs on without it. */
        const char *reason = NULL;
        if (g_variant_lookup(run->stats, "reason", "&s", &reason) && strcmp(reason, "shutdown") == 0)
                run->leave_command = TRUE;
        record_run_maybe_quit(run);
}

/* The service ended the recording early or cut its post-stop stages short
 * (it was stopping): what the capture lacks and how to complete it. */
static gboolean report_cut_short(RecordRun *run) {
        const char *reason = NULL;
        g_autofree const char **cut = NULL;
        const char *missing = NULL;
        guint64 names_cut = 0;
        if (!run->stats)
                return FALSE;
        (void) g_variant_lookup(run->stats, "reason", "&s", &reason);
        (void) g_variant_lookup(run->stats, "cut-short", "^a&s", &cut);
        (void) g_variant_lookup(run->stats, "names-missing", "&s", &missing);
        (void) g_variant_lookup(run->stats, "names-cut-short", "t", &names_cut);
        gboolean shutdown = g_strcmp0(reason, "shutdown") == 0;
        if (!shutdown && !(cut && cut[0]))
                return FALSE;
        if (shutdown)
                fprintf(stderr, "periscope: periscoped was stopped (service shutdown or restart): the recording "
                                "ended early\n");
        if (cut && cut[0]) {
                g_autofree char *stages = g_strjoinv(", ", (char **) cut);
                fprintf(stderr, "periscope: post-stop stages cut short: %s\n", stages);
        }
        if (missing)
                fprintf(stderr,
                        "periscope: %" G_GUINT64_FORMAT " addresses have no names (%s); name them from this "
                        "machine's files (checked by build-id) with `periscope symbolize %s`\n",
                        names_cut, missing, run->output.name);
        return TRUE;
}

/* The service went away (crashed, or the private one died) without Finished:
 * the capture holds what it flushed so far. */
static void service_lost(RecordRun *run) {
        if (run->finished)
                return;
        /* the private daemon spawned for us: its end says how it died (it
         * closed its connection, so it is going; bounded all the same) */
        int status = 0;
        pid_t gone = 0;
        for (int i = 0; run->service.daemon_pid && i < 200 && gone == 0; i++) {
                gone = waitpid(run->service.daemon_pid, &status, WNOHANG);
                if (gone == 0)
                        g_usleep(10000);
        }
        if (gone > 0) {
                g_spawn_close_pid(run->service.daemon_pid);
                run->service.daemon_pid = 0; /* reaped: nothing to wait for at disconnect */
        }
        if (gone > 0 && WIFSIGNALED(status))
                run->service_died =
                        g_strdup_printf("killed by signal %d, SIG%s", WTERMSIG(status),
                                        sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?");
        else if (gone > 0 && WIFEXITED(status))
                run->service_died = g_strdup_printf("it exited with status %d", WEXITSTATUS(status));
        else
                run->service_died = g_strdup(run->service.owner ? "it left the bus without finishing the recording"
                                                                : "it closed its connection without finishing the "
                                                                  "recording");
        run->finished = TRUE;
        run->finished_ok = FALSE;
        run->finished_error = g_strdup("periscoped went away");
        run->leave_command = TRUE; /* nothing records it any more */
        record_run_maybe_quit(run);
}

static void on_connection_closed(GDBusConnection *c, gboolean remote_peer_vanished, GError *error, gpointer data) {
        service_lost(data);
}

static void on_name_vanished(GDBusConnection *c, const char *name, gpointer data) {
        service_lost(data);
}

/* The command exited: its status is read but it stays a zombie until the
 * recording has finished, so the service can still tell how it ended
 * (killed by Ctrl-C: the recording was stopped, not just ended). */
static gboolean on_child_exit(gint fd, GIOCondition condition, gpointer data) {
        RecordRun *run = data;
        siginfo_t info = {};
        if (waitid(P_PID, (id_t) run->child_pid, &info, WEXITED | WNOHANG | WNOWAIT) < 0 || info.si_pid == 0)
                return G_SOURCE_CONTINUE;
        run->child_exited = TRUE;
        run->child_status = info.si_code == CLD_EXITED ? (info.si_status & 0xff) << 8 : info.si_status & 0x7f;
        run->child_source = 0;
        record_run_maybe_quit(run);
        return G_SOURCE_REMOVE;
}

/* Without pidfds (Linux < 5.3) the command is reaped at once. */
static void on_child_reaped(GPid pid, int status, gpointer data) {
        RecordRun *run = data;
        run->child_exited = TRUE;
        run->child_status = status;
        run->child_source = 0;
        run->child_reaped = TRUE;
        record_run_maybe_quit(run);
}

static void watch_child(RecordRun *run) {
        run->child_pidfd = (int) syscall(SYS_pidfd_open, run->child_pid, 0);
        if (run->child_pidfd < 0)
                run->child_source = g_child_watch_add(run->child_pid, on_child_reaped, run);
        else
                run->child_source = g_unix_fd_add(run->child_pidfd, G_IO_IN, on_child_exit, run);
}

static void on_stop_reply(GObject *source, GAsyncResult *res, gpointer data) {
        g_autoptr(GError) error = NULL;
        g_autoptr(GVariant) ret = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &error);
        if (!ret)
                fprintf(stderr, "\nperiscope record: stopping failed: %s\n", service_error_message(error, NULL));
}

static gboolean on_grace_over(gpointer data) {
        RecordRun *run = data;
        run->grace_over = TRUE;
        run->grace_source = 0;
        record_run_maybe_quit(run);
        return G_SOURCE_REMOVE;
}

/* Whether the command is alive and stays so: it had the same signal when
 * it came to the whole process group, so it gets a moment to die of it. */
static gboolean command_keeps_running(RecordRun *run) {
        if (!run->child_pid || run->child_exited)
                return FALSE;
        if (run->child_pidfd < 0)
                return TRUE;
        struct pollfd p = { .fd = run->child_pidfd, .events = POLLIN };
        int r;
        do
                r = poll(&p, 1, CHILD_EXIT_WAIT_MS);
        while (r < 0 && errno == EINTR);
        return r == 0; /* readable: it exited */
}

/* What a second interrupt abandons, said before leaving. */
static void leave_now(RecordRun *run) {
        live_line_clear(run);
        fprintf(stderr,
                "periscope record: interrupted again: leaving without waiting for the capture to be "
                "finished. periscoped completes %s in the background (the post-stop stages: embedding "
                "the mapped files and symbolizing); `periscope info %s` shows it once it is complete",
                run->output.name, run->output.name);
        if (command_keeps_running(run))
                fprintf(stderr, "; the command (pid %d) keeps running", (int) run->child_pid);
        fprintf(stderr, "\n");
        exit(128 + run->first_signal);
}

static void interrupted(RecordRun *run, int signo) {
        gint64 now = g_get_monotonic_time();
        if (!run->first_signal) {
                run->first_signal = signo;
                run->first_signal_us = now;
        } else if (now - run->first_signal_us < SIGNAL_BURST_US)
                return; /* the same burst */
        if (++run->sigints > 1 && !run->finished)
                leave_now(run);
        if (run->sigints > 1)
                return;
        if (run->recording && !run->finished) {
                enter_stopping(run);
                g_dbus_connection_call(run->service.conn, run->service.owner, run->recording, RECORDING_INTERFACE,
                                       "Stop", NULL, NULL, G_DBUS_CALL_FLAGS_NONE, -1, NULL, on_stop_reply, run);
        }
        if (run->child_pid && !run->child_exited)
                run->grace_source = g_timeout_add(CHILD_GRACE_MS, on_grace_over, run);
        else
                run->grace_over = TRUE;
        record_run_maybe_quit(run);
}

static gboolean on_sigint(gpointer data) {
        interrupted(data, SIGINT);
        return G_SOURCE_CONTINUE;
}

static gboolean on_sigterm(gpointer data) {
        interrupted(data, SIGTERM);
        return G_SOURCE_CONTINUE;
}

static gboolean on_sighup(gpointer data) {
        interrupted(data, SIGHUP);
        return G_SOURCE_CONTINUE;
}

/* A command that cannot run is found before anything starts, as a shell
 * would: 127 when it does not exist, 126 when it cannot be executed. */
static int check_command(const char *name) {
        if (strchr(name, '/')) {
                if (access(name, X_OK) == 0)
                        return 0;
                int e = errno;
                fprintf(stderr, "periscope record: cannot run %s: %s\n", name, g_strerror(e));
                return e == ENOENT || e == ENOTDIR ? 127 : 126;
        }
        g_autofree char *found = g_find_program_in_path(name);
        if (found)
                return 0;
        fprintf(stderr, "periscope record: %s: command not found (nothing recorded)\n", name);
        return 127;
}

/* Forks the command, held before exec until the gate fd gets a byte (closed
 * without one: the recording could not start and the child exits 127). An
 * exec that fails sends its errno back on the gate. */
static int start_held_command(char **command, const char *preload, const RecordJitEnv *jit, GPid *ret_pid,
                              int *ret_gate) {
        int gate[2];
        int r = record_control_gate_new(gate);
        if (r < 0)
                return r;
        pid_t pid = fork();
        if (pid < 0) {
                int e = errno;
                close(gate[0]);
                close(gate[1]);
                return -e;
        }
        if (pid == 0) {
                close(gate[1]);
                if (record_control_child_wait(gate[0], preload) < 0 || record_jit_env_export(jit) < 0)
                        _exit(127);
                execvp(command[0], command);
                int e = errno;
                (void) !write(gate[0], &e, sizeof(e));
                _exit(e == ENOENT ? 127 : 126);
        }
        close(gate[0]);
        *ret_pid = pid;
        *ret_gate = gate[1];
        return 0;
}

/* Blocks until the released command has exec'd (0) or failed to (errno). */
static int wait_exec(int gate) {
        int e = 0;
        ssize_t k;
        do
                k = read(gate, &e, sizeof(e));
        while (k < 0 && errno == EINTR);
        return k == sizeof(e) ? e : 0;
}

static int exit_status_of(int status) {
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        if (WIFSIGNALED(status))
                return 128 + WTERMSIG(status);
        return 1;
}

/* The helper failed and not one user-space address of the capture has a
 * name: the recording is of little use, and record says so by its status. */
static gboolean nothing_named(const RecordRun *run) {
        guint32 failures = 0;
        guint64 addresses = 0, named = 0;
        return run->stats && g_variant_lookup(run->stats, "helper-failures", "u", &failures) && failures > 0 &&
               g_variant_lookup(run->stats, "user-addresses", "t", &addresses) && addresses > 0 &&
               g_variant_lookup(run->stats, "user-addresses-named", "t", &named) && named == 0;
}

/* SAMPLE frames in the capture at path up to its last whole frame, or -1. */
static gint64 count_samples(const OutputFile *output) {
        if (!output->target || output->dir_fd < 0)
                return -1;
        int fd = openat(output->dir_fd, output->target, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -1;
        g_autoptr(CaptureReader) reader = NULL;
        int r = capture_reader_open_fd(fd, &reader, NULL);
        (void) close(fd);
        if (r < 0)
                return -1;
        return (gint64) capture_info_count_samples(reader);
}

/* periscoped died before Finished: the capture is what it flushed, with no
 * symbol tables; the identities it wrote as files were mapped let
 * `periscope symbolize` name it from this machine's files. */
static void say_service_died(RecordRun *run) {
        fprintf(stderr,
                "periscope record: periscoped died during the recording (%s); the capture holds %" G_GINT64_FORMAT
                " samples up to then; name them with `periscope symbolize %s`\n",
                run->service_died, (gint64) run->samples, run->output.name);
        if (run->service.daemon_log)
                fprintf(stderr, "periscope record: periscoped's log: %s\n", run->service.daemon_log);
}

static void print_summary(RecordRun *run) {
        /* the sampling window, as the capture's duration: not the post-stop
         * stages, nor a command that outlives --duration */
        guint64 duration_ns;
        double secs = run->stats && g_variant_lookup(run->stats, "duration-ns", "t", &duration_ns)
                              ? duration_ns / 1e9
                              : (g_get_monotonic_time() - run->start_us) / 1e6;
        const char *reason = run->service_died ? "periscoped died" : "?";
        gint64 held = run->service_died ? count_samples(&run->output) : -1;
        if (held >= 0)
                run->samples = (guint64) held; /* what the capture holds, not the last count it sent */
        if (run->stats)
                (void) g_variant_lookup(run->stats, "reason", "&s", &reason);
        live_line_clear(run);
        g_autofree char *size = g_format_size(run->bytes);
        fprintf(stderr,
                "periscope: recorded %" G_GUINT64_FORMAT " samples (%" G_GUINT64_FORMAT " lost) from %u %s "
                "in %.1f s (ended: %s)\n",
                run->samples, run->lost, run->processes, run->processes == 1 ? "process" : "processes", secs, reason);
        /* the sandboxed helper failed on files (or could not start): their
         * frames are unnamed or their stacks cut short; say what is missing */
        guint32 helper_failures = 0, unwind_failures = 0;
        if (run->stats && g_variant_lookup(run->stats, "helper-failures", "u", &helper_failures) &&
            helper_failures > 0) {
                (void) g_variant_lookup(run->stats, "unwind-helper-failures", "u", &unwind_failures);
                unwind_failures = MIN(unwind_failures, helper_failures);
                fprintf(stderr, "periscope: %u file%s unresolved: helper failed (see periscoped's log%s%s)\n",
                        helper_failures, helper_failures == 1 ? "" : "s", run->service.daemon_log ? ": " : "",
                        run->service.daemon_log ? run->service.daemon_log : "");
                if (helper_failures > unwind_failures)
                        fprintf(stderr,
                                "periscope:   names missing for %u of them: their frames show as "
                                "module+0xOFFSET (`periscope symbolize` can name them later)\n",
                                helper_failures - unwind_failures);
                if (unwind_failures)
                        fprintf(stderr,
                                "periscope:   DWARF stacks missing for %u of them: no unwind tables, "
                                "so stacks stop at their first frame in those files\n",
                                unwind_failures);
        }
        /* off-CPU (docs/off-cpu.md): what was kept, and whether a storm of
         * switches made it a sample */
        guint64 waits, blocked_ns = 0, stacks = 0, shorter = 0, paused = 0, stacks_paused = 0;
        if (run->stats && g_variant_lookup(run->stats, "off-cpu-waits", "t", &waits)) {
                (void) g_variant_lookup(run->stats, "off-cpu-blocked-ns", "t", &blocked_ns);
                (void) g_variant_lookup(run->stats, "off-cpu-stacks", "t", &stacks);
                (void) g_variant_lookup(run->stats, "off-cpu-short-waits", "t", &shorter);
                (void) g_variant_lookup(run->stats, "off-cpu-paused-ns", "t", &paused);
                (void) g_variant_lookup(run->stats, "off-cpu-stacks-paused-ns", "t", &stacks_paused);
                fprintf(stderr,
                        "periscope: off-CPU: %" G_GUINT64_FORMAT " waits blocked %.3f s (%" G_GUINT64_FORMAT
                        " with a stack), %" G_GUINT64_FORMAT " shorter ones counted; `periscope report --off-cpu`\n",
                        waits, (double) blocked_ns / 1e9, stacks, shorter);
                if (paused || stacks_paused)
                        fprintf(stderr,
                                "periscope: off-CPU switches sampled under a storm of context switches: switch "
                                "records paused %.1f s, stacks %.1f s\n",
                                (double) paused / 1e9, (double) stacks_paused / 1e9);
        }
        /* Python frames (docs/python.md) */
        guint64 py_processes, py_samples = 0, py_failures = 0;
        if (run->stats && g_variant_lookup(run->stats, "python-processes", "t", &py_processes)) {
                (void) g_variant_lookup(run->stats, "python-samples", "t", &py_samples);
                (void) g_variant_lookup(run->stats, "python-read-failures", "t", &py_failures);
                fprintf(stderr,
                        "periscope: Python frames in %" G_GUINT64_FORMAT " samples of %" G_GUINT64_FORMAT
                        " interpreter%s",
                        py_samples, py_processes, py_processes == 1 ? "" : "s");
                if (py_failures)
                        fprintf(stderr, "; %" G_GUINT64_FORMAT " samples' frames could not be read (the log says why)",
                                py_failures);
                fputc('\n', stderr);
        }
        if (nothing_named(run))
                fprintf(stderr, "periscope: the helper named nothing: the capture has no function names of "
                                "user-space code (exit status 1)\n");
        /* the service's budgets for one recording (docs/security.md) */
        guint64 over_budget = 0;
        gboolean budget_spent = FALSE;
        if (run->stats && g_variant_lookup(run->stats, "addresses-over-budget", "t", &over_budget) && over_budget > 0)
                fprintf(stderr,
                        "periscope: %" G_GUINT64_FORMAT " addresses past the service's budget of distinct "
                        "addresses were not symbolized (shown as module+0xOFFSET)\n",
                        over_budget);
        if (run->stats && g_variant_lookup(run->stats, "helper-budget-spent", "b", &budget_spent) && budget_spent)
                fprintf(stderr, "periscope: the symbolization time budget ran out: files not reached are unresolved\n");
        /* --container: processes that entered it during the recording. */
        guint32 joined = 0;
        gboolean stopped = FALSE;
        if (run->stats && g_variant_lookup(run->stats, "joined-processes", "u", &joined) && joined > 0)
                fprintf(stderr, "periscope: %u of them joined the container during the recording\n", joined);
        if (run->stats && g_variant_lookup(run->stats, "container-stopped", "b", &stopped) && stopped)
                fprintf(stderr, "periscope: the container had no process left at the end\n");
        /* Sysprof trace fd: what the program wrote and the service refused */
        guint64 trace_frames = 0, trace_refused = 0;
        if (run->stats && g_variant_lookup(run->stats, "trace-frames", "t", &trace_frames) &&
            g_variant_lookup(run->stats, "trace-frames-refused", "t", &trace_refused) &&
            (trace_frames > 0 || trace_refused > 0))
                fprintf(stderr, "periscope: %" G_GUINT64_FORMAT " frame%s from the program's SYSPROF_TRACE_FD merged, %"
                        G_GUINT64_FORMAT " refused%s\n", trace_frames, trace_frames == 1 ? "" : "s", trace_refused,
                        trace_refused ? " (malformed, another process's, or outside the recording; the capture's "
                                        "log says why)" : "");
        struct stat st;
        if (run->service_died)
                say_service_died(run);
        else if (!run->finished_ok && run->output.target &&
                 fstatat(run->output.dir_fd, run->output.target, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                 S_ISREG(st.st_mode)) {
                g_autofree char *kept = g_format_size(st.st_size);
                fprintf(stderr, "periscope: the capture %s is truncated (%s kept): %s\n", run->output.name, kept,
                        run->finished_error);
        } else if (!run->finished_ok)
                fprintf(stderr, "periscope: the capture %s is truncated: %s\n", run->output.name, run->finished_error);
        else if (run->output.target)
                fprintf(stderr, "periscope: capture written to %s (%s); look at it with `periscope info %s`\n",
                        run->output.name, size, run->output.name);
        else /* a device, pipe or standard output */
                fprintf(stderr, "periscope: capture written to %s (%s)\n", run->output.name, size);
        if (run->finished_ok)
                run->cut_short = report_cut_short(run);
}

/* The end of the recording, said once: the capture complete on its output
 * (a device is written through a copying child: it has all once periscoped
 * closed its end), then the summary. */
static void report_recording_end(RecordRun *run) {
        if (run->summary_printed)
                return;
        run->summary_printed = TRUE;
        live_line_stop(run);
        (void) output_file_wait_relay(&run->output, &run->relay_error);
        if (!run->exec_error)
                print_summary(run);
}

static void subscribe(RecordRun *run) {
        static const struct {
                const char *interface, *member;
                GDBusSignalCallback callback;
        } signals[] = {
                { RECORDING_INTERFACE, "Finished", on_finished },
                { RECORDING_INTERFACE, "Progress", on_progress },
                { "org.freedesktop.DBus.Properties", "PropertiesChanged", on_properties_changed },
        };
        G_STATIC_ASSERT(G_N_ELEMENTS(signals) == G_N_ELEMENTS(run->subscriptions));
        for (size_t i = 0; i < G_N_ELEMENTS(signals); i++)
                run->subscriptions[i] = g_dbus_connection_signal_subscribe(
                        run->service.conn, run->service.owner, signals[i].interface, signals[i].member, NULL, NULL,
                        G_DBUS_SIGNAL_FLAGS_NONE, signals[i].callback, run, NULL);
}

static void record_run_clear(RecordRun *run) {
        if (run->child_source)
                g_source_remove(run->child_source);
        if (run->grace_source)
                g_source_remove(run->grace_source);
        if (run->child_pidfd >= 0)
                close(run->child_pidfd);
        if (run->name_watch)
                g_bus_unwatch_name(run->name_watch);
        if (run->service.conn) {
                g_signal_handlers_disconnect_by_data(run->service.conn, run);
                for (size_t i = 0; i < G_N_ELEMENTS(run->subscriptions); i++)
                        if (run->subscriptions[i])
                                g_dbus_connection_signal_unsubscribe(run->service.conn, run->subscriptions[i]);
        }
        service_disconnect(&run->service);
        output_file_finish(&run->output);
        if (run->loop)
                g_main_loop_unref(run->loop);
        g_clear_pointer(&run->stats, g_variant_unref);
        g_free(run->finished_error);
        g_free(run->service_died);
        g_clear_error(&run->relay_error);
        g_free(run->recording);
}

/* Starts the recording; returns 0 or the exit status. */
static int start_recording(RecordRun *run, const RecordArgs *a, int gate) {
        g_autoptr(GError) error = NULL;
        if (output_file_open(&run->output, a->output, OUTPUT_BINARY | OUTPUT_SERVICE | OUTPUT_PRIVATE, &error) < 0) {
                fprintf(stderr, "periscope record: %s\n", error->message);
                return 1;
        }
        const ServiceWhere where = { .address = a->address, .session_bus = a->session_bus,
                                     .private_daemon = a->private_daemon, .verbose = a->verbose };
        if (service_connect(&run->service, &where, &error) < 0) {
                fprintf(stderr, "periscope record: cannot reach periscoped: %s\n", error->message);
                return 1;
        }
        subscribe(run);
        g_autoptr(GUnixFDList) fds = g_unix_fd_list_new_from_array(&run->output.fd, 1); /* takes the fd */
        run->output.fd = -1;
        g_autoptr(GVariant) reply = g_dbus_connection_call_with_unix_fd_list_sync(
                run->service.conn, run->service.owner, PROFILER_PATH, PROFILER_NAME, "Record",
                g_variant_new("(@a{sv}h)", record_args_to_options(a, run->child_pid), 0), G_VARIANT_TYPE("(o)"),
                G_DBUS_CALL_FLAGS_ALLOW_INTERACTIVE_AUTHORIZATION, 60000, fds, NULL, NULL, &error);
        if (!reply)
                return record_args_report_refusal(a, error);
        g_variant_get(reply, "(o)", &run->recording);
        run->start_us = g_get_monotonic_time();

        /* Armed: now the command may run. */
        if (gate >= 0) {
                int control_fd = a->no_control_fd ? -1
                                                  : record_control_open(run->service.conn, run->service.owner,
                                                                        run->recording, "OpenControlFd", "control fd",
                                                                        "marks and counters of the program are "
                                                                        "not recorded");
                int trace_fd = a->no_trace_fd ? -1
                                              : record_control_open(run->service.conn, run->service.owner,
                                                                    run->recording, "OpenTraceFd", "trace fd",
                                                                    "what it writes to SYSPROF_TRACE_FD is not "
                                                                    "recorded");
                int r = record_control_release(gate, control_fd, trace_fd);
                if (r < 0)
                        fprintf(stderr, "periscope record: cannot release the command: %s\n", g_strerror(-r));
                if (control_fd >= 0)
                        close(control_fd); /* the command's copy keeps it open; its end ends the rings */
                if (trace_fd >= 0)
                        close(trace_fd);   /* the service reads its own copy at the end */
                run->exec_error = wait_exec(gate);
                watch_child(run);
        }
        if (run->exec_error) {
                fprintf(stderr, "periscope record: cannot run %s: %s (nothing recorded)\n", a->command[0],
                        g_strerror(run->exec_error));
        } else if (output_file_commit(&run->output, &error) < 0) {
                fprintf(stderr, "periscope record: %s\n", error->message);
                return 1;
        }
        g_signal_connect(run->service.conn, "closed", G_CALLBACK(on_connection_closed), run);
        if (run->service.owner)
                run->name_watch = g_bus_watch_name_on_connection(run->service.conn, run->service.owner,
                                                                 G_BUS_NAME_WATCHER_FLAGS_NONE, NULL,
                                                                 on_name_vanished, run, NULL);
        return 0;
}

static int exit_status(RecordRun *run) {
        if (run->exec_error)
                return run->exec_error == ENOENT ? 127 : 126;
        /* An interrupt ends a recording as a shell reports an interrupted
         * command (130 for Ctrl-C), with or without a command; the capture
         * is complete either way (else 1 below). */
        if (run->first_signal && run->finished_ok)
                return 128 + run->first_signal;
        if (run->first_signal && run->child_pid)
                return 128 + run->first_signal;
        if (run->cut_short)
                return 3;
        int status = run->child_pid ? exit_status_of(run->child_status) : 0;
        if (!run->finished_ok && status == 0)
                return 1;
        if (nothing_named(run) && status == 0)
                return 1;
        return status;
}

int cmd_record(int argc, char **argv) {
        g_auto(RecordArgs) a = {};
        int ret = record_args_parse(&a, argc, argv);
        if (ret != 0)
                return ret;
        if (a.command && (ret = check_command(a.command[0])) != 0)
                return ret;
        if (!a.output) {
                g_autoptr(GDateTime) now = g_date_time_new_now_local();
                a.output = g_date_time_format(now, "periscope-%Y%m%d-%H%M%S.syscap");
        }
        g_autofree char *preload = NULL;
        if (a.memory) {
                g_autoptr(GError) error = NULL;
                preload = record_control_find_memory_lib(&error);
                if (!preload) {
                        fprintf(stderr, "periscope record: --memory: %s\n", error->message);
                        return 1;
                }
        }

        RecordRun run = { .start_us = g_get_monotonic_time(),
                          .live = isatty(STDERR_FILENO),
                          .child_pidfd = -1,
                          .output = OUTPUT_FILE_INIT };
        int gate = -1;
        RecordJitEnv jit;
        record_jit_env_init(&jit, a.command && !a.no_jit_env);
        /* Fork before GDBus starts its thread. */
        if (a.command) {
                int r = start_held_command(a.command, preload, &jit, &run.child_pid, &gate);
                if (r < 0) {
                        fprintf(stderr, "periscope record: cannot start the command: %s\n", g_strerror(-r));
                        return 1;
                }
        }
        /* From here an interrupt stops the recording (once it runs) instead
         * of leaving a half-made capture behind. */
        run.loop = g_main_loop_new(NULL, FALSE);
        g_unix_signal_add(SIGINT, on_sigint, &run);
        g_unix_signal_add(SIGTERM, on_sigterm, &run);
        g_unix_signal_add(SIGHUP, on_sighup, &run);
        ret = start_recording(&run, &a, gate);
        if (gate >= 0)
                close(gate); /* a command still held exits 127 without running */
        if (ret == 0) {
                if (run.live && !run.stopping)
                        run.live_source = g_timeout_add(250, on_live_tick, &run);
                g_main_loop_run(run.loop);
                report_recording_end(&run);
                if (run.child_pid && !run.child_exited && (run.grace_over || run.leave_command))
                        fprintf(stderr,
                                "periscope: the command (pid %d) is still running; it is no longer recorded "
                                "and keeps running without periscope\n",
                                (int) run.child_pid);
                ret = exit_status(&run);
                /* the perf maps are in the capture now */
                if (run.child_pid && run.child_exited && run.finished_ok)
                        record_jit_env_clean(&jit, run.output.dir_fd, run.output.target, run.child_pid, a.command);
                if (run.relay_error) {
                        fprintf(stderr, "periscope record: %s\n", run.relay_error->message);
                        ret = ret ? ret : 1;
                }
        }
        if (run.child_pid && !run.child_reaped && (run.child_exited || !run.recording)) {
                int status;
                (void) waitpid(run.child_pid, &status, 0);
        }
        record_run_clear(&run);
        return ret;
}
