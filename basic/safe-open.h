/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* safe-open.h: opening files named by untrusted input (container storage,
 * /.flatpak-info, mountinfo of another namespace) without path escapes:
 * openat2() with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
 * (or the walk of path-walk.h where openat2 is refused), and bounded reads. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Opens path (relative; leading '/' ignored) strictly beneath dirfd: no "..",
 * no symlinks, no magic links, no crossing into other mounts when no_xdev.
 * flags: O_RDONLY/O_PATH/O_DIRECTORY... (O_CLOEXEC|O_NOCTTY|O_NOFOLLOW added,
 * and O_NONBLOCK unless O_PATH: opening a FIFO returns at once, and callers
 * then refuse it as not a regular file).
 * Returns an fd or a negative errno (-EXDEV/-ELOOP for escapes). */
int safe_open_beneath(int dirfd, const char *path, int flags, bool no_xdev);

/* Reads a regular file (or a /proc file when allow_special) of at most
 * max_bytes into a NUL-terminated buffer. -EFBIG when larger, -EBADF for
 * non-regular files. */
int read_fd_bounded(int fd, size_t max_bytes, bool allow_special, char **ret, size_t *ret_len);

/* As read_fd_bounded() on a path opened relative to dirfd (AT_FDCWD ok)
 * with O_NOFOLLOW semantics handled by the caller's choice of opener. */
int read_file_bounded(int dirfd, const char *path, size_t max_bytes, bool allow_special, char **ret, size_t *ret_len);

/* An O_PATH fd of uid's home directory, named by the user database
 * (trusted; what lies below it is the user's: open it with
 * safe_open_beneath()), its path in ret_path when not NULL. -ENOENT when
 * uid has no absolute home. */
int open_home_dir(uid_t uid, char *ret_path, size_t path_size);

/* True when s is exactly n lowercase hex digits (Podman ids). */
bool is_hex_id(const char *s, size_t n);
