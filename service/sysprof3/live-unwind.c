/* live-unwind.c: an Unwind session: the client's perf rings in, unwound
 * samples out to its capture fd. */
#include "live-unwind.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "basic.h"
#include "capture.h"
#include "perf.h"
#include "process.h"
#include "unwind.h"

/* The rings are drained at least this often (Sysprof asks for a wakeup only
 * every 149 samples, more than a ring of stack copies holds). */
#define LIVE_UNWIND_DRAIN_USEC (50u * 1000u)
/* Data pages per CPU ring (4 MiB): a quarter second of 16 KiB stack copies
 * at 1 kHz, so a table compile in the helper loses little. */
#define LIVE_UNWIND_RING_PAGES 1024u
/* The capture pipe's size: the start snapshot of a whole system is a few
 * MiB, written while the client reads. */
#define LIVE_UNWIND_PIPE_BYTES (1u << 20)

struct LiveUnwind {
        LiveUnwindSetup setup;
        PerfEvents *perf;
        CaptureWriter *writer;
        ProcessMaps *maps;
        PinnedFiles *pinned;
        SampleUnwinder unwinder;
        sd_event_source **ring_sources;
        size_t n_ring_sources;
        sd_event_source *event_source, *timer, *snapshot;
        sd_event_source *slice;    /* defer: the next slice of spilled and queued samples */
        int32_t *pids;             /* the processes to snapshot first (not system) */
        size_t n_pids;
        int event_fd;
        pid_t self;
        bool ended;
        bool draining;             /* the rings' readers are in use */
        bool replaying;            /* reading the spill right now */
        PerfSpill spill;           /* records moved out of the rings while the daemon waited */
        uint64_t samples, lost, bad_records;
        uint64_t addrs[UNWINDER_MAX_FRAMES + 64];
};

static int emit_sample(const PerfSample *s, const uint64_t *addrs, size_t n, void *userdata) {
        LiveUnwind *u = userdata;
        int r = capture_writer_add_sample(u->writer, (int64_t) s->time, (int) s->cpu, (int32_t) s->pid,
                                          (int32_t) s->tid, addrs, n);
        if (r >= 0)
                u->samples++;
        return r;
}

/* The frame pointer, stack pointer and ip out of whatever registers the
 * client asked for (Sysprof 48 asks for all general ones), in the order
 * sample-unwind.h expects (SAMPLE_UNWIND_REGS_MASK); false without them. */
static bool pick_unwind_regs(uint64_t mask, const PerfSample *s, uint64_t ret[3]) {
        static const unsigned bits[3] = { 6, 7, 8 }; /* PERF_REG_X86_BP, SP, IP */
        if (s->regs_abi == 0 || !s->regs)
                return false;
        for (size_t i = 0; i < 3; i++) {
                if (!(mask & (1ull << bits[i])))
                        return false;
                unsigned index = (unsigned) __builtin_popcountll(mask & ((1ull << bits[i]) - 1));
                if (index >= s->n_regs)
                        return false;
                ret[i] = s->regs[index];
        }
        return true;
}

static int handle_sample(LiveUnwind *u, const struct perf_event_header *h, size_t size) {
        PerfSample s;
        if (perf_record_parse_sample(&u->setup.layout, h, size, &s) < 0) {
                u->bad_records++;
                return 0;
        }
        if ((pid_t) s.pid == u->self)
                return 0; /* the daemon's own work */
        uint64_t regs[3];
        bool dwarf = u->setup.stack_size > 0 && s.stack && pick_unwind_regs(u->setup.layout.sample_regs_user, &s, regs);
        if (dwarf) {
                s.regs = regs;
                s.n_regs = 3;
        }
        bool deferred = false;
        SampleStackContext ctx = {
                .kernel = u->setup.kernel, .unwind = dwarf ? RECORD_UNWIND_DWARF : RECORD_UNWIND_FP,
                .maps = u->maps, .unwinder = dwarf ? &u->unwinder : NULL, .deferred = &deferred,
        };
        size_t n = sample_stack_build(&ctx, &s, u->addrs, ELEMENTSOF(u->addrs));
        if (n == 0)
                return 0;
        return emit_sample(&s, u->addrs, n, u);
}

