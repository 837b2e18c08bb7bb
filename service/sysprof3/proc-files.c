/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc-files.c: which /proc files GetProcFile/GetProcFd serve, and opening
 * them for a caller. */
#include "proc-files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic.h"
#include "process.h"

/* Entries below /proc/PID (and /proc/PID/task/TID) that are plain read-only
 * views of the process a profiler reads. Everything that is a link or leads
 * into the process's files (root, cwd, exe, fd, map_files), its memory (mem,
 * pagemap), or its secrets (environ, auxv) is absent. */
static const char *const served_names[] = {
        "cgroup", "cmdline", "comm", "io", "limits", "maps", "mountinfo", "mounts", "sched", "schedstat",
        "smaps", "smaps_rollup", "stat", "statm", "status", "wchan",
};

static bool served_name(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(served_names); i++)
                if (strcmp(name, served_names[i]) == 0)
                        return true;
        return false;
}

/* A whole positive decimal without sign or leading zero. */
static bool parse_pid_component(const char *s, size_t n, pid_t *ret) {
        if (n == 0 || n > 9 || s[0] == '0')
                return false;
        long v = 0;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                v = v * 10 + (s[i] - '0');
        }
        *ret = (pid_t) v;
        return true;
}

int proc_file_path_parse(const char *bytes, size_t len, ProcFilePath *ret, const char **ret_why) {
        char path[128];
        if (len > 0 && bytes[len - 1] == '\0')
                len--;
        if (len == 0 || len >= sizeof(path)) {
                *ret_why = "the path is empty or too long";
                return -EINVAL;
        }
        if (memchr(bytes, '\0', len)) {
                *ret_why = "the path contains a NUL byte";
                return -EINVAL;
        }
        memcpy(path, bytes, len);
        path[len] = '\0';
        if (strncmp(path, "/proc/", 6) != 0) {
                *ret_why = "only files below /proc/PID/ are served; read other files yourself";
                return -EACCES;
        }
        /* Split into at most 4 components after /proc/. */
        const char *comp[5];
        size_t comp_len[5], n = 0;
        for (const char *p = path + 6;;) {
                const char *slash = strchr(p, '/');
                size_t l = slash ? (size_t) (slash - p) : strlen(p);
                if (n == ELEMENTSOF(comp)) {
                        *ret_why = "the path has too many components";
                        return -EACCES;
                }
                if (l == 0 || (l == 1 && p[0] == '.') || (l == 2 && p[0] == '.' && p[1] == '.')) {
                        *ret_why = "the path has an empty, '.' or '..' component";
                        return -EINVAL;
                }
                comp[n] = p;
                comp_len[n++] = l;
                if (!slash)
                        break;
                p = slash + 1;
        }
        pid_t pid, tid;
        if (!parse_pid_component(comp[0], comp_len[0], &pid)) {
                *ret_why = "only files below /proc/PID/ are served (PID a process id); read other files yourself";
                return -EACCES;
        }
        const char *name;
        size_t name_len;
        if (n == 2) {
                name = comp[1];
                name_len = comp_len[1];
        } else if (n == 4 && comp_len[1] == 4 && memcmp(comp[1], "task", 4) == 0 &&
                   parse_pid_component(comp[2], comp_len[2], &tid)) {
                name = comp[3];
                name_len = comp_len[3];
        } else {
                *ret_why = "only /proc/PID/NAME and /proc/PID/task/TID/NAME are served (never root/, fd/, "
                           "map_files/ or other links)";
                return -EACCES;
        }
        char namebuf[32];
        if (name_len >= sizeof(namebuf)) {
                *ret_why = "this /proc entry is not served";
                return -EACCES;
        }
        memcpy(namebuf, name, name_len);
        namebuf[name_len] = '\0';
        if (!served_name(namebuf)) {
                *ret_why = "this /proc entry is not served (only maps, cmdline, comm, stat, statm, status, "
                           "mountinfo, mounts, cgroup and similar read-only views)";
                return -EACCES;
        }
        ProcFilePath p = { .pid = pid };
        const char *rel = comp[1];
        size_t rel_len = (size_t) (path + len - rel);
        if (rel_len >= sizeof(p.relative)) {
                *ret_why = "the path is too long";
                return -EINVAL;
        }
        memcpy(p.relative, rel, rel_len);
        p.relative[rel_len] = '\0';
        *ret = p;
        return 0;
}

