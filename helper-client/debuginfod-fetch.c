/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* debuginfod-fetch.c: runs periscope-debuginfod-fetch in its sandbox (see
 * debuginfod-fetch.h). */
#include "debuginfod-fetch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic.h"
#include "protocol.h"
#include "sandbox-launch.h"

/* What the fetcher may read besides /usr: name resolution and CA certificates. */
static const char *const network_files[] = {
        "/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/host.conf", "/etc/gai.conf",
        "/etc/ssl", "/etc/ca-certificates", "/etc/pki",
};

/* mkdir -p of an absolute path, each component without following
 * symlinks; returns an O_PATH fd of the last one. */
static int make_dirs(const char *path, mode_t mode) {
        _cleanup_close_ int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ char *copy = strdup(path);
        if (dir < 0 || !copy)
                return dir < 0 ? -errno : -ENOMEM;
        char *save = NULL;
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                if (mkdirat(dir, c, mode) < 0 && errno != EEXIST)
                        return -errno;
                int next = openat(dir, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return -errno;
                safe_close(dir);
                dir = next;
        }
        return TAKE_FD(dir);
}

/* The fetcher's cache: root's belongs to the fetcher's uid (0700 under a
 * root-owned 0755 parent); anyone else's is their own debuginfod cache. */
static int open_cache(bool as_root, uid_t uid, gid_t gid, char **ret_why) {
        _cleanup_free_ char *path = NULL;
        if (as_root)
                path = strdup(DEBUGINFOD_FETCH_ROOT_CACHE);
        else if (getenv("DEBUGINFOD_CACHE_PATH") && getenv("DEBUGINFOD_CACHE_PATH")[0] == '/')
                path = strdup(getenv("DEBUGINFOD_CACHE_PATH"));
        else if (getenv("XDG_CACHE_HOME") && getenv("XDG_CACHE_HOME")[0] == '/')
                path = strdup_printf("%s/debuginfod_client", getenv("XDG_CACHE_HOME"));
        else if (getenv("HOME") && getenv("HOME")[0] == '/')
                path = strdup_printf("%s/.cache/debuginfod_client", getenv("HOME"));
        if (!path) {
                why_set(ret_why, strdup("debuginfod: no cache directory ($HOME is not set)"));
                return -ENOENT;
        }
        int fd = make_dirs(path, as_root ? 0755 : 0700);
        if (fd < 0) {
                why_set(ret_why, strdup_printf("debuginfod: cache %s: %s", path, strerror(-fd)));
                return fd;
        }
        struct stat st;
        if (as_root && (fstat(fd, &st) < 0 || ((st.st_uid != uid || st.st_gid != gid || (st.st_mode & 07777) != 0700) &&
                                              (fchownat(fd, "", uid, gid, AT_EMPTY_PATH) < 0 ||
                                               fchmodat(AT_FDCWD, path, 0700, AT_SYMLINK_NOFOLLOW) < 0)))) {
                int r = -errno;
                why_set(ret_why, strdup_printf("debuginfod: cannot give cache %s to uid %u: %s", path, (unsigned) uid,
                                               strerror(errno)));
                safe_close(fd);
                return r;
        }
        return fd;
}

int debuginfod_fetch_prepare_root_cache(char **ret_why) {
        if (geteuid() != 0)
                return 0;
        uid_t uid;
        gid_t gid;
        sandbox_user(DEBUGINFOD_FETCH_USER, DEBUGINFOD_FETCH_FALLBACK_ID, &uid, &gid);
        int fd = open_cache(true, uid, gid, ret_why);
        if (fd < 0)
                return fd;
        safe_close(fd);
        return 0;
}

