/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysprof3-state.h: what the three org.gnome.Sysprof3 objects share
 * (sysprof3-service.c, sysprof3-unwinder.c, sysprof3-profiler.c): the
 * events handed out, the sessions running, and authorizing a call before
 * it goes on. sysprof3.c, which registers the objects, stands above them. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "bus.h"
#include "sysprof3.h"

/* Events handed out by PerfEventOpen are remembered (by the kernel's event
 * id) so that Unwind takes only those, from the user they were opened
 * for, with the layout their records have. The oldest are forgotten
 * beyond this many. */
#define SYSPROF3_MAX_OPENED_EVENTS 65536u

typedef struct OpenedEvent {
        uint64_t id; /* PERF_EVENT_IOC_ID */
        uid_t uid;   /* whom it was opened for */
        int32_t pid; /* -1: a CPU of the whole system */
        bool kernel; /* kernel addresses allowed */
        uint64_t sample_type, sample_regs_user;
        uint32_t sample_stack_user;
} OpenedEvent;

typedef struct LiveUnwind LiveUnwind;
typedef struct EnergyProfile EnergyProfile;

/* A running Unwind session and what it holds of its user's limits
 * (user-limits.h) until it ends. */
typedef struct UnwindSession {
        LiveUnwind *live;
        UserCharge recording; /* one of USER_RESOURCE_RECORDINGS */
        UserCharge rings;     /* USER_RESOURCE_LOCKED_MEMORY: the rings the daemon maps */
        sd_bus_track *client; /* the caller: its leaving the bus ends the session */
} UnwindSession;

struct Sysprof3 {
        Manager *mgr;
        sd_bus_slot *service_slot, *unwinder_slot, *profiler_slot;
        sd_bus_slot *activity_slot; /* every incoming message counts as work (idle exit) */
        OpenedEvent *opened;        /* a ring of SYSPROF3_MAX_OPENED_EVENTS at most */
        size_t n_opened, next_opened, allocated_opened;
        UnwindSession *unwinds; /* running Unwind sessions */
        size_t n_unwinds, allocated_unwinds;
        unsigned next_unwind_id;
        EnergyProfile *energy; /* the one Profiler session (Start ... Stop), or NULL */
        struct PerfOpening **openings; /* PerfEventOpen calls awaiting the perf opener on their fibers */
        size_t n_openings, allocated_openings;
};

/* PerfEventOpen calls of one user that may await the perf opener at once;
 * more are refused (each holds a fiber's stack). */
#define SYSPROF3_MAX_OPENINGS_PER_USER 64u

/* Ends the PerfEventOpen calls still awaiting the perf opener: each is
 * refused (the daemon exits) and forgotten (sysprof3-service.c). */
void sysprof3_cancel_openings(Sysprof3 *s);

/* Remembers an event handed out (sysprof3-service.c). */
int sysprof3_remember_event(Sysprof3 *s, const OpenedEvent *e);

/* The remembered event with this id, or NULL. */
const OpenedEvent *sysprof3_find_event(const Sysprof3 *s, uint64_t id);

/* Continues a call once authorized: auth says what the caller may see. Sets
 * error (or returns a negative errno) when it fails; replies itself. */
typedef int (*Sysprof3Continue)(Sysprof3 *s, sd_bus_message *call, const Caller *caller, const Authorization *auth,
                                sd_bus_error *error);

/* Authorizes what options ask for (one pid, or the whole system) and runs
 * next with the result: at once when no polkit is needed, else when polkit
 * answered (the call is kept until then). Returns what a method handler
 * returns. */
int sysprof3_authorize(Sysprof3 *s, sd_bus_message *call, const Caller *caller, int32_t pid, Sysprof3Continue next,
                       sd_bus_error *error);

/* The same for options built by the caller (the RAPL profiler: its
 * counters, which Record's 'counters' are authorized by alike). */
int sysprof3_authorize_options(Sysprof3 *s, sd_bus_message *call, const Caller *caller, const RecordOptions *options,
                               Sysprof3Continue next, sd_bus_error *error);
