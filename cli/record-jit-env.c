/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* record-jit-env.c: the runtimes' own perf maps for `periscope record --
 * COMMAND`, turned on and cleaned up (see record-jit-env.h).
 *
 * node --perf-basic-prof also writes a V8 log, isolate-*-v8.log, into the
 * current directory, and NODE_OPTIONS may not carry --logfile to send it
 * elsewhere; --perf-basic-prof-only-functions writes the perf map of the
 * JavaScript functions and no log.
 *
 * The removal runs here, in the CLI, as the user: it can remove nothing
 * the user could not. A map is removed only when it is a regular file with
 * one link, owned by us, born after the command was forked, named after a
 * process of the command's tree whose program is a runtime we turned on
 * and whose command line did not ask for a perf map itself. /tmp must be
 * sticky (or writable by nobody else) and owned by root or us, so nobody
 * else can swap the name between the check and the unlink. */
#include "record-jit-env.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "capture.h"

#define PYTHON_VARIABLE "PYTHONPERFSUPPORT"
#define JIT_MAP_DIR "/tmp"

enum {
        PROC_IN_TREE = 1 << 0, /* the command or a descendant */
        PROC_NODE = 1 << 1,    /* ran node */
        PROC_PYTHON = 1 << 2,  /* ran a python */
        PROC_ASKED = 1 << 3,   /* its command line asked for a perf map or jitdump itself */
};

/* NODE_OPTIONS already says something about perf maps, on or off. */
static bool node_options_choose_perf(const char *v) {
        return v && (strstr(v, "perf-basic-prof") || strstr(v, "perf-prof"));
}

void record_jit_env_init(RecordJitEnv *j, bool enabled) {
        *j = (RecordJitEnv) {};
        /* the clock the file systems stamp files with */
        (void) clock_gettime(CLOCK_REALTIME_COARSE, &j->start);
        if (!enabled)
                return;
        j->node = !node_options_choose_perf(getenv("NODE_OPTIONS"));
        j->python = !getenv(PYTHON_VARIABLE); /* set, even to 0: the user chose */
}

/* node aborts when it cannot create its perf map (V8 checks the open):
 * whether this process, about to become the command, can. */
static bool node_map_writable(void) {
        char name[32];
        struct stat st;
        snprintf(name, sizeof(name), "perf-%d.map", (int) getpid());
        int fd = open(JIT_MAP_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return false;
        bool ok = faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) == 0;
        ok = ok && fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
        (void) close(fd);
        return ok;
}

int record_jit_env_export(const RecordJitEnv *j) {
        if (j->python && setenv(PYTHON_VARIABLE, "1", 1) < 0)
                return -errno;
        if (j->node && node_map_writable()) {
                const char *old = getenv("NODE_OPTIONS");
                g_autofree char *v = old && *old ? g_strconcat(old, " ", RECORD_JIT_ENV_NODE_OPTION, NULL)
                                                 : g_strdup(RECORD_JIT_ENV_NODE_OPTION);
                if (setenv("NODE_OPTIONS", v, 1) < 0)
                        return -errno;
        }
        return 0;
}

/* What a command line (arguments joined by spaces) says of its process. */
static unsigned classify(const char *cmdline) {
        size_t n = strcspn(cmdline, " ");
        g_autofree char *argv0 = g_strndup(cmdline, n);
        const char *base = strrchr(argv0, '/');
        base = base ? base + 1 : argv0;
        unsigned f = 0;
        if (g_str_has_prefix(base, "node"))
                f |= PROC_NODE;
        if (g_str_has_prefix(base, "python"))
                f |= PROC_PYTHON;
        if (strstr(cmdline, "--perf-basic-prof") || strstr(cmdline, "--perf-prof") || strstr(cmdline, "-X perf") ||
            strstr(cmdline, "-Xperf"))
                f |= PROC_ASKED;
        return f;
}

static void add_flags(GHashTable *procs, int32_t pid, unsigned f) {
        gpointer key = GINT_TO_POINTER(pid);
        g_hash_table_insert(procs, key, GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(procs, key)) | f));
}

/* The command's tree from the capture's FORK frames (in time order: a
 * parent's fork comes before its children's) and what ran in each process
 * from its PROCESS frames. Returns 0, or negative errno if the capture
 * cannot be read (procs then holds what was read). */
static int read_tree(int dir_fd, const char *name, pid_t command, GHashTable *procs) {
        int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        CaptureReader *reader = NULL;
        int r = capture_reader_open_fd(fd, &reader, NULL);
        (void) close(fd);
        if (r < 0)
                return r;
        add_flags(procs, command, PROC_IN_TREE);
        CaptureFrame f;
        while ((r = capture_reader_next(reader, &f)) > 0) {
                if (f.type == CAPTURE_FRAME_FORK) {
                        unsigned parent = GPOINTER_TO_UINT(g_hash_table_lookup(procs, GINT_TO_POINTER(f.pid)));
                        if ((parent & PROC_IN_TREE) && f.fork.child_pid > 0)
                                add_flags(procs, f.fork.child_pid, PROC_IN_TREE);
                } else if (f.type == CAPTURE_FRAME_PROCESS && f.pid > 0)
                        add_flags(procs, f.pid, classify(f.process.cmdline));
        }
        capture_reader_free(reader);
        return r;
}

/* Removes perf-PID.map from tmp_fd if this recording's command made it. */
static int remove_map(const RecordJitEnv *j, int tmp_fd, pid_t pid) {
        char name[32];
        snprintf(name, sizeof(name), "perf-%d.map", (int) pid);
        struct statx sx;
        if (statx(tmp_fd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
                  STATX_TYPE | STATX_UID | STATX_NLINK | STATX_BTIME | STATX_MTIME, &sx) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISREG(sx.stx_mode) || sx.stx_uid != geteuid() || sx.stx_nlink != 1)
                return 0; /* not a file the command wrote */
        /* without a birth time: last written before the command started */
        struct statx_timestamp t = (sx.stx_mask & STATX_BTIME) ? sx.stx_btime : sx.stx_mtime;
        if (t.tv_sec < j->start.tv_sec || (t.tv_sec == j->start.tv_sec && t.tv_nsec < j->start.tv_nsec))
                return 0; /* it was there before */
        if (unlinkat(tmp_fd, name, 0) < 0)
                return -errno;
        return 1;
}

/* /tmp, if nobody but root and us can rename or remove our files in it. */
static int open_map_dir(void) {
        int fd = open(JIT_MAP_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        struct stat st;
        if (fstat(fd, &st) < 0 || (st.st_uid != 0 && st.st_uid != geteuid()) ||
            (!(st.st_mode & S_ISVTX) && (st.st_mode & (S_IWGRP | S_IWOTH)))) {
                (void) close(fd);
                return -EPERM;
        }
        return fd;
}

void record_jit_env_clean(const RecordJitEnv *j, int capture_dir_fd, const char *capture_name, pid_t command,
                          char **command_line) {
        if (!j->node && !j->python)
                return;
        g_autoptr(GHashTable) procs = g_hash_table_new(NULL, NULL);
        if (!capture_name || capture_dir_fd < 0 || read_tree(capture_dir_fd, capture_name, command, procs) < 0) {
                /* no capture to read (a pipe or device): the command alone */
                g_autofree char *joined = g_strjoinv(" ", command_line);
                add_flags(procs, command, PROC_IN_TREE | classify(joined));
        }
        int tmp_fd = open_map_dir();
        if (tmp_fd < 0) {
                fprintf(stderr, "periscope: the perf maps the command's runtimes wrote are left in %s: %s\n",
                        JIT_MAP_DIR, g_strerror(-tmp_fd));
                return;
        }
        GHashTableIter it;
        gpointer key, value;
        g_hash_table_iter_init(&it, procs);
        while (g_hash_table_iter_next(&it, &key, &value)) {
                unsigned f = GPOINTER_TO_UINT(value);
                bool ours = ((f & PROC_NODE) && j->node) || ((f & PROC_PYTHON) && j->python);
                if (!(f & PROC_IN_TREE) || !ours || (f & PROC_ASKED))
                        continue;
                int r = remove_map(j, tmp_fd, (pid_t) GPOINTER_TO_INT(key));
                if (r < 0)
                        fprintf(stderr, "periscope: cannot remove %s/perf-%d.map: %s\n", JIT_MAP_DIR,
                                GPOINTER_TO_INT(key), g_strerror(-r));
        }
        (void) close(tmp_fd);
}
