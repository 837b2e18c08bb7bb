/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-sink.c: what the pump hands on becomes capture frames here;
 * the parts hear of the records that are not samples. */
#include "recording-private.h"

#include <errno.h>
#include <sys/mman.h>

#include "basic.h"

/* An EXIT record this soon after the process's exec, with the process
 * alive, is the kernel removing its events (events_removed_at_exec). */
#define EXEC_EVENTS_REMOVED_WINDOW_NS (1000 * 1000 * 1000ll)

/* Writes one built SAMPLE and notes its addresses for symbolization. */
static int recording_emit_sample(const PerfSample *s, const uint64_t *addrs, size_t n, void *userdata) {
        Recording *rec = userdata;
        for (size_t i = 0; i < rec->n_sample_parts; i++) {
                RecordingPart *p = rec->sample_parts[i];
                int r = p->vtable->sample(p->state, rec, s, &addrs, &n);
                if (r < 0)
                        return r;
        }
        bool kernel_part = false;
        size_t depth = 0; /* frames since the context marker: the first is the sampled IP */
        for (size_t i = 0; i < n; i++) {
                uint64_t a = addrs[i];
                if (capture_address_is_context(a)) {
                        kernel_part = a == CAPTURE_CONTEXT_KERNEL;
                        depth = 0;
                        continue;
                }
                if (!kernel_part && (a & CAPTURE_JITMAP_MARK) == CAPTURE_JITMAP_MARK) {
                        depth++; /* named by JITMAP frames (interpreter frames), not by files */
                        continue;
                }
                if (address_set_add(rec->addresses, kernel_part ? ADDRESS_SET_KERNEL_PID : (int32_t) s->pid, a,
                                    depth++ > 0) < 0)
                        return -ENOMEM;
        }
        if (s->off_cpu_ns > 0)
                return capture_writer_add_off_cpu(
                        rec->writer, (int64_t) s->time, (int) s->cpu, (int32_t) s->pid, (int32_t) s->tid,
                        s->off_cpu_state == PERF_OFF_CPU_RUNNABLE ? CAPTURE_OFF_CPU_RUNNABLE : CAPTURE_OFF_CPU_BLOCKED,
                        s->off_cpu_ns, addrs, n);
        int r = capture_writer_add_sample(rec->writer, (int64_t) s->time, (int) s->cpu, (int32_t) s->pid,
                                          (int32_t) s->tid, addrs, n);
        if (r < 0)
                return r;
        rec->samples++;
        return 0;
}

/* An off-CPU interval without a stack (preempted, or not sampled). */
static int recording_emit_off_cpu(const OffCpuInterval *iv, void *userdata) {
        Recording *rec = userdata;
        return capture_writer_add_off_cpu(
                rec->writer, (int64_t) iv->time, (int) iv->cpu, (int32_t) iv->pid, (int32_t) iv->tid,
                iv->state == PERF_OFF_CPU_RUNNABLE ? CAPTURE_OFF_CPU_RUNNABLE : CAPTURE_OFF_CPU_BLOCKED,
                iv->duration_ns, NULL, 0);
}

static int recording_handle_mmap2(const PerfMmap2 *m, void *userdata) {
        Recording *rec = userdata;
        if (!(m->prot & PROT_EXEC) || m->len == 0)
                return 0;
        /* A process seen for the first time: which container/app it is in. */
        int r = container_frames_write(rec->writer, rec->resolver, (int64_t) m->id.time, (pid_t) m->pid);
        if (r < 0)
                return r;
        r = process_frames_write_mmap2(rec->writer, rec->maps, rec->pinned, m);
        for (RecordingPart *p = rec->parts; r >= 0 && p < rec->parts + rec->n_parts; p++)
                if (p->vtable->mmap2)
                        r = p->vtable->mmap2(p->state, rec, m);
        return r < 0 ? r : 0;
}

static int recording_handle_comm(const PerfComm *c, void *userdata) {
        Recording *rec = userdata;
        int r = 0;
        for (RecordingPart *p = rec->parts; r >= 0 && p < rec->parts + rec->n_parts; p++)
                if (p->vtable->comm)
                        r = p->vtable->comm(p->state, rec, c);
        if (r < 0)
                return r;
        r = process_frames_write_exec(rec->writer, rec->maps, c);
        if (r < 0)
                return r;
        return process_frames_write_thread_name(rec->writer, rec->thread_names, c);
}

/* An EXIT record of a process that is alive, right after its exec: the
 * kernel removed its events because the exec made it non-dumpable (set-id,
 * a gain of capabilities, a program it may not read: begin_new_exec calls
 * perf_event_exit_task). The process goes on without them. */
static bool events_removed_at_exec(Recording *rec, pid_t pid, int64_t time) {
        int64_t exec_time = process_maps_get_exec_time(rec->maps, (int32_t) pid);
        if (exec_time <= 0 || time < exec_time || time - exec_time > EXEC_EVENTS_REMOVED_WINDOW_NS)
                return false;
        char state;
        return process_read_state(pid, &state) >= 0 && state != 'Z' && state != 'X';
}

static int recording_handle_task(const PerfTask *t, bool fork, void *userdata) {
        Recording *rec = userdata;
        int r = 0;
        /* The kernel removed its events at an exec that made it
         * non-dumpable: it did not exit. Per-CPU events (--system) are
         * not removed and go on sampling it. */
        if (!fork && t->pid == t->tid && events_removed_at_exec(rec, (pid_t) t->pid, (int64_t) t->time)) {
                for (RecordingPart *p = rec->parts; r >= 0 && p < rec->parts + rec->n_parts; p++)
                        if (p->vtable->exec_lost && !rec->options.system)
                                r = p->vtable->exec_lost(p->state, rec, (pid_t) t->pid);
                return r;
        }
        for (RecordingPart *p = rec->parts; r >= 0 && p < rec->parts + rec->n_parts; p++)
                if (p->vtable->task)
                        r = p->vtable->task(p->state, rec, t, fork);
        if (r < 0)
                return r;
        r = process_frames_write_thread_task(rec->writer, rec->thread_names, t, fork);
        if (r < 0)
                return r;
        return process_frames_write_task(rec->writer, rec->maps, t, fork);
}

const SamplePumpSink recording_sink = {
        .sample = recording_emit_sample,
        .mmap2 = recording_handle_mmap2,
        .comm = recording_handle_comm,
        .task = recording_handle_task,
        .off_cpu = recording_emit_off_cpu,
        .wake = recording_pump_wake,
};
