/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* output-file.h: opening what a user names with -o/-f, for every command
 * that writes a file (record, report -f/--timeline, export, symbolize).
 *   "-"                  standard output;
 *   /dev/stdout, /dev/fd/N, /proc/self/fd/N   that fd of ours, written through;
 *   a regular file: replaced atomically: written under a hidden temporary
 *       name (.NAME.XXXXXX) in the directory the kernel resolved it in, and
 *       exchanged with it once complete (checked to be the file opened), so
 *       a failure leaves the old file as it was; its permissions are kept,
 *       set-id bits never;
 *   nothing yet: created the same way, 0600 with OUTPUT_PRIVATE, else as
 *       the umask says; a symlink to nothing is refused;
 *   a listening Unix stream socket: connected to;
 *   a character device like /dev/null, a FIFO: opened and written through.
 * The kernel follows every symlink (fs.protected_symlinks and permissions
 * apply as for cp), once: what it resolved is what is written.
 * A directory or a block device is refused with a reason. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include <glib.h>

typedef enum OutputFlags {
        OUTPUT_BINARY = 1 << 0,   /* never a terminal */
        OUTPUT_SEEKABLE = 1 << 1, /* the writer seeks and rewrites: what is written through is
                                   * staged in an anonymous file and copied at commit */
        OUTPUT_SERVICE = 1 << 2,  /* the fd goes to periscoped, which takes a regular file at
                                   * offset 0, a pipe or a socket: anything else (a character
                                   * device) gets a pipe that a child process copies into it */
        OUTPUT_PRIVATE = 1 << 3,  /* a capture: a new file is created 0600 (as perf does) */
} OutputFlags;

typedef struct OutputFile {
        char *name;   /* for messages: the path as given, "standard output" for "-" */
        int dir_fd;   /* a file: the directory it is in (O_PATH), the kernel's resolution; else -1 */
        char *target; /* a file: its name in dir_fd; else NULL */
        char *temp;   /* a file: its hidden temporary in dir_fd until committed; else NULL */
        /* a file that existed: the one opened, which commit replaces */
        gboolean replaces;
        dev_t replaced_dev;
        ino_t replaced_ino;
        int fd;       /* where the writer writes (owned; a caller may take it and set -1) */
        int sink;     /* staged: where the staged bytes go at commit; else -1 */
        pid_t relay;  /* OUTPUT_SERVICE: the child copying the pipe into the device, or 0 */
} OutputFile;

#define OUTPUT_FILE_INIT                                                                                               \
        { .fd = -1, .sink = -1, .dir_fd = -1 }

/* Opens path for writing as above; -1 with *error naming the path. */
int output_file_open(OutputFile *o, const char *path, OutputFlags flags, GError **error);

/* The written bytes take their place: the temporary is renamed over the
 * target, a staged file is copied through; -1 with *error. */
int output_file_commit(OutputFile *o, GError **error);

/* Closes the writer's fd and waits for the relay child to have copied
 * everything; -1 with *error if it could not. No-op without a relay. */
int output_file_wait_relay(OutputFile *o, GError **error);

/* Removes an uncommitted temporary, closes the fds, waits for a relay;
 * frees o's fields. */
void output_file_finish(OutputFile *o);

/* open + write everything + commit + finish. */
int output_file_write(const char *path, const void *data, size_t size, OutputFlags flags, GError **error);

/* Whether path names our standard output ("-", /dev/stdout, /dev/fd/1,
 * /proc/self/fd/1, or a symlink to one when it is a pipe or socket). */
gboolean output_file_is_stdout(const char *path);

/* For a command whose messages go to standard output: when path names
 * standard output, keeps a copy of it for the output (*ret_path becomes
 * "/dev/fd/N", *ret_fd N, to close at the end) and points standard output at
 * standard error, so the file is all that goes there. Else *ret_path NULL,
 * *ret_fd -1. -1 with *error on failure. */
int output_file_move_stdout(const char *path, char **ret_path, int *ret_fd, GError **error);
