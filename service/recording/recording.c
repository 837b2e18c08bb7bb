/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording.c: a recording's life from its start to its end, without
 * D-Bus: its state machine, conducting its parts (recording-private.h). */
#include "recording.h"
#include "recording-private.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "protocol.h"

#define RECORDING_TICK_USEC (100 * 1000)
#define RECORDING_PUBLISH_TICKS 5 /* PropertiesChanged at most every 500 ms */

/* The parts, in the order their hooks run: their stages run in this order,
 * and their statistics are written in it. */
static const RecordingPartVTable *const recording_part_table[] = {
        &recording_part_follow,       /* `container`: processes joining it; re-attaches after an exec */
        &recording_part_budgets,      /* the owner's budgets of perf events and threads */
        &recording_part_describe,     /* processes' /.flatpak-info and Podman stores, on a fiber */
        &recording_part_ends,         /* duration, the command's exit, the "pids" exiting */
        &recording_part_control,      /* the control fd (Sysprof's collector protocol) */
        &recording_part_counters,     /* `counters` */
        &recording_part_trace,        /* Sysprof trace fds */
        &recording_part_pinned_files, /* stage: which files were pinned and how */
        &recording_part_symbolize,    /* stage: names and symbol tables */
        &recording_part_off_cpu,      /* `off-cpu`: switch events, their governor and statistics */
        &recording_part_jit,          /* the processes' perf maps and jitdumps */
        &recording_part_python,       /* `python-frames`: CPython threads' frames in their samples */
};

void *recording_part_get(const Recording *rec, const RecordingPartVTable *vtable) {
        FOREACH_PART(p, rec)
        if (p->vtable == vtable)
                return p->state;
        return NULL;
}

/* Its message is what the owner reads (the Finished signal), so it is
 * formatted here. */
void recording_fail(Recording *rec, int error, const char *fmt, ...) {
        if (rec->error_message)
                return;
        rec->error = error < 0 ? error : -EIO;
        va_list ap;
        va_start(ap, fmt);
        errno = -rec->error; /* for %m */
        if (vasprintf(&rec->error_message, fmt, ap) < 0)
                rec->error_message = NULL;
        va_end(ap);
        log_recording_errno(LOG_ERR, rec->id, rec->error, "%s", rec->error_message ? rec->error_message : "failed");
}

/* ---- while recording ---- */

/* The rings (and what waited) through the pump; with `last` nothing waits
 * after it, a table still compiling as none. */
void recording_drain(Recording *rec, bool last) {
        if (rec->error || !rec->pump)
                return;
        int r = sample_pump_drain(rec->pump, rec->perf, last);
        if (r < 0)
                recording_fail(rec, r, "writing the capture failed: %m");
        FOREACH_PART(p, rec)
        PART_CALL(p, drain, rec, last);
}

void recording_spill_rings(Recording *rec) {
        if (rec->state != RECORDING_STATE_RECORDING || !rec->perf || rec->error)
                return;
        sample_pump_spill_rings(rec->pump, rec->perf);
}

static void recording_flush(Recording *rec) {
        if (!rec->writer || rec->error)
                return;
        int r = capture_writer_flush(rec->writer);
        if (r < 0)
                recording_fail(rec, r, "writing the capture failed: %m");
}