static int handle_mmap2(LiveUnwind *u, const struct perf_event_header *h, size_t size) {
        PerfMmap2 m;
        if (perf_record_parse_mmap2(&u->setup.layout, h, size, &m) < 0) {
                u->bad_records++;
                return 0;
        }
        int r = process_frames_write_mmap2(u->writer, u->maps, u->pinned, &m);
        /* its unwind table compiles before its first sample needs it (not
         * for the whole system: most of its files are never sampled) */
        if (r >= 0 && u->unwinder.tables && !u->setup.system && (m.prot & PROT_EXEC))
                sample_unwinder_prepare(&u->unwinder, u->maps, (int32_t) m.pid, m.addr);
        return r;
}

static int handle_comm(LiveUnwind *u, const struct perf_event_header *h, size_t size) {
        PerfComm c;
        if (perf_record_parse_comm(&u->setup.layout, h, size, &c) < 0) {
                u->bad_records++;
                return 0;
        }
        return process_frames_write_exec(u->writer, u->maps, &c);
}

static int handle_task(LiveUnwind *u, const struct perf_event_header *h, size_t size) {
        PerfTask t;
        if (perf_record_parse_task(&u->setup.layout, h, size, &t) < 0) {
                u->bad_records++;
                return 0;
        }
        return process_frames_write_task(u->writer, u->maps, &t, h->type == PERF_RECORD_FORK);
}

static int handle_record(const struct perf_event_header *h, size_t size, void *userdata) {
        LiveUnwind *u = userdata;
        uint64_t lost;
        switch (h->type) {
        case PERF_RECORD_SAMPLE:
                /* The unwinder's queue is full (tables compile slower than
                 * samples come): the sample waits in the spill, behind the
                 * ones already there. */
                if (!u->replaying && (u->spill.size > 0 || sample_unwinder_queue_full(&u->unwinder)))
                        return perf_spill_add(h, size, &u->spill);
                if (u->replaying && sample_unwinder_queue_full(&u->unwinder))
                        return -EAGAIN; /* stays in the spill */
                return handle_sample(u, h, size);
        case PERF_RECORD_MMAP2:
                return handle_mmap2(u, h, size);
        case PERF_RECORD_COMM:
                return handle_comm(u, h, size);
        case PERF_RECORD_FORK:
        case PERF_RECORD_EXIT:
                return handle_task(u, h, size);
        case PERF_RECORD_LOST:
        case PERF_RECORD_LOST_SAMPLES:
                if (perf_record_parse_lost(h, size, &lost) == 0)
                        u->lost += lost;
                return 0;
        default:
                return 0;
        }
}

/* Ends the session: its owner frees it (on_end), so u is gone after. */
static void live_unwind_end(LiveUnwind *u, int error) {
        if (u->ended)
                return;
        u->ended = true;
        if (error < 0)
                log_info("sysprof3: unwind session %u ended: %s", u->setup.id, strerror(-error));
        if (u->setup.on_end)
                u->setup.on_end(u, u->setup.userdata);
}

/* Reads every ring, writes what came, and flushes to the client. Samples
 * waiting for a table compiling (off the event loop) are written once it
 * came (after a drain, or when the tables' listener hears of it), a slice
 * at a time (the `slice` source brings the next); at the `last` drain (the
 * session ends) the ones still waiting are unwound at once, a table still
 * compiling as none: the client has stopped, and nothing waits for every
 * table a busy machine's programs need. */
static int live_unwind_drain(LiveUnwind *u, bool last) {
        int r = 0;
        bool more = false;
        u->draining = true;
        if (u->spill.size > 0) {
                size_t batch = last ? SIZE_MAX : SAMPLE_UNWIND_FLUSH_BATCH;
                u->replaying = true;
                r = perf_spill_replay(&u->spill, batch, handle_record, u);
                u->replaying = false;
                more = r >= 0 && (size_t) r == batch && u->spill.size > 0;
        }
        if (r >= 0)
                r = perf_events_drain(u->perf, handle_record, u);
        u->draining = false;
        u->lost += u->spill.dropped_samples;
        u->spill.dropped_samples = 0;
        /* the last time, the spill's replay stops at a full queue: flush
         * without the missing tables, replay again */
        for (bool again = true; r >= 0 && again;) {
                r = sample_unwinder_flush(&u->unwinder, u->maps, u->setup.kernel, u->addrs, ELEMENTSOF(u->addrs),
                                          last, last ? SIZE_MAX : SAMPLE_UNWIND_FLUSH_BATCH, emit_sample, u);
                more |= r > 0;
                again = last && u->spill.size > 0;
                if (r >= 0 && again) {
                        u->replaying = true;
                        r = perf_spill_replay(&u->spill, SIZE_MAX, handle_record, u);
                        u->replaying = false;
                }
        }
        if (r < 0)
                return r;
        if (more && !last && u->slice) {
                /* after what the event loop has pending now (D-Bus calls, other sessions) */
                r = sd_event_source_set_enabled(u->slice, SD_EVENT_ONESHOT);
                if (r < 0)
                        return r;
        }
        return capture_writer_flush(u->writer);
}

