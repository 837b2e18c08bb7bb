/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc-files.h: the /proc files org.gnome.Sysprof3.Service's GetProcFile and
 * GetProcFd serve. Only "/proc/PID/NAME" and "/proc/PID/task/TID/NAME" with
 * NAME from a fixed list of read-only, non-link entries (maps, cmdline,
 * mountinfo...): never root/, cwd, exe, fd/, map_files/, mem or environ,
 * never "..", "." or empty components, never a symlink. The file is opened
 * beneath the process's /proc directory, which is held while the caller's
 * right to it is checked, so a pid reused meanwhile yields nothing. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* What a valid path names: the process, and the path below /proc/PID
 * ("maps", "task/123/stat"). */
typedef struct ProcFilePath {
        pid_t pid;
        char relative[64];
} ProcFilePath;

/* Parses the bytes of a path from D-Bus (len bytes, one trailing NUL
 * allowed). Returns 0, or -EINVAL/-EACCES with *ret_why saying what is
 * wrong (a static string). */
int proc_file_path_parse(const char *bytes, size_t len, ProcFilePath *ret, const char **ret_why);

/* Opens the file for caller uid when uid may profile the process (root may
 * always). Returns an O_RDONLY|O_CLOEXEC fd, -ESRCH (no such process),
 * -EPERM (not the caller's: *ret_foreign set when polkit could still
 * allow it), or another negative errno. The ownership is checked before
 * and again after the open (process_recheck_after_open()). allow_foreign
 * skips both checks (the caller was authorized through polkit). */
int proc_file_open(const ProcFilePath *path, uid_t uid, bool allow_foreign, bool *ret_foreign);

/* Whether the attribute list of GetProcessInfo ("pid,maps,cmdline") names
 * only known attributes; sets the want_* bits of ret (bit per
 * PROC_INFO_* below). -EINVAL with *ret_bad the first unknown one. */
enum {
        PROC_INFO_CMDLINE = 1 << 0,
        PROC_INFO_COMM = 1 << 1,
        PROC_INFO_MAPS = 1 << 2,
        PROC_INFO_STATM = 1 << 3,
        PROC_INFO_MOUNTINFO = 1 << 4,
        PROC_INFO_CGROUP = 1 << 5,
};
int proc_info_attributes_parse(const char *attributes, unsigned *ret, char *bad, size_t bad_size);

/* The /proc/PID file name of a PROC_INFO_* bit. */
const char *proc_info_attribute_name(unsigned bit);
