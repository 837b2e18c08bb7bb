/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* python-layout.c: CPython's layouts per version: Periscope's table for
 * 3.11 and 3.12, the interpreter's _Py_DebugOffsets for 3.13 and 3.14. */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "python-layout.h"
#include "basic.h"

#define NONE UINT32_MAX

/* 3.11 and 3.12 (Include/cpython/pystate.h, code.h, unicodeobject.h,
 * Include/internal/pycore_runtime.h, pycore_interp.h, pycore_frame.h at
 * v3.11.2 and v3.12.1, compiled for x86_64 and aarch64, whose offsets
 * agree: both are LP64 with natural alignment). The 3.11 PyASCIIObject
 * still has wstr, so its strings start later. */
static const PyLayout table_3_11 = {
        .version = PY_VERSION(3, 11),
        .runtime_interpreters_head = 40,
        .interp_next = 0,
        .interp_threads_head = 16,
        .tstate_next = 8,
        .tstate_native_thread_id = 160,
        .tstate_thread_id = 152,
        .tstate_cframe = 56,
        .cframe_current_frame = 8,
        .tstate_current_frame = NONE,
        .frame_code = 32,
        .frame_previous = 48,
        .frame_instr = 56,
        .frame_owner = 69,
        .frame_is_entry = 68,
        .frame_code_tagged = false,
        .owner_first_incomplete = 255,
        .owner_cstack = 255,
        .owner_max = 2,
        .code_filename = 112,
        .code_name = 120,
        .code_qualname = 128,
        .code_linetable = 136,
        .code_firstlineno = 72,
        .code_adaptive = 184,
        .object_type = 8,
        .bytes_size = 16,
        .bytes_data = 32,
        .unicode_length = 16,
        .unicode_state = 32,
        .unicode_ascii_data = 48,
        .unicode_compact_data = 72,
        .unicode_compact_utf8 = 56,
        .unicode_compact_utf8_length = 48,
};

static const PyLayout table_3_12 = {
        .version = PY_VERSION(3, 12),
        .runtime_interpreters_head = 40,
        .interp_next = 0,
        .interp_threads_head = 72,
        .tstate_next = 8,
        .tstate_native_thread_id = 144,
        .tstate_thread_id = 136,
        .tstate_cframe = 56,
        .cframe_current_frame = 0,
        .tstate_current_frame = NONE,
        .frame_code = 0,
        .frame_previous = 8,
        .frame_instr = 56,
        .frame_owner = 70,
        .frame_is_entry = NONE,
        .frame_code_tagged = false,
        .owner_first_incomplete = 3,
        .owner_cstack = 3,
        .owner_max = 3,
        .code_filename = 112,
        .code_name = 120,
        .code_qualname = 128,
        .code_linetable = 136,
        .code_firstlineno = 68,
        .code_adaptive = 192,
        .object_type = 8,
        .bytes_size = 16,
        .bytes_data = 32,
        .unicode_length = 16,
        .unicode_state = 32,
        .unicode_ascii_data = 40,
        .unicode_compact_data = 56,
        .unicode_compact_utf8 = 48,
        .unicode_compact_utf8_length = 40,
};

static int check_offset(uint32_t offset, uint32_t width, bool optional, const char *name, char **ret_why) {
        if (optional && offset == NONE)
                return 0;
        if (offset >= PY_LAYOUT_OBJECT_MAX || offset + width > PY_LAYOUT_OBJECT_MAX)
                return why_setf(ret_why, -EINVAL, "%s at %" PRIu32 " is beyond %u bytes", name, offset,
                                PY_LAYOUT_OBJECT_MAX);
        if (offset % width != 0)
                return why_setf(ret_why, -EINVAL, "%s at %" PRIu32 " is not aligned to %" PRIu32, name, offset, width);
        return 0;
}

