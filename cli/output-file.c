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

#include "basic.h"

/* "WHAT PATH: strerror(e)" */
static int set_errno_error(GError **error, int e, const char *what, const char *path) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "%s %s: %s", what, path, g_strerror(e));
        return -1;
}

static gboolean same_inode(const struct stat *a, const struct stat *b) {
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* "/proc/self/fd/N": what the kernel reaches through fd (an O_PATH fd). */
static void proc_fd_path(char buf[static 32], int fd) {
        snprintf(buf, 32, "/proc/self/fd/%d", fd);
}

/* Opens what the O_PATH fd at refers to again, with flags: the same inode,
 * with the kernel's permission checks of an open(). An fd, or -1 with errno. */
static int reopen(int at, int flags) {
        char p[32];
        proc_fd_path(p, at);
        return open(p, flags | O_CLOEXEC | O_NOCTTY);
}

/* A connection to the AF_UNIX stream socket at (an O_PATH fd of it),
 * write-only: what a client of a listener there writes into. Connected
 * through /proc/self/fd/N, so it is the socket the kernel resolved. An fd,
 * or -errno. */
static int connect_socket(int at) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        proc_fd_path(sa.sun_path, at);
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

/* The fd number path names as one of ours (/dev/stdout, /dev/fd/N,
 * /proc/self/fd/N, /proc/PID/fd/N), by its spelling only; else -1. */
static int own_fd_name(const char *path) {
        static const char *const std[] = { "/dev/stdin", "/dev/stdout", "/dev/stderr" };
        for (int i = 0; i < 3; i++)
                if (strcmp(path, std[i]) == 0)
                        return i;
        char pid_dir[64];
        snprintf(pid_dir, sizeof pid_dir, "/proc/%d/fd/", (int) getpid());
        const char *const dirs[] = { "/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/", pid_dir };
        for (size_t i = 0; i < G_N_ELEMENTS(dirs); i++) {
                guint64 n = 0;
                if (g_str_has_prefix(path, dirs[i]) &&
                    g_ascii_string_to_unsigned(path + strlen(dirs[i]), 10, 0, G_MAXINT, &n, NULL))
                        return (int) n;
        }
        return -1;
}

/* The fd of ours that at (an O_PATH fd, *st its inode) is, when the kernel
 * agrees: the one path names (a pipe, socket, terminal or file), or our
 * standard output when at is the same pipe or socket (a symlink to
 * /dev/stdout). Else -1. */
static int own_fd(const char *path, int at, const struct stat *st) {
        struct stat ours;
        int n = own_fd_name(path);
        if (n >= 0 && n != at && fstat(n, &ours) == 0 && same_inode(&ours, st))
                return n;
        if ((S_ISFIFO(st->st_mode) || S_ISSOCK(st->st_mode)) && fstat(STDOUT_FILENO, &ours) == 0 &&
            same_inode(&ours, st))
                return STDOUT_FILENO;
        return -1;
}

gboolean output_file_is_stdout(const char *path) {
        if (!path)
                return FALSE;
        if (strcmp(path, "-") == 0)
                return TRUE;
        _cleanup_close_ int at = open(path, O_PATH | O_CLOEXEC);
        struct stat st;
        return at >= 0 && fstat(at, &st) == 0 && own_fd(path, at, &st) == STDOUT_FILENO;
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

/* A directory or a block device (a disk: never written to): refused. */
static int written_through_refused(OutputFile *o, const struct stat *st, GError **error) {
        if (S_ISDIR(st->st_mode))
                g_set_error(error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY, "%s is a directory", o->name);
        else
                g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                            "%s is a block device: periscope does not write to disks (name a file)", o->name);
        return -1;
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
        if (S_ISDIR(st.st_mode) || S_ISBLK(st.st_mode))
                return written_through_refused(o, &st, error);
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

/* A new file in dir_fd named .BASE.XXXXXX (random), mode as given (the
 * kernel applies the umask); *ret_name its name. An fd, or -1 with errno. */
static int make_temp(int dir_fd, const char *base, mode_t mode, char **ret_name) {
        for (int i = 0; i < 100; i++) {
                static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
                char rnd[7];
                for (int k = 0; k < 6; k++)
                        rnd[k] = letters[g_random_int_range(0, sizeof letters - 1)];
                rnd[6] = '\0';
                /* .NAME.XXXXXX within NAME_MAX */
                g_autofree char *name = g_strdup_printf(".%.*s.%s", 200, base, rnd);
                int fd = openat(dir_fd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode);
                if (fd >= 0) {
                        *ret_name = g_steal_pointer(&name);
                        return fd;
                }
                if (errno != EEXIST)
                        return -1;
        }
        errno = EEXIST;
        return -1;
}

/* The directory the kernel resolved for the regular file at (an O_PATH fd,
 * *st its inode): its name as the kernel gives it (/proc/self/fd/N), opened
 * with no symlink followed, and checked to hold at's inode under that name.
 * An O_PATH fd of the directory and *ret_base, or -errno. */
static int parent_of(int at, const struct stat *st, char **ret_base) {
        char p[32];
        proc_fd_path(p, at);
        g_autofree char *where = g_file_read_link(p, NULL);
        if (!where)
                return -errno;
        if (where[0] != '/')
                return -ENOENT; /* outside our root */
        g_autofree char *dir = g_path_get_dirname(where);
        g_autofree char *base = g_path_get_basename(where);
        _cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return -errno;
        _cleanup_close_ int dir_fd = safe_open_beneath(root, dir, O_PATH | O_DIRECTORY, false);
        if (dir_fd < 0)
                return dir_fd;
        struct stat cur;
        if (fstatat(dir_fd, base, &cur, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (!same_inode(&cur, st))
                return -ESTALE; /* renamed or replaced meanwhile */
        *ret_base = g_steal_pointer(&base);
        return TAKE_FD(dir_fd);
}

/* The regular file at (an O_PATH fd, *st its inode) is to be replaced: a
 * temporary in its directory takes its permissions (no set-id bits) and,
 * as root, its owner. */
static int open_replaced(OutputFile *o, int at, const struct stat *st, GError **error) {
        /* what writing it in place would need (cp): the kernel's write check of the inode */
        if (faccessat(at, "", W_OK, AT_EMPTY_PATH | AT_EACCESS) < 0)
                return set_errno_error(error, errno, "cannot write to", o->name);
        int r = parent_of(at, st, &o->target);
        if (r < 0)
                return set_errno_error(error, -r, "cannot find the directory of", o->name);
        o->dir_fd = r;
        o->fd = make_temp(o->dir_fd, o->target, 0600, &o->temp);
        if (o->fd < 0)
                return set_errno_error(error, errno, "cannot create a file beside", o->name);
        if (geteuid() == 0 && (st->st_uid != 0 || st->st_gid != getegid()))
                (void) fchown(o->fd, st->st_uid, st->st_gid);
        if (fchmod(o->fd, st->st_mode & 0777) < 0)
                return set_errno_error(error, errno, "cannot set the permissions of", o->name);
        o->replaced_dev = st->st_dev;
        o->replaced_ino = st->st_ino;
        o->replaces = TRUE;
        return 0;
}

/* Nothing at path yet: a temporary in the directory path names (the kernel
 * follows the links on the way), linked to path's last name at commit. A
 * symlink to nothing is not written through. */
static int open_new(OutputFile *o, const char *path, OutputFlags flags, GError **error) {
        g_autofree char *dir = g_path_get_dirname(path);
        g_autofree char *base = g_path_get_basename(path);
        if (g_str_has_suffix(path, "/") || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
                return set_errno_error(error, EISDIR, "cannot create", path);
        o->dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (o->dir_fd < 0)
                return set_errno_error(error, errno, "cannot create", path);
        struct stat st;
        if (fstatat(o->dir_fd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                if (S_ISLNK(st.st_mode)) {
                        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                                    "%s is a symlink to nothing: not written through (name the file itself)", path);
                        return -1;
                }
                return set_errno_error(error, EEXIST, "cannot create", path); /* appeared meanwhile */
        }
        if (errno != ENOENT)
                return set_errno_error(error, errno, "cannot create", path);
        o->fd = make_temp(o->dir_fd, base, (flags & OUTPUT_PRIVATE) ? 0600 : 0666, &o->temp);
        if (o->fd < 0)
                return set_errno_error(error, errno, "cannot create", path);
        o->target = g_steal_pointer(&base);
        return 0;
}

int output_file_open(OutputFile *o, const char *path, OutputFlags flags, GError **error) {
        *o = (OutputFile) OUTPUT_FILE_INIT;
        if (strcmp(path, "-") == 0) {
                o->name = g_strdup("standard output");
                o->fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
                if (o->fd < 0)
                        return set_errno_error(error, errno, "cannot write to", o->name);
                return written_through(o, flags, error);
        }
        o->name = g_strdup(path);
        /* the kernel follows every link (fs.protected_symlinks applies), once */
        _cleanup_close_ int at = open(path, O_PATH | O_CLOEXEC);
        if (at < 0 && errno == ENOENT)
                return open_new(o, path, flags, error);
        struct stat st;
        if (at < 0 || fstat(at, &st) < 0)
                return set_errno_error(error, errno, "cannot open", path);
        int own = own_fd(path, at, &st);
        if (own >= 0) {
                o->fd = fcntl(own, F_DUPFD_CLOEXEC, 3);
                if (o->fd < 0)
                        return set_errno_error(error, errno, "cannot write to", o->name);
                return written_through(o, flags, error);
        }
        switch (st.st_mode & S_IFMT) {
        case S_IFREG:
                return open_replaced(o, at, &st, error);
        case S_IFSOCK:
                /* a listening stream socket: connected to */
                o->fd = connect_socket(at);
                if (o->fd < 0)
                        return set_errno_error(error, -o->fd, "cannot connect to the socket", path);
                return written_through(o, flags, error);
        case S_IFDIR:
        case S_IFBLK:
                return written_through_refused(o, &st, error);
        default:
                /* a character device or a FIFO (waits here for a reader) */
                o->fd = reopen(at, O_WRONLY);
                if (o->fd < 0)
                        return set_errno_error(error, errno, "cannot open", path);
                return written_through(o, flags, error);
        }
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

/* Whether the entry name in o's directory is the file o replaces. */
static gboolean is_replaced(OutputFile *o, const char *name) {
        struct stat st;
        return fstatat(o->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == o->replaced_dev &&
               st.st_ino == o->replaced_ino;
}

/* The temporary takes the replaced file's name, atomically, when that name
 * still is the file opened: exchanged, checked, the old one removed. 0, or
 * -ESTALE when the name holds another file (the temporary stays), -errno. */
static int put_in_place(OutputFile *o) {
        if (renameat2(o->dir_fd, o->temp, o->dir_fd, o->target, RENAME_EXCHANGE) < 0) {
                if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
                        return -errno;
                /* no exchange on this file system: checked, then renamed over */
                if (!is_replaced(o, o->target))
                        return -ESTALE;
                return renameat(o->dir_fd, o->temp, o->dir_fd, o->target) < 0 ? -errno : 0;
        }
        if (!is_replaced(o, o->temp)) {
                /* what the name held was not the file opened: put it back */
                if (renameat2(o->dir_fd, o->temp, o->dir_fd, o->target, RENAME_EXCHANGE) < 0) {
                        int e = errno;
                        g_clear_pointer(&o->temp, g_free); /* it is not ours: kept */
                        return -e;
                }
                return -ESTALE;
        }
        (void) unlinkat(o->dir_fd, o->temp, 0);
        return 0;
}

/* The temporary takes the new name, atomically, when nothing has it yet.
 * 0, -EEXIST when something does (the temporary stays), -errno. */
static int put_new(OutputFile *o) {
        if (renameat2(o->dir_fd, o->temp, o->dir_fd, o->target, RENAME_NOREPLACE) == 0)
                return 0;
        if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
                return -errno;
        if (linkat(o->dir_fd, o->temp, o->dir_fd, o->target, 0) < 0)
                return -errno;
        (void) unlinkat(o->dir_fd, o->temp, 0);
        return 0;
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
        int r = o->replaces ? put_in_place(o) : put_new(o);
        if (r == -ESTALE) {
                g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                            "%s was replaced by another file while being written: left as it is", o->name);
                return -1;
        }
        if (r == -EEXIST) {
                g_set_error(error, G_IO_ERROR, G_IO_ERROR_EXISTS, "%s appeared while being written: left as it is",
                            o->name);
                return -1;
        }
        if (r < 0)
                return set_errno_error(error, -r, "cannot name", o->name);
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
                (void) unlinkat(o->dir_fd, o->temp, 0);
        g_clear_pointer(&o->temp, g_free);
        o->dir_fd = safe_close(o->dir_fd);
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
