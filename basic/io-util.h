/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* io-util.h: reads that do not stop short on EINTR or a partial read. */
#pragma once

#include <sys/types.h>

/* Reads up to n bytes into buf, at offset with pread() (the fd's position
 * untouched) or, when offset < 0, at the fd's position with read().
 * Returns the count read, less than n only at end of file, or a negative
 * errno. */
ssize_t read_full(int fd, void *buf, size_t n, off_t offset);
