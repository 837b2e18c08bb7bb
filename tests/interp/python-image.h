/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* python-image.h: a synthetic CPython process for the reader's tests and
 * fuzz seeds: a buffer standing for its memory at a base address, and the
 * objects a frame walk reads (runtime, interpreter, thread states, frames,
 * code objects, str, bytes, line tables, _Py_DebugOffsets) placed in it by
 * a PyLayout. Header-only: the tests and tests/fuzz share it. */
#pragma once

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"

typedef struct Image {
        uint64_t base;
        uint8_t *data;
        size_t size, used;
        uint64_t reads; /* reads asked of image_read */
} Image;

#define IMAGE_BASE UINT64_C(0x7f0000001000)

static inline void image_init(Image *im, size_t size) {
        *im = (Image){ .base = IMAGE_BASE, .data = calloc(1, size), .size = size, .used = 16 };
        assert(im->data);
}

static inline void image_done(Image *im) {
        free(im->data);
        *im = (Image){};
}

/* The reader's callback: the image's bytes, -EFAULT outside them. */
static inline int image_read(void *userdata, uint64_t addr, void *buf, size_t n) {
        Image *im = userdata;
        im->reads++;
        if (addr < im->base || addr - im->base > im->size || n > im->size - (addr - im->base))
                return -EFAULT;
        memcpy(buf, im->data + (addr - im->base), n);
        return 0;
}

/* n zeroed bytes, 16-aligned, as pymalloc gives them: their address. */
static inline uint64_t image_alloc(Image *im, size_t n) {
        size_t at = (im->used + 15) & ~(size_t) 15;
        assert(at + n <= im->size);
        im->used = at + n;
        return im->base + at;
}

static inline uint8_t *image_at(Image *im, uint64_t addr) {
        assert(addr >= im->base && addr - im->base < im->size);
        return im->data + (addr - im->base);
}

static inline void image_put64(Image *im, uint64_t addr, uint64_t v) {
        memcpy(image_at(im, addr), &v, 8);
}

static inline void image_put32(Image *im, uint64_t addr, uint32_t v) {
        memcpy(image_at(im, addr), &v, 4);
}

static inline void image_put8(Image *im, uint64_t addr, uint8_t v) {
        *image_at(im, addr) = v;
}

#define IMAGE_STR_TYPE UINT64_C(0x7f00aaaa0000)
#define IMAGE_BYTES_TYPE UINT64_C(0x7f00bbbb0000)
#define IMAGE_CODE_TYPE UINT64_C(0x7f00cccc0000)

/* A compact str of n characters of kind 1, 2 or 4 (ASCII when every
 * character is below 0x80 and kind is 1), with its NUL. */
static inline uint64_t image_str_chars(Image *im, const PyLayout *l, const uint32_t *chars, size_t n, unsigned kind) {
        bool ascii = kind == 1;
        for (size_t i = 0; i < n; i++)
                if (chars[i] >= 0x80)
                        ascii = false;
        size_t header = ascii ? l->unicode_ascii_data : l->unicode_compact_data;
        uint64_t s = image_alloc(im, header + (n + 1) * kind);
        image_put64(im, s + 8, IMAGE_STR_TYPE);
        image_put64(im, s + l->unicode_length, n);
        image_put32(im, s + l->unicode_state, 1u /* interned */ | kind << 2 | 1u << 5 | (ascii ? 1u << 6 : 0));
        for (size_t i = 0; i < n; i++) {
                uint64_t at = s + header + i * kind;
                if (kind == 1)
                        image_put8(im, at, (uint8_t) chars[i]);
                else if (kind == 2) {
                        uint16_t c = (uint16_t) chars[i];
                        memcpy(image_at(im, at), &c, 2);
                } else
                        image_put32(im, at, chars[i]);
        }
        return s;
}

static inline uint64_t image_str(Image *im, const PyLayout *l, const char *ascii) {
        uint32_t chars[PY_STRING_MAX + 8];
        size_t n = strlen(ascii);
        assert(n < sizeof(chars) / sizeof(chars[0]));
        for (size_t i = 0; i < n; i++)
                chars[i] = (uint8_t) ascii[i];
        return image_str_chars(im, l, chars, n, 1);
}