/* Drains; true when the session ended instead (u is freed then). */
static bool drain_or_end(LiveUnwind *u) {
        int r = live_unwind_drain(u, false);
        if (r >= 0)
                return false;
        live_unwind_end(u, r); /* the client closed its end, or the pipe stayed full */
        return true;
}

/* The unwind tables decided files: the samples that waited go out. */
static void on_tables_ready(void *userdata) {
        LiveUnwind *u = userdata;
        if (!u->ended && !u->draining && u->unwinder.n_pending > 0)
                (void) drain_or_end(u);
}

static int on_ring(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void) drain_or_end(userdata);
        return 0;
}

/* The next slice of samples that waited (spilled or queued). */
static int on_slice(sd_event_source *s, void *userdata) {
        LiveUnwind *u = userdata;
        if (!u->ended && !u->draining)
                (void) drain_or_end(u);
        return 0;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        if (drain_or_end(userdata))
                return 0;
        int r = sd_event_source_set_time_relative(s, LIVE_UNWIND_DRAIN_USEC);
        return r < 0 ? r : sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int on_event_fd(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        LiveUnwind *u = userdata;
        (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
        live_unwind_end(u, 0);
        return 0;
}

void live_unwind_spill_rings(LiveUnwind *u) {
        if (u->ended || u->draining)
                return;
        u->draining = true;
        (void) perf_events_drain(u->perf, perf_spill_add, &u->spill);
        u->draining = false;
}

static void spill_between(void *userdata) {
        live_unwind_spill_rings(userdata);
}

/* The processes the session starts with, as PROCESS and MAP frames. */
static int live_unwind_snapshot(LiveUnwind *u) {
        int64_t now = now_monotonic_ns();
        if (u->setup.system) {
                int r = process_frames_write_all(u->writer, u->maps, u->pinned, now, NULL, spill_between, u);
                return r < 0 ? r : 0;
        }
        for (size_t i = 0; i < u->n_pids; i++) {
                pid_t pid = u->pids[i];
                if (u->setup.uid != 0 && !process_owned_by(pid, u->setup.uid))
                        continue; /* its pid was taken by someone else's process since */
                int r = process_frames_write(u->writer, u->maps, u->pinned, now, pid, NULL);
                if (r < 0 && r != -ESRCH)
                        return r;
                live_unwind_spill_rings(u);
        }
        if (u->unwinder.tables)
                sample_unwinder_prepare_all(&u->unwinder, u->maps);
        return 0;
}

/* Once the Unwind call was answered (the client reads the pipe only then):
 * the snapshot, then the first drain. */
static int on_snapshot(sd_event_source *s, void *userdata) {
        LiveUnwind *u = userdata;
        (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
        int r = live_unwind_snapshot(u);
        if (r < 0) {
                live_unwind_end(u, r); /* u is freed */
                return 0;
        }
        (void) drain_or_end(u);
        return 0;
}

static int live_unwind_watch(LiveUnwind *u) {
        size_t n = perf_events_get_n_rings(u->perf);
        u->ring_sources = calloc(n, sizeof(sd_event_source *));
        if (!u->ring_sources)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                int fd = perf_events_get_ring_fd(u->perf, i);
                if (fd < 0)
                        continue;
                int r = sd_event_add_io(u->setup.event, &u->ring_sources[u->n_ring_sources], fd, EPOLLIN, on_ring, u);
                if (r < 0)
                        return r;
                u->n_ring_sources++;
        }
        int r = sd_event_add_io(u->setup.event, &u->event_source, u->event_fd, EPOLLIN, on_event_fd, u);
        if (r < 0)
                return r;
        r = sd_event_add_defer(u->setup.event, &u->snapshot, on_snapshot, u);
        if (r < 0)
                return r;
        r = sd_event_add_defer(u->setup.event, &u->slice, on_slice, u);
        if (r < 0)
                return r;
        r = sd_event_source_set_priority(u->slice, SD_EVENT_PRIORITY_IDLE); /* after everything else pending */
        if (r < 0)
                return r;
        r = sd_event_source_set_enabled(u->slice, SD_EVENT_OFF);
        if (r < 0)
                return r;
        return sd_event_add_time_relative(u->setup.event, &u->timer, CLOCK_MONOTONIC, LIVE_UNWIND_DRAIN_USEC, 0,
                                          on_timer, u);
}

int live_unwind_start(const LiveUnwindSetup *setup, int *perf_fds, const int *cpus, size_t n, int event_fd,
                      int capture_fd, LiveUnwind **ret) {
        _cleanup_close_ int efd = event_fd;
        LiveUnwind *u = calloc(1, sizeof(LiveUnwind));
        int r = u ? 0 : -ENOMEM;
        if (u) {
                u->setup = *setup;
                u->setup.pids = NULL;
                u->setup.n_pids = 0;
                u->event_fd = -1;
                u->self = getpid();
                u->spill.layout = setup->layout;
                PerfEventsConfig config = {
                        .sample_type = setup->layout.sample_type, .sample_regs_user = setup->layout.sample_regs_user,
                        .sample_stack_user = setup->stack_size, .ring_pages = LIVE_UNWIND_RING_PAGES,
                };
                r = perf_events_new(&config, &u->perf);
        }
        /* From here every perf fd belongs to u->perf (or is closed). */
        for (size_t i = 0; i < n; i++) {
                int fd = TAKE_FD(perf_fds[i]);
                if (r >= 0)
                        r = perf_events_adopt(u->perf, fd, cpus[i]);
                else
                        safe_close(fd);
        }
        if (r >= 0 && setup->n_pids > 0) {
                u->pids = calloc(setup->n_pids, sizeof(int32_t));
                r = u->pids ? 0 : -ENOMEM;
                if (r >= 0) {
                        memcpy(u->pids, setup->pids, setup->n_pids * sizeof(int32_t));
                        u->n_pids = setup->n_pids;
                }
        }
        if (r >= 0) {
                (void) fcntl(capture_fd, F_SETPIPE_SZ, (int) LIVE_UNWIND_PIPE_BYTES); /* a socket or file: no-op */
                r = capture_writer_new_fd(capture_fd, now_monotonic_ns(), &u->writer);
        }
        if (r >= 0 && setup->tables) {
                r = unwind_tables_add_listener(setup->tables, on_tables_ready, u);
                if (r >= 0) {
                        u->unwinder.tables = setup->tables;
                        u->unwinder.owner = (uint32_t) setup->uid;
                }
        }
        if (r >= 0)
                r = process_maps_new(&u->maps);
        if (r >= 0)
                r = pinned_files_new(setup->max_pinned_files, &u->pinned);
        if (r >= 0)
                r = capture_writer_flush(u->writer);
        if (r >= 0) {
                u->event_fd = TAKE_FD(efd);
                r = live_unwind_watch(u);
        }
        if (r < 0) {
                live_unwind_free(u);
                return r;
        }
        *ret = u;
        return 0;
}

LiveUnwind *live_unwind_free(LiveUnwind *u) {
        if (!u)
                return NULL;
        unwind_tables_remove_listener(u->unwinder.tables, on_tables_ready, u);
        if (u->perf && u->writer) {
                (void) live_unwind_drain(u, true);
                log_info("sysprof3: unwind session %u: %llu samples, %llu lost, %llu malformed records", u->setup.id,
                         (unsigned long long) u->samples, (unsigned long long) u->lost,
                         (unsigned long long) u->bad_records);
        }
        for (size_t i = 0; i < u->n_ring_sources; i++)
                sd_event_source_disable_unref(u->ring_sources[i]);
        free(u->ring_sources);
        sd_event_source_disable_unref(u->event_source);
        sd_event_source_disable_unref(u->timer);
        sd_event_source_disable_unref(u->snapshot);
        sd_event_source_disable_unref(u->slice);
        free(u->pids);
        safe_close(u->event_fd);
        sample_unwinder_done(&u->unwinder);
        perf_spill_done(&u->spill);
        capture_writer_free(u->writer);
        perf_events_free(u->perf);
        pinned_files_free(u->pinned);
        process_maps_free(u->maps);
        free(u);
        return NULL;
}

uint64_t live_unwind_ring_bytes(const int *cpus, size_t n) {
        uint64_t rings = 0;
        for (size_t i = 0; i < n; i++) {
                bool seen = false;
                for (size_t j = 0; j < i && !seen; j++)
                        seen = cpus[j] == cpus[i];
                rings += !seen;
        }
        return rings * (LIVE_UNWIND_RING_PAGES + 1ull) * (uint64_t) sysconf(_SC_PAGESIZE);
}

uid_t live_unwind_get_uid(const LiveUnwind *u) {
        return u->setup.uid;
}

uint64_t live_unwind_get_samples(const LiveUnwind *u) {
        return u->samples;
}