void recording_publish(Recording *rec) {
        if (rec->observer && rec->observer->changed)
                rec->observer->changed(rec, rec->observer_userdata);
        rec->published_samples = rec->samples;
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        Recording *rec = userdata;
        recording_drain(rec, false);
        FOREACH_PART(p, rec)
        PART_CALL(p, tick, rec);
        recording_flush(rec);
        if (rec->error) {
                recording_end(rec, RECORDING_END_ERROR, rec->error, NULL);
                return 0;
        }
        if (++rec->ticks % RECORDING_PUBLISH_TICKS == 0 && rec->samples != rec->published_samples)
                recording_publish(rec);
        int r = sd_event_source_set_time_relative(s, RECORDING_TICK_USEC);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

/* ---- the end sequence ---- */

static void recording_finish(Recording *rec) {
        SamplePumpStats pst = {};
        if (rec->pump)
                sample_pump_get_stats(rec->pump, &pst);
        FOREACH_PART(p, rec)
        PART_CALL(p, finish, rec);
        recording_write_stats(rec);
        recording_flush(rec);
        rec->state = RECORDING_STATE_FINISHED;
        /* Closed before the observer hears of it: a client acting on
         * Finished sees the capture complete. */
        rec->final_bytes = capture_writer_get_bytes(rec->writer);
        rec->writer = capture_writer_free(rec->writer);
        log_fields(LOG_INFO,
                   &(const LogFields){ .recording_id = rec->id,
                                       .has_uid = true,
                                       .uid = rec->owner_uid,
                                       .message_id = PERISCOPE_MESSAGE_RECORDING_FINISHED },
                   "finished (%s): %llu samples, %llu lost, %llu records spilled while the helper worked, "
                   "%llu slices of waiting samples unwound from the event loop",
                   recording_end_reason_to_string(rec->reason), (unsigned long long) rec->samples,
                   (unsigned long long) pst.lost_samples, (unsigned long long) pst.spilled_records,
                   (unsigned long long) pst.slices);
        if (rec->observer && rec->observer->finished)
                rec->observer->finished(rec, rec->observer_userdata);
}

void recording_stage_progress(const char *stage, uint64_t done, uint64_t total, void *userdata) {
        Recording *rec = userdata;
        if (rec->observer && rec->observer->progress)
                rec->observer->progress(rec, stage, done, total, rec->observer_userdata);
}

static void recording_run_stages(Recording *rec);
static void recording_unwind_rest(Recording *rec, bool force);

/* Whether samples wait in the pump (spilled, or for unwind tables). */
static bool recording_samples_wait(const Recording *rec) {
        SamplePumpStats st = {};
        if (rec->pump)
                sample_pump_get_stats(rec->pump, &st);
        return st.waiting;
}

/* Ends the wait of recording_unwind_rest(): what waits is unwound now. */
static void recording_cancel_waiting(void *job) {
        Recording *rec = job;
        if (rec->cut.now && recording_samples_wait(rec))
                rec->stage_results.cut |= RECORDING_CUT_UNWIND_TABLES;
        recording_unwind_rest(rec, true);
}

/* The pump has more to hand on (the next slice, or unwind tables came):
 * while recording, a drain; stopped, the wait before the stages goes on. */
void recording_pump_wake(void *userdata) {
        Recording *rec = userdata;
        if (rec->state == RECORDING_STATE_RECORDING) {
                recording_drain(rec, false);
                if (rec->error)
                        recording_end(rec, RECORDING_END_ERROR, rec->error, NULL);
        } else if (rec->awaiting_tables)
                recording_unwind_rest(rec, false);
}

/* A stage failed: a full disk under the symbol tables cuts the capture
 * short (even if a later flush finds room again); anything else is said. */
static void recording_stage_failed(Recording *rec, const RecordingPart *p, int r) {
        if (r == -ENOSPC || r == -EDQUOT || r == -EIO)
                recording_fail(rec, r, "writing the capture failed: %m");
        else if (r < 0)
                log_recording_errno(LOG_WARNING, rec->id, r, "stage %s failed: %m", p->vtable->stage_name);
}

/* A stage that went on in the event loop is over: the next one runs. */
static void recording_stage_done(int result, void *userdata) {
        Recording *rec = userdata;
        rec->stage_job = (RecordingStageJob){};
        recording_stage_failed(rec, &rec->parts[rec->stage], result);
        rec->stage++;
        recording_run_stages(rec);
}

/* Runs the parts' stages left (none when freed while recording), then
 * finishes; a stage going on in the event loop resumes this from its end. */
static void recording_run_stages(Recording *rec) {
        for (; rec->stage < rec->n_parts && !rec->stages_cancelled; rec->stage++) {
                RecordingPart *p = &rec->parts[rec->stage];
                if (!p->vtable->stage)
                        continue;
                int r = p->vtable->stage(p->state, rec, &rec->stage_input, &rec->stage_results,
                                         recording_stage_progress, recording_stage_done, rec, &rec->stage_job);
                if (r > 0)
                        return;
                recording_stage_failed(rec, p, r);
        }
        while (rec->stage < rec->n_parts && !rec->parts[rec->stage].vtable->stage)
                rec->stage++;
        if (rec->stage < rec->n_parts)
                log_recording(LOG_INFO, rec->id, "the recording is going away: stage %s and those after it did not run",
                              rec->parts[rec->stage].vtable->stage_name);
        recording_finish(rec);
}

/* Stopped with samples waiting for tables that compile (in the helper, off
 * the event loop): they are unwound as their tables come (the tables'
 * listener), and the stages run once none waits. Freed or cancelled
 * meanwhile (`force`): unwound at once, a table still compiling as none. */
static void recording_unwind_rest(Recording *rec, bool force) {
        if (force)
                rec->stage_job = (RecordingStageJob){};
        recording_drain(rec, force);
        SamplePumpStats pst = {};
        if (rec->pump)
                sample_pump_get_stats(rec->pump, &pst);
        bool waiting = !rec->error && pst.waiting;
        if (waiting && !rec->awaiting_tables)
                rec->samples_before_wait = rec->samples;
        /* said when a table stopped the flush, not a slice's end */
        if (waiting && !pst.sliced && !rec->told_table_wait) {
                log_recording(LOG_INFO, rec->id, "%zu samples wait for unwind tables still compiling", pst.queued);
                rec->told_table_wait = true;
        }
        if (waiting || rec->awaiting_tables) {
                /* Progress: samples unwound since the wait began, of those
                 * and the ones still queued (the spill adds to them) */
                uint64_t unwound = rec->samples - rec->samples_before_wait;
                recording_stage_progress("unwind-tables", unwound, unwound + (waiting ? pst.queued : 0), rec);
        }
        rec->awaiting_tables = waiting;
        if (waiting) {
                /* a pseudo-stage: recording_cancel_stages() ends the wait */
                rec->stage_job = (RecordingStageJob){ .cancel = recording_cancel_waiting, .job = rec };
                return;
        }
        rec->stage_job = (RecordingStageJob){};
        recording_run_stages(rec);
}

static void recording_disarm(Recording *rec) {
        rec->tick = sd_event_source_disable_unref(rec->tick);
        for (size_t i = 0; i < rec->n_ring_sources; i++)
                rec->ring_sources[i] = sd_event_source_disable_unref(rec->ring_sources[i]);
}

void recording_end(Recording *rec, RecordingEndReason reason, int error, const char *message) {
        if (rec->state != RECORDING_STATE_RECORDING)
                return;
        rec->state = RECORDING_STATE_STOPPING;
        rec->reason = error ? RECORDING_END_ERROR : reason;
        if (error && !rec->error && message)
                recording_fail(rec, error, "%s", message);
        else if (error && !rec->error)
                recording_fail(rec, error, "%m");
        recording_disarm(rec);
        rec->sampling_end_time = now_monotonic_ns();
        FOREACH_PART(p, rec)
        PART_CALL(p, stop, rec);
        if (rec->perf) {
                (void) perf_events_disable(rec->perf);
                recording_drain(rec, false);
                FOREACH_PART(p, rec)
                PART_CALL(p, drained, rec);
                rec->bad_records += perf_events_get_bad_records(rec->perf);
                perf_events_free(TAKE_PTR(rec->perf));
        }
        user_charge_release(&rec->ring_charge);
        FOREACH_PART(p, rec)
        PART_CALL(p, close, rec);
        recording_flush(rec);
        rec->state = RECORDING_STATE_FINISHING;
        recording_publish(rec);
        rec->helper.time_budget_ms = rec->budgets.symbolize_ms;
        rec->stage_input = (RecordingStageInput){
                .event = rec->event,
                .recording_id = rec->id,
                .writer = rec->writer,
                .start_time = rec->start_time,
                .end_time = rec->sampling_end_time,
                .options = &rec->options,
                .kernel = rec->kernel,
                .maps = rec->maps,
                .pinned = rec->pinned,
                .jit_files = rec->jit_files,
                .addresses = rec->addresses,
                .resolver = rec->resolver,
                .helper = rec->helper,
                .cut = &rec->cut,
        };
        /* freed while recording: no waiting */
        recording_unwind_rest(rec, rec->stage >= rec->n_parts);
}

/* ---- start ---- */

/* Each part of the table starts, or declines; those kept are rec->parts. */
static int recording_start_parts(Recording *rec, PerfEventsConfig *cfg, const char **ret_name, char **ret_why) {
        rec->parts = calloc(ELEMENTSOF(recording_part_table), sizeof(RecordingPart));
        rec->sample_parts = calloc(ELEMENTSOF(recording_part_table), sizeof(RecordingPart *));
        if (!rec->parts || !rec->sample_parts)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(recording_part_table); i++) {
                const RecordingPartVTable *vt = recording_part_table[i];
                void *state = vt->size > 0 ? calloc(1, vt->size) : NULL;
                if (vt->size > 0 && !state)
                        return -ENOMEM;
                int r = vt->start ? vt->start(state, rec, cfg, ret_name, ret_why) : 1;
                if (r <= 0) {
                        free(state);
                        if (r < 0)
                                return r;
                        continue;
                }
                rec->parts[rec->n_parts] = (RecordingPart){ vt, state };
                if (vt->sample)
                        rec->sample_parts[rec->n_sample_parts++] = &rec->parts[rec->n_parts];
                rec->n_parts++;
        }
        return 0;
}

