/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* python-frames.c: a CPython process's thread states and frame chains,
 * read as hostile input, and the code objects of its frames, cached per
 * address. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "python-frames.h"
#include "python-strings.h"

#define NONE UINT32_MAX

/* A part of an object that a reader reads in one go: [start, end). */
typedef struct Span {
        uint32_t start, end;
} Span;

static void span_add(Span *s, uint32_t offset, uint32_t width) {
        if (offset == NONE)
                return;
        if (s->end == 0 || offset < s->start)
                s->start = offset;
        if (offset + width > s->end)
                s->end = offset + width;
}

/* What a code object says, as the cache keeps it; the pointers are what
 * the code object held when read, to tell it from another at the same
 * address later. */
typedef struct CodeEntry {
        uint64_t address;
        uint64_t type, filename_ptr, name_ptr, qualname_ptr, linetable_ptr;
        int32_t firstlineno;
        uint64_t walk; /* the last walk that showed it */
        char *name, *filename;
        uint8_t *linetable;
        size_t linetable_size;
} CodeEntry;

/* Open addressing with linear probing, at most half full: it starts small
 * (a reader per process) and doubles up to CODE_SLOTS_MAX. */
#define CODE_SLOTS_MIN 64u
#define CODE_SLOTS_MAX (2 * PY_CODE_CACHE_MAX)

struct PyReader {
        PyLayout layout;
        PyMemory memory;
        Span interp, tstate, cframe, frame, code;
        uint64_t code_type; /* the type of the first code object read, which every later one must have */
        CodeEntry *slots;   /* n_slots of them, address 0 for a free one */
        size_t n_slots;
        size_t n_codes;
        uint64_t walk; /* walks so far */
        uint64_t code_lookups, code_hits;
};

static void code_entry_clear(CodeEntry *e) {
        free(e->name);
        free(e->filename);
        free(e->linetable);
        *e = (CodeEntry){};
}

static void code_cache_flush(PyReader *r) {
        for (size_t i = 0; i < r->n_slots; i++)
                if (r->slots[i].address != 0)
                        code_entry_clear(&r->slots[i]);
        r->n_codes = 0;
}

PyReader *py_reader_free(PyReader *r) {
        if (!r)
                return NULL;
        if (r->slots)
                code_cache_flush(r);
        free(r->slots);
        free(r);
        return NULL;
}

int py_reader_new(const PyLayout *layout, PyReadFunc read, void *userdata, PyReader **ret) {
        const PyLayout *l = layout;

        if (!read || py_layout_check(layout, NULL) < 0)
                return -EINVAL;
        /* py_layout_check() bounds the spans too. */

        _cleanup_free_ PyReader *r = calloc(1, sizeof(PyReader));
        if (!r)
                return -ENOMEM;
        r->n_slots = CODE_SLOTS_MIN;
        r->slots = calloc(r->n_slots, sizeof(CodeEntry));
        if (!r->slots)
                return -ENOMEM;
        r->layout = *layout;
        r->memory = (PyMemory){ .read = read, .userdata = userdata };

        span_add(&r->interp, l->interp_next, 8);
        span_add(&r->interp, l->interp_threads_head, 8);
        span_add(&r->tstate, l->tstate_next, 8);
        span_add(&r->tstate, l->tstate_native_thread_id, 8);
        span_add(&r->tstate, l->tstate_thread_id, 8);
        span_add(&r->tstate, l->tstate_cframe, 8);
        span_add(&r->tstate, l->tstate_current_frame, 8);
        span_add(&r->cframe, l->cframe_current_frame, 8);
        span_add(&r->frame, l->frame_code, 8);
        span_add(&r->frame, l->frame_previous, 8);
        span_add(&r->frame, l->frame_instr, 8);
        span_add(&r->frame, l->frame_owner, 1);
        span_add(&r->frame, l->frame_is_entry, 1);
        span_add(&r->code, l->object_type, 8);
        span_add(&r->code, l->code_filename, 8);
        span_add(&r->code, l->code_name, 8);
        span_add(&r->code, l->code_qualname, 8);
        span_add(&r->code, l->code_linetable, 8);
        span_add(&r->code, l->code_firstlineno, 4);

        *ret = TAKE_PTR(r);
        return 0;
}

void py_reader_get_stats(const PyReader *r, PyReaderStats *ret) {
        *ret = (PyReaderStats){
                .reads = r->memory.reads,
                .code_lookups = r->code_lookups,
                .code_hits = r->code_hits,
        };
}