int py_layout_check(const PyLayout *l, char **ret_why) {
        unsigned minor = PY_VERSION_MINOR(l->version);

        if (PY_VERSION_MAJOR(l->version) != 3 || minor < 11 || minor > 14)
                return why_setf(ret_why, -EINVAL, "Python %u.%u is not a version this reader knows",
                                PY_VERSION_MAJOR(l->version), minor);

        const struct {
                uint32_t offset, width;
                bool optional;
                const char *name;
        } fields[] = {
                { l->runtime_interpreters_head, 8, false, "_PyRuntime.interpreters.head" },
                { l->interp_next, 8, false, "PyInterpreterState.next" },
                { l->interp_threads_head, 8, false, "PyInterpreterState.threads.head" },
                { l->tstate_next, 8, false, "PyThreadState.next" },
                { l->tstate_native_thread_id, 8, false, "PyThreadState.native_thread_id" },
                { l->tstate_thread_id, 8, false, "PyThreadState.thread_id" },
                { l->tstate_cframe, 8, true, "PyThreadState.cframe" },
                { l->cframe_current_frame, 8, l->tstate_cframe == NONE, "_PyCFrame.current_frame" },
                { l->tstate_current_frame, 8, l->tstate_cframe != NONE, "PyThreadState.current_frame" },
                { l->frame_code, 8, false, "_PyInterpreterFrame.f_code" },
                { l->frame_previous, 8, false, "_PyInterpreterFrame.previous" },
                { l->frame_instr, 8, false, "_PyInterpreterFrame.instr_ptr" },
                { l->frame_owner, 1, false, "_PyInterpreterFrame.owner" },
                { l->frame_is_entry, 1, true, "_PyInterpreterFrame.is_entry" },
                { l->code_filename, 8, false, "PyCodeObject.co_filename" },
                { l->code_name, 8, false, "PyCodeObject.co_name" },
                { l->code_qualname, 8, false, "PyCodeObject.co_qualname" },
                { l->code_linetable, 8, false, "PyCodeObject.co_linetable" },
                { l->code_firstlineno, 4, false, "PyCodeObject.co_firstlineno" },
                { l->code_adaptive, 2, false, "PyCodeObject.co_code_adaptive" },
                { l->object_type, 8, false, "PyObject.ob_type" },
                { l->bytes_size, 8, false, "PyBytesObject.ob_size" },
                { l->bytes_data, 1, false, "PyBytesObject.ob_sval" },
                { l->unicode_length, 8, false, "PyASCIIObject.length" },
                { l->unicode_state, 4, false, "PyASCIIObject.state" },
                { l->unicode_ascii_data, 8, false, "sizeof(PyASCIIObject)" },
                { l->unicode_compact_data, 8, false, "sizeof(PyCompactUnicodeObject)" },
                { l->unicode_compact_utf8, 8, false, "PyCompactUnicodeObject.utf8" },
                { l->unicode_compact_utf8_length, 8, false, "PyCompactUnicodeObject.utf8_length" },
        };
        for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
                int r = check_offset(fields[i].offset, fields[i].width, fields[i].optional, fields[i].name, ret_why);
                if (r < 0)
                        return r;
        }

        /* Each object is read in one span of its fields. */
        const struct {
                const char *name;
                uint32_t offsets[6];
        } objects[] = {
                { "PyInterpreterState", { l->interp_next, l->interp_threads_head, NONE, NONE, NONE, NONE } },
                { "PyThreadState",
                  { l->tstate_next, l->tstate_native_thread_id, l->tstate_thread_id, l->tstate_cframe,
                    l->tstate_current_frame, NONE } },
                { "_PyInterpreterFrame",
                  { l->frame_code, l->frame_previous, l->frame_instr, l->frame_owner, l->frame_is_entry, NONE } },
                { "PyCodeObject",
                  { l->object_type, l->code_filename, l->code_name, l->code_qualname, l->code_linetable,
                    l->code_firstlineno } },
        };
        for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++) {
                uint32_t lo = UINT32_MAX, hi = 0;
                for (size_t j = 0; j < 6; j++) {
                        uint32_t o = objects[i].offsets[j];
                        if (o == NONE)
                                continue;
                        lo = o < lo ? o : lo;
                        hi = o + 8 > hi ? o + 8 : hi;
                }
                if (hi - lo > PY_LAYOUT_SPAN_MAX)
                        return why_setf(ret_why, -EINVAL, "%s's fields span %" PRIu32 " bytes, more than %u",
                                        objects[i].name, hi - lo, PY_LAYOUT_SPAN_MAX);
        }
        if (l->unicode_compact_data > PY_LAYOUT_HEADER_MAX || l->bytes_data > PY_LAYOUT_HEADER_MAX)
                return why_setf(ret_why, -EINVAL, "a str or bytes header of more than %u bytes", PY_LAYOUT_HEADER_MAX);

        /* The fields a walk reads as one object must lie inside it: a code
         * object's names before its instructions, a string's header before
         * its characters. */
        if (l->code_filename >= l->code_adaptive || l->code_name >= l->code_adaptive ||
            l->code_qualname >= l->code_adaptive || l->code_linetable >= l->code_adaptive ||
            l->code_firstlineno >= l->code_adaptive)
                return why_setf(ret_why, -EINVAL, "a PyCodeObject field lies after co_code_adaptive at %" PRIu32,
                                l->code_adaptive);
        if (l->unicode_length >= l->unicode_ascii_data || l->unicode_state >= l->unicode_ascii_data ||
            l->unicode_ascii_data > l->unicode_compact_data || l->unicode_compact_utf8 >= l->unicode_compact_data ||
            l->unicode_compact_utf8_length >= l->unicode_compact_data || l->object_type >= l->unicode_length ||
            l->bytes_size >= l->bytes_data)
                return why_setf(ret_why, -EINVAL, "the str or bytes header is not in the order CPython has");
        return 0;
}