static inline uint64_t image_bytes(Image *im, const PyLayout *l, const uint8_t *data, size_t n) {
        uint64_t b = image_alloc(im, l->bytes_data + n + 1);
        image_put64(im, b + 8, IMAGE_BYTES_TYPE);
        image_put64(im, b + l->bytes_size, n);
        memcpy(image_at(im, b + l->bytes_data), data, n);
        return b;
}

/* A line table: NO_COLUMNS entries (code 13) of `units` code units each,
 * the first at firstlineno + deltas[0], each next deltas[i] lines on. */
static inline size_t image_linetable(uint8_t *out, size_t max, const int *deltas, const unsigned *units, size_t n) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                assert(units[i] >= 1 && units[i] <= 8 && k + 8 <= max);
                out[k++] = (uint8_t) (0x80 | 13u << 3 | (units[i] - 1));
                unsigned v = deltas[i] < 0 ? (unsigned) -deltas[i] << 1 | 1 : (unsigned) deltas[i] << 1;
                while (v >= 64) {
                        out[k++] = (uint8_t) (64 | (v & 63));
                        v >>= 6;
                }
                out[k++] = (uint8_t) v;
        }
        return k;
}

/* A code object named qualname in file, its first line firstlineno,
 * with one line per code unit: firstlineno + unit index (a NO_COLUMNS
 * entry per unit, of delta 1 after the first). */
static inline uint64_t image_code(Image *im, const PyLayout *l, const char *qualname, const char *file, int firstlineno,
                                  size_t n_units) {
        uint8_t table[4096];
        int deltas[512];
        unsigned units[512];
        assert(n_units >= 1 && n_units <= 512);
        for (size_t i = 0; i < n_units; i++) {
                deltas[i] = i == 0 ? 0 : 1;
                units[i] = 1;
        }
        size_t n = image_linetable(table, sizeof(table), deltas, units, n_units);
        uint64_t c = image_alloc(im, l->code_adaptive + 2 * n_units);
        image_put64(im, c + l->object_type, IMAGE_CODE_TYPE);
        image_put64(im, c + l->code_qualname, image_str(im, l, qualname));
        image_put64(im, c + l->code_name, image_str(im, l, qualname));
        image_put64(im, c + l->code_filename, image_str(im, l, file));
        image_put64(im, c + l->code_linetable, image_bytes(im, l, table, n));
        image_put32(im, c + l->code_firstlineno, (uint32_t) firstlineno);
        return c;
}

/* A frame running code at code unit `unit` (the line firstlineno + unit),
 * previous the next older one. is_entry: 3.11's flag. */
static inline uint64_t image_frame(Image *im, const PyLayout *l, uint64_t code, size_t unit, uint64_t previous,
                                   uint8_t owner, bool is_entry) {
        uint64_t f = image_alloc(im, 128);
        image_put64(im, f + l->frame_code, code ? code | (l->frame_code_tagged ? 1 : 0) : 0);
        image_put64(im, f + l->frame_previous, previous);
        image_put64(im, f + l->frame_instr, code + l->code_adaptive + 2 * unit);
        image_put8(im, f + l->frame_owner, owner);
        if (l->frame_is_entry != UINT32_MAX)
                image_put8(im, f + l->frame_is_entry, is_entry);
        return f;
}

/* A thread state with native id tid whose current frame is frame, next
 * the following one: its address. For 3.11/3.12 the _PyCFrame too. */
static inline uint64_t image_tstate(Image *im, const PyLayout *l, uint64_t tid, uint64_t frame, uint64_t next) {
        uint64_t t = image_alloc(im, 512);
        image_put64(im, t + l->tstate_next, next);
        image_put64(im, t + l->tstate_native_thread_id, tid);
        image_put64(im, t + l->tstate_thread_id, tid * 0x1000);
        if (l->tstate_cframe != UINT32_MAX) {
                uint64_t cf = image_alloc(im, 64);
                image_put64(im, cf + l->cframe_current_frame, frame);
                image_put64(im, t + l->tstate_cframe, cf);
        } else
                image_put64(im, t + l->tstate_current_frame, frame);
        return t;
}