/* Reads span s of the object at addr into buf (PY_LAYOUT_SPAN_MAX bytes,
 * from s.start on). */
static int read_span(PyReader *r, uint64_t addr, Span s, uint8_t *buf, const char *what, char **ret_why) {
        assert(s.end - s.start <= PY_LAYOUT_SPAN_MAX);
        return py_memory_read_in(&r->memory, addr, s.start, buf, s.end - s.start, what, ret_why);
}

/* The field at offset of an object whose span s was read into buf. */
static uint64_t field_u64(const uint8_t *buf, Span s, uint32_t offset) {
        return unaligned_load_u64(buf + (offset - s.start), true);
}

static uint8_t field_u8(const uint8_t *buf, Span s, uint32_t offset) {
        return buf[offset - s.start];
}

/* An address seen before in a list or chain of n. */
static bool seen(const uint64_t *addrs, size_t n, uint64_t a) {
        for (size_t i = 0; i < n; i++)
                if (addrs[i] == a)
                        return true;
        return false;
}

/* The current frame of a thread state whose span is in buf: 3.13+ has it
 * there, 3.11 and 3.12 in the _PyCFrame on the thread's C stack. */
static int tstate_frame(PyReader *r, const uint8_t *buf, uint64_t *ret_frame, char **ret_why) {
        const PyLayout *l = &r->layout;
        uint8_t cbuf[PY_LAYOUT_SPAN_MAX];
        int k;

        if (l->tstate_cframe == NONE) {
                *ret_frame = field_u64(buf, r->tstate, l->tstate_current_frame);
                return 0;
        }
        uint64_t cframe = field_u64(buf, r->tstate, l->tstate_cframe);
        if (cframe == 0) {
                *ret_frame = 0;
                return 0;
        }
        k = read_span(r, cframe, r->cframe, cbuf, "_PyCFrame", ret_why);
        if (k < 0)
                return k;
        *ret_frame = field_u64(cbuf, r->cframe, l->cframe_current_frame);
        return 0;
}

int py_reader_current_frame(PyReader *r, uint64_t tstate, uint64_t *ret_frame, char **ret_why) {
        uint8_t buf[PY_LAYOUT_SPAN_MAX];
        int k;

        k = read_span(r, tstate, r->tstate, buf, "PyThreadState", ret_why);
        if (k < 0)
                return k;
        return tstate_frame(r, buf, ret_frame, ret_why);
}

int py_reader_threads(PyReader *r, uint64_t runtime_addr, PyThread *threads, size_t n_max, char **ret_why) {
        const PyLayout *l = &r->layout;
        uint8_t buf[PY_LAYOUT_SPAN_MAX];
        uint64_t interps[PY_INTERPRETERS_MAX];
        _cleanup_free_ uint64_t *tstates = NULL;
        size_t n_interps = 0, n = 0;
        uint64_t interp;
        int k;

        if (n_max > PY_THREADS_MAX)
                n_max = PY_THREADS_MAX;
        tstates = malloc(sizeof(uint64_t) * (n_max + 1));
        if (!tstates)
                return -ENOMEM;

        k = py_memory_read(&r->memory, runtime_addr + l->runtime_interpreters_head, 8, buf, 8,
                           "_PyRuntime.interpreters.head", ret_why);
        if (k < 0)
                return k;
        interp = unaligned_load_u64(buf, true);

        while (interp != 0) {
                if (seen(interps, n_interps, interp))
                        return why_setf(ret_why, -ELOOP, "the list of interpreters comes back to 0x%" PRIx64, interp);
                if (n_interps >= PY_INTERPRETERS_MAX)
                        return why_setf(ret_why, -E2BIG, "more than %u interpreters", PY_INTERPRETERS_MAX);
                interps[n_interps++] = interp;

                k = read_span(r, interp, r->interp, buf, "PyInterpreterState", ret_why);
                if (k < 0)
                        return k;
                uint64_t next_interp = field_u64(buf, r->interp, l->interp_next);
                uint64_t tstate = field_u64(buf, r->interp, l->interp_threads_head);

                while (tstate != 0) {
                        if (seen(tstates, n, tstate))
                                return why_setf(ret_why, -ELOOP, "the list of thread states comes back to 0x%" PRIx64,
                                                tstate);
                        if (n >= n_max)
                                return why_setf(ret_why, -E2BIG, "more than %zu thread states", n_max);

                        k = read_span(r, tstate, r->tstate, buf, "PyThreadState", ret_why);
                        if (k < 0)
                                return k;
                        PyThread *t = &threads[n];
                        *t = (PyThread){
                                .tstate = tstate,
                                .interp = interp,
                                .native_thread_id = field_u64(buf, r->tstate, l->tstate_native_thread_id),
                                .thread_id = field_u64(buf, r->tstate, l->tstate_thread_id),
                        };
                        uint64_t next = field_u64(buf, r->tstate, l->tstate_next);
                        k = tstate_frame(r, buf, &t->frame, ret_why);
                        if (k < 0)
                                return k;
                        tstates[n++] = tstate;
                        tstate = next;
                }
                interp = next_interp;
        }
        return (int) n;
}