int py_layout_from_table(unsigned major, unsigned minor, uint16_t machine, PyLayout *ret, char **ret_why) {
        const PyLayout *l;

        if (machine != EM_X86_64 && machine != EM_AARCH64)
                return why_setf(ret_why, -EPROTONOSUPPORT, "no Python layout for ELF machine %u", machine);
        if (major == 3 && minor == 11)
                l = &table_3_11;
        else if (major == 3 && minor == 12)
                l = &table_3_12;
        else
                return why_setf(ret_why, -EPROTONOSUPPORT,
                                "no table for Python %u.%u (3.11 and 3.12 have one, 3.13+ its debug offsets)", major,
                                minor);
        *ret = *l;
        return 0;
}

/* Where each value a walk needs sits in _Py_DebugOffsets, per version
 * (Include/internal/pycore_runtime.h at v3.13.0, pycore_debug_offsets.h
 * in 3.14: a struct of uint64_t, each object's part beginning with its
 * size). */
typedef struct DebugOffsetsPositions {
        uint16_t runtime_size, interpreters_head;
        uint16_t interp_size, interp_next, interp_threads_head;
        uint16_t tstate_size, tstate_next, tstate_current_frame, tstate_thread_id, tstate_native_thread_id;
        uint16_t frame_size, frame_previous, frame_executable, frame_instr_ptr, frame_owner;
        uint16_t code_size, code_filename, code_name, code_qualname, code_linetable, code_firstlineno, code_adaptive;
        uint16_t object_size, object_type;
        uint16_t bytes_size, bytes_ob_size, bytes_ob_sval;
        uint16_t unicode_size, unicode_state, unicode_length, unicode_ascii_size;
        uint16_t end; /* the bytes read */
} DebugOffsetsPositions;

static const DebugOffsetsPositions positions_3_13 = {
        .runtime_size = 24,
        .interpreters_head = 40,
        .interp_size = 48,
        .interp_next = 64,
        .interp_threads_head = 72,
        .tstate_size = 152,
        .tstate_next = 168,
        .tstate_current_frame = 184,
        .tstate_thread_id = 192,
        .tstate_native_thread_id = 200,
        .frame_size = 224,
        .frame_previous = 232,
        .frame_executable = 240,
        .frame_instr_ptr = 248,
        .frame_owner = 264,
        .code_size = 272,
        .code_filename = 280,
        .code_name = 288,
        .code_qualname = 296,
        .code_linetable = 304,
        .code_firstlineno = 312,
        .code_adaptive = 344,
        .object_size = 352,
        .object_type = 360,
        .bytes_size = 512,
        .bytes_ob_size = 520,
        .bytes_ob_sval = 528,
        .unicode_size = 536,
        .unicode_state = 544,
        .unicode_length = 552,
        .unicode_ascii_size = 560,
        .end = 568,
};

/* 3.14 adds threads_main, code_object_generation and tlbc_generation to the
 * interpreter's part, stackpointer and tlbc_index to the frame's, co_tlbc
 * to the code object's and a set object's part before the dict's. */
static const DebugOffsetsPositions positions_3_14 = {
        .runtime_size = 24,
        .interpreters_head = 40,
        .interp_size = 48,
        .interp_next = 64,
        .interp_threads_head = 72,
        .tstate_size = 176,
        .tstate_next = 192,
        .tstate_current_frame = 208,
        .tstate_thread_id = 216,
        .tstate_native_thread_id = 224,
        .frame_size = 248,
        .frame_previous = 256,
        .frame_executable = 264,
        .frame_instr_ptr = 272,
        .frame_owner = 288,
        .code_size = 312,
        .code_filename = 320,
        .code_name = 328,
        .code_qualname = 336,
        .code_linetable = 344,
        .code_firstlineno = 352,
        .code_adaptive = 384,
        .object_size = 400,
        .object_type = 408,
        .bytes_size = 592,
        .bytes_ob_size = 600,
        .bytes_ob_sval = 608,
        .unicode_size = 616,
        .unicode_state = 624,
        .unicode_length = 632,
        .unicode_ascii_size = 640,
        .end = 648,
};

