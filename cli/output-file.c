/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* output-file.c: opening what a user names with -o/-f (see output-file.h). */
#include "output-file.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib/gstdio.h>

#define MAX_LINKS 40

/* "WHAT PATH: strerror(e)" */
static int set_errno_error(GError **error, int e, const char *what, const char *path) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "%s %s: %s", what, path, g_strerror(e));
        return -1;
}

/* A connection to the AF_UNIX stream socket named path, write-only: what
 * a client of a listener there writes into. An fd, or -errno. */
static int connect_socket(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t len = strlen(path);
        if (len >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, path, len + 1);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (const struct sockaddr *) &sa, sizeof(sa)) < 0) {
                int e = errno;
                close(fd);
                return -e;
        }
        (void) shutdown(fd, SHUT_RD);
        return fd;
}

/* The fd number when path is an entry of our own fd directory
 * (/proc/self/fd/N, /dev/fd/N: their directory resolves to /proc/PID/fd),
 * else -1. */
static int own_fd_entry(const char *path) {
        g_autofree char *dir = g_path_get_dirname(path);
        g_autofree char *base = g_path_get_basename(path);
        char real[PATH_MAX];
        if (!realpath(dir, real))
                return -1;
        g_autofree char *ours = g_strdup_printf("/proc/%d/fd", (int) getpid());
        guint64 n = 0;
        if (strcmp(real, ours) != 0 || !g_ascii_string_to_unsigned(base, 10, 0, G_MAXINT, &n, NULL))
                return -1;
        return (int) n;
}

/* Follows path's final symlinks: *ret_fd is the fd of ours it names (or -1),
 * else *ret_path the name at the end of the chain (it may not exist). */
static int resolve(const char *path, int *ret_fd, char **ret_path) {
        g_autofree char *p = g_strdup(path);
        for (int i = 0; i < MAX_LINKS; i++) {
                int fd = own_fd_entry(p);
                if (fd >= 0) {
                        *ret_fd = fd;
                        return 0;
                }
                struct stat st;
                if (lstat(p, &st) < 0 || !S_ISLNK(st.st_mode)) {
                        *ret_fd = -1;
                        *ret_path = g_steal_pointer(&p);
                        return 0;
                }
                g_autofree char *link = g_file_read_link(p, NULL);
                if (!link)
                        return -errno;
                if (g_path_is_absolute(link)) {
                        g_free(p);
                        p = g_steal_pointer(&link);
                } else {
                        g_autofree char *dir = g_path_get_dirname(p);
                        g_free(p);
                        p = g_build_filename(dir, link, NULL);
                }
        }
        return -ELOOP;
}

gboolean output_file_is_stdout(const char *path) {
        if (!path)
                return FALSE;
        if (strcmp(path, "-") == 0)
                return TRUE;
        int fd = -1;
        g_autofree char *end = NULL;
        return resolve(path, &fd, &end) == 0 && fd == STDOUT_FILENO;
}

/* Closes every fd from 3 on but keep_a and keep_b (a forked child, no malloc). */
static void close_others(int keep_a, int keep_b) {
        int lo = MIN(keep_a, keep_b), hi = MAX(keep_a, keep_b);
        if (lo > 3)
                (void) close_range(3, (unsigned) lo - 1, 0);
        if (hi > lo + 1)
                (void) close_range((unsigned) lo + 1, (unsigned) hi - 1, 0);
        (void) close_range((unsigned) hi + 1, ~0U, 0);
}

static gboolean write_all(int fd, const void *data, size_t size) {
        const char *p = data;
        while (size > 0) {
                ssize_t k = write(fd, p, size);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        if (k == 0)
                                errno = EIO;
                        return FALSE;
                }
                p += k;
                size -= (size_t) k;
        }
        return TRUE;
}

/* A child that copies a pipe into the device until the pipe's writers
 * (periscoped) close it. It outlives an interrupted `periscope record`
 * (interrupts go to the whole process group), so the capture is complete
 * even when record leaves without waiting. */
