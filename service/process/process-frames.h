/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* process-frames.h: writes what a process looks like right now, from
 * /proc: a PROCESS frame (command line), a MAP frame per executable mapping
 * (each file pinned and entered into the process tables), and its
 * mountinfo as a FILE_CHUNK named /proc/PID/mountinfo. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "capture.h"
#include "perf.h"
#include "pinned-files.h"
#include "process-maps.h"
#include "thread-table.h"

/* process_frames_write()'s owner for a caller who may record any process
 * (root, polkit): no check. */
#define PROCESS_FRAMES_ANY_OWNER ((uid_t) -1)

/* Snapshots one process. -ESRCH if it is gone, or when it is no longer
 * owner's once its maps are open (unless PROCESS_FRAMES_ANY_OWNER: see
 * process_recheck_after_open(); then nothing of it is written). With
 * ret_cmdline, its PROCESS frame is not written but its command line
 * returned (a command held before its exec, whose PROCESS frame comes with
 * the exec). */
int process_frames_write(CaptureWriter *w, ProcessMaps *maps, PinnedFiles *pinned, int64_t time, pid_t pid, uid_t owner,
                         char **ret_cmdline);

/* Snapshots every process in /proc; returns how many were written; with
 * thread_names (else NULL) also the name of each of their threads, kept
 * there too.
 * `between` (may be NULL) runs after each process: with thousands of
 * processes the snapshot takes long enough for armed perf rings to fill. */
int process_frames_write_all(CaptureWriter *w, ProcessMaps *maps, PinnedFiles *pinned, int64_t time,
                             ThreadTable *thread_names, void (*between)(void *userdata), void *userdata);

/* The name (comm) of every thread of pid now, from /proc/PID/task/TID/comm,
 * as thread-name frames at time, kept in names: -ESRCH if pid is gone. */
int process_frames_write_threads(CaptureWriter *w, ThreadTable *names, int64_t time, pid_t pid);

/* A thread's new name (a COMM record: prctl(PR_SET_NAME),
 * pthread_setname_np, exec) as a thread-name frame, kept in names. */
int process_frames_write_thread_name(CaptureWriter *w, ThreadTable *names, const PerfComm *c);

/* A thread's start (FORK record: a new thread, or a new process's main
 * thread) as a thread-name frame with the name it inherits from the thread
 * that created it (ptid) when names knows it; a thread's end (EXIT) forgets
 * it. */
int process_frames_write_thread_task(CaptureWriter *w, ThreadTable *names, const PerfTask *t, bool fork);

/* The command line of pid with spaces between arguments (like Sysprof), or
 * "[comm]" for kernel threads; malloc'ed. fallback is used when /proc has
 * nothing (the process is gone). */
char *process_read_cmdline(pid_t pid, const char *fallback);

/* pid's state letter from /proc/PID/stat (R, S, D, Z, ...): 0, or -ESRCH
 * when it is gone. */
int process_read_state(pid_t pid, char *ret);

/* Pins the mapping's file and adds it to pid's table; the MAP frame is the
 * caller's. Shared by the snapshot and MMAP2 handling. */
int process_track_mapping(ProcessMaps *maps, PinnedFiles *pinned, pid_t pid, ProcessMapping *mapping);

/* Pins pid's file mappings that have no pinned file yet (their container's
 * layers were not known when they were mapped); how many it pinned now. */
size_t process_repin_mappings(ProcessMaps *maps, PinnedFiles *pinned, pid_t pid);

/* The frames of a process's life as perf reports it, shared by a recording
 * and an org.gnome.Sysprof3 unwind session: an executable MMAP2 mapping
 * tracked (pinned, entered into maps) and written as a MAP frame (others
 * are skipped: returns 0); an exec (COMM record with exec set, of the
 * process's main thread) entered into maps and written as a PROCESS frame
 * with the command line from /proc; a FORK of a new process or the EXIT of
 * one as FORK/EXIT frames (threads are skipped). */
int process_frames_write_mmap2(CaptureWriter *w, ProcessMaps *maps, PinnedFiles *pinned, const PerfMmap2 *m);
int process_frames_write_exec(CaptureWriter *w, ProcessMaps *maps, const PerfComm *c);
int process_frames_write_task(CaptureWriter *w, ProcessMaps *maps, const PerfTask *t, bool fork);
