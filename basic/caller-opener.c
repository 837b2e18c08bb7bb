/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* caller-opener.c: a forked child with the caller's filesystem identity
 * opens files for the service (see caller-opener.h). */
#include "caller-opener.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "fd-passing.h"
#include "path-walk.h"

#define CALLER_OPENER_TIMEOUT_MS 1000
#define CALLER_OPENER_MAX_GROUPS 256

struct CallerOpener {
        uid_t uid;
        pid_t pid;
        int sock;
        bool broken;
};

/* One request: the path follows the fixed part, NUL-terminated. */
typedef struct OpenRequest {
        uint64_t resolve;
        int32_t flags;
        uint32_t has_dir;     /* a directory fd comes with the request */
} OpenRequest;

#define REQUEST_MAX (sizeof(OpenRequest) + PATH_MAX)

/* ---- the child ---------------------------------------------------------- */

/* Takes the caller's effective and filesystem identity (the effective uid
 * too: the kernel asks it whether the caller owns a process's user
 * namespace, to open /proc/PID/root of a process in one), keeps real and
 * saved ids 0 (so the caller may not signal or trace it), and drops every
 * capability. */
static int become_caller(uid_t uid, gid_t gid, const gid_t *groups, size_t n_groups) {
        if (setgroups(n_groups, groups) < 0 || setresgid((gid_t) -1, gid, (gid_t) -1) < 0 ||
            setresuid((uid_t) -1, uid, (uid_t) -1) < 0)
                return -errno;
        if ((gid_t) setfsgid((gid_t) -1) != gid || (uid_t) setfsuid((uid_t) -1) != uid)
                return -EPERM;
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2] = {};
        if (syscall(SYS_capset, &h, d) < 0)
                return -errno;
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                return -errno;
        return 0;
}

static int child_open(const OpenRequest *q, const char *path, int dirfd) {
        _cleanup_close_ int slash = -1;
        bool beneath = q->resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT);
        if (dirfd < 0 && beneath) {
                slash = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (slash < 0)
                        return -errno;
                dirfd = slash;
        }
        if (beneath)
                while (*path == '/')
                        path++;
        if (*path == 0)
                path = ".";
        struct open_how how = {
                .flags = (uint64_t) (uint32_t) q->flags | O_CLOEXEC | O_NOCTTY,
                .resolve = q->resolve,
        };
        if (q->flags & O_PATH)
                how.flags &= ~(uint64_t) O_NOCTTY;
        return path_open_resolve(dirfd < 0 ? AT_FDCWD : dirfd, path, (int) how.flags, how.resolve);
}

_Noreturn static void child_serve(int sock) {
        char buf[REQUEST_MAX + 1];
        for (;;) {
                int dirfd = -1;
                ssize_t k = fd_receive_with_data(sock, buf, REQUEST_MAX, MSG_CMSG_CLOEXEC, &dirfd);
                if (k == 0 || k == -ECONNRESET)
                        _exit(0);
                int32_t result = -EBADMSG;
                OpenRequest q;
                if (k >= (ssize_t) sizeof(q) + 1) {
                        memcpy(&q, buf, sizeof(q));
                        buf[k] = 0;
                        const char *path = buf + sizeof(q);
                        /* exactly one NUL, at the end; the fd was announced */
                        if (strlen(path) + 1 == (size_t) k - sizeof(q) && (q.has_dir != 0) == (dirfd >= 0))
                                result = child_open(&q, path, dirfd);
                }
                safe_close(dirfd);
                int fd = result >= 0 ? result : -1;
                int32_t answer = result >= 0 ? 0 : result;
                int r = fd_send_with_data(sock, &answer, sizeof(answer), fd, MSG_NOSIGNAL);
                safe_close(fd);
                if (r < 0)
                        _exit(1);
        }
}

/* The primary gid and the groups of uid from the user database. */
static int user_groups(uid_t uid, gid_t *ret_gid, gid_t *groups, int *n_groups) {
        struct passwd pw, *res = NULL;
        char buf[16384];
        if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) != 0 || !res)
                return -ENOENT;
        *ret_gid = pw.pw_gid;
        int n = *n_groups;
        if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &n) < 0)
                return -E2BIG;
        *n_groups = n;
        return 0;
}

