/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vdso-image.h: the vdso has no file behind it; its ELF image is read out
 * of a process's memory (the kernel maps the same image into every process
 * of an ABI), for its unwind table and for its symbols. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Larger than any vdso (8 KiB on x86-64 today); bounds what is read. */
#define VDSO_IMAGE_MAX ((size_t) 1 << 20)

/* True for the mapping name the kernel gives the vdso. */
bool vdso_is_mapping(const char *filename);

/* vdso_image_read()'s owner for a caller who may record any process
 * (root, polkit): no check. */
#define VDSO_IMAGE_ANY_OWNER ((uid_t) -1)

/* Copies [start, end) of pid's memory (its vdso mapping) into a new buffer.
 * With an owner (not VDSO_IMAGE_ANY_OWNER), pid must still be owner's once
 * its memory is open (process_recheck_after_open(): after a set-id exec
 * the range would be the new program's bytes): -EPERM otherwise. -EFBIG
 * past max_size, -ESRCH when pid is gone, -EIO on a short read. */
int vdso_image_read(pid_t pid, uid_t owner, uint64_t start, uint64_t end, size_t max_size, uint8_t **ret,
                    size_t *ret_size);

/* The image as a sealed memfd (read-only from now on), so that it can be
 * handed to the helper like a mapped file. */
int vdso_image_memfd(const uint8_t *image, size_t size);

/* The image back out of such a memfd (its pin), into a new buffer: the
 * bytes read when the mapping was seen, under its owner's check, not the
 * process's memory of now. -EFBIG past max_size, -EIO on a short read. */
int vdso_image_from_memfd(int fd, size_t max_size, uint8_t **ret, size_t *ret_size);