static int build_argv(const SandboxLaunch *l, const char *urls, SandboxArgvStrings *strings, char ***ret) {
        size_t max = SANDBOX_ARGV_HEAD_MAX + 3 * ELEMENTSOF(network_files) + 32;
        _cleanup_free_ char **argv = calloc(max, sizeof(char *));
        if (!argv)
                return -ENOMEM;
        size_t i = sandbox_argv_head(l, argv, strings);
        argv[i++] = "--setenv";
        argv[i++] = "DEBUGINFOD_URLS";
        argv[i++] = (char *) urls;
        argv[i++] = "--setenv";
        argv[i++] = "DEBUGINFOD_CACHE_PATH";
        argv[i++] = "/cache";
        argv[i++] = "--setenv";
        argv[i++] = "HOME";
        argv[i++] = "/cache";
        for (size_t k = 0; k < ELEMENTSOF(network_files); k++) {
                argv[i++] = "--ro-bind-try";
                argv[i++] = (char *) network_files[k];
                argv[i++] = (char *) network_files[k];
        }
        /* fds 4 and 5 (sandbox_spawn() places them): the program and the cache */
        argv[i++] = "--ro-bind-fd";
        argv[i++] = "4";
        argv[i++] = "/run/periscope-debuginfod-fetch";
        argv[i++] = "--bind-fd";
        argv[i++] = "5";
        argv[i++] = "/cache";
        argv[i++] = "--remount-ro";
        argv[i++] = "/";
        argv[i++] = "--chdir";
        argv[i++] = "/";
        argv[i++] = "--";
        argv[i++] = "/run/periscope-debuginfod-fetch";
        argv[i++] = "--fd";
        argv[i++] = "3";
        argv[i] = NULL;
        *ret = TAKE_PTR(argv);
        return 0;
}

/* Waits until sock is readable within left ms: 1, 0 timed out, < 0 failed. */
static int wait_answer(int sock, int64_t left, const DebuginfodWait *wait) {
        if (wait && wait->wait_readable)
                return wait->wait_readable(sock, (unsigned) left, wait->userdata);
        struct pollfd p = { .fd = sock, .events = POLLIN };
        int r = poll(&p, 1, (int) left);
        if (r < 0)
                return errno == EINTR ? 0 : -errno;
        return r > 0;
}

/* Reads the answer: the debug file's fd, or the fetcher's error. */
static int read_answer(int sock, uint32_t id, int64_t deadline, const DebuginfodWait *wait, char **ret_why) {
        for (;;) {
                int64_t left = deadline - now_monotonic_ms();
                if (left <= 0) {
                        why_set(ret_why, strdup("debuginfod: the fetcher timed out"));
                        return -ETIMEDOUT;
                }
                int r = wait_answer(sock, left, wait);
                if (r == -ECANCELED)
                        why_set(ret_why, strdup("debuginfod: cancelled (the recording was discarded)"));
                if (r < 0)
                        return r;
                if (r > 0)
                        break;
        }
        HelperMessage m;
        int r = helper_receive_message(sock, 1, &m);
        if (r == -ECONNRESET)
                return -EIO; /* it ended without an answer: its exit status says why */
        if (r < 0) {
                why_set(ret_why, strdup("debuginfod: the fetcher sent garbage"));
                return r;
        }
        HelperReader rd;
        helper_reader_init(&rd, m.payload, m.payload_size);
        r = -EBADMSG;
        if (m.header.request_id == id && m.header.type == HELPER_MSG_ERROR && m.n_fds == 0) {
                int32_t error = (int32_t) helper_get_u32(&rd);
                _cleanup_free_ char *msg = helper_get_string(&rd, HELPER_MAX_ERROR_MESSAGE, true);
                if (helper_reader_finished(&rd) && error < 0 && error >= -4095) {
                        why_set(ret_why, TAKE_PTR(msg));
                        r = error;
                }
        } else if (m.header.request_id == id && m.header.type == HELPER_MSG_DEBUGINFOD_FETCH_REPLY && m.n_fds == 1 &&
                   m.payload_size == 0) {
                struct stat st;
                if (fstat(m.fds[0], &st) == 0 && S_ISREG(st.st_mode)) {
                        r = m.fds[0];
                        m.fds[0] = -1;
                }
        }
        helper_message_clear(&m);
        if (r == -EBADMSG)
                why_set(ret_why, strdup("debuginfod: the fetcher's answer is not a regular file or not valid"));
        return r;
}

