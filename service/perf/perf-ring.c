/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf-ring.c: ring buffer records, one ring in order or several by time. */
#include "perf-ring.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Copies len bytes at ring offset pos (which may wrap) to dst. */
static void ring_copy(const uint8_t *data, uint64_t data_size, uint64_t pos, void *dst, size_t len) {
        uint64_t off = pos & (data_size - 1);
        size_t first = (size_t) (data_size - off);
        if (first > len)
                first = len;
        memcpy(dst, data + off, first);
        memcpy((uint8_t *) dst + first, data, len - first);
}

static int reader_give_up(PerfRingReader *r) {
        r->bad_records++;
        r->tail = r->head;
        return 0;
}

int perf_ring_reader_peek(PerfRingReader *r, const struct perf_event_header **ret, size_t *ret_size) {
        if (r->data_size == 0 || (r->data_size & (r->data_size - 1)) || r->head - r->tail > r->data_size)
                return reader_give_up(r); /* the kernel never gets ahead by more than the ring */
        if (r->head - r->tail < sizeof(struct perf_event_header))
                return 0;
        struct perf_event_header h;
        ring_copy(r->data, r->data_size, r->tail, &h, sizeof(h));
        if (h.size < sizeof(h) || h.size > r->head - r->tail || h.size % 8 != 0)
                return reader_give_up(r);
        uint64_t off = r->tail & (r->data_size - 1);
        if (off + h.size <= r->data_size)
                *ret = (const struct perf_event_header *) (const void *) (r->data + off);
        else {
                ring_copy(r->data, r->data_size, r->tail, r->copy, h.size);
                *ret = (const struct perf_event_header *) (const void *) r->copy;
        }
        *ret_size = h.size;
        return 1;
}

int perf_ring_consume(PerfRingReader *reader, PerfRecordHandler handler, void *userdata) {
        const struct perf_event_header *h;
        size_t size;
        int n = 0;

        while (perf_ring_reader_peek(reader, &h, &size) > 0) {
                int r = handler(h, size, userdata);
                reader->tail += size;
                n++;
                if (r < 0)
                        break;
        }
        return n;
}

/* A min-heap entry: the next record of one reader. */
typedef struct MergeHead {
        uint64_t time;
        size_t reader;
        const struct perf_event_header *record;
        size_t size;
} MergeHead;

static bool merge_head_before(const MergeHead *a, const MergeHead *b) {
        return a->time < b->time || (a->time == b->time && a->reader < b->reader);
}

static void merge_sift_down(MergeHead *heap, size_t n, size_t i) {
        for (;;) {
                size_t best = i, l = 2 * i + 1, r = l + 1;
                if (l < n && merge_head_before(&heap[l], &heap[best]))
                        best = l;
                if (r < n && merge_head_before(&heap[r], &heap[best]))
                        best = r;
                if (best == i)
                        return;
                MergeHead t = heap[i];
                heap[i] = heap[best];
                heap[best] = t;
                i = best;
        }
}

/* Fills e with reader i's next record; false at its end. */
static bool merge_head_load(PerfRingReader *readers, size_t i, PerfRecordTime time_of, void *time_userdata,
                            MergeHead *e) {
        if (perf_ring_reader_peek(&readers[i], &e->record, &e->size) <= 0)
                return false;
        e->reader = i;
        e->time = time_of(e->record, e->size, time_userdata);
        return true;
}

int perf_rings_merge(PerfRingReader *readers, size_t n, PerfRecordTime time_of, void *time_userdata,
                     PerfRecordHandler handler, void *userdata) {
        if (n == 1)
                return perf_ring_consume(&readers[0], handler, userdata);

        MergeHead *heap = calloc(n ? n : 1, sizeof(MergeHead));
        if (!heap) {
                /* No memory for the heap: ring by ring still loses nothing. */
                int total = 0;
                for (size_t i = 0; i < n; i++)
                        total += perf_ring_consume(&readers[i], handler, userdata);
                return total;
        }
        size_t n_heap = 0;
        for (size_t i = 0; i < n; i++)
                if (merge_head_load(readers, i, time_of, time_userdata, &heap[n_heap]))
                        n_heap++;
        for (size_t i = n_heap / 2; i-- > 0;)
                merge_sift_down(heap, n_heap, i);

        int total = 0;
        while (n_heap > 0) {
                MergeHead *top = &heap[0];
                PerfRingReader *reader = &readers[top->reader];
                int r = handler(top->record, top->size, userdata);
                reader->tail += top->size;
                total++;
                /* A wrapped record lives in the reader's copy buffer: the
                 * next peek may overwrite it, which is fine once handled. */
                if (r < 0 || !merge_head_load(readers, top->reader, time_of, time_userdata, top))
                        heap[0] = heap[--n_heap];
                merge_sift_down(heap, n_heap, 0);
        }
        free(heap);
        return total;
}
