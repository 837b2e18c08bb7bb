/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jit-files.c: finding and pinning perf maps. Every open goes through
 * one /proc/PID directory fd, so the status read (pid namespace number,
 * uid) and the root entered describe the same process; inside that root
 * the file is opened with safe_open_beneath() (no symlinks, no "..", no
 * magic links, never blocking on a FIFO) and kept only when it is a
 * regular file owned by the process's uid. */
#include "jit-files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic.h"
#include "resolver.h"

#define JIT_FILES_FIRST_RETRY_MS 100
#define JIT_FILES_MAX_RETRY_MS 1600
#define JIT_FILES_STATUS_MAX (64u * 1024u)

typedef struct JitWatch {
        JitFile file;
        int64_t next_try_ms;
        int64_t last_try_ms;
        int64_t interval_ms;
        bool exited;
        char *refusal;
} JitWatch;

struct JitFiles {
        JitWatch *watches; /* sorted by pid */
        size_t n, allocated;
        size_t max_files, n_pinned;
        Resolver *resolver;
        bool check_owner;
        uid_t owner_uid;
};

int jit_files_new(size_t max_files, JitFiles **ret) {
        JitFiles *j = calloc(1, sizeof *j);
        if (!j)
                return -ENOMEM;
        j->max_files = max_files;
        *ret = j;
        return 0;
}

JitFiles *jit_files_free(JitFiles *j) {
        if (!j)
                return NULL;
        for (size_t i = 0; i < j->n; i++) {
                safe_close(j->watches[i].file.fd);
                free(j->watches[i].file.path);
                free(j->watches[i].file.shown);
                free(j->watches[i].refusal);
        }
        free(j->watches);
        free(j);
        return NULL;
}

void jit_files_set_resolver(JitFiles *j, Resolver *res) {
        j->resolver = res;
}

void jit_files_set_owner(JitFiles *j, uid_t owner_uid) {
        j->check_owner = true;
        j->owner_uid = owner_uid;
}

_Static_assert(sizeof(pid_t) == sizeof(int32_t), "a pid is read as an int32_t");

static size_t find_slot(const JitFiles *j, pid_t pid) {
        return bsearch_first_at_least_i32(j->watches, j->n, sizeof(JitWatch), offsetof(JitWatch, file.pid), pid);
}

static JitWatch *find_watch(const JitFiles *j, pid_t pid) {
        size_t i = find_slot(j, pid);
        return i < j->n && j->watches[i].file.pid == pid ? &j->watches[i] : NULL;
}

static JitWatch *add_watch(JitFiles *j, pid_t pid, int64_t now_ms) {
        size_t i = find_slot(j, pid);
        if (i < j->n && j->watches[i].file.pid == pid)
                return &j->watches[i];
        if (GROW_ARRAY(j->watches, j->allocated, j->n + 1, 64) < 0)
                return NULL;
        memmove(j->watches + i + 1, j->watches + i, (j->n - i) * sizeof *j->watches);
        j->n++;
        j->watches[i] = (JitWatch) {
                .file = { .pid = pid, .fd = -1 },
                .next_try_ms = now_ms,
                .last_try_ms = INT64_MIN / 2,
                .interval_ms = JIT_FILES_FIRST_RETRY_MS,
        };
        return &j->watches[i];
}

/* The last number of "NSpid:" (the pid in its own namespace) and the
 * effective uid of "Uid:" from a status file. */
static int parse_status(const char *status, pid_t *ret_nspid, uid_t *ret_euid) {
        const char *ns = strstr(status, "\nNSpid:"), *uid = strstr(status, "\nUid:");
        if (!ns || !uid)
                return -EBADMSG;
        unsigned long ruid, euid;
        if (sscanf(uid + 5, "%lu %lu", &ruid, &euid) != 2)
                return -EBADMSG;
        long last = -1;
        const char *p = ns + 7, *end = strchr(p, '\n');
        while (p && (!end || p < end)) {
                char *next;
                long v = strtol(p, &next, 10);
                if (next == p)
                        break;
                last = v;
                p = next;
        }
        if (last <= 0 || last > INT32_MAX)
                return -EBADMSG;
        *ret_nspid = (pid_t) last;
        *ret_euid = (uid_t) euid;
        return 0;
}

static void refuse(JitWatch *w, char *why) {
        free(w->refusal);
        w->refusal = why;
}

