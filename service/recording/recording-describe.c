/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-describe.c: the part that describes a recording's sandboxed
 * processes (docs/containers.md): their /.flatpak-info and Podman stores
 * are users' files, parsed by the helper on a fiber off the event loop
 * while sampling goes on, and by the "container-descriptions" post-stop
 * stage for those still waiting when sampling stopped. */
#include "recording-private.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>

#include "basic.h"
#include "fiber.h"

typedef struct Describe {
        Recording *rec;
        struct Fiber *fiber;  /* parses processes' /.flatpak-info, writes their descriptions */
        HelperClient *helper; /* its helper (waits go back to the loop); used on it only */
} Describe;

static void describe_later(Describe *d);

/* A helper for users' files whose waits go back to the event loop (the
 * fiber's wait and yield), without the recording's time budget. */
static int describe_helper_new(const HelperClientConfig *config, int (*wait)(int, unsigned, void *),
                               void (*yield)(void *), void *userdata, HelperClient **ret) {
        HelperClientConfig c = *config;
        c.time_budget_ms = 0;
        c.timeout_ms = 5000; /* users' files are small: longer is hung */
        c.wait_readable = wait;
        c.wait_readable_userdata = userdata;
        c.yield = yield;
        return helper_client_new(&c, ret);
}

static int describe_wait_readable(int fd, unsigned timeout_ms, void *userdata) {
        Describe *d = userdata;
        if (!d->fiber) { /* never: the helper is asked on the fiber only */
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int r = poll(&p, 1, (int) timeout_ms);
                return r < 0 ? (errno == EINTR ? 0 : -errno) : r > 0;
        }
        return fiber_wait_readable(fd, timeout_ms, d->fiber);
}

static void describe_yield(void *userdata) {
        Describe *d = userdata;
        if (d->fiber)
                (void) fiber_yield(d->fiber);
}

/* Parses pid's /.flatpak-info or Podman store on fiber, pins what only its
 * container's layers hold and writes its description frames,
 * timed now. A failed parse takes the file as rejected, unless fiber was
 * cancelled meanwhile (it waits for the post-stop stage). */
static int describe_process(Recording *rec, pid_t pid, HelperClient *helper, Fiber *fiber) {
        int r = resolver_parse_pending(rec->resolver, pid, helper);
        if (r < 0 && r != -ENOENT) {
                if (r == HELPER_CLIENT_FAILED && fiber_yield(fiber) == -ECANCELED)
                        return -ECANCELED;                 /* parsed again after sampling */
                resolver_drop_pending(rec->resolver, pid); /* not asked again */
                r = 0; /* a Podman process is still described: its id, what was found */
        }
        if (r < 0 || !rec->writer || rec->error)
                return 0;
        /* described only when recorded (a rescan's look at another
         * process leaves no trace in the capture) */
        size_t n_maps = 0;
        if (!process_maps_get(rec->maps, (int32_t) pid, &n_maps) || n_maps == 0)
                return 0;
        recording_repin(rec->resolver, rec->maps, rec->pinned, pid);
        r = container_frames_write(rec->writer, rec->resolver, now_monotonic_ns(), pid);
        if (r < 0)
                recording_fail(rec, r, "writing the capture failed: %m");
        return r;
}

static int describe_on_fiber(Fiber *f, void *userdata) {
        Describe *d = userdata;
        Recording *rec = d->rec;
        if (!d->helper) {
                int r = describe_helper_new(&rec->helper, describe_wait_readable, describe_yield, d, &d->helper);
                if (r < 0) {
                        d->helper = NULL;
                        return r;
                }
        }
        pid_t pid;
        while (!rec->error && resolver_next_pending(rec->resolver, &pid) > 0) {
                int r = describe_process(rec, pid, d->helper, f);
                if (r < 0)
                        return r;
                if (fiber_yield(f) == -ECANCELED)
                        return -ECANCELED;
        }
        return 0;
}

static void describe_done(int result, void *userdata) {
        Describe *d = userdata;
        d->fiber = NULL;
        if (result < 0 && result != -ECANCELED)
                log_recording_errno(LOG_INFO, d->rec->id, result, "describing sandboxed processes failed: %m");
        else if (result == 0)
                describe_later(d); /* processes seen meanwhile */
}

/* Starts the describe fiber when a process's /.flatpak-info waits. */
static void describe_later(Describe *d) {
        Recording *rec = d->rec;
        pid_t pid;
        if (d->fiber || rec->error || rec->state != RECORDING_STATE_RECORDING ||
            resolver_next_pending(rec->resolver, &pid) <= 0)
                return;
        int r = fiber_start(rec->event, "describing sandboxed processes", describe_on_fiber, describe_done, d,
                            &d->fiber);
        if (r < 0)
                log_recording_errno(LOG_INFO, rec->id, r, "cannot describe sandboxed processes yet: %m");
}

static int describe_start(void *part, Recording *rec, PerfEventsConfig *cfg, const char **ret_name, char **ret_why) {
        Describe *d = part;
        d->rec = rec;
        return 1;
}