static int recording_capture_error(int r, const char **ret_name, char **ret_why) {
        return recording_start_error(ret_name, ret_why, r, PERISCOPE_ERROR_INVALID_CAPTURE,
                                     "cannot write the capture: %m");
}

int recording_start(const RecordingSetup *setup, RecordOptions *options, int capture_fd, Recording **ret,
                    const char **ret_name, char **ret_why) {
        assert(setup && setup->event && options && ret && ret_name && ret_why);
        *ret_name = NULL;
        *ret_why = NULL;
        int r;
        Recording *rec = calloc(1, sizeof(Recording));
        if (!rec)
                return -ENOMEM;
        rec->id = setup->id;
        rec->owner_uid = setup->owner_uid;
        rec->kernel = setup->kernel && options->kernel != 0;
        rec->check_owner = setup->check_owner;
        rec->limits = setup->limits;
        rec->event = sd_event_ref(setup->event);
        rec->unwind_tables = setup->unwind_tables;
        if (rec->unwind_tables)
                rec->unwind_helper_failures_start = unwind_tables_get_stats(rec->unwind_tables).helper_failures;
        rec->helper = setup->helper;
        rec->helper.owner = setup->owner_uid; /* its helpers parse the owner's files, named so in the log */
        rec->budgets = setup->budgets;
        if (rec->budgets.max_addresses == 0)
                rec->budgets.max_addresses = RECORDING_DEFAULT_MAX_ADDRESSES;
        if (rec->budgets.symbolize_ms == 0)
                rec->budgets.symbolize_ms = RECORDING_DEFAULT_SYMBOLIZE_MS;
        rec->perf_opener = setup->perf_opener;
        rec->perf_wait = setup->perf_wait;
        rec->perf_wait_userdata = setup->perf_wait_userdata;
        rec->observer = setup->observer;
        rec->observer_userdata = setup->observer_userdata;
        rec->options = *options;
        *options = (RecordOptions){};
        rec->start_time = now_monotonic_ns();

        PerfEventsConfig cfg = {};
        if ((r = recording_new_tables(rec, setup, ret_name, ret_why)) < 0)
                goto fail;
        r = capture_writer_new_fd(capture_fd, rec->start_time, &rec->writer);
        /* the architecture the addresses belong to (docs/capture-format.md) */
        if (r >= 0)
                r = capture_writer_add_machine(rec->writer, rec->start_time);
        if (r < 0) {
                recording_capture_error(r, ret_name, ret_why);
                goto fail;
        }
        if ((r = recording_start_parts(rec, &cfg, ret_name, ret_why)) < 0 ||
            (r = recording_arm_perf(rec, &cfg, ret_name, ret_why)) < 0)
                goto fail;
        /* later events (processes joining a container, an exec) are
         * opened on the attach fiber: the start's is done with them */
        rec->perf_wait = NULL;
        perf_events_set_wait(rec->perf, NULL, NULL);
        int64_t snapshot_start = now_monotonic_ns();
        r = recording_snapshot(rec);
        if (r < 0) {
                recording_start_error(ret_name, ret_why, r, PERISCOPE_ERROR_FAILED,
                                      "taking the process snapshot failed: %m");
                goto fail;
        }
        /* the tables of what runs already compile before samples need them */
        sample_pump_prepare_all(rec->pump);
        size_t n_snapshot = 0;
        (void) process_maps_get_pids(rec->maps, &n_snapshot);
        log_recording(LOG_INFO, rec->id, "snapshot of %zu processes in %lld ms", n_snapshot,
                      (long long) ((now_monotonic_ns() - snapshot_start) / 1000000));
        r = capture_writer_flush(rec->writer);
        if (r < 0) {
                recording_capture_error(r, ret_name, ret_why);
                goto fail;
        }
        FOREACH_PART(p, rec)
        if (p->vtable->begin && (r = p->vtable->begin(p->state, rec, ret_name, ret_why)) < 0)
                goto fail;
        r = sd_event_add_time_relative(rec->event, &rec->tick, CLOCK_MONOTONIC, RECORDING_TICK_USEC, 10 * 1000, on_tick,
                                       rec);
        if (r >= 0)
                r = recording_watch_rings(rec);
        if (r < 0)
                goto fail;
        log_fields(LOG_INFO,
                   &(const LogFields){ .recording_id = rec->id,
                                       .has_uid = true,
                                       .uid = rec->owner_uid,
                                       .message_id = PERISCOPE_MESSAGE_RECORDING_STARTED },
                   "started for uid %u (%s)", (unsigned) rec->owner_uid, rec->options.system ? "system" : "processes");
        *ret = rec;
        return 0;
fail:
        if (!*ret_why)
                recording_start_error(ret_name, ret_why, r, PERISCOPE_ERROR_FAILED,
                                      "starting the recording failed: %m");
        rec->observer = NULL; /* it never started: nothing to tell */
        rec->state = RECORDING_STATE_FINISHED;
        recording_free(rec);
        return r < 0 ? r : -EIO;
}