static uint64_t hash_address(uint64_t a) {
        a ^= a >> 33;
        a *= UINT64_C(0xff51afd7ed558ccd);
        a ^= a >> 33;
        return a;
}

static CodeEntry *code_slot(PyReader *r, uint64_t address) {
        size_t i = hash_address(address) & (r->n_slots - 1);
        while (r->slots[i].address != 0 && r->slots[i].address != address)
                i = (i + 1) & (r->n_slots - 1);
        return &r->slots[i];
}

/* Room for one more entry: the table doubled (entries moved, their
 * strings stay where they are) when it would be more than half full. */
static int code_cache_reserve(PyReader *r) {
        if ((r->n_codes + 1) * 2 <= r->n_slots || r->n_slots >= CODE_SLOTS_MAX)
                return 0;
        CodeEntry *old = r->slots;
        size_t n_old = r->n_slots;
        r->slots = calloc(n_old * 2, sizeof(CodeEntry));
        if (!r->slots) {
                r->slots = old;
                return -ENOMEM;
        }
        r->n_slots = n_old * 2;
        for (size_t i = 0; i < n_old; i++)
                if (old[i].address != 0)
                        *code_slot(r, old[i].address) = old[i];
        free(old);
        return 0;
}

/* The code object at address, from the cache when its pointers are those
 * cached, else read and cached. An entry the walk under way shows is not
 * replaced (its strings are in its frames): the walk fails -EAGAIN. */
static int code_get(PyReader *r, uint64_t address, const CodeEntry **ret, char **ret_why) {
        const PyLayout *l = &r->layout;
        uint8_t buf[PY_LAYOUT_SPAN_MAX];
        int k;

        k = read_span(r, address, r->code, buf, "code object", ret_why);
        if (k < 0)
                return k;
        CodeEntry now = {
                .address = address,
                .type = field_u64(buf, r->code, l->object_type),
                .filename_ptr = field_u64(buf, r->code, l->code_filename),
                .name_ptr = field_u64(buf, r->code, l->code_name),
                .qualname_ptr = field_u64(buf, r->code, l->code_qualname),
                .linetable_ptr = field_u64(buf, r->code, l->code_linetable),
                .firstlineno = (int32_t) unaligned_load_u32(buf + (l->code_firstlineno - r->code.start), true),
        };
        if (r->code_type != 0 && now.type != r->code_type)
                return why_setf(ret_why, -EBADMSG,
                                "the object at 0x%" PRIx64 " is not a code object (type 0x%" PRIx64 ", not 0x%" PRIx64
                                ")",
                                address, now.type, r->code_type);
        if (now.type == 0 || now.type % 8 != 0)
                return why_setf(ret_why, -EBADMSG, "the object at 0x%" PRIx64 " has no type", address);

        r->code_lookups++;
        k = code_cache_reserve(r);
        if (k < 0)
                return k;
        CodeEntry *e = code_slot(r, address);
        if (e->address == address && e->type == now.type && e->filename_ptr == now.filename_ptr &&
            e->name_ptr == now.name_ptr && e->qualname_ptr == now.qualname_ptr &&
            e->linetable_ptr == now.linetable_ptr && e->firstlineno == now.firstlineno) {
                r->code_hits++;
                e->walk = r->walk;
                *ret = e;
                return 0;
        }

        /* Read it whole before the cache changes. */
        k = py_read_str(&r->memory, l, now.qualname_ptr, &now.name, ret_why);
        if (k >= 0)
                k = py_read_str(&r->memory, l, now.filename_ptr, &now.filename, ret_why);
        if (k >= 0)
                k = py_read_bytes(&r->memory, l, now.linetable_ptr, PY_LINETABLE_MAX, &now.linetable,
                                  &now.linetable_size, ret_why);
        if (k < 0) {
                why_setf(ret_why, k, "code object at 0x%" PRIx64 ": %s", address,
                         ret_why && *ret_why ? *ret_why : "cannot be read");
                code_entry_clear(&now);
                return k;
        }

        if (e->address == address) {
                if (e->walk == r->walk) {
                        code_entry_clear(&now);
                        return why_setf(ret_why, -EAGAIN, "the code object at 0x%" PRIx64 " changed during the walk",
                                        address);
                }
                /* Another code object where a freed one was: the frames
                 * that showed the old one's strings are gone. */
                code_entry_clear(e);
                r->n_codes--;
        }
        now.walk = r->walk;
        *e = now;
        r->n_codes++;
        if (r->code_type == 0)
                r->code_type = now.type;
        *ret = e;
        return 0;
}

