/* SPDX-License-Identifier: LGPL-2.1-or-later */
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
#include "pump.h"

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
        SamplePump *pump; /* the rings to the sink below */
        sd_event_source **ring_sources;
        size_t n_ring_sources;
        sd_event_source *event_source, *timer, *snapshot;
        int32_t *pids;             /* the processes to snapshot first (not system) */
        size_t n_pids;
        int event_fd;
        pid_t self;
        bool ended;
        uint64_t samples;
        uint64_t regs[PERF_REGS_UNWIND_N]; /* the unwind registers of the sample being built */
};

static int emit_sample(const PerfSample *s, const uint64_t *addrs, size_t n, void *userdata) {
        LiveUnwind *u = userdata;
        int r = capture_writer_add_sample(u->writer, (int64_t) s->time, (int) s->cpu, (int32_t) s->pid,
                                          (int32_t) s->tid, addrs, n);
        if (r >= 0)
                u->samples++;
        return r;
}

/* The unwinder's registers out of whatever registers the client asked for
 * (Sysprof 48 asks for all general ones), in the order sample-unwind.h
 * expects (SAMPLE_UNWIND_REGS_MASK, perf-regs.h); false without them. */
static bool pick_unwind_regs(uint64_t mask, const PerfSample *s, uint64_t ret[PERF_REGS_UNWIND_N]) {
        if (s->regs_abi == 0 || !s->regs)
                return false;
        return perf_regs_pick_unwind_order(mask, s->regs, s->n_regs, ret);
}

/* The daemon's own samples are dropped; a sample is unwound from its stack
 * copy when the client asked for one and the registers it needs. */
static bool filter_sample(PerfSample *s, bool *dwarf, void *userdata) {
        LiveUnwind *u = userdata;
        if ((pid_t) s->pid == u->self)
                return false; /* the daemon's own work */
        *dwarf = *dwarf && s->stack && pick_unwind_regs(u->setup.layout.sample_regs_user, s, u->regs);
        if (*dwarf) {
                s->regs = u->regs;
                s->n_regs = PERF_REGS_UNWIND_N;
        }
        return true;
}

static int handle_mmap2(const PerfMmap2 *m, void *userdata) {
        LiveUnwind *u = userdata;
        return process_frames_write_mmap2(u->writer, u->maps, u->pinned, m);
}

static int handle_comm(const PerfComm *c, void *userdata) {
        LiveUnwind *u = userdata;
        return process_frames_write_exec(u->writer, u->maps, c);
}

static int handle_task(const PerfTask *t, bool fork, void *userdata) {
        LiveUnwind *u = userdata;
        return process_frames_write_task(u->writer, u->maps, t, fork);
}

static void on_pump_wake(void *userdata);

/* What the pump hands on goes to the client's capture stream. */
static const SamplePumpSink live_unwind_sink = {
        .sample = emit_sample,
        .mmap2 = handle_mmap2,
        .comm = handle_comm,
        .task = handle_task,
        .filter = filter_sample,
        .wake = on_pump_wake,
};

/* Ends the session: its owner frees it (on_end), so u is gone after. */
static void live_unwind_end(LiveUnwind *u, int error) {
        if (u->ended)
                return;
        u->ended = true;
        if (error < 0)
                log_info_errno(error, "sysprof3: unwind session %u ended: %m", u->setup.id);
        if (u->setup.on_end)
                u->setup.on_end(u, u->setup.userdata);
}

/* Reads every ring through the pump, writes what came, and flushes to the
 * client. At the `last` drain (the session ends) the samples still waiting
 * for a table compiling are unwound at once, without it: the client has
 * stopped, and nothing waits for every table a busy machine's programs
 * need. */
static int live_unwind_drain(LiveUnwind *u, bool last) {
        int r = sample_pump_drain(u->pump, u->perf, last);
        return r < 0 ? r : capture_writer_flush(u->writer);
}

/* Drains; true when the session ended instead (u is freed then). */
static bool drain_or_end(LiveUnwind *u) {
        int r = live_unwind_drain(u, false);
        if (r >= 0)
                return false;
        live_unwind_end(u, r); /* the client closed its end, or the pipe stayed full */
        return true;
}

static int on_ring(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void) drain_or_end(userdata);
        return 0;
}

/* The pump has more (the next slice of samples that waited, or tables came). */
static void on_pump_wake(void *userdata) {
        LiveUnwind *u = userdata;
        if (!u->ended)
                (void) drain_or_end(u);
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
        if (!u->ended)
                sample_pump_spill_rings(u->pump, u->perf);
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
                int r = process_frames_write(u->writer, u->maps, u->pinned, now, pid,
                                             u->setup.uid != 0 ? u->setup.uid : PROCESS_FRAMES_ANY_OWNER, NULL);
                if (r < 0 && r != -ESRCH)
                        return r;
                live_unwind_spill_rings(u);
        }
        sample_pump_prepare_all(u->pump);
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
        if (r >= 0)
                r = process_maps_new(&u->maps);
        if (r >= 0) {
                SamplePumpSetup pump = {
                        .event = setup->event,
                        .layout = setup->layout,
                        .unwind = setup->stack_size > 0 ? RECORD_UNWIND_DWARF : RECORD_UNWIND_FP,
                        .tables = setup->tables,
                        .owner = (uint32_t) setup->uid,
                        .maps = u->maps,
                        .kernel = setup->kernel,
                        .prepare_tables = !setup->system,
                        .max_addrs = UNWINDER_MAX_FRAMES + 64,
                        .sink = &live_unwind_sink,
                        .userdata = u,
                };
                r = sample_pump_new(&pump, &u->pump);
        }
        if (r >= 0)
                r = pinned_files_new(setup->max_pinned_files, &u->pinned);
        if (r >= 0 && setup->uid != 0 && !setup->system)
                pinned_files_set_owner(u->pinned, setup->uid); /* as its processes' maps are read */
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
        if (u->perf && u->writer && u->pump) {
                (void) live_unwind_drain(u, true);
                SamplePumpStats st;
                sample_pump_get_stats(u->pump, &st);
                log_info("sysprof3: unwind session %u: %llu samples, %llu lost, %llu malformed records", u->setup.id,
                         (unsigned long long) u->samples, (unsigned long long) st.lost_samples,
                         (unsigned long long) st.bad_records);
        }
        for (size_t i = 0; i < u->n_ring_sources; i++)
                sd_event_source_disable_unref(u->ring_sources[i]);
        free(u->ring_sources);
        sd_event_source_disable_unref(u->event_source);
        sd_event_source_disable_unref(u->timer);
        sd_event_source_disable_unref(u->snapshot);
        free(u->pids);
        safe_close(u->event_fd);
        sample_pump_free(u->pump);
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
