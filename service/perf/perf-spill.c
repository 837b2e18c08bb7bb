/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf-spill.c: a bounded byte queue of perf records (see perf-spill.h). */
#include "perf-spill.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static size_t spill_max(const PerfSpill *s) {
        return s->max_bytes ? s->max_bytes : PERF_SPILL_DEFAULT_MAX_BYTES;
}

/* Bytes of the sample's stack copy worth keeping: the valid part, rounded
 * up to the 8 bytes the format needs; or SIZE_MAX when the record cannot be
 * cut (no stack, or the stack is not the record's last field). */
static size_t sample_keep_stack(const PerfSpill *s, const struct perf_event_header *h, size_t size,
                                size_t *ret_prefix) {
        PerfSample sample;
        if (h->type != PERF_RECORD_SAMPLE || !(s->layout.sample_type & PERF_SAMPLE_STACK_USER) ||
            perf_record_parse_sample(&s->layout, h, size, &sample) < 0 || sample.stack_size == 0)
                return SIZE_MAX;
        const uint8_t *start = (const uint8_t *) h;
        size_t prefix = (size_t) (sample.stack - start) - sizeof(uint64_t); /* up to the size field */
        if (prefix + sizeof(uint64_t) + sample.stack_size + sizeof(uint64_t) != size)
                return SIZE_MAX;
        size_t keep = ((size_t) sample.stack_dyn_size + 7) & ~(size_t) 7;
        if (keep >= sample.stack_size)
                return SIZE_MAX;
        *ret_prefix = prefix;
        return keep;
}

/* Room for `size` more bytes; false when over the bound or out of memory. */
static bool spill_reserve(PerfSpill *s, size_t size) {
        if (s->size + size > spill_max(s))
                return false;
        if (s->size + size <= s->allocated)
                return true;
        size_t n = s->allocated ? s->allocated : 256 * 1024;
        while (n < s->size + size)
                n *= 2;
        if (n > spill_max(s))
                n = spill_max(s);
        uint8_t *d = realloc(s->data, n);
        if (!d)
                return false;
        s->data = d;
        s->allocated = n;
        return true;
}

int perf_spill_add(const struct perf_event_header *header, size_t size, void *userdata) {
        PerfSpill *s = userdata;
        size_t prefix = 0, keep;

        /* perf-ring hands only whole, checked records */
        if (size < sizeof(*header) || size != header->size || size % 8 != 0)
                return -EINVAL;
        keep = sample_keep_stack(s, header, size, &prefix);
        if (keep != SIZE_MAX) {
                /* [fields before the stack][u64 keep][keep bytes][u64 dyn_size]; none
                 * of the last two when nothing of the stack was valid */
                size_t new_size = prefix + sizeof(uint64_t) + (keep ? keep + sizeof(uint64_t) : 0);
                if (new_size > UINT16_MAX || !spill_reserve(s, new_size)) {
                        s->dropped_samples++;
                        return 0;
                }
                const uint8_t *src = (const uint8_t *) header;
                uint8_t *dst = s->data + s->size;
                uint64_t keep64 = keep, dyn;
                memcpy(&dyn, src + size - sizeof(uint64_t), sizeof(dyn));
                memcpy(dst, src, prefix);
                memcpy(dst + prefix, &keep64, sizeof(keep64));
                if (keep) {
                        memcpy(dst + prefix + sizeof(uint64_t), src + prefix + sizeof(uint64_t), keep);
                        memcpy(dst + prefix + sizeof(uint64_t) + keep, &dyn, sizeof(dyn));
                }
                ((struct perf_event_header *) dst)->size = (uint16_t) new_size;
                s->size += new_size;
                s->spilled_records++;
                return 0;
        }
        if (!spill_reserve(s, size)) {
                if (header->type == PERF_RECORD_SAMPLE)
                        s->dropped_samples++;
                return 0; /* keep reading: the rings must be emptied anyway */
        }
        memcpy(s->data + s->size, header, size);
        s->size += size;
        s->spilled_records++;
        return 0;
}

int perf_spill_replay(PerfSpill *s, size_t max_records, PerfRecordHandler handler, void *userdata) {
        int n = 0, ret = 0;
        size_t off = 0;

        while (off < s->size) {
                const struct perf_event_header *h = (const struct perf_event_header *) (s->data + off);
                size_t size = h->size; /* checked when it was added */
                int r = (size_t) n < max_records ? handler(h, size, userdata) : -EAGAIN;
                if (r == -EAGAIN) {
                        /* not now: keep this record and the rest, in order */
                        memmove(s->data, s->data + off, s->size - off);
                        s->size -= off;
                        return n;
                }
                off += size;
                if (r < 0) {
                        ret = r;
                        break;
                }
                n++;
        }
        s->size = 0;
        /* give back a large buffer once it drained: a spill is a burst */
        if (s->allocated > 4u * 1024u * 1024u) {
                free(s->data);
                s->data = NULL;
                s->allocated = 0;
        }
        return ret < 0 ? ret : n;
}

void perf_spill_done(PerfSpill *s) {
        free(s->data);
        *s = (PerfSpill) { .max_bytes = s->max_bytes };
}