/* _PyRuntime (runtime_size bytes, room for _Py_DebugOffsets first) with
 * one interpreter whose thread list starts at tstates. */
static inline uint64_t image_runtime(Image *im, const PyLayout *l, uint64_t tstates, size_t runtime_size) {
        uint64_t rt = image_alloc(im, runtime_size);
        uint64_t interp = image_alloc(im, 512);
        image_put64(im, rt + l->runtime_interpreters_head, interp);
        image_put64(im, interp + l->interp_threads_head, tstates);
        return rt;
}

/* ---- _Py_DebugOffsets as CPython declares them (3.13: pycore_runtime.h
 * at v3.13.0; 3.14: pycore_debug_offsets.h), written here field by field
 * from the header's order so the reader's own positions are checked
 * against another derivation. ---- */
typedef struct DebugOffsets313 {
        char cookie[8];
        uint64_t version, free_threaded;
        struct {
                uint64_t size, finalizing, interpreters_head;
        } runtime_state;
        struct {
                uint64_t size, id, next, threads_head, gc, imports_modules, sysdict, builtins, ceval_gil,
                        gil_runtime_state, gil_runtime_state_enabled, gil_runtime_state_locked,
                        gil_runtime_state_holder;
        } interpreter_state;
        struct {
                uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id, datastack_chunk, status;
        } thread_state;
        struct {
                uint64_t size, previous, executable, instr_ptr, localsplus, owner;
        } interpreter_frame;
        struct {
                uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames,
                        localspluskinds, co_code_adaptive;
        } code_object;
        struct {
                uint64_t size, ob_type;
        } pyobject;
        struct {
                uint64_t size, tp_name, tp_repr, tp_flags;
        } type_object;
        struct {
                uint64_t size, ob_item, ob_size;
        } tuple_object, list_object, dict_object;
        struct {
                uint64_t size, ob_fval;
        } float_object;
        struct {
                uint64_t size, lv_tag, ob_digit;
        } long_object;
        struct {
                uint64_t size, ob_size, ob_sval;
        } bytes_object;
        struct {
                uint64_t size, state, length, asciiobject_size;
        } unicode_object;
        struct {
                uint64_t size, collecting;
        } gc;
} DebugOffsets313;

typedef struct DebugOffsets314 {
        char cookie[8];
        uint64_t version, free_threaded;
        struct {
                uint64_t size, finalizing, interpreters_head;
        } runtime_state;
        struct {
                uint64_t size, id, next, threads_head, threads_main, gc, imports_modules, sysdict, builtins, ceval_gil,
                        gil_runtime_state, gil_runtime_state_enabled, gil_runtime_state_locked,
                        gil_runtime_state_holder, code_object_generation, tlbc_generation;
        } interpreter_state;
        struct {
                uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id, datastack_chunk, status;
        } thread_state;
        struct {
                uint64_t size, previous, executable, instr_ptr, localsplus, owner, stackpointer, tlbc_index;
        } interpreter_frame;
        struct {
                uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames,
                        localspluskinds, co_code_adaptive, co_tlbc;
        } code_object;
        struct {
                uint64_t size, ob_type;
        } pyobject;
        struct {
                uint64_t size, tp_name, tp_repr, tp_flags;
        } type_object;
        struct {
                uint64_t size, ob_item, ob_size;
        } tuple_object, list_object;
        struct {
                uint64_t size, used, table, mask;
        } set_object;
        struct {
                uint64_t size, ma_keys, ma_values;
        } dict_object;
        struct {
                uint64_t size, ob_fval;
        } float_object;
        struct {
                uint64_t size, lv_tag, ob_digit;
        } long_object;
        struct {
                uint64_t size, ob_size, ob_sval;
        } bytes_object;
        struct {
                uint64_t size, state, length, asciiobject_size;
        } unicode_object;
        struct {
                uint64_t size, collecting;
        } gc;
} DebugOffsets314;

