/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc-util.h: walking /proc and naming the pid (or thread id) that a
 * /proc or /proc/PID/task entry stands for. */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

/* True with *ret set when name is a whole positive decimal that fits a pid
 * ("self", "sys", "123abc" and "0" are not). */
static inline bool proc_entry_pid(const char *name, pid_t *ret) {
        char *end;
        long v = strtol(name, &end, 10);
        if (end == name || *end || v <= 0 || v > INT32_MAX)
                return false;
        *ret = (pid_t) v;
        return true;
}

/* The next process entry of a /proc (or /proc/PID/task) directory stream:
 * true with its pid (and the entry's inode number, new for a reused pid,
 * when ret_ino is set), false at the end. */
static inline bool proc_dir_next_pid(DIR *d, pid_t *ret_pid, ino_t *ret_ino) {
        struct dirent *de;
        while ((de = readdir(d)))
                if (proc_entry_pid(de->d_name, ret_pid)) {
                        if (ret_ino)
                                *ret_ino = de->d_ino;
                        return true;
                }
        return false;
}
