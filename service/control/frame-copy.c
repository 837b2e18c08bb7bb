/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* frame-copy.c: checked program frames into the capture (frame-copy.h). */
#include "frame-copy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "counter-remap.h"

struct FrameCopier {
        CaptureWriter *writer;
        CounterIdAllocator *ids;
        CounterRemap *counters;
        ControlAddressFunc address_func;
        void *address_userdata;
        uint8_t id_space;
        CaptureCounterDef defs[CAPTURE_CTRDEF_MAX_COUNTERS];
        CaptureCounterSetValue values[CAPTURE_CTRSET_MAX_GROUPS * 8];
};

int frame_copier_new(CaptureWriter *writer, CounterIdAllocator *ids, size_t max_counters, FrameCopier **ret) {
        if (!writer || !ids || !ret)
                return -EINVAL;
        _cleanup_(frame_copier_freep) FrameCopier *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->writer = writer;
        c->ids = ids;
        int r = counter_remap_new(max_counters, &c->counters);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(c);
        return 0;
}

FrameCopier *frame_copier_free(FrameCopier *c) {
        if (!c)
                return NULL;
        counter_remap_free(c->counters);
        free(c);
        return NULL;
}

void frame_copier_set_address_func(FrameCopier *c, ControlAddressFunc func, void *userdata) {
        c->address_func = func;
        c->address_userdata = userdata;
}

int frame_decoder_new(bool little_endian, uint8_t header[CAPTURE_FILE_HEADER_SIZE], CaptureReader **ret) {
        memset(header, 0, CAPTURE_FILE_HEADER_SIZE);
        unaligned_store_u32(header, CAPTURE_MAGIC); /* always little-endian */
        header[4] = CAPTURE_VERSION;
        header[5] = little_endian ? 0x01 : 0x00;
        return capture_reader_open_memory(header, CAPTURE_FILE_HEADER_SIZE, ret, NULL);
}

void frame_copier_set_id_space(FrameCopier *c, uint8_t space) {
        c->id_space = space;
}

/* The capture id for a program's counter id (24 bits on disk; a CTRSET's
 * u32 beyond them cannot name a defined counter). <= 0 when there is none. */
static int64_t remap_counter(FrameCopier *c, int32_t pid, uint32_t id) {
        if (id == 0 || id > COUNTER_ID_MAX)
                return -EINVAL;
        return counter_remap_define(c->counters, c->ids, pid, (uint32_t) c->id_space << 24 | id);
}

bool frame_copier_copies_type(int type) {
        switch (type) {
        case CAPTURE_FRAME_MARK:
        case CAPTURE_FRAME_LOG:
        case CAPTURE_FRAME_SAMPLE:
        case CAPTURE_FRAME_ALLOCATION:
        case CAPTURE_FRAME_CTRDEF:
        case CAPTURE_FRAME_CTRSET:
        case CAPTURE_FRAME_JITMAP:
                return true;
        default:
                return false;
        }
}

static void note_addresses(FrameCopier *c, int32_t pid, const uint64_t *addrs, size_t n) {
        if (c->address_func && n > 0)
                c->address_func(pid, addrs, n, c->address_userdata);
}

static int copy_counter_defs(FrameCopier *c, const CaptureFrame *f) {
        size_t n = 0;
        for (uint16_t i = 0; i < f->ctrdef.n_counters; i++) {
                const CaptureCounterDef *d = &f->ctrdef.counters[i];
                if (d->id == 0 || d->type > CAPTURE_COUNTER_DOUBLE)
                        continue;
                int64_t id = remap_counter(c, f->pid, d->id);
                if (id <= 0)
                        continue;
                c->defs[n] = *d;
                c->defs[n].id = (uint32_t) id;
                n++;
        }
        return n > 0 ? capture_writer_add_counter_defs(c->writer, f->time, f->cpu, f->pid, c->defs, n) : 0;
}

static int copy_counter_values(FrameCopier *c, const CaptureFrame *f) {
        size_t n = 0;
        for (uint32_t i = 0; i < f->ctrset.n_values; i++) {
                /* A value may come before its definition when the two were
                 * written to different rings (threads): the mapping is made
                 * on first sight either way. */
                int64_t id = remap_counter(c, f->pid, f->ctrset.values[i].id);
                if (id <= 0)
                        continue;
                c->values[n].id = (uint32_t) id;
                c->values[n].value = f->ctrset.values[i].value;
                n++;
        }
        return n > 0 ? capture_writer_add_counter_values(c->writer, f->time, f->cpu, f->pid, c->values, n) : 0;
}

int frame_copier_copy(FrameCopier *c, const CaptureFrame *f) {
        CaptureWriter *w = c->writer;
        int r;
        switch (f->type) {
        case CAPTURE_FRAME_MARK:
                r = capture_writer_add_mark(w, f->time, f->cpu, f->pid, f->mark.duration, f->mark.group, f->mark.name,
                                            f->mark.message);
                break;
        case CAPTURE_FRAME_LOG:
                r = capture_writer_add_log(w, f->time, f->cpu, f->pid, f->log.severity, f->log.domain, f->log.message);
                break;
        case CAPTURE_FRAME_SAMPLE:
                r = capture_writer_add_sample(w, f->time, f->cpu, f->pid, f->sample.tid, f->sample.addrs,
                                              f->sample.n_addrs);
                note_addresses(c, f->pid, f->sample.addrs, f->sample.n_addrs);
                break;
        case CAPTURE_FRAME_ALLOCATION:
                r = capture_writer_add_allocation(w, f->time, f->cpu, f->pid, f->allocation.tid,
                                                  f->allocation.alloc_addr, f->allocation.alloc_size,
                                                  f->allocation.addrs, f->allocation.n_addrs);
                note_addresses(c, f->pid, f->allocation.addrs, f->allocation.n_addrs);
                break;
        case CAPTURE_FRAME_CTRDEF:
                r = copy_counter_defs(c, f);
                break;
        case CAPTURE_FRAME_CTRSET:
                r = copy_counter_values(c, f);
                break;
        case CAPTURE_FRAME_JITMAP:
                /* names of the program's JIT addresses (GJS): readers key
                 * them by pid, so they cannot name another process's code */
                r = capture_writer_add_jitmap(w, f->time, f->cpu, f->pid, f->jitmap.entries, f->jitmap.n_entries);
                break;
        default:
                /* Known to Sysprof 3.46 but not something a program may
                 * claim (MAP, PROCESS, FILE_CHUNK...). */
                return 0;
        }
        return r < 0 ? r : 1;
}
