/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* python-strings.h: reads of a target's memory, checked and counted, and
 * the objects made of bytes in it: str (to UTF-8) and bytes. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "python-layout.h"

/* One target's memory: its read callback and what was asked of it. */
typedef struct PyMemory {
        PyReadFunc read;
        void *userdata;
        uint64_t reads;
} PyMemory;

/* User space ends below this on every machine this reader knows (x86_64
 * with 5-level paging, aarch64 with 52-bit addresses). */
#define PY_ADDRESS_END (UINT64_C(1) << 57)

/* Reads n bytes at addr: 0, -EFAULT (and the reason) for a null address,
 * one not aligned to align, or a range beyond user space, or the read
 * callback's error. what names the object in the reason. */
int py_memory_read(PyMemory *m, uint64_t addr, size_t align, void *buf, size_t n, const char *what, char **ret_why);

/* Reads n bytes at offset into the object at addr, which must be aligned
 * to 8: the reason names the object's address. */
int py_memory_read_in(PyMemory *m, uint64_t addr, size_t offset, void *buf, size_t n, const char *what, char **ret_why);

/* The str object at addr as valid, NUL-terminated UTF-8 in new memory:
 * compact strings only (every name and file name is one), at most
 * PY_STRING_MAX bytes of characters, ending where their length says (the
 * NUL CPython keeps there is checked). -E2BIG for a longer one, -EBADMSG
 * for one that is not a str, -ENOMEM, or py_memory_read()'s error. */
int py_read_str(PyMemory *m, const PyLayout *l, uint64_t addr, char **ret, char **ret_why);

/* The bytes object at addr in new memory (size in *ret_size), at most max
 * bytes: the same errors. */
int py_read_bytes(PyMemory *m, const PyLayout *l, uint64_t addr, size_t max, uint8_t **ret, size_t *ret_size,
                  char **ret_why);