#define DEBUG_OFFSETS_MAX 648u
/* No object a walk reads is near this; PyInterpreterState is the largest
 * (hundreds of KiB, all of it after the fields read). */
#define DEBUG_OBJECT_SIZE_MAX (64u << 20)

/* One offset from the debug offsets, checked against its object's size
 * (also from them). */
static int debug_field(const uint8_t *d, uint16_t size_at, uint16_t at, const char *name, uint32_t *ret,
                       char **ret_why) {
        uint64_t size = unaligned_load_u64(d + size_at, true), v = unaligned_load_u64(d + at, true);

        if (size == 0 || size > DEBUG_OBJECT_SIZE_MAX)
                return why_setf(ret_why, -EBADMSG, "_Py_DebugOffsets: the size %" PRIu64 " of %s's object is not one",
                                size, name);
        if (v >= size || v >= PY_LAYOUT_OBJECT_MAX)
                return why_setf(ret_why, -EBADMSG,
                                "_Py_DebugOffsets: %s at %" PRIu64 " is outside its object (%" PRIu64
                                " bytes) or beyond %u bytes",
                                name, v, size, PY_LAYOUT_OBJECT_MAX);
        *ret = (uint32_t) v;
        return 0;
}

int py_layout_from_debug_offsets(PyReadFunc read, void *userdata, uint64_t runtime_addr, PyLayout *ret,
                                 char **ret_why) {
        uint8_t d[DEBUG_OFFSETS_MAX];
        const DebugOffsetsPositions *p;
        int r;

        if (runtime_addr == 0 || runtime_addr % 8 != 0)
                return why_setf(ret_why, -EFAULT, "_PyRuntime at 0x%" PRIx64 " is not an object's address",
                                runtime_addr);

        /* The cookie and the version first: they say how much follows. */
        r = read(userdata, runtime_addr, d, 24);
        if (r < 0)
                return why_setf(ret_why, r, "reading _Py_DebugOffsets at 0x%" PRIx64 ": %m", runtime_addr);
        if (memcmp(d, "xdebugpy", 8) != 0)
                return why_setf(ret_why, -EBADMSG,
                                "_PyRuntime at 0x%" PRIx64 " does not begin with the cookie xdebugpy", runtime_addr);
        uint64_t version = unaligned_load_u64(d + 8, true), free_threaded = unaligned_load_u64(d + 16, true);
        if (PY_VERSION_MAJOR(version) != 3 || version >> 32 != 0)
                return why_setf(ret_why, -EBADMSG, "_Py_DebugOffsets: version 0x%" PRIx64 " is not a Python 3",
                                version);
        if (PY_VERSION_MINOR(version) == 13)
                p = &positions_3_13;
        else if (PY_VERSION_MINOR(version) == 14)
                p = &positions_3_14;
        else
                return why_setf(ret_why, -EPROTONOSUPPORT,
                                "_Py_DebugOffsets of Python 3.%u, a version this reader does not know (3.13, 3.14)",
                                PY_VERSION_MINOR(version));
        if (free_threaded != 0)
                return why_setf(ret_why, -EPROTONOSUPPORT,
                                "Python 3.%u built without the GIL (free-threaded), whose frames this reader does not "
                                "read",
                                PY_VERSION_MINOR(version));

        r = read(userdata, runtime_addr, d, p->end);
        if (r < 0)
                return why_setf(ret_why, r, "reading _Py_DebugOffsets at 0x%" PRIx64 ": %m", runtime_addr);
        if (unaligned_load_u64(d + 8, true) != version)
                return why_setf(ret_why, -EBADMSG, "_Py_DebugOffsets changed while read");

        PyLayout l = {
                .version = (uint32_t) version,
                .from_debug_offsets = true,
                .tstate_cframe = NONE,
                .cframe_current_frame = NONE,
                .frame_is_entry = NONE,
                .frame_code_tagged = PY_VERSION_MINOR(version) >= 14,
                .owner_first_incomplete = 3,
                .owner_cstack = 3,
                .owner_max = PY_VERSION_MINOR(version) >= 14 ? 4 : 3,
        };
        const struct {
                uint16_t size_at, at;
                uint32_t *dest;
                const char *name;
        } fields[] = {
                { p->runtime_size, p->interpreters_head, &l.runtime_interpreters_head, "interpreters_head" },
                { p->interp_size, p->interp_next, &l.interp_next, "interpreter next" },
                { p->interp_size, p->interp_threads_head, &l.interp_threads_head, "threads_head" },
                { p->tstate_size, p->tstate_next, &l.tstate_next, "thread next" },
                { p->tstate_size, p->tstate_current_frame, &l.tstate_current_frame, "current_frame" },
                { p->tstate_size, p->tstate_thread_id, &l.tstate_thread_id, "thread_id" },
                { p->tstate_size, p->tstate_native_thread_id, &l.tstate_native_thread_id, "native_thread_id" },
                { p->frame_size, p->frame_previous, &l.frame_previous, "previous" },
                { p->frame_size, p->frame_executable, &l.frame_code, "f_executable" },
                { p->frame_size, p->frame_instr_ptr, &l.frame_instr, "instr_ptr" },
                { p->frame_size, p->frame_owner, &l.frame_owner, "owner" },
                { p->code_size, p->code_filename, &l.code_filename, "co_filename" },
                { p->code_size, p->code_name, &l.code_name, "co_name" },
                { p->code_size, p->code_qualname, &l.code_qualname, "co_qualname" },
                { p->code_size, p->code_linetable, &l.code_linetable, "co_linetable" },
                { p->code_size, p->code_firstlineno, &l.code_firstlineno, "co_firstlineno" },
                { p->code_size, p->code_adaptive, &l.code_adaptive, "co_code_adaptive" },
                { p->object_size, p->object_type, &l.object_type, "ob_type" },
                { p->bytes_size, p->bytes_ob_size, &l.bytes_size, "bytes ob_size" },
                { p->bytes_size, p->bytes_ob_sval, &l.bytes_data, "ob_sval" },
                { p->unicode_size, p->unicode_state, &l.unicode_state, "str state" },
                { p->unicode_size, p->unicode_length, &l.unicode_length, "str length" },
        };
        for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
                r = debug_field(d, fields[i].size_at, fields[i].at, fields[i].name, fields[i].dest, ret_why);
                if (r < 0)
                        return r;
        }

        /* sizeof(PyASCIIObject) is a size, not an offset; a compact str
         * adds utf8_length and utf8 to it (3.12 on, no wstr). */
        uint64_t ascii_size = unaligned_load_u64(d + p->unicode_ascii_size, true);
        if (ascii_size < 24 || ascii_size > 256 || ascii_size % 8 != 0 ||
            ascii_size > unaligned_load_u64(d + p->unicode_size, true))
                return why_setf(ret_why, -EBADMSG, "_Py_DebugOffsets: sizeof(PyASCIIObject) %" PRIu64 " is not one",
                                ascii_size);
        l.unicode_ascii_data = (uint32_t) ascii_size;
        l.unicode_compact_utf8_length = (uint32_t) ascii_size;
        l.unicode_compact_utf8 = (uint32_t) ascii_size + 8;
        l.unicode_compact_data = (uint32_t) ascii_size + 16;

        r = py_layout_check(&l, ret_why);
        if (r < 0)
                return why_setf(ret_why, -EBADMSG, "_Py_DebugOffsets of Python 3.%u: %s", PY_VERSION_MINOR(version),
                                ret_why && *ret_why ? *ret_why : "offsets out of order");
        *ret = l;
        return 0;
}

int py_layout_load(PyReadFunc read, void *userdata, uint64_t runtime_addr, uint32_t hexversion, uint16_t machine,
                   PyLayout *ret, char **ret_why) {
        unsigned major = PY_VERSION_MAJOR(hexversion), minor = PY_VERSION_MINOR(hexversion);
        int r;

        if (hexversion != 0 && (major != 3 || minor < 11))
                return why_setf(ret_why, -EPROTONOSUPPORT,
                                "Python %u.%u is older than 3.11, whose frames this reader "
                                "does not read",
                                major, minor);
        if (hexversion != 0 && minor < 13)
                return py_layout_from_table(major, minor, machine, ret, ret_why);

        r = py_layout_from_debug_offsets(read, userdata, runtime_addr, ret, ret_why);
        if (r < 0)
                return r;
        if (hexversion != 0 && PY_VERSION_MINOR(ret->version) != minor)
                return why_setf(ret_why, -EBADMSG, "_Py_DebugOffsets say Python 3.%u, the interpreter is 3.%u",
                                PY_VERSION_MINOR(ret->version), minor);
        return 0;
}
