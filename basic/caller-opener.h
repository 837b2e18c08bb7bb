/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* caller-opener.h: opening files with another user's access rights. The
 * root service opens files named by an unprivileged caller (a binary's
 * .gnu_debuglink beside it, the path of a mapping whose process is gone) in
 * a child process forked once per recording, whose effective and
 * filesystem identity (uid, gid, supplementary groups from the user
 * database) is the caller's and which holds no capability: the kernel then
 * checks every directory searched and the file opened exactly as for the
 * caller. Its real and saved uids stay 0 and it is not dumpable, so the
 * caller can neither signal nor ptrace it; it keeps no fd of the service's
 * but its socket.
 * Whatever it answers is a file the caller could have opened itself. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cleanup.h"

typedef struct CallerOpener CallerOpener;

/* Starts the opener for uid. Returns 0, or a negative errno (-ENOENT: uid
 * is not in the user database; -EPERM: no CAP_SETUID/CAP_SETGID to take
 * its identity). */
int caller_opener_new(uid_t uid, CallerOpener **ret);

/* Ends the opener (SIGKILL, reaped). NULL is a no-op. */
CallerOpener *caller_opener_free(CallerOpener *o);

/* The uid whose rights the opener has, and the opener's pid (for logs and tests). */
uid_t caller_opener_uid(const CallerOpener *o);
pid_t caller_opener_pid(const CallerOpener *o);

/* openat2(dirfd, path, flags | O_CLOEXEC | O_NOCTTY, resolve) as the caller
 * (path_open_resolve(): the walk where openat2 is refused):
 * dirfd < 0 means the service's "/" (a leading '/' of path is dropped when
 * resolve holds RESOLVE_BENEATH or RESOLVE_IN_ROOT). Returns the fd or a negative errno. An
 * opener that does not answer within a second is killed; every call after
 * it fails with -EIO. */
int caller_opener_openat2(CallerOpener *o, int dirfd, const char *path, int flags, uint64_t resolve);

/* Opens the regular file at path (absolute, as pid sees it) read-only as the
 * caller, inside pid's root (/proc/PID/root, opened as the caller too) when
 * pid > 0 and that works, else inside the service's "/". No magic link is
 * followed and nothing leaves the root; symbolic links only when
 * follow_links (resolved inside the root: RESOLVE_IN_ROOT). Any failure (the
 * caller may not search a directory, a link in the way, not a regular
 * file…) is -ENOENT: the caller learns nothing of files it could not read. */
int caller_opener_open_file(CallerOpener *o, pid_t pid, const char *path, bool follow_links);

DEFINE_TRIVIAL_CLEANUP_FUNC(CallerOpener *, caller_opener_free);
