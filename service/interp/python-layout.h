/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* python-layout.h: where CPython keeps what a frame walk reads, per
 * version: _PyRuntime's interpreters, their thread states, the
 * _PyInterpreterFrame chain, code objects, str and bytes (docs/python.md).
 * 3.11 and 3.12 come from Periscope's table (derived from CPython's
 * headers, the same on x86_64 and aarch64); 3.13 and 3.14 from the
 * interpreter's own _Py_DebugOffsets at the start of _PyRuntime, checked
 * before use. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reads exactly n bytes of the target at addr into buf: 0, or a negative
 * errno (-EFAULT where the range is not mapped). Never a short read. */
typedef int (*PyReadFunc)(void *userdata, uint64_t addr, void *buf, size_t n);

/* A version as CPython's PY_VERSION_HEX: 0x030b02f0 is 3.11.2 final. */
#define PY_VERSION(major, minor) ((uint32_t) (major) << 24 | (uint32_t) (minor) << 16)
#define PY_VERSION_MAJOR(v) ((unsigned) ((v) >> 24) & 0xffu)
#define PY_VERSION_MINOR(v) ((unsigned) ((v) >> 16) & 0xffu)

/* The offsets one frame walk needs, in bytes from the start of each
 * object. A reader reads of each object the span from its first field
 * used to the end of its last: every offset is below PY_LAYOUT_OBJECT_MAX
 * (3.13's PyInterpreterState keeps its next pointer past 7 KiB), every
 * span at most PY_LAYOUT_SPAN_MAX, and a str's or bytes' header at most
 * PY_LAYOUT_HEADER_MAX (py_layout_check()). */
#define PY_LAYOUT_OBJECT_MAX (1u << 20)
#define PY_LAYOUT_SPAN_MAX 512u
#define PY_LAYOUT_HEADER_MAX 256u

typedef struct PyLayout {
        uint32_t version;        /* PY_VERSION_HEX; major.minor at least */
        bool from_debug_offsets; /* the interpreter's _Py_DebugOffsets, not the table */

        /* _PyRuntimeState */
        uint32_t runtime_interpreters_head;

        /* PyInterpreterState */
        uint32_t interp_next;
        uint32_t interp_threads_head;

        /* PyThreadState; current frame: 3.11/3.12 through tstate->cframe
         * (tstate_cframe, then cframe_current_frame), 3.13+ directly
         * (tstate_current_frame; tstate_cframe is UINT32_MAX). */
        uint32_t tstate_next;
        uint32_t tstate_native_thread_id;
        uint32_t tstate_thread_id;
        uint32_t tstate_cframe;
        uint32_t cframe_current_frame;
        uint32_t tstate_current_frame;

        /* _PyInterpreterFrame */
        uint32_t frame_code; /* f_code (3.11/3.12), f_executable (3.13+) */
        uint32_t frame_previous;
        uint32_t frame_instr;           /* prev_instr (3.11/3.12), instr_ptr (3.13+): either way the
                                  * line is that of its offset from co_code_adaptive */
        uint32_t frame_owner;           /* a char */
        uint32_t frame_is_entry;        /* a bool, 3.11 only; UINT32_MAX after */
        bool frame_code_tagged;         /* f_executable is a _PyStackRef (3.14+): low bits are tags */
        uint8_t owner_first_incomplete; /* owners from this value on are the interpreter's shims (3 from
                                         * 3.12; 255 for 3.11, which has none) */
        /* The owner of the shim each _PyEval_EvalFrameDefault call pushes: 3
         * from 3.12 on (FRAME_OWNED_BY_CSTACK in 3.12 and 3.13,
         * FRAME_OWNED_BY_INTERPRETER in 3.14, whose CSTACK is 4); 255 for
         * 3.11. */
        uint8_t owner_cstack;
        uint8_t owner_max; /* the largest owner the version has */

        /* PyCodeObject */
        uint32_t code_filename;
        uint32_t code_name;
        uint32_t code_qualname;
        uint32_t code_linetable;
        uint32_t code_firstlineno; /* an int */
        uint32_t code_adaptive;    /* co_code_adaptive: where the instructions begin */

        /* PyObject: ob_type, to tell str and bytes apart from the rest */
        uint32_t object_type;

        /* PyBytesObject */
        uint32_t bytes_size; /* ob_size */
        uint32_t bytes_data; /* ob_sval */

        /* PyUnicodeObject (PyASCIIObject): compact strings only */
        uint32_t unicode_length;
        uint32_t unicode_state;        /* the state bit field, a 32-bit word */
        uint32_t unicode_ascii_data;   /* sizeof(PyASCIIObject): an ASCII string's characters */
        uint32_t unicode_compact_data; /* sizeof(PyCompactUnicodeObject): the others' */
        uint32_t unicode_compact_utf8; /* PyCompactUnicodeObject.utf8, a char * or NULL */
        uint32_t unicode_compact_utf8_length;
} PyLayout;

/* 0 when every offset of layout is within PY_LAYOUT_OBJECT_MAX and as
 * aligned as its field, each object's span within PY_LAYOUT_SPAN_MAX, and
 * its version is one this reader knows; else -EINVAL and the reason. */
int py_layout_check(const PyLayout *layout, char **ret_why);

/* The layout of CPython major.minor from Periscope's table (3.11, 3.12),
 * for an ELF machine (EM_X86_64, EM_AARCH64). -EPROTONOSUPPORT for any
 * other, with the reason. */
int py_layout_from_table(unsigned major, unsigned minor, uint16_t machine, PyLayout *ret, char **ret_why);

/* The layout of a 3.13 or 3.14 interpreter from the _Py_DebugOffsets at
 * runtime_addr (the start of _PyRuntime): the cookie "xdebugpy", a version
 * this reader knows, a build with the GIL, and every size and offset it
 * uses within bounds, or a negative errno and the reason: -EBADMSG (no
 * cookie, an offset out of its object), -EPROTONOSUPPORT (a version or
 * build this reader does not know), or read's error. */
int py_layout_from_debug_offsets(PyReadFunc read, void *userdata, uint64_t runtime_addr, PyLayout *ret, char **ret_why);

/* Either of the above: hexversion is what the caller knows of the
 * interpreter (from its file name or its Py_Version, major.minor at
 * least; 0 when unknown): below 3.13 the table, else the debug offsets,
 * whose version must then agree with hexversion's major.minor (-EBADMSG). */
int py_layout_load(PyReadFunc read, void *userdata, uint64_t runtime_addr, uint32_t hexversion, uint16_t machine,
                   PyLayout *ret, char **ret_why);
