/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf-record.c: bounds-checked decoding of perf ring records. */
#include "perf-record.h"

#include <errno.h>
#include <string.h>

/* A cursor over one record: every read checks the remaining length. */
typedef struct Cursor {
        const uint8_t *p;
        size_t left;
} Cursor;

static int cursor_u64(Cursor *c, uint64_t *v) {
        if (c->left < 8)
                return -EBADMSG;
        memcpy(v, c->p, 8);
        c->p += 8;
        c->left -= 8;
        return 0;
}

static int cursor_u32_pair(Cursor *c, uint32_t *a, uint32_t *b) {
        if (c->left < 8)
                return -EBADMSG;
        memcpy(a, c->p, 4);
        memcpy(b, c->p + 4, 4);
        c->p += 8;
        c->left -= 8;
        return 0;
}

/* Takes n u64 values in place (records are 8-byte aligned). */
static int cursor_u64_array(Cursor *c, uint64_t n, const uint64_t **ret) {
        if (n > c->left / 8)
                return -EBADMSG;
        *ret = (const uint64_t *) (const void *) c->p;
        c->p += n * 8;
        c->left -= n * 8;
        return 0;
}

static size_t sample_id_size(const PerfRecordLayout *layout) {
        size_t n = 0;
        uint64_t t = layout->sample_type;
        n += (t & PERF_SAMPLE_TID) ? 8 : 0;
        n += (t & PERF_SAMPLE_TIME) ? 8 : 0;
        n += (t & PERF_SAMPLE_ID) ? 8 : 0;
        n += (t & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
        n += (t & PERF_SAMPLE_CPU) ? 8 : 0;
        n += (t & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
        return n;
}

/* Decodes the sample_id_all trailer at the end of a non-sample record and
 * shortens the cursor so the body cannot read into it. */
static int cursor_take_sample_id(const PerfRecordLayout *layout, Cursor *c, PerfSampleId *id) {
        size_t n = sample_id_size(layout);
        uint64_t t = layout->sample_type, v;
        memset(id, 0, sizeof(*id));
        if (c->left < n)
                return -EBADMSG;
        Cursor tr = { c->p + c->left - n, n };
        c->left -= n;
        if ((t & PERF_SAMPLE_TID) && cursor_u32_pair(&tr, &id->pid, &id->tid) < 0)
                return -EBADMSG;
        if ((t & PERF_SAMPLE_TIME) && cursor_u64(&tr, &id->time) < 0)
                return -EBADMSG;
        if ((t & PERF_SAMPLE_ID) && cursor_u64(&tr, &v) < 0)
                return -EBADMSG;
        if ((t & PERF_SAMPLE_STREAM_ID) && cursor_u64(&tr, &v) < 0)
                return -EBADMSG;
        if (t & PERF_SAMPLE_CPU) {
                uint32_t res;
                if (cursor_u32_pair(&tr, &id->cpu, &res) < 0)
                        return -EBADMSG;
        }
        return 0;
}

static Cursor cursor_body(const struct perf_event_header *h, size_t size) {
        return (Cursor) { (const uint8_t *) h + sizeof(*h), size - sizeof(*h) };
}

/* A NUL-terminated string that fills the rest of the body (padded). */
static int cursor_string(Cursor *c, const char **ret) {
        if (c->left == 0 || !memchr(c->p, 0, c->left))
                return -EBADMSG;
        *ret = (const char *) c->p;
        c->left = 0;
        return 0;
}

int perf_record_parse_sample(const PerfRecordLayout *layout, const struct perf_event_header *h, size_t size,
                             PerfSample *s) {
        uint64_t t = layout->sample_type, v;
        Cursor c = cursor_body(h, size);
        memset(s, 0, sizeof(*s));
        s->user_mode = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;

        if ((t & PERF_SAMPLE_IDENTIFIER) && cursor_u64(&c, &s->id) < 0)
                return -EBADMSG;
        if ((t & PERF_SAMPLE_IP) && cursor_u64(&c, &s->ip) < 0)
                return -EBADMSG;
        if ((t & PERF_SAMPLE_TID) && cursor_u32_pair(&c, &s->pid, &s->tid) < 0)
                return -EBADMSG;
        if ((t & PERF_SAMPLE_TIME) && cursor_u64(&c, &s->time) < 0)
                return -EBADMSG;
        if ((t & PERF_SAMPLE_ADDR) && cursor_u64(&c, &v) < 0)
                return -EBADMSG;
        if ((t & PERF_SAMPLE_ID) && cursor_u64(&c, &v) < 0)
                return -EBADMSG;
        if ((t & PERF_SAMPLE_STREAM_ID) && cursor_u64(&c, &v) < 0)
                return -EBADMSG;
        if (t & PERF_SAMPLE_CPU) {
                uint32_t res;
                if (cursor_u32_pair(&c, &s->cpu, &res) < 0)
                        return -EBADMSG;
        }
        if ((t & PERF_SAMPLE_PERIOD) && cursor_u64(&c, &v) < 0)
                return -EBADMSG;
        if (t & (PERF_SAMPLE_READ | PERF_SAMPLE_RAW | PERF_SAMPLE_BRANCH_STACK))
                return -EOPNOTSUPP; /* never requested */
        if (t & PERF_SAMPLE_CALLCHAIN) {
                if (cursor_u64(&c, &s->n_callchain) < 0 ||
                    cursor_u64_array(&c, s->n_callchain, &s->callchain) < 0)
                        return -EBADMSG;
        }
        if (t & PERF_SAMPLE_REGS_USER) {
                if (cursor_u64(&c, &s->regs_abi) < 0)
                        return -EBADMSG;
                if (s->regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
                        s->n_regs = (uint64_t) __builtin_popcountll(layout->sample_regs_user);
                        if (cursor_u64_array(&c, s->n_regs, &s->regs) < 0)
                                return -EBADMSG;
                }
        }
        if (t & PERF_SAMPLE_STACK_USER) {
                if (cursor_u64(&c, &s->stack_size) < 0)
                        return -EBADMSG;
                if (s->stack_size > 0) {
                        if (s->stack_size > c.left || s->stack_size % 8 != 0)
                                return -EBADMSG;
                        s->stack = c.p;
                        c.p += s->stack_size;
                        c.left -= s->stack_size;
                        if (cursor_u64(&c, &s->stack_dyn_size) < 0 || s->stack_dyn_size > s->stack_size)
                                return -EBADMSG;
                }
        }
        return 0;
}

int perf_record_parse_mmap2(const PerfRecordLayout *layout, const struct perf_event_header *h, size_t size,
                            PerfMmap2 *m) {
        Cursor c = cursor_body(h, size);
        memset(m, 0, sizeof(*m));
        if (cursor_take_sample_id(layout, &c, &m->id) < 0)
                return -EBADMSG;
        if (cursor_u32_pair(&c, &m->pid, &m->tid) < 0 || cursor_u64(&c, &m->addr) < 0 ||
            cursor_u64(&c, &m->len) < 0 || cursor_u64(&c, &m->pgoff) < 0)
                return -EBADMSG;
        if (c.left < 24)
                return -EBADMSG;
        if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
                m->has_build_id = true;
                m->build_id_size = c.p[0];
                if (m->build_id_size > sizeof(m->build_id))
                        return -EBADMSG;
                memcpy(m->build_id, c.p + 4, m->build_id_size);
        } else {
                memcpy(&m->dev_major, c.p, 4);
                memcpy(&m->dev_minor, c.p + 4, 4);
                memcpy(&m->inode, c.p + 8, 8);
        }
        c.p += 24;
        c.left -= 24;
        if (cursor_u32_pair(&c, &m->prot, &m->flags) < 0)
                return -EBADMSG;
        if (m->addr + m->len < m->addr)
                return -EBADMSG;
        return cursor_string(&c, &m->filename);
}

int perf_record_parse_comm(const PerfRecordLayout *layout, const struct perf_event_header *h, size_t size,
                           PerfComm *m) {
        Cursor c = cursor_body(h, size);
        memset(m, 0, sizeof(*m));
        if (cursor_take_sample_id(layout, &c, &m->id) < 0)
                return -EBADMSG;
        if (cursor_u32_pair(&c, &m->pid, &m->tid) < 0)
                return -EBADMSG;
        m->exec = h->misc & PERF_RECORD_MISC_COMM_EXEC;
        return cursor_string(&c, &m->comm);
}

int perf_record_parse_task(const PerfRecordLayout *layout, const struct perf_event_header *h, size_t size,
                           PerfTask *m) {
        Cursor c = cursor_body(h, size);
        memset(m, 0, sizeof(*m));
        if (cursor_take_sample_id(layout, &c, &m->id) < 0)
                return -EBADMSG;
        if (cursor_u32_pair(&c, &m->pid, &m->ppid) < 0 || cursor_u32_pair(&c, &m->tid, &m->ptid) < 0 ||
            cursor_u64(&c, &m->time) < 0)
                return -EBADMSG;
        return 0;
}

int perf_record_parse_switch(const PerfRecordLayout *layout, const struct perf_event_header *h, size_t size,
                             PerfSwitch *m) {
        Cursor c = cursor_body(h, size);
        memset(m, 0, sizeof(*m));
        if (h->type != PERF_RECORD_SWITCH && h->type != PERF_RECORD_SWITCH_CPU_WIDE)
                return -EINVAL;
        if ((layout->sample_type & (PERF_SAMPLE_TID | PERF_SAMPLE_TIME)) != (PERF_SAMPLE_TID | PERF_SAMPLE_TIME))
                return -EBADMSG;
        if (cursor_take_sample_id(layout, &c, &m->id) < 0)
                return -EBADMSG;
        if (h->type == PERF_RECORD_SWITCH_CPU_WIDE && cursor_u32_pair(&c, &m->next_prev_pid, &m->next_prev_tid) < 0)
                return -EBADMSG;
        m->out = h->misc & PERF_RECORD_MISC_SWITCH_OUT;
        m->preempt = m->out && (h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
        return 0;
}

uint64_t perf_record_time(const PerfRecordLayout *layout, const struct perf_event_header *h, size_t size) {
        uint64_t t = layout->sample_type, v = 0;
        if (!(t & PERF_SAMPLE_TIME) || size < sizeof(*h))
                return 0;
        Cursor c = cursor_body(h, size);
        if (h->type == PERF_RECORD_SAMPLE) {
                /* IDENTIFIER, IP and TID come before TIME. */
                size_t skip = 8 * (size_t) (!!(t & PERF_SAMPLE_IDENTIFIER) + !!(t & PERF_SAMPLE_IP) +
                                            !!(t & PERF_SAMPLE_TID));
                if (c.left < skip)
                        return 0;
                c.p += skip;
                c.left -= skip;
                return cursor_u64(&c, &v) < 0 ? 0 : v;
        }
        PerfSampleId id;
        return cursor_take_sample_id(layout, &c, &id) < 0 ? 0 : id.time;
}

int perf_record_parse_lost(const struct perf_event_header *h, size_t size, uint64_t *ret_lost) {
        Cursor c = cursor_body(h, size);
        uint64_t id;
        if (h->type == PERF_RECORD_LOST)
                return cursor_u64(&c, &id) < 0 ? -EBADMSG : cursor_u64(&c, ret_lost);
        if (h->type == PERF_RECORD_LOST_SAMPLES)
                return cursor_u64(&c, ret_lost);
        return -EINVAL;
}