/* processes whose /.flatpak-info waits (those joining a container too) */
static void describe_drain(void *part, Recording *rec, bool last) {
        describe_later(part);
}

/* At the end of sampling: the fiber ends; what still waits is the
 * post-stop stage's. */
static void describe_close(void *part, Recording *rec) {
        Describe *d = part;
        if (d->fiber)
                fiber_cancel(d->fiber);
        d->helper = helper_client_free(d->helper);
}

/* The descriptions of processes whose /.flatpak-info still waited for its
 * parse when sampling stopped (docs/containers.md). */
typedef struct DescribeRun {
        const RecordingStageInput *in;
        RecordingStageProgress progress;
        RecordingStageDone done;
        void *userdata;
        Fiber *fiber;
        HelperClient *helper;
        uint64_t described, total;
} DescribeRun;

static int describe_run_wait(int fd, unsigned timeout_ms, void *userdata) {
        DescribeRun *run = userdata;
        return fiber_wait_readable(fd, timeout_ms, run->fiber);
}

static void describe_run_yield(void *userdata) {
        DescribeRun *run = userdata;
        (void) fiber_yield(run->fiber);
}

void recording_repin(Resolver *resolver, ProcessMaps *maps, PinnedFiles *pinned, pid_t pid) {
        PodmanStorage *storage;
        const PodmanContainer *container;
        if (resolver && pinned && resolver_get_podman(resolver, pid, &storage, &container) >= 0)
                (void) process_repin_mappings(maps, pinned, pid);
}

static int describe_body(Fiber *f, void *userdata) {
        DescribeRun *run = userdata;
        const RecordingStageInput *in = run->in;
        int r = describe_helper_new(&in->helper, describe_run_wait, describe_run_yield, run, &run->helper);
        if (r < 0)
                return r;
        pid_t pid;
        while (resolver_next_pending(in->resolver, &pid) > 0) {
                r = resolver_parse_pending(in->resolver, pid, run->helper);
                if (r < 0 && r != -ENOENT) {
                        resolver_drop_pending(in->resolver, pid); /* rejected, or no time left */
                        r = 0; /* a Podman process is still described: its id, what was found */
                }
                size_t n_maps = 0;
                /* described only when recorded (rescans look at others too) */
                if (r >= 0 && process_maps_get(in->maps, (int32_t) pid, &n_maps) && n_maps > 0) {
                        recording_repin(in->resolver, in->maps, in->pinned, pid);
                        r = container_frames_write(in->writer, in->resolver, in->end_time, pid);
                        if (r < 0)
                                return r;
                        run->described++;
                }
                run->progress("container-descriptions", run->described, run->total, run->userdata);
                (void) fiber_yield(f);
        }
        return 0;
}

static void describe_run_done(int result, void *userdata) {
        _cleanup_free_ DescribeRun *run = userdata;
        helper_client_free(run->helper);
        log_recording(LOG_INFO, run->in->recording_id, "%llu sandboxed processes described after sampling%s",
                      (unsigned long long) run->described, result == -ECANCELED ? " (cut short)" : "");
        run->done(result == -ECANCELED ? 0 : result, run->userdata);
}

static void describe_cancel(void *job) {
        DescribeRun *run = job;
        fiber_cancel(run->fiber);
}

/* Parses the /.flatpak-info files that still wait (processes seen shortly
 * before the stop) and writes those processes' descriptions. On a fiber:
 * the helper's waits go back to the event loop. */
static int describe_stage(void *part, Recording *rec, const RecordingStageInput *in, RecordingStageResults *results,
                          RecordingStageProgress progress, RecordingStageDone done, void *userdata,
                          RecordingStageJob *ret_job) {
        pid_t pid;
        if (!in->resolver || !in->writer || resolver_next_pending(in->resolver, &pid) <= 0)
                return 0;
        uint64_t total = 0;
        for (; resolver_next_pending(in->resolver, &pid) > 0 && in->cut && in->cut->now; total++)
                resolver_drop_pending(in->resolver, pid);
        if (total > 0) {
                log_recording(LOG_INFO, in->recording_id, "%llu sandboxed processes not described: %s",
                              (unsigned long long) total, in->cut->why);
                return 0;
        }
        total = resolver_count_pending(in->resolver);
        _cleanup_free_ DescribeRun *run = malloc(sizeof *run);
        if (!run)
                return -ENOMEM;
        *run = (DescribeRun){ in, progress, done, userdata, NULL, NULL, 0, total };
        progress("container-descriptions", 0, total, userdata);
        int r = fiber_start(in->event, "describing a recording's sandboxed processes", describe_body, describe_run_done,
                            run, &run->fiber);
        if (r < 0)
                return r;
        /* the run belongs to describe_run_done() now */
        *ret_job = (RecordingStageJob){ describe_cancel, run };
        TAKE_PTR(run);
        return 1;
}

const RecordingPartVTable recording_part_describe = {
        .name = "describe",
        .size = sizeof(Describe),
        .start = describe_start,
        .drain = describe_drain,
        .close = describe_close,
        .stage_name = "container-descriptions",
        .stage = describe_stage,
        .free = describe_close,
};
