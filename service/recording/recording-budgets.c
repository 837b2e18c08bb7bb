/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-budgets.c: the part that holds a recording to its owner's
 * budgets of perf events and followed threads (docs/security.md): each
 * task's events are charged as they open, and a process whose threads
 * would not fit is left out, counted. */
#include "recording-private.h"

#include <stdio.h>

#include "basic.h"

/* PerfEventsConfig.reserve: the events of one more task (or the whole
 * system); a refusal's message is kept in budget_message. */
int recording_reserve_events(void *userdata, pid_t tid, size_t n_fds) {
        Recording *rec = userdata;
        int r;
        if (tid > 0 &&
            (r = user_charge_add(&rec->thread_charge, 1, rec->budget_message, sizeof(rec->budget_message))) < 0)
                return r;
        r = user_charge_add(&rec->event_charge, n_fds, rec->budget_message, sizeof(rec->budget_message));
        if (r < 0 && tid > 0)
                user_charge_sub(&rec->thread_charge, 1);
        return r;
}

/* The number of threads of pid now (0 when unknown). */
static uint64_t process_n_threads(pid_t pid) {
        char path[64], line[128];
        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        _cleanup_(fclosep) FILE *f = fopen(path, "re");
        unsigned long long n = 0;
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "Threads: %llu", &n) == 1)
                        break;
        return n;
}

/* Whether pid's threads, as many as it has now, would fit the owner's
 * budgets: refused before thousands of events are opened only to be
 * closed again. 0, or -EDQUOT with the message in budget_message. */
static int recording_check_budget(Recording *rec, pid_t pid) {
        /* another's process (its pid reused): told nothing of it; the
         * attach refuses it */
        if (rec->check_owner && !process_owned_by(pid, rec->owner_uid))
                return 0;
        uint64_t n = process_n_threads(pid);
        int r = user_charge_check(&rec->thread_charge, n, rec->budget_message, sizeof(rec->budget_message));
        if (r >= 0)
                r = user_charge_check(&rec->event_charge, n * perf_events_fds_per_task(rec->perf), rec->budget_message,
                                      sizeof(rec->budget_message));
        return r;
}

int recording_add_process_tasks(Recording *rec, pid_t pid, bool *ret_not_owner) {
        if (ret_not_owner)
                *ret_not_owner = false;
        int r = recording_check_budget(rec, pid);
        if (r < 0)
                return r;
        return process_attach_events(rec->perf, pid, rec->check_owner, rec->owner_uid, ret_not_owner);
}

void recording_not_followed(Recording *rec, pid_t pid, const char *what) {
        if (rec->threads_not_followed++ == 0)
                log_recording(LOG_WARNING, rec->id,
                              "%s %d: not followed, nor any new thread or process from now on: %s", what, (int) pid,
                              rec->budget_message);
}

static int budgets_start(void *part, Recording *rec, PerfEventsConfig *cfg, const char **ret_name, char **ret_why) {
        cfg->reserve = recording_reserve_events;
        cfg->reserve_userdata = rec;
        user_charge_init(&rec->event_charge, rec->limits, rec->owner_uid, USER_RESOURCE_PERF_EVENTS);
        user_charge_init(&rec->thread_charge, rec->limits, rec->owner_uid, USER_RESOURCE_THREADS);
        return 1;
}

/* What it held at the end, for the statistics; the events go now. */
static void budgets_drained(void *part, Recording *rec) {
        rec->n_events = perf_events_get_n_events(rec->perf);
        rec->n_threads = rec->thread_charge.amount;
        user_charge_release(&rec->event_charge);
        user_charge_release(&rec->thread_charge);
}

/* What this recording held, and the processes left out once they were spent. */
static void budgets_write_stats(void *part, Recording *rec, CaptureStatsBuffer *out) {
        (void) capture_stats_add_u64(out, CAPTURE_STAT_PERF_EVENTS, rec->n_events);
        (void) capture_stats_add_u64(out, CAPTURE_STAT_FOLLOWED_THREADS, rec->n_threads);
        (void) capture_stats_add_u64(out, CAPTURE_STAT_NOT_FOLLOWED, rec->threads_not_followed);
}

const RecordingPartVTable recording_part_budgets = {
        .name = "budgets",
        .start = budgets_start,
        .drained = budgets_drained,
        .write_stats = budgets_write_stats,
};