/* The /proc/PID directory's inode: a reused pid gets a new one. */
static int proc_dir_inode(pid_t pid, ino_t *ret) {
        char path[32];
        struct stat st;
        snprintf(path, sizeof(path), "/proc/%d", (int) pid);
        if (stat(path, &st) < 0)
                return -errno;
        *ret = st.st_ino;
        return 0;
}

int proc_file_open(const ProcFilePath *path, uid_t uid, bool allow_foreign, bool *ret_foreign) {
        char dir[32];
        *ret_foreign = false;
        snprintf(dir, sizeof(dir), "/proc/%d", (int) path->pid);
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        struct stat st;
        if (fstat(dfd, &st) < 0)
                return -errno;
        if (uid != 0 && !allow_foreign) {
                ProcessCreds c;
                ProcessOwnership o = process_ownership(uid, path->pid, &c);
                if (o == PROCESS_GONE)
                        return -ESRCH;
                if (o != PROCESS_OWNED && o != PROCESS_OWNED_VIA_USERNS) {
                        *ret_foreign = o == PROCESS_FOREIGN || o == PROCESS_NOT_DUMPABLE;
                        return -EPERM;
                }
                /* The ownership was read from the process /proc names now:
                 * it must be the one dfd holds. */
                ino_t now = 0;
                if (proc_dir_inode(path->pid, &now) < 0 || now != st.st_ino)
                        return -ESRCH;
        }
        _cleanup_close_ int fd = safe_open_beneath(dfd, path->relative, O_RDONLY, true);
        if (fd < 0)
                return fd;
        /* Still the caller's once the file is open: maps and smaps hold the
         * mm the open saw, a set-id program's if it exec'd since the check. */
        if (uid != 0 && !allow_foreign) {
                int r = process_recheck_after_open(uid, path->pid, "/proc file");
                if (r < 0)
                        return r;
        }
        return TAKE_FD(fd);
}

static const struct {
        unsigned bit;
        const char *name;
} info_attributes[] = {
        { PROC_INFO_CMDLINE, "cmdline" }, { PROC_INFO_COMM, "comm" },         { PROC_INFO_MAPS, "maps" },
        { PROC_INFO_STATM, "statm" },     { PROC_INFO_MOUNTINFO, "mountinfo" }, { PROC_INFO_CGROUP, "cgroup" },
};

const char *proc_info_attribute_name(unsigned bit) {
        for (size_t i = 0; i < ELEMENTSOF(info_attributes); i++)
                if (info_attributes[i].bit == bit)
                        return info_attributes[i].name;
        return NULL;
}

int proc_info_attributes_parse(const char *attributes, unsigned *ret, char *bad, size_t bad_size) {
        unsigned want = 0;
        for (const char *p = attributes; *p;) {
                size_t l = strcspn(p, ",");
                bool known = l == 3 && memcmp(p, "pid", 3) == 0; /* always included */
                for (size_t i = 0; i < ELEMENTSOF(info_attributes) && !known; i++)
                        if (strlen(info_attributes[i].name) == l && memcmp(p, info_attributes[i].name, l) == 0) {
                                want |= info_attributes[i].bit;
                                known = true;
                        }
                if (!known && l > 0) {
                        snprintf(bad, bad_size, "%.*s", (int) (l > 64 ? 64 : l), p);
                        return -EINVAL;
                }
                p += l;
                if (*p == ',')
                        p++;
        }
        *ret = want;
        return 0;
}
