/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manager.c: the list of recordings of the daemon. */
#include "manager.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "bus-refusal.h"
#include "fiber.h"
#include "helper-log.h"
#include "user-file-jobs.h"
#include "protocol.h"
#include "recording-bus.h"
#include "unwind.h"

/* Exiting and no recording is still finishing: the event loop ends (the
 * finished ones that linger for their owners are freed on the way out). */
static void manager_maybe_exit(Manager *m) {
        if (!m->exiting || m->n_starts > 0)
                return;
        for (size_t i = 0; i < m->n_recordings; i++) {
                RecordingStats st;
                recording_get_stats(recording_bus_get_recording(m->recordings[i]), &st);
                if (st.state != RECORDING_STATE_FINISHED)
                        return;
        }
        m->stop_timer = sd_event_source_disable_unref(m->stop_timer);
        (void) sd_event_exit(m->event, 0);
}

/* A user-file helper and whose it is. */
struct OwnerHelper {
        uid_t owner;
        HelperClient *helper;
};

/* owner's last recording is gone: its helpers go too. */
static void manager_release_owner(Manager *m, uid_t owner) {
        for (size_t i = 0; i < m->n_recordings; i++)
                if (recording_bus_get_owner(m->recordings[i]) == owner)
                        return;
        for (size_t i = 0; i < m->n_user_file_helpers; i++)
                if (m->user_file_helpers[i].owner == owner) {
                        helper_client_free(m->user_file_helpers[i].helper);
                        m->user_file_helpers[i] = m->user_file_helpers[--m->n_user_file_helpers];
                        break;
                }
        unwind_tables_release_owner(m->unwind_tables, owner);
}

/* The face of a recording is freed: the list forgets it (RecordingBusHost.released). */
static void manager_remove_recording(RecordingBus *rb, void *userdata) {
        Manager *m = userdata;
        for (size_t i = 0; i < m->n_recordings; i++)
                if (m->recordings[i] == rb) {
                        memmove(m->recordings + i, m->recordings + i + 1,
                                (m->n_recordings - i - 1) * sizeof(RecordingBus *));
                        m->n_recordings--;
                        break;
                }
        manager_release_owner(m, recording_bus_get_owner(rb));
        manager_maybe_exit(m);
}

/* A recording finished (RecordingBusHost.finished). */
static void manager_recording_finished(RecordingBus *rb, void *userdata) {
        manager_maybe_exit(userdata);
}

/* Pinned files need fds: a recording may use three quarters of the budget,
 * the rest is for events, clients and the helper. */
static size_t max_pinned_files(const Manager *m) {
        return m->rlimit_files > 1024 ? m->rlimit_files - m->rlimit_files / 4 : 512;
}

int manager_start_recording(Manager *m, sd_bus_message *call, const Caller *caller, RecordOptions *options,
                            const Authorization *auth, int capture_fd, PerfOpenerWait perf_wait,
                            void *perf_wait_userdata, RecordingBus **ret, sd_bus_error *error) {
        if (m->exiting && m->perf_opener_lost)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_FAILED,
                                         "periscoped's perf opener is gone (%s): periscoped finishes its recordings "
                                         "and exits to be started again; try again in a few seconds",
                                         perf_opener_gone_reason(m->perf_opener));
        if (m->exiting) /* it would hold the exit */
                return sd_bus_error_set(error, PERISCOPE_ERROR_FAILED,
                                        "periscoped is stopping (service stop or restart): no new recording; try "
                                        "again once it is back");
        /* room first: a started recording is never left out of the list
         * (nor one that others starting on fibers meanwhile took room from) */
        if (GROW_ARRAY(m->recordings, m->allocated_recordings, m->n_recordings + m->n_starts + 1, 8) < 0)
                return -ENOMEM;
        RecordingBusHost host = {
                .event = m->event,
                .bus = m->bus,
                .id = ++m->next_recording_id,
                .max_pinned_files = max_pinned_files(m),
                /* fp mode on aarch64 reads the leaf's row too (sample-stack.c) */
                .unwind_tables = options->unwind != RECORD_UNWIND_FP || SAMPLE_UNWIND_FP_NEEDS_REGS
                                         ? manager_get_unwind_tables(m)
                                         : NULL,
                .helper = m->helper_config,
                .limits = m->limits,
                .user_file_helper = manager_get_user_file_helper(m, caller->uid),
                .budgets = { .max_addresses = m->max_addresses, .symbolize_ms = m->symbolize_budget_ms },
                .perf_opener = m->perf_opener,
                .perf_wait = perf_wait,
                .perf_wait_userdata = perf_wait_userdata,
                .released = manager_remove_recording,
                .finished = manager_recording_finished,
                .userdata = m,
        };
        RecordingBus *rb;
        int r = recording_bus_start(&host, call, caller, options, auth, capture_fd, &rb, error);
        if (r < 0) {
                manager_release_owner(m, caller->uid); /* a helper started for nothing */
                return r;
        }
        m->recordings[m->n_recordings++] = rb;
        *ret = rb;
        return 0;
}