/* A new walk: the last one's frames are void, so entries may go; the
 * whole cache does when this walk might fill it. */
static void code_cache_prepare(PyReader *r, size_t n_max) {
        r->walk++;
        if (r->n_codes + n_max > PY_CODE_CACHE_MAX)
                code_cache_flush(r);
}

int py_reader_walk(PyReader *r, uint64_t frame, PyFrame *frames, size_t n_max, size_t *ret_n, char **ret_why) {
        const PyLayout *l = &r->layout;
        uint8_t buf[PY_LAYOUT_SPAN_MAX];
        uint64_t links[2 * PY_FRAMES_MAX];
        size_t n_links = 0, n = 0;
        int k = 0;

        *ret_n = 0;
        if (n_max > PY_FRAMES_MAX)
                n_max = PY_FRAMES_MAX;
        code_cache_prepare(r, n_max);
        for (; frame != 0; frame = field_u64(buf, r->frame, l->frame_previous)) {
                if (seen(links, n_links, frame)) {
                        k = why_setf(ret_why, -ELOOP, "the frame chain comes back to 0x%" PRIx64, frame);
                        break;
                }
                if (n_links >= ELEMENTSOF(links)) {
                        k = why_setf(ret_why, -E2BIG, "more than %zu links in the frame chain", ELEMENTSOF(links));
                        break;
                }
                links[n_links++] = frame;

                k = read_span(r, frame, r->frame, buf, "_PyInterpreterFrame", ret_why);
                if (k < 0)
                        break;
                uint8_t owner = field_u8(buf, r->frame, l->frame_owner);
                if (owner > l->owner_max) {
                        k = why_setf(ret_why, -EBADMSG,
                                     "the frame at 0x%" PRIx64 " has owner %u, which Python 3.%u has not", frame, owner,
                                     PY_VERSION_MINOR(l->version));
                        break;
                }
                if (owner >= l->owner_first_incomplete) {
                        /* A shim: the one each _PyEval_EvalFrameDefault
                         * pushes ends the frames of that call. */
                        if (owner == l->owner_cstack && n > 0)
                                frames[n - 1].entry = true;
                        continue;
                }
                if (n >= n_max) {
                        k = why_setf(ret_why, -E2BIG, "more than %zu Python frames", n_max);
                        break;
                }

                uint64_t code = field_u64(buf, r->frame, l->frame_code);
                if (l->frame_code_tagged)
                        code &= ~UINT64_C(3);
                const CodeEntry *e = NULL;
                k = code_get(r, code, &e, ret_why);
                if (k < 0) {
                        why_setf(ret_why, k, "frame at 0x%" PRIx64 ": %s", frame,
                                 ret_why && *ret_why ? *ret_why : "its code object cannot be read");
                        break;
                }

                uint64_t instr = field_u64(buf, r->frame, l->frame_instr), base = code + l->code_adaptive;
                int64_t addrq = (int64_t) (instr - base);
                int line = py_linetable_line(e->linetable, e->linetable_size, e->firstlineno, addrq);
                frames[n++] = (PyFrame){
                        .address = frame,
                        .code = code,
                        .name = e->name,
                        .filename = e->filename,
                        .line = line > 0 ? line : 0,
                        .entry = l->frame_is_entry != NONE && field_u8(buf, r->frame, l->frame_is_entry) != 0,
                };
        }
        /* The oldest frame of a whole chain began its eval call. */
        if (k >= 0 && n > 0)
                frames[n - 1].entry = true;
        *ret_n = n;
        return k < 0 ? k : 0;
}