static int start_relay(OutputFile *o, GError **error) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return set_errno_error(error, errno, "cannot make a pipe for", o->name);
        pid_t pid = fork();
        if (pid < 0) {
                int e = errno;
                close(p[0]);
                close(p[1]);
                return set_errno_error(error, e, "cannot start copying to", o->name);
        }
        if (pid == 0) {
                /* only async-signal-safe calls from here */
                struct sigaction ign = { .sa_handler = SIG_IGN };
                (void) sigaction(SIGINT, &ign, NULL);
                (void) sigaction(SIGTERM, &ign, NULL);
                (void) sigaction(SIGHUP, &ign, NULL);
                close(p[1]);
                close_others(p[0], o->fd);
                char buf[65536];
                for (;;) {
                        ssize_t n = read(p[0], buf, sizeof buf);
                        if (n == 0)
                                _exit(0);
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n < 0)
                                _exit(1);
                        if (!write_all(o->fd, buf, (size_t) n))
                                _exit(2);
                }
        }
        close(p[0]);
        close(o->fd);
        o->fd = p[1];
        o->relay = pid;
        return 0;
}

/* o->fd is written through: checks its kind against what the writer needs. */
static int written_through(OutputFile *o, OutputFlags flags, GError **error) {
        struct stat st;
        if (fstat(o->fd, &st) < 0)
                return set_errno_error(error, errno, "cannot use", o->name);
        if ((flags & OUTPUT_BINARY) && isatty(o->fd)) {
                g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                            "%s is a terminal and the output is binary: name a file, or redirect it", o->name);
                return -1;
        }
        if (S_ISDIR(st.st_mode)) {
                g_set_error(error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY, "%s is a directory", o->name);
                return -1;
        }
        if (flags & OUTPUT_SEEKABLE) {
                o->sink = o->fd;
                o->fd = memfd_create("periscope-output", MFD_CLOEXEC);
                if (o->fd < 0)
                        return set_errno_error(error, errno, "cannot stage the output for", o->name);
                return 0;
        }
        if (flags & OUTPUT_SERVICE) {
                int fl = fcntl(o->fd, F_GETFL);
                gboolean takes = S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ||
                                 (S_ISREG(st.st_mode) && fl >= 0 && !(fl & O_APPEND) && lseek(o->fd, 0, SEEK_CUR) == 0);
                if (!takes)
                        return start_relay(o, error);
        }
        return 0;
}

int output_file_open(OutputFile *o, const char *path, OutputFlags flags, GError **error) {
        *o = (OutputFile) OUTPUT_FILE_INIT;
        gboolean dash = strcmp(path, "-") == 0;
        o->name = g_strdup(dash ? "standard output" : path);
        int own = dash ? STDOUT_FILENO : -1;
        g_autofree char *target = NULL;
        int r = dash ? 0 : resolve(path, &own, &target);
        if (r < 0)
                return set_errno_error(error, -r, "cannot follow", path);
        if (own >= 0) {
                o->fd = fcntl(own, F_DUPFD_CLOEXEC, 3);
                if (o->fd < 0)
                        return set_errno_error(error, errno, "cannot write to", o->name);
                return written_through(o, flags, error);
        }
        struct stat st;
        if (stat(target, &st) == 0 && !S_ISREG(st.st_mode)) {
                if (S_ISDIR(st.st_mode)) {
                        g_set_error(error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY, "%s is a directory", path);
                        return -1;
                }
                if (S_ISSOCK(st.st_mode)) {
                        /* a listening stream socket: connected to */
                        int fd = connect_socket(target);
                        if (fd < 0)
                                return set_errno_error(error, -fd, "cannot connect to the socket", path);
                        o->fd = fd;
                        return written_through(o, flags, error);
                }
                /* a device or a FIFO (waits here for a reader) */
                o->fd = open(target, O_WRONLY | O_CLOEXEC | O_NOCTTY);
                if (o->fd < 0)
                        return set_errno_error(error, errno, "cannot open", path);
                return written_through(o, flags, error);
        }
        /* a regular file or none: a temporary beside it, renamed at commit */
        gboolean exists = stat(target, &st) == 0;
        g_autofree char *dir = g_path_get_dirname(target);
        g_autofree char *base = g_path_get_basename(target);
        g_autofree char *name = g_strdup_printf(".%s.XXXXXX", base);
        o->temp = g_build_filename(dir, name, NULL);
        o->fd = g_mkstemp_full(o->temp, O_RDWR | O_CLOEXEC | O_NOCTTY, 0644);
        if (o->fd < 0) {
                g_clear_pointer(&o->temp, g_free);
                return set_errno_error(error, errno, "cannot create", path);
        }
        if (exists)
                (void) fchmod(o->fd, st.st_mode & 07777); /* the replaced file's permissions */
        o->target = g_steal_pointer(&target);
        return 0;
}