/* ---- what the service asks of it ---- */

void recording_cancel_stages(Recording *rec) {
        /* the next ones do not start (nor any after the wait for unwind tables) */
        rec->stages_cancelled = true;
        if (rec->stage_job.cancel)
                rec->stage_job.cancel(rec->stage_job.job);
}

void recording_cut_short(Recording *rec, const char *why, bool now) {
        if (rec->state == RECORDING_STATE_FINISHED || rec->cut.now)
                return;
        if (!rec->cut.why)
                rec->cut.why = why;
        if (!now) {
                log_recording(LOG_INFO, rec->id, "post-stop stages %s soon: symbolizing no more files", rec->cut.why);
                return;
        }
        rec->cut.now = true;
        log_recording(LOG_INFO, rec->id, "post-stop stages %s: finishing the capture now", rec->cut.why);
        /* the stage under way ends (its done() runs the rest, which see cut.now) */
        if (rec->stage_job.cancel)
                rec->stage_job.cancel(rec->stage_job.job);
}

Recording *recording_free(Recording *rec) {
        if (!rec)
                return NULL;
        if (rec->state == RECORDING_STATE_RECORDING) {
                /* Freed while recording (service exiting): finalize without stages. */
                rec->stage = rec->n_parts;
                recording_end(rec, RECORDING_END_SHUTDOWN, 0, NULL);
        }
        /* Freed while finishing: the capture is still closed. */
        recording_cancel_stages(rec);
        recording_disarm(rec);
        for (size_t i = rec->n_parts; i > 0; i--) {
                RecordingPart *p = &rec->parts[i - 1];
                PART_CALL(p, free, rec);
                free(p->state);
        }
        free(rec->parts);
        free(rec->sample_parts);
        perf_events_free(rec->perf);
        user_charge_release(&rec->ring_charge);
        user_charge_release(&rec->event_charge);
        user_charge_release(&rec->thread_charge);
        capture_writer_free(rec->writer);
        rec->pump = sample_pump_free(rec->pump);
        process_maps_free(rec->maps);
        thread_table_free(rec->thread_names);
        pinned_files_free(rec->pinned);
        jit_files_free(rec->jit_files);
        resolver_free(rec->resolver);
        caller_opener_free(rec->as_caller);
        address_set_free(rec->addresses);
        record_options_done(&rec->options);
        sd_event_unref(rec->event);
        free(rec->ring_sources);
        free(rec->error_message);
        free(rec->command_cmdline);
        free(rec);
        return NULL;
}

bool recording_outlives_client(const Recording *rec) {
        return rec->options.duration_ms > 0 || rec->options.command_pid > 0;
}

int64_t recording_get_start_time(const Recording *rec) {
        return rec->start_time;
}