/* One attempt: 1 pinned, 0 not there (yet), -errno. */
static int try_pin(JitFiles *j, JitWatch *w) {
        char dir[64], path[64];
        snprintf(dir, sizeof dir, "/proc/%d", (int) w->file.pid);
        _cleanup_close_ int pidfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (pidfd < 0)
                return 0;
        _cleanup_close_ int statusfd = openat(pidfd, "status", O_RDONLY | O_CLOEXEC);
        _cleanup_free_ char *status = NULL;
        size_t len;
        if (statusfd < 0 || read_fd_bounded(statusfd, JIT_FILES_STATUS_MAX, true, &status, &len) < 0)
                return 0; /* gone */
        pid_t nspid;
        uid_t euid;
        if (parse_status(status, &nspid, &euid) < 0)
                return 0;
        snprintf(path, sizeof path, "/tmp/perf-%d.map", (int) nspid);
        char shown[RESOLVER_PATH_MAX];
        _cleanup_close_ int fd = -EBADF;
        _cleanup_close_ int rootfd = openat(pidfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rootfd >= 0) {
                fd = safe_open_beneath(rootfd, path, O_RDONLY, false);
                snprintf(shown, sizeof shown, "%s/root%s", dir, path);
        } else if (j->resolver) {
                /* a root the service cannot enter: the container's layers */
                ResolverProvenance prov;
                int r = resolver_open_path(j->resolver, w->file.pid, path, &fd, &prov);
                if (r < 0)
                        fd = r;
                snprintf(shown, sizeof shown, "%s", prov.host_path);
        }
        if (fd < 0)
                return 0;
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode)) {
                refuse(w, strdup_printf("%s is not a regular file", path));
                return 0;
        }
        if (st.st_uid != euid || (j->check_owner && st.st_uid != j->owner_uid)) {
                refuse(w, strdup_printf("%s is owned by uid %u, not by the process's uid %u", path,
                                        (unsigned) st.st_uid, (unsigned) (st.st_uid != euid ? euid : j->owner_uid)));
                return 0;
        }
        if (j->n_pinned >= j->max_files) {
                refuse(w, strdup_printf("%s not read: over the recording's limit of %zu perf maps", path,
                                        j->max_files));
                return 0;
        }
        w->file.path = strdup(path);
        w->file.shown = strdup(shown);
        if (!w->file.path || !w->file.shown)
                return -ENOMEM;
        w->file.fd = TAKE_FD(fd);
        free(w->refusal);
        w->refusal = NULL;
        j->n_pinned++;
        return 1;
}

static int look(JitFiles *j, JitWatch *w, int64_t now_ms, bool force) {
        if (w->file.fd >= 0 || w->exited || (!force && now_ms < w->next_try_ms))
                return 0;
        w->last_try_ms = now_ms;
        int r = try_pin(j, w);
        if (r == 0) {
                w->next_try_ms = now_ms + w->interval_ms;
                if (w->interval_ms < JIT_FILES_MAX_RETRY_MS)
                        w->interval_ms *= 2;
        }
        return r;
}

int jit_files_look(JitFiles *j, pid_t pid, int64_t now_ms, bool jit_code) {
        JitWatch *w = add_watch(j, pid, now_ms);
        if (!w)
                return -ENOMEM;
        bool due = jit_code && now_ms - w->last_try_ms >= JIT_FILES_FIRST_RETRY_MS;
        return look(j, w, now_ms, due);
}

int jit_files_look_all(JitFiles *j, const ProcessMaps *maps, int64_t now_ms, bool force) {
        size_t n_pids = 0;
        const int32_t *pids = maps ? process_maps_get_pids(maps, &n_pids) : NULL;
        for (size_t i = 0; i < n_pids; i++)
                if (!find_watch(j, pids[i]) && !add_watch(j, pids[i], now_ms))
                        return -ENOMEM;
        for (size_t i = 0; i < j->n; i++)
                (void) look(j, &j->watches[i], now_ms, force);
        return 0;
}

int jit_files_exited(JitFiles *j, pid_t pid) {
        JitWatch *w = add_watch(j, pid, 0);
        if (!w)
                return -ENOMEM;
        w->exited = true;
        return 0;
}

int jit_files_new_process(JitFiles *j, pid_t pid, int64_t now_ms) {
        JitWatch *w = add_watch(j, pid, now_ms);
        if (!w)
                return -ENOMEM;
        if (w->file.fd < 0) {
                w->exited = false;
                w->next_try_ms = now_ms;
                w->interval_ms = JIT_FILES_FIRST_RETRY_MS;
        }
        return 0;
}

const JitFile *jit_files_get(const JitFiles *j, pid_t pid) {
        const JitWatch *w = find_watch(j, pid);
        return w && w->file.fd >= 0 ? &w->file : NULL;
}

const char *jit_files_get_refusal(const JitFiles *j, pid_t pid) {
        const JitWatch *w = find_watch(j, pid);
        return w ? w->refusal : NULL;
}

size_t jit_files_get_n_pinned(const JitFiles *j) {
        return j->n_pinned;
}