/* A Record call whose recording starts on a fiber. */
typedef struct RecordingStart {
        Manager *mgr;
        sd_bus_message *call;
        Caller caller; /* sender points into call */
        RecordOptions options;
        Authorization auth;
        int fd;
        Fiber *fiber;
} RecordingStart;

static int start_on_fiber(Fiber *f, void *userdata) {
        RecordingStart *s = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        RecordingBus *rb;
        /* cancelled before it began: the daemon is exiting */
        int r = fiber_yield(f);
        if (r < 0)
                sd_bus_error_set(&e, PERISCOPE_ERROR_FAILED,
                                 "periscoped is stopping (service stop or restart): no new recording; try again "
                                 "once it is back");
        else
                r = manager_start_recording(s->mgr, s->call, &s->caller, &s->options, &s->auth, s->fd,
                                            fiber_wait_readable, f, &rb, &e);
        if (r >= 0)
                r = sd_bus_reply_method_return(s->call, "o", recording_bus_get_path(rb));
        if (r < 0) {
                if (!sd_bus_error_is_set(&e))
                        sd_bus_error_set_errno(&e, r);
                (void) bus_reply_refused(s->call, &s->caller, 0, &e);
        }
        return r;
}

static void start_done(int result, void *userdata) {
        RecordingStart *s = userdata;
        Manager *m = s->mgr;
        for (size_t i = 0; i < m->n_starts; i++)
                if (m->starts[i] == s) {
                        memmove(m->starts + i, m->starts + i + 1, (m->n_starts - i - 1) * sizeof(RecordingStart *));
                        m->n_starts--;
                        break;
                }
        record_options_done(&s->options);
        safe_close(s->fd);
        sd_bus_message_unref(s->call);
        free(s);
        manager_maybe_exit(m);
}

int manager_start_recording_async(Manager *m, sd_bus_message *call, const Caller *caller, RecordOptions *options,
                                  const Authorization *auth, int capture_fd, sd_bus_error *error) {
        _cleanup_close_ int fd = capture_fd;
        if (GROW_ARRAY(m->starts, m->allocated_starts, m->n_starts + 1, 8) < 0)
                return -ENOMEM;
        RecordingStart *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        *s = (RecordingStart){ .mgr = m, .call = call, .caller = *caller, .auth = *auth, .fd = fd };
        int r = fiber_start(m->event, "opening a recording's perf events", start_on_fiber, start_done, s, &s->fiber);
        if (r < 0) {
                free(s);
                return r;
        }
        s->call = sd_bus_message_ref(call);
        s->options = *options;
        *options = (RecordOptions){};
        TAKE_FD(fd);
        m->starts[m->n_starts++] = s;
        return 1;
}

void manager_cancel_starts(Manager *m) {
        /* each ends inside fiber_cancel(), and its done forgets it */
        while (m->n_starts > 0)
                fiber_cancel(m->starts[0]->fiber);
}

/* A copy of the list: ending or cutting a recording short may free (and so
 * remove) entries. NULL when there are none or out of memory. */