/* A layout as a 3.13 or 3.14 interpreter would describe itself (3.12's
 * objects, the thread state's frame pointer where cframe was). */
static inline PyLayout image_debug_layout(unsigned minor) {
        PyLayout l;
        int r = py_layout_from_table(3, 12, 62 /* EM_X86_64 */, &l, NULL);
        assert(r == 0);
        (void) r;
        l.version = PY_VERSION(3, minor) | 0x05f0;
        l.from_debug_offsets = true;
        l.runtime_interpreters_head = 704; /* after the debug offsets */
        l.tstate_current_frame = 56;
        l.tstate_cframe = UINT32_MAX;
        l.cframe_current_frame = UINT32_MAX;
        l.frame_code_tagged = minor >= 14;
        l.owner_cstack = 3; /* 3.14: FRAME_OWNED_BY_INTERPRETER, whose value 3.13's CSTACK had */
        l.owner_max = minor >= 14 ? 4 : 3;
        return l;
}

/* Writes _Py_DebugOffsets of Python 3.minor (13 or 14) describing l at
 * rt, the start of _PyRuntime. */
static inline void image_debug_offsets(Image *im, uint64_t rt, const PyLayout *l, unsigned minor) {
#define FILL(d)                                                                                                        \
        do {                                                                                                           \
                memcpy((d).cookie, "xdebugpy", 8);                                                                     \
                (d).version = l->version;                                                                              \
                (d).runtime_state.size = 1024;                                                                         \
                (d).runtime_state.interpreters_head = l->runtime_interpreters_head;                                    \
                (d).interpreter_state.size = 400000;                                                                   \
                (d).interpreter_state.next = l->interp_next;                                                           \
                (d).interpreter_state.threads_head = l->interp_threads_head;                                           \
                (d).thread_state.size = 300;                                                                           \
                (d).thread_state.next = l->tstate_next;                                                                \
                (d).thread_state.current_frame = l->tstate_current_frame;                                              \
                (d).thread_state.thread_id = l->tstate_thread_id;                                                      \
                (d).thread_state.native_thread_id = l->tstate_native_thread_id;                                        \
                (d).interpreter_frame.size = 80;                                                                       \
                (d).interpreter_frame.previous = l->frame_previous;                                                    \
                (d).interpreter_frame.executable = l->frame_code;                                                      \
                (d).interpreter_frame.instr_ptr = l->frame_instr;                                                      \
                (d).interpreter_frame.owner = l->frame_owner;                                                          \
                (d).code_object.size = l->code_adaptive + 8;                                                           \
                (d).code_object.filename = l->code_filename;                                                           \
                (d).code_object.name = l->code_name;                                                                   \
                (d).code_object.qualname = l->code_qualname;                                                           \
                (d).code_object.linetable = l->code_linetable;                                                         \
                (d).code_object.firstlineno = l->code_firstlineno;                                                     \
                (d).code_object.co_code_adaptive = l->code_adaptive;                                                   \
                (d).pyobject.size = 16;                                                                                \
                (d).pyobject.ob_type = l->object_type;                                                                 \
                (d).bytes_object.size = l->bytes_data + 8;                                                             \
                (d).bytes_object.ob_size = l->bytes_size;                                                              \
                (d).bytes_object.ob_sval = l->bytes_data;                                                              \
                (d).unicode_object.size = l->unicode_compact_data + 16;                                                \
                (d).unicode_object.state = l->unicode_state;                                                           \
                (d).unicode_object.length = l->unicode_length;                                                         \
                (d).unicode_object.asciiobject_size = l->unicode_ascii_data;                                           \
        } while (0)
        if (minor == 13) {
                DebugOffsets313 d = {};
                FILL(d);
                memcpy(image_at(im, rt), &d, sizeof(d));
        } else {
                DebugOffsets314 d = {};
                FILL(d);
                memcpy(image_at(im, rt), &d, sizeof(d));
        }
#undef FILL
}