int caller_opener_new(uid_t uid, CallerOpener **ret) {
        gid_t gid, groups[CALLER_OPENER_MAX_GROUPS];
        int n_groups = CALLER_OPENER_MAX_GROUPS;
        int r = user_groups(uid, &gid, groups, &n_groups);
        if (r < 0)
                return r;
        pid_t parent = getpid();
        int sock = -1;
        pid_t pid = fork_with_socket(&sock);
        if (pid < 0)
                return pid;
        if (pid == 0) {
                /* Nothing of the service's but the socket; gone with it. */
                if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
                        _exit(1);
                if (dup2(sock, 3) < 0 || close_range(4, ~0U, 0) < 0 || close_range(0, 2, 0) < 0)
                        _exit(1);
                signal(SIGPIPE, SIG_IGN);
                /* the first answer says whether it became the caller */
                int32_t ready = become_caller(uid, gid, groups, (size_t) n_groups);
                if (fd_send_with_data(3, &ready, sizeof(ready), -1, MSG_NOSIGNAL) < 0 || ready < 0)
                        _exit(1);
                child_serve(3);
        }
        int32_t ready = -EIO;
        int fd = -1;
        struct pollfd p = { .fd = sock, .events = POLLIN };
        if (poll(&p, 1, 5 * CALLER_OPENER_TIMEOUT_MS) == 1 &&
            fd_receive_with_data(sock, &ready, sizeof(ready), MSG_CMSG_CLOEXEC, &fd) != sizeof(ready))
                ready = -EIO;
        safe_close(fd);
        if (ready < 0) {
                close(sock);
                kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                return ready;
        }
        CallerOpener *o = calloc(1, sizeof(*o));
        if (!o) {
                close(sock);
                kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                return -ENOMEM;
        }
        *o = (CallerOpener){ .uid = uid, .pid = pid, .sock = sock };
        *ret = o;
        return 0;
}

CallerOpener *caller_opener_free(CallerOpener *o) {
        if (!o)
                return NULL;
        safe_close(o->sock);
        if (o->pid > 0) {
                kill(o->pid, SIGKILL);
                while (waitpid(o->pid, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
        free(o);
        return NULL;
}

uid_t caller_opener_uid(const CallerOpener *o) {
        return o->uid;
}

pid_t caller_opener_pid(const CallerOpener *o) {
        return o->pid;
}

int caller_opener_openat2(CallerOpener *o, int dirfd, const char *path, int flags, uint64_t resolve) {
        if (!path)
                return -EINVAL;
        if (o->broken)
                return -EIO;
        size_t len = strlen(path);
        if (len >= PATH_MAX)
                return -ENAMETOOLONG;
        char buf[REQUEST_MAX];
        OpenRequest q = { .resolve = resolve, .flags = flags, .has_dir = dirfd >= 0 };
        memcpy(buf, &q, sizeof(q));
        memcpy(buf + sizeof(q), path, len + 1);
        int r = fd_send_with_data(o->sock, buf, sizeof(q) + len + 1, dirfd, MSG_NOSIGNAL);
        struct pollfd p = { .fd = o->sock, .events = POLLIN };
        if (r >= 0) {
                do
                        r = poll(&p, 1, CALLER_OPENER_TIMEOUT_MS);
                while (r < 0 && errno == EINTR);
                r = r < 0 ? -errno : r == 0 ? -ETIMEDOUT : 0;
        }
        int32_t answer = 0;
        int fd = -1;
        if (r >= 0) {
                ssize_t k = fd_receive_with_data(o->sock, &answer, sizeof(answer), MSG_CMSG_CLOEXEC, &fd);
                r = k < 0 ? (int) k : k != sizeof(answer) ? -EBADMSG : 0;
        }
        if (r < 0 || (answer == 0) != (fd >= 0) || answer > 0) {
                /* dead, stopped or confused: never asked again */
                safe_close(fd);
                o->broken = true;
                if (o->pid > 0)
                        kill(o->pid, SIGKILL);
                return -EIO;
        }
        return answer < 0 ? answer : fd;
}

int caller_opener_open_file(CallerOpener *o, pid_t pid, const char *path, bool follow_links) {
        const uint64_t confined = follow_links ? RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS
                                               : RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
        if (!path || path[0] != '/')
                return -ENOENT;
        _cleanup_close_ int root = -1;
        if (pid > 0) {
                char p[64];
                snprintf(p, sizeof(p), "/proc/%d/root", (int) pid);
                root = caller_opener_openat2(o, -1, p, O_PATH | O_DIRECTORY, 0);
        }
        _cleanup_close_ int fd = caller_opener_openat2(o, root, path, O_RDONLY | O_NONBLOCK | (follow_links ? 0 : O_NOFOLLOW),
                                                       confined);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return -ENOENT;
        return TAKE_FD(fd);
}
