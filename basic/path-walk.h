/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* path-walk.h: openat2() with its RESOLVE_* guarantees, also where openat2
 * is refused (systemd's RestrictSUIDSGID= answers it with ENOSYS, older
 * kernels and filters with EPERM or EINVAL): then a component-by-component
 * walk with O_PATH|O_NOFOLLOW fds, after systemd's chase(). */
#pragma once

#include <stdint.h>

/* openat2(dirfd, path, &{ flags, resolve }) (dirfd may be AT_FDCWD). When
 * openat2 answers ENOSYS, EPERM, EINVAL or E2BIG the same open is done by
 * a walk with the same guarantees: RESOLVE_BENEATH (no absolute path, no
 * ".." above dirfd: -EXDEV), RESOLVE_IN_ROOT (absolute paths and symbolic
 * links anchored at dirfd, ".." stops there), RESOLVE_NO_SYMLINKS (-ELOOP),
 * RESOLVE_NO_MAGICLINKS (implied by BENEATH and IN_ROOT; every symbolic
 * link on procfs counts as one: -ELOOP), RESOLVE_NO_XDEV (mount ids:
 * -EXDEV), at most 40 links (-ELOOP); a ".." that finds another directory
 * than the one walked through (moved meanwhile) is -EAGAIN. The walk
 * creates nothing (O_CREAT, O_TMPFILE: -EINVAL) and follows no magic
 * link. resolve == 0 falls back to plain openat(). Returns an fd or a
 * negative errno. */
int path_open_resolve(int dirfd, const char *path, int flags, uint64_t resolve);
