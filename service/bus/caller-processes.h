/* SPDX-License-Identifier: LGPL-2.1-or-later */
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

typedef int (*CallerProcessAppend)(sd_bus_message *reply, pid_t pid, void *userdata);
typedef int (*CallerReplyAppend)(sd_bus_message *reply, void *userdata);

/* Replies to the method call m with an array of dictionaries (aa{sv}):
 * append(reply, pid, userdata) adds one for a process caller may list (or
 * none when it is gone), then append_more(reply, userdata) (may be NULL)
 * adds its own. Returns what sd_bus_send() does, or a negative errno. */
/* The first part of caller_processes_reply(): the reply, its array open,
 * one entry per process in it, for the caller to complete (maybe later). */
int caller_processes_start_reply(sd_bus_message *m, const Caller *caller, CallerProcessAppend append, void *userdata,
                                 sd_bus_message **ret);

int caller_processes_reply(sd_bus_message *m, const Caller *caller, CallerProcessAppend append,
                           CallerReplyAppend append_more, void *userdata);
