/* proc-pid.h: the pid (or thread id) a /proc or /proc/PID/task entry names. */
#pragma once

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