/* Copies the staged file into the sink. */
static int copy_staged(OutputFile *o) {
        if (lseek(o->fd, 0, SEEK_SET) < 0)
                return -errno;
        char buf[65536];
        for (;;) {
                ssize_t n = read(o->fd, buf, sizeof buf);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return 0;
                if (!write_all(o->sink, buf, (size_t) n))
                        return -errno;
        }
}

int output_file_commit(OutputFile *o, GError **error) {
        if (o->sink >= 0) {
                int r = copy_staged(o);
                if (r < 0)
                        return set_errno_error(error, -r, "cannot write", o->name);
                close(o->sink);
                o->sink = -1;
                return 0;
        }
        if (!o->temp)
                return 0;
        if (o->fd >= 0 && fsync(o->fd) < 0)
                return set_errno_error(error, errno, "cannot write", o->name);
        if (rename(o->temp, o->target) < 0)
                return set_errno_error(error, errno, "cannot name", o->name);
        g_clear_pointer(&o->temp, g_free);
        return 0;
}

int output_file_wait_relay(OutputFile *o, GError **error) {
        if (o->fd >= 0)
                close(o->fd);
        o->fd = -1;
        if (!o->relay)
                return 0;
        int status = 0;
        pid_t k;
        do
                k = waitpid(o->relay, &status, 0);
        while (k < 0 && errno == EINTR);
        o->relay = 0;
        if (k < 0)
                return set_errno_error(error, errno, "cannot wait for the copy to", o->name);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "copying to %s failed: %s", o->name,
                            WIFEXITED(status) && WEXITSTATUS(status) == 2 ? "it refused a write"
                                                                          : "the copying process failed");
                return -1;
        }
        return 0;
}

void output_file_finish(OutputFile *o) {
        (void) output_file_wait_relay(o, NULL);
        if (o->sink >= 0)
                close(o->sink);
        o->sink = -1;
        if (o->temp)
                (void) unlink(o->temp);
        g_clear_pointer(&o->temp, g_free);
        g_clear_pointer(&o->target, g_free);
        g_clear_pointer(&o->name, g_free);
}

int output_file_write(const char *path, const void *data, size_t size, OutputFlags flags, GError **error) {
        OutputFile o;
        int r = output_file_open(&o, path, flags, error);
        if (r >= 0 && !write_all(o.fd, data, size))
                r = set_errno_error(error, errno, "cannot write", o.name);
        if (r >= 0)
                r = output_file_commit(&o, error);
        output_file_finish(&o);
        return r;
}

int output_file_move_stdout(const char *path, char **ret_path, int *ret_fd, GError **error) {
        *ret_path = NULL;
        *ret_fd = -1;
        if (!output_file_is_stdout(path))
                return 0;
        fflush(stdout);
        int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
        if (fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
                int e = errno;
                if (fd >= 0)
                        close(fd);
                return set_errno_error(error, e, "cannot write to", "standard output");
        }
        *ret_path = g_strdup_printf("/dev/fd/%d", fd);
        *ret_fd = fd;
        return 0;
}
