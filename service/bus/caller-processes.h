/* caller-processes.h: the processes a D-Bus caller may see (its own, or all
 * for root), walked once for every method that lists processes. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include <systemd/sd-bus.h>

#include "authorization.h"

/* Whether caller may list pid: root sees every process, others their own. */
bool caller_may_list(const Caller *caller, pid_t pid);

typedef int (*CallerProcessFunc)(pid_t pid, void *userdata);

/* Calls each(pid, userdata) for every process in /proc that caller may list,
 * stopping at the first negative return, which it returns; else 0. */
int caller_processes_foreach(const Caller *caller, CallerProcessFunc each, void *userdata);
