/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-jit.c: the part that finds the processes' JIT files (perf
 * maps, jitdumps) and pins them at first sight: as a program maps code,
 * at each exec and fork, every tick, and once more at the end for the
 * processes still alive; the symbolize stage names JIT code from them. */
#include "recording-private.h"

#include <errno.h>

#include "basic.h"

/* A program writing a perf map makes its file early: look while it maps code. */
static int jit_mmap2(void *part, Recording *rec, const PerfMmap2 *m) {
        return jit_files_look(rec->jit_files, (pid_t) m->pid, now_monotonic_ms(),
                              process_mapping_name_is_anonymous(m->filename));
}

/* a new program: its JIT files are looked for again */
static int jit_comm(void *part, Recording *rec, const PerfComm *c) {
        if (c->exec && c->pid == c->tid)
                return jit_files_new_process(rec->jit_files, (pid_t) c->pid, now_monotonic_ms());
        return 0;
}

static int jit_task(void *part, Recording *rec, const PerfTask *t, bool fork) {
        if (fork && t->pid != t->ppid)
                return jit_files_new_process(rec->jit_files, (pid_t) t->pid, now_monotonic_ms());
        if (!fork && t->pid == t->tid)
                return jit_files_exited(rec->jit_files, (pid_t) t->pid);
        return 0;
}

static void jit_tick(void *part, Recording *rec) {
        if (jit_files_look_all(rec->jit_files, rec->maps, now_monotonic_ms(), false) < 0)
                recording_fail(rec, -ENOMEM, "out of memory");
}

/* the processes still alive */
static void jit_close(void *part, Recording *rec) {
        (void) jit_files_look_all(rec->jit_files, rec->maps, now_monotonic_ms(), true);
}

const RecordingPartVTable recording_part_jit = {
        .name = "jit",
        .mmap2 = jit_mmap2,
        .comm = jit_comm,
        .task = jit_task,
        .tick = jit_tick,
        .close = jit_close,
};