static RecordingBus **manager_copy_recordings(Manager *m, size_t *ret_n) {
        *ret_n = m->n_recordings;
        if (m->n_recordings == 0)
                return NULL;
        RecordingBus **copy = calloc(m->n_recordings, sizeof(RecordingBus *));
        if (copy)
                memcpy(copy, m->recordings, m->n_recordings * sizeof(RecordingBus *));
        return copy;
}

static const char *manager_cut_reason(const Manager *m) {
        return m->peer ? "cut short: the client went away" : "cut short by shutdown";
}

/* Calls fn on every recording (of a copy of the list: fn may end them);
 * false when out of memory, the event loop then exiting. */
static bool manager_each(Manager *m, void (*fn)(Manager *m, Recording *r, bool now), bool now) {
        size_t n;
        _cleanup_free_ RecordingBus **copy = manager_copy_recordings(m, &n);
        if (n > 0 && !copy) {
                (void) sd_event_exit(m->event, -ENOMEM);
                return false;
        }
        for (size_t i = 0; i < n; i++)
                fn(m, recording_bus_get_recording(copy[i]), now);
        return true;
}

static void cut_one(Manager *m, Recording *r, bool now) {
        recording_cut_short(r, manager_cut_reason(m), now);
}

static void end_one(Manager *m, Recording *r, bool now) {
        recording_end(r, m->peer && !m->perf_opener_lost ? RECORDING_END_CLIENT_VANISHED : RECORDING_END_SHUTDOWN, 0,
                      NULL);
}

/* The stop budget runs out (now: is out): every recording's stages hurry
 * (finish now). */
static void manager_cut_all(Manager *m, bool now) {
        if (manager_each(m, cut_one, now))
                manager_maybe_exit(m);
}

/* The share of the stop budget after which the stages hurry: what is left
 * identifies the files not reached, so their build-ids are kept. */
#define STOP_HURRY_PERCENT 70

static int on_stop_budget_spent(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        if (!m->stop_hurried) {
                m->stop_hurried = true;
                log_info("%u%% of the post-stop stages' %u ms at the stop are spent: symbolizing no more files",
                         STOP_HURRY_PERCENT, m->stop_budget_ms);
                uint64_t rest = (uint64_t) m->stop_budget_ms * (100 - STOP_HURRY_PERCENT) * 10;
                if (sd_event_source_set_time_relative(s, rest) >= 0 &&
                    sd_event_source_set_enabled(s, SD_EVENT_ONESHOT) >= 0) {
                        manager_cut_all(m, false);
                        return 0;
                }
        }
        log_info("the post-stop stages' %u ms at the stop are spent: finishing every capture now", m->stop_budget_ms);
        m->stop_timer = sd_event_source_disable_unref(m->stop_timer);
        manager_cut_all(m, true);
        return 0;
}

void manager_end_all(Manager *m) {
        if (m->exiting) {
                manager_cut_all(m, true); /* told twice: no more waiting */
                return;
        }
        m->exiting = true;
        manager_cancel_starts(m);
        if (!manager_each(m, end_one, false))
                return;
        uint64_t budget = m->stop_budget_ms;
        if (budget == 0 || sd_event_add_time_relative(m->event, &m->stop_timer, CLOCK_MONOTONIC,
                                                      budget * STOP_HURRY_PERCENT * 10, 0, on_stop_budget_spent, m) < 0)
                manager_cut_all(m, true); /* no time (or no timer): now */
        manager_maybe_exit(m);
}

int manager_keep_polkit_wait(Manager *m, sd_bus_slot *slot, sd_bus_message *call, const Caller *caller,
                             PolkitWait *w) {
        *w = (PolkitWait) { .slot = slot, .call = sd_bus_message_ref(call), .caller = *caller };
        (void) sd_bus_slot_set_floating(slot, true);
        sd_bus_slot_unref(slot); /* the bus's now; the wait keeps a pointer */
        if (GROW_ARRAY(m->polkit_waits, m->allocated_polkit_waits, m->n_polkit_waits + 1, 16) < 0) {
                sd_bus_slot_unref(slot); /* drops the wait: frees its state */
                return -ENOMEM;
        }
        m->polkit_waits[m->n_polkit_waits++] = slot;
        w->mgr = m;
        return 0;
}