static char *describe_failure(int status, bool as_root, uid_t uid) {
        if (WIFEXITED(status) && WEXITSTATUS(status) == SANDBOX_EXIT_NO_UID && as_root)
                return strdup_printf("debuginfod: the fetcher cannot run as uid %u (periscoped needs CAP_SETUID and CAP_SETGID)",
                                     (unsigned) uid);
        if (WIFEXITED(status))
                return strdup_printf("debuginfod: the fetcher exited with status %d", WEXITSTATUS(status));
        return strdup_printf("debuginfod: the fetcher ended by signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int debuginfod_fetch(const char *urls, const uint8_t *build_id, size_t build_id_size, unsigned timeout_s,
                     const DebuginfodWait *wait, char **ret_why) {
        why_set(ret_why, NULL);
        if (build_id_size == 0 || build_id_size > HELPER_MAX_BUILD_ID || timeout_s == 0 ||
            timeout_s > HELPER_MAX_FETCH_TIMEOUT)
                return -EINVAL;
        _cleanup_free_ char *program = sandbox_program_path(NULL, "PERISCOPE_DEBUGINFOD_FETCH",
                                                            "debuginfod-fetcher/periscope-debuginfod-fetch",
                                                            PERISCOPE_LIBEXECDIR "/periscope-debuginfod-fetch");
        if (!program) {
                why_set(ret_why, strdup_printf("debuginfod: no periscope-debuginfod-fetch: %s", strerror(errno)));
                return -ENOENT;
        }
        bool as_root = geteuid() == 0;
        uid_t uid;
        gid_t gid;
        sandbox_user(DEBUGINFOD_FETCH_USER, DEBUGINFOD_FETCH_FALLBACK_ID, &uid, &gid);
        _cleanup_close_ int cache = open_cache(as_root, uid, gid, ret_why);
        if (cache < 0)
                return cache;
        _cleanup_close_ int binary = open(program, O_PATH | O_CLOEXEC);
        if (binary < 0)
                return -errno;
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        _cleanup_close_ int sock = sv[0];
        int fds[3] = { sv[1], binary, cache };
        /* its stderr: a pipe the caller's sink reads */
        int err[2] = { -1, -1 };
        if (wait && wait->stderr_sink && sandbox_stderr_pipe(err) < 0)
                err[0] = err[1] = -1; /* then it writes to ours */
        const SandboxLaunch l = {
                .seccomp = SANDBOX_SECCOMP_FETCHER,
                .share_network = true,
                .fds = fds,
                .n_fds = ELEMENTSOF(fds),
                .stdout_fd = -1,
                .stderr_fd = err[1],
                .uid = uid,
                .gid = gid,
                .memory_limit = 2ull << 30,
                .cpu_seconds = timeout_s + 5,
                .max_files = 256,
                .max_processes = SANDBOX_MAX_PROCESSES,
        };
        _cleanup_free_ char **argv = NULL;
        SandboxArgvStrings strings;
        pid_t pid = 0;
        int r = build_argv(&l, urls, &strings, &argv);
        if (r >= 0)
                r = sandbox_spawn(&l, argv, &pid);
        safe_close(sv[1]);
        safe_close(err[1]);
        if (r < 0) {
                safe_close(err[0]);
                why_set(ret_why, strdup_printf("debuginfod: cannot start the fetcher: %s", strerror(-r)));
                return r;
        }
        if (err[0] >= 0)
                wait->stderr_sink(err[0], pid, wait->owner, DEBUGINFOD_FETCH_LOG_IDENTIFIER,
                                  wait->stderr_sink_userdata);
        HelperWriter w;
        helper_writer_init(&w, HELPER_MAX_INLINE_PAYLOAD);
        helper_put_u32(&w, timeout_s);
        helper_put_u32(&w, (uint32_t) build_id_size);
        helper_put_bytes(&w, build_id, build_id_size);
        r = w.failed ? -ENOMEM : helper_send_message(sock, HELPER_MSG_DEBUGINFOD_FETCH, 1, w.data, w.size, NULL, 0);
        helper_writer_done(&w);
        if (r >= 0)
                r = read_answer(sock, 1, now_monotonic_ms() + (int64_t) (timeout_s + 5) * 1000, wait, ret_why);
        /* Hang up first: the fetcher runs as its own user, so a daemon
         * without CAP_KILL cannot kill it; it gives up within a second
         * of seeing the hang-up (a cancelled wait: the service stopping). */
        sock = safe_close(sock);
        kill(pid, SIGKILL);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (r < 0 && ret_why && !*ret_why)
                why_set(ret_why, describe_failure(status, as_root, uid));
        return r;
}
