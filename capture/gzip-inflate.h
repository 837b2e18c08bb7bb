/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gzip-inflate.h: bounded decompression of one gzip member held in memory
 * (Sysprof 45+ embeds its symbol table as "__symbols__.gz").
 *
 * The input comes from a capture, so it is hostile: the output is counted
 * before it is kept, and a stream that would inflate past the caller's
 * bound (a zip bomb), is cut short, is not gzip, or has bytes after its end
 * is refused with a message; nothing is allocated beyond the bound.
 *
 * Plain C and zlib (no GLib): the daemon links it. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Inflates the gzip member in[0, len) into a malloc'ed buffer of
 * *ret_len bytes plus a NUL after them. -EFBIG: it inflates past max_out
 * bytes; -EBADMSG: not a complete, valid gzip member; -ENOMEM. On failure
 * *error (if non-NULL) receives a malloc'ed message naming what is wrong. */
int gzip_inflate(const uint8_t *in, size_t len, size_t max_out, uint8_t **ret, size_t *ret_len, char **error);
