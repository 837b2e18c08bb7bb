/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* authorization.h: who is calling and what they may record. root may record
 * anything; other users their own dumpable processes (their rootless
 * containers' included, see process-ownership.h), without kernel
 * addresses unless perf_event_paranoid <= 1 and kptr_restrict == 0; the whole
 * system, other users' processes and root-only counters (RAPL energy) need
 * polkit's org.periscope.profile-system (asked over D-Bus; no polkit means
 * no). Where kernel.perf_event_paranoid >= 3 (Debian's kernels, where the
 * kernel gives perf to no user), a root daemon records a user's own
 * processes only with polkit's org.periscope.profile-own. A process the
 * caller may not record on its own is described alike whether it exists
 * or not. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "protocol.h"
#include "record-options.h"
#include "recording.h"

typedef struct Caller {
        uid_t uid;                 /* effective uid */
        pid_t pid;
        const char *sender;        /* unique bus name; NULL on a peer-to-peer connection */
} Caller;

/* Identifies the sender of m (bus driver credentials, or SO_PEERCRED of a
 * peer-to-peer connection). */
int caller_from_message(sd_bus_message *m, Caller *ret);

typedef struct Authorization {
        bool kernel;               /* kernel samples and addresses allowed */
        bool via_polkit;
} Authorization;

/* Decides whether caller may record what options ask for; paranoid_path
 * names the file kernel.perf_event_paranoid is read from (NULL: the
 * sysctl; periscoped --perf-event-paranoid-file, for tests). Fills error
 * with org.periscope.Error.NotAuthorized saying why and returns negative
 * when not. Blocks on polkit: authorize_recording_async() does not. */
int authorize_recording(sd_bus *bus, const Caller *caller, const RecordOptions *options, const char *paranoid_path,
                        Authorization *ret, sd_bus_error *error);

/* Called once polkit answered: error is NULL when authorized (auth filled),
 * else says why not. */
typedef void (*AuthorizationDone)(const Authorization *auth, const sd_bus_error *error, void *userdata);

/* Like authorize_recording() but never blocks the event loop: returns 0 when
 * decided on the spot (*ret filled), 1 when it asked polkit asynchronously
 * (done is called later, from the event loop, unless *ret_slot is unref'd
 * first; userdata_free, if set, frees userdata when the slot goes away), or
 * negative with error set when refused. A question to polkit is charged to
 * the caller's USER_RESOURCE_PENDING_AUTHORIZATIONS in limits (may be NULL)
 * until the slot goes away; past the limit the call is refused with
 * org.periscope.Error.LimitExceeded and polkit is not asked. */
int authorize_recording_async(sd_bus *bus, UserLimits *limits, const char *paranoid_path, const Caller *caller,
                              const RecordOptions *options, Authorization *ret, AuthorizationDone done, void *userdata,
                              void (*userdata_free)(void *), sd_bus_slot **ret_slot, sd_bus_error *error);

/* kernel.perf_event_paranoid read from path (NULL: the sysctl); 3, the
 * strictest level, when it cannot be read. */
int authorization_perf_event_paranoid(const char *path);

/* Whether the system lets unprivileged users see kernel addresses. */
bool kernel_addresses_allowed_for_users(void);
