/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* python-frames.h: one CPython process's thread states and frame chains,
 * read through a PyReadFunc (the target's memory is hostile input: every
 * read is bounded, every pointer checked, every chain walked at most
 * PY_FRAMES_MAX links and refused when it loops). A PyReader keeps what
 * code objects say (names, file, line table) per address, so a sample
 * costs the chain's reads plus one read per frame to check its code
 * object is still the one cached (docs/python.md). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "python-layout.h"

#define PY_FRAMES_MAX 512u       /* frames walked per stack */
#define PY_STRING_MAX 1024u      /* bytes of one str's characters */
#define PY_LINETABLE_MAX 65536u  /* bytes of one code object's co_linetable */
#define PY_THREADS_MAX 4096u     /* thread states listed, over all interpreters */
#define PY_INTERPRETERS_MAX 256u /* interpreters listed */
#define PY_CODE_CACHE_MAX 4096u  /* code objects a reader keeps */

typedef struct PyReader PyReader;

/* One thread state. */
typedef struct PyThread {
        uint64_t tstate;           /* its PyThreadState's address */
        uint64_t interp;           /* its interpreter's */
        uint64_t native_thread_id; /* the kernel's tid (0 until the thread set it) */
        uint64_t thread_id;        /* its pthread_t */
        uint64_t frame;            /* its current _PyInterpreterFrame when listed, 0 for none */
} PyThread;

/* One Python frame, newest first in a walk. The strings are the reader's:
 * valid until the next py_reader_walk() or py_reader_free(). */
typedef struct PyFrame {
        uint64_t address;     /* the _PyInterpreterFrame */
        uint64_t code;        /* its code object */
        const char *name;     /* co_qualname (valid UTF-8, never NULL) */
        const char *filename; /* co_filename (valid UTF-8, never NULL) */
        int line;             /* the line it executes; 0 where the line table says none */
        bool entry;           /* the oldest frame of one native _PyEval_EvalFrameDefault call: the frames
                               * after it in the walk belong to the next outer call */
} PyFrame;

/* A reader of one process through read(userdata, …), with layout
 * (copied). -ENOMEM, or -EINVAL for a layout that fails its checks. */
int py_reader_new(const PyLayout *layout, PyReadFunc read, void *userdata, PyReader **ret);
PyReader *py_reader_free(PyReader *r);

/* Every thread state of every interpreter of the _PyRuntime at
 * runtime_addr, at most n_max into threads (n_max at most
 * PY_THREADS_MAX): the count, or a negative errno and the reason (-ELOOP
 * for a list that loops, -E2BIG for more than n_max, -EFAULT for a pointer
 * that is not one, read's error). */
int py_reader_threads(PyReader *r, uint64_t runtime_addr, PyThread *threads, size_t n_max, char **ret_why);

/* The current frame of the thread state at tstate (0 for none). */
int py_reader_current_frame(PyReader *r, uint64_t tstate, uint64_t *ret_frame, char **ret_why);

/* Walks the chain from frame (a thread's current frame) to its end into
 * frames, at most n_max (at most PY_FRAMES_MAX), skipping the
 * interpreter's shim frames: 0 with the count in *ret_n, or a negative
 * errno and the reason, with the frames read before the failure in
 * frames and their count in *ret_n (-ELOOP for a chain that comes back to
 * a frame, -E2BIG for more than n_max frames, -EFAULT for a pointer that
 * is not one, -EBADMSG for a code object or string that is not one,
 * read's error). */
int py_reader_walk(PyReader *r, uint64_t frame, PyFrame *frames, size_t n_max, size_t *ret_n, char **ret_why);

/* What the reader did so far: reads asked of read, code objects looked up
 * in its cache and found there. */
typedef struct PyReaderStats {
        uint64_t reads;
        uint64_t code_lookups;
        uint64_t code_hits;
} PyReaderStats;

void py_reader_get_stats(const PyReader *r, PyReaderStats *ret);

/* The line of the instruction at byte offset addrq in a code object whose
 * first line is firstlineno and whose co_linetable (3.11+ format) is
 * table: the line, 0 where the table says none, or -EBADMSG for a table
 * that ends inside an entry. An addrq before the first instruction is
 * firstlineno. */
int py_linetable_line(const uint8_t *table, size_t size, int firstlineno, int64_t addrq);
