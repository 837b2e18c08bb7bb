/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trace-check.c: checks a recording of trace-writer with Sysprof's own
 * reader (Debian's libsysprof-capture-4): every frame of the capture reads;
 * the program's marks, logs, counter values and JIT-named samples (with
 * their JITMAP) are there exactly as it printed them (time, duration, pid),
 * marks in time order; its counter got an id
 * no other counter of the capture has; the recording has CPU samples of the
 * program; periscope.stats counts the frames merged and refused, and a
 * refusal is explained by a LOG frame.
 *   trace-check CAPTURE EXPECTED   (EXPECTED: trace-writer's output) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysprof-capture.h>

#include "test-check.h"

#define MAX_ITEMS 64

typedef struct Item {
        char name[64];          /* mark name or log message */
        int64_t time, value;    /* value: a mark's duration, a counter's value */
        bool seen;
} Item;

typedef struct Expected {
        int pid;
        Item marks[MAX_ITEMS], logs[MAX_ITEMS], values[MAX_ITEMS];
        size_t n_marks, n_logs, n_values;
        int64_t ctrdef_time;
        uint64_t jit_address;   /* the program's js_render */
        int64_t samples[MAX_ITEMS];
        size_t n_samples;
        long refused;
} Expected;

static int expected_read(const char *path, Expected *e) {
        FILE *f = fopen(path, "re");
        if (!f)
                return -1;
        char line[256];
        *e = (Expected) { .pid = -1, .refused = -1 };
        while (fgets(line, sizeof(line), f)) {
                line[strcspn(line, "\n")] = 0;
                Item it = {};
                int n = 0;
                if (sscanf(line, "pid %d", &e->pid) == 1)
                        continue;
                if (sscanf(line, "refused %ld", &e->refused) == 1)
                        continue;
                if (sscanf(line, "ctrdef phase %" SCNd64, &e->ctrdef_time) == 1)
                        continue;
                if (sscanf(line, "jitmap js_render %" SCNu64, &e->jit_address) == 1)
                        continue;
                if (e->n_samples < MAX_ITEMS && sscanf(line, "sample %" SCNd64, &e->samples[e->n_samples]) == 1) {
                        e->n_samples++;
                        continue;
                }
                if (sscanf(line, "mark %63s %" SCNd64 " %" SCNd64, it.name, &it.time, &it.value) == 3 &&
                    e->n_marks < MAX_ITEMS)
                        e->marks[e->n_marks++] = it;
                else if (sscanf(line, "log %" SCNd64 " %n", &it.time, &n) == 1 && n > 0 && e->n_logs < MAX_ITEMS) {
                        snprintf(it.name, sizeof(it.name), "%s", line + n);
                        e->logs[e->n_logs++] = it;
                } else if (sscanf(line, "ctrset %" SCNd64 " %" SCNd64, &it.time, &it.value) == 2 &&
                           e->n_values < MAX_ITEMS)
                        e->values[e->n_values++] = it;
        }
        fclose(f);
        return e->pid > 0 && e->refused >= 0 && e->n_marks > 0 ? 0 : -1;
}

static Item *find_item(Item *items, size_t n, const char *name, int64_t time) {
        for (size_t i = 0; i < n; i++)
                if ((!name || strcmp(items[i].name, name) == 0) && (name || items[i].time == time))
                        return &items[i];
        return NULL;
}

/* A "key=value" line of the stats text, or -1. */
static long stats_value(const char *text, const char *key) {
        size_t k = strlen(key);
        for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                if (strncmp(p, key, k) == 0 && p[k] == '=')
                        return strtol(p + k + 1, NULL, 10);
        return -1;
}

typedef struct Seen {
        uint32_t counter_ids[1024];
        size_t n_counter_ids;
        uint32_t phase_id;      /* the capture id of the program's counter */
        uint64_t samples;
        uint64_t jit_samples;   /* the program's own samples in js_render, at the times it wrote */
        bool jitmap_seen;
        int64_t last_mark_time;
        long stats_refused, stats_frames;
        bool refusal_logged;
        bool ctrdef_seen;
} Seen;

static void check_mark(const SysprofCaptureMark *m, Expected *e, Seen *s) {
        if (strcmp(m->group, "trace-test") != 0)
                return;
        Item *it = find_item(e->marks, e->n_marks, m->name, 0);
        CHECK_MSG(it != NULL, "mark %s (pid %d) is in the capture: it should have been refused", m->name,
                  (int) m->frame.pid);
        if (!it)
                return;
        CHECK_MSG(!it->seen, "mark %s is in the capture twice", m->name);
        it->seen = true;
        CHECK_MSG(m->frame.pid == e->pid, "mark %s has pid %d, not the program's %d", m->name, (int) m->frame.pid,
                  e->pid);
        CHECK_MSG(m->frame.time == it->time && m->duration == it->value,
                  "mark %s at %" PRId64 " for %" PRId64 " ns, written at %" PRId64 " for %" PRId64, m->name,
                  (int64_t) m->frame.time, (int64_t) m->duration, it->time, it->value);
        CHECK_MSG(m->frame.time >= s->last_mark_time, "mark %s comes after a later one", m->name);
        s->last_mark_time = m->frame.time;
}

static void check_log(const SysprofCaptureLog *l, Expected *e, Seen *s) {
        if (strcmp(l->domain, "periscope") == 0 && strstr(l->message, "trace fd 1:") &&
            strstr(l->message, "refused")) {
                printf("refusal log: %s\n", l->message);
                s->refusal_logged = true;
        }
        if (strcmp(l->domain, "trace-test") != 0)
                return;
        Item *it = find_item(e->logs, e->n_logs, l->message, 0);
        CHECK_MSG(it && !it->seen, "log '%s' unexpected or twice", l->message);
        if (!it)
                return;
        it->seen = true;
        CHECK_MSG(l->frame.pid == e->pid && l->frame.time == it->time, "log '%s': pid %d time %" PRId64
                  ", written by %d at %" PRId64, l->message, (int) l->frame.pid, (int64_t) l->frame.time, e->pid,
                  it->time);
}

static void check_ctrdef(const SysprofCaptureCounterDefine *d, Expected *e, Seen *s) {
        for (unsigned i = 0; i < d->n_counters; i++) {
                uint32_t id = d->counters[i].id;
                for (size_t j = 0; j < s->n_counter_ids; j++)
                        CHECK_MSG(s->counter_ids[j] != id, "counter id %u is defined twice in the capture "
                                  "(the program's was not remapped)", id);
                if (s->n_counter_ids < 1024)
                        s->counter_ids[s->n_counter_ids++] = id;
                if (strcmp(d->counters[i].category, "trace-test") == 0 && strcmp(d->counters[i].name, "phase") == 0) {
                        CHECK(d->frame.pid == e->pid && d->frame.time == e->ctrdef_time);
                        s->phase_id = id;
                        s->ctrdef_seen = true;
                }
        }
}

static void check_ctrset(const SysprofCaptureCounterSet *set, Expected *e, Seen *s) {
        for (unsigned g = 0; g < set->n_values; g++)
                for (int k = 0; k < 8; k++) {
                        if (!s->phase_id || set->values[g].ids[k] != s->phase_id)
                                continue;
                        Item *it = find_item(e->values, e->n_values, NULL, set->frame.time);
                        CHECK_MSG(it && !it->seen && it->value == set->values[g].values[k].v64,
                                  "counter value %" PRId64 " at %" PRId64 " was not written so",
                                  set->values[g].values[k].v64, (int64_t) set->frame.time);
                        if (it)
                                it->seen = true;
                }
}

/* A perf sample, or one the program wrote: its one frame js_render at a
 * time it printed. */
static void check_sample(const SysprofCaptureSample *smp, Expected *e, Seen *s) {
        if (smp->n_addrs != 1 || smp->addrs[0] != e->jit_address) {
                s->samples++;
                return;
        }
        bool known = false;
        for (size_t i = 0; i < e->n_samples; i++)
                known |= e->samples[i] == smp->frame.time;
        CHECK_MSG(known, "a js_render sample at %" PRId64 " was not written then", (int64_t) smp->frame.time);
        s->jit_samples++;
}

static void check_jitmap(const SysprofCaptureJitmap *j, Expected *e, Seen *s) {
        SysprofCaptureJitmapIter it;
        SysprofCaptureAddress addr;
        const char *name;
        sysprof_capture_jitmap_iter_init(&it, j);
        while (sysprof_capture_jitmap_iter_next(&it, &addr, &name))
                if (addr == e->jit_address && strcmp(name, "js_render") == 0) {
                        CHECK(j->frame.pid == e->pid);
                        s->jitmap_seen = true;
                }
}

/* Reads every frame with Sysprof's reader. */
static void read_capture(const char *path, Expected *e, Seen *s) {
        SysprofCaptureReader *r = sysprof_capture_reader_new(path);
        if (!r) {
                fail("libsysprof-capture rejects %s", path);
                return;
        }
        SysprofCaptureFrameType type;
        uint64_t n = 0;
        while (sysprof_capture_reader_peek_type(r, &type)) {
                bool ok = true;
                switch (type) {
                case SYSPROF_CAPTURE_FRAME_MARK: {
                        const SysprofCaptureMark *m = sysprof_capture_reader_read_mark(r);
                        if ((ok = m))
                                check_mark(m, e, s);
                        break;
                }
                case SYSPROF_CAPTURE_FRAME_LOG: {
                        const SysprofCaptureLog *l = sysprof_capture_reader_read_log(r);
                        if ((ok = l))
                                check_log(l, e, s);
                        break;
                }
                case SYSPROF_CAPTURE_FRAME_CTRDEF: {
                        const SysprofCaptureCounterDefine *d = sysprof_capture_reader_read_counter_define(r);
                        if ((ok = d))
                                check_ctrdef(d, e, s);
                        break;
                }
                case SYSPROF_CAPTURE_FRAME_CTRSET: {
                        const SysprofCaptureCounterSet *set = sysprof_capture_reader_read_counter_set(r);
                        if ((ok = set))
                                check_ctrset(set, e, s);
                        break;
                }
                case SYSPROF_CAPTURE_FRAME_SAMPLE: {
                        const SysprofCaptureSample *smp = sysprof_capture_reader_read_sample(r);
                        if ((ok = smp) && smp->frame.pid == e->pid)
                                check_sample(smp, e, s);
                        break;
                }
                case SYSPROF_CAPTURE_FRAME_JITMAP: {
                        const SysprofCaptureJitmap *j = sysprof_capture_reader_read_jitmap(r);
                        if ((ok = j))
                                check_jitmap(j, e, s);
                        break;
                }
                case SYSPROF_CAPTURE_FRAME_METADATA: {
                        const SysprofCaptureMetadata *md = sysprof_capture_reader_read_metadata(r);
                        if ((ok = md) && strcmp(md->id, "periscope.stats") == 0) {
                                s->stats_refused = stats_value(md->metadata, "trace_frames_refused");
                                s->stats_frames = stats_value(md->metadata, "trace_frames");
                        }
                        break;
                }
                default:
                        ok = sysprof_capture_reader_skip(r);
                        break;
                }
                if (!ok) {
                        fail("libsysprof-capture cannot read frame %" PRIu64 " (type %d)", n, type);
                        break;
                }
                n++;
        }
        printf("libsysprof-capture read %" PRIu64 " frames\n", n);
        sysprof_capture_reader_unref(r);
}

int main(int argc, char **argv) {
        if (argc != 3) {
                fprintf(stderr, "usage: trace-check CAPTURE EXPECTED\n");
                return 2;
        }
        Expected e;
        if (expected_read(argv[2], &e) < 0) {
                fprintf(stderr, "trace-check: %s is not trace-writer's output\n", argv[2]);
                return 1;
        }
        Seen s = { .stats_refused = -1, .stats_frames = -1 };
        read_capture(argv[1], &e, &s);

        for (size_t i = 0; i < e.n_marks; i++)
                CHECK_MSG(e.marks[i].seen, "mark %s is not in the capture", e.marks[i].name);
        for (size_t i = 0; i < e.n_logs; i++)
                CHECK_MSG(e.logs[i].seen, "log '%s' is not in the capture", e.logs[i].name);
        for (size_t i = 0; i < e.n_values; i++)
                CHECK_MSG(e.values[i].seen, "counter value %" PRId64 " is not in the capture", e.values[i].value);
        CHECK_MSG(s.ctrdef_seen, "the program's counter definition is not in the capture");
        CHECK_MSG(s.samples > 0, "no CPU samples of the program (pid %d)", e.pid);
        CHECK_MSG(s.jit_samples == e.n_samples, "%" PRIu64 " of the program's %zu js_render samples are in the capture",
                  s.jit_samples, e.n_samples);
        CHECK_MSG(s.jitmap_seen, "the program's JITMAP (js_render) is not in the capture");
        /* the good frames: marks, logs, counter values, the counter
         * definition, samples, the JITMAP */
        long frames = (long) (e.n_marks + e.n_logs + e.n_values + 1 + e.n_samples + 1);
        CHECK_MSG(s.stats_frames == frames, "periscope.stats: trace_frames=%ld, the program wrote %ld good frames",
                  s.stats_frames, frames);
        CHECK_MSG(s.stats_refused == e.refused, "periscope.stats: trace_frames_refused=%ld, expected %ld",
                  s.stats_refused, e.refused);
        CHECK_MSG(e.refused == 0 || s.refusal_logged, "no LOG frame explains the refused trace frames");
        printf("%zu marks, %zu logs, %zu counter values of pid %d; %" PRIu64 " samples; %ld refused\n", e.n_marks,
               e.n_logs, e.n_values, e.pid, s.samples, s.stats_refused);
        return failures ? 1 : 0;
}