void polkit_wait_done(PolkitWait *w) {
        Manager *m = w->mgr;
        for (size_t i = 0; m && i < m->n_polkit_waits; i++)
                if (m->polkit_waits[i] == w->slot) {
                        m->polkit_waits[i] = m->polkit_waits[--m->n_polkit_waits];
                        break;
                }
        w->call = sd_bus_message_unref(w->call);
}

void manager_drop_polkit_waits(Manager *m) {
        /* Each unref frees the wait, whose free forgets it here. */
        while (m->n_polkit_waits > 0) {
                size_t n = m->n_polkit_waits;
                sd_bus_slot_unref(m->polkit_waits[n - 1]);
                if (m->n_polkit_waits == n)
                        m->n_polkit_waits--; /* not forgotten by its free: do not loop */
        }
        free(m->polkit_waits);
        m->polkit_waits = NULL;
        m->allocated_polkit_waits = 0;
}

/* A helper started (logged at debug level, with its owner): its stderr is
 * logged under its name, never as periscoped's. */
static void manager_helper_stderr(int fd, pid_t pid, uid_t owner, const char *identifier, void *userdata) {
        Manager *m = userdata;
        log_uid(LOG_DEBUG, owner, "%s pid %d started", identifier, (int) pid);
        int r = helper_log_adopt(m->event, fd, pid, owner, identifier);
        if (r < 0)
                log_warning_errno(r, "cannot read the stderr of helper pid %d: %m", (int) pid);
}

void manager_init_helper_config(Manager *m) {
        m->helper_config = (HelperClientConfig) {
                .wait_hook = manager_spill_rings,
                .wait_hook_userdata = m,
                .stderr_sink = manager_helper_stderr,
                .stderr_sink_userdata = m,
        };
}

void manager_spill_rings(void *userdata) {
        Manager *m = userdata;
        for (size_t i = 0; i < m->n_recordings; i++)
                recording_spill_rings(recording_bus_get_recording(m->recordings[i]));
        if (m->spill_others)
                m->spill_others(m->spill_others_userdata);
}

/* Users' files are small: a helper that takes longer is hung. */
#define USER_FILE_TIMEOUT_MS 5000

HelperClient *manager_get_user_file_helper(Manager *m, uid_t owner) {
        for (size_t i = 0; i < m->n_user_file_helpers; i++)
                if (m->user_file_helpers[i].owner == owner)
                        return m->user_file_helpers[i].helper;
        if (GROW_ARRAY(m->user_file_helpers, m->allocated_user_file_helpers, m->n_user_file_helpers + 1, 4) < 0)
                return NULL;
        HelperClientConfig c = m->helper_config;
        c.timeout_ms = USER_FILE_TIMEOUT_MS;
        c.owner = owner;
        HelperClient *h;
        if (helper_client_new(&c, &h) < 0)
                return NULL;
        m->user_file_helpers[m->n_user_file_helpers++] = (struct OwnerHelper) { .owner = owner, .helper = h };
        return h;
}

void manager_free_user_file_helpers(Manager *m) {
        for (size_t i = 0; i < m->n_user_file_helpers; i++)
                helper_client_free(m->user_file_helpers[i].helper);
        free(m->user_file_helpers);
        m->user_file_helpers = NULL;
        m->n_user_file_helpers = m->allocated_user_file_helpers = 0;
}

struct UserFileJobs *manager_get_user_file_jobs(Manager *m) {
        if (!m->user_file_jobs) {
                HelperClientConfig c = m->helper_config;
                c.timeout_ms = USER_FILE_TIMEOUT_MS;
                if (user_file_jobs_new(m->event, &c, &m->user_file_jobs) < 0)
                        m->user_file_jobs = NULL;
        }
        return m->user_file_jobs;
}

struct UnwindTables *manager_get_unwind_tables(Manager *m) {
        if (!m->unwind_tables)
                (void) unwind_tables_new(m->event, &m->helper_config, &m->unwind_tables);
        return m->unwind_tables;
}
