/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* user-limits.h: what each non-root user may hold of the daemon at once:
 * running recordings (and live unwinding sessions of the sysprofd
 * drop-in), perf ring memory (mapped and locked by the root daemon, so
 * counted against no budget of the user's unless we count it), control
 * rings, calls waiting for polkit's answer, and the perf events (fds of
 * the daemon's) and followed threads of their recordings. root is counted but never refused. One table per
 * daemon (the Manager owns it); every charge is undone by
 * user_charge_release(). See docs/security.md. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum UserResource {
        USER_RESOURCE_RECORDINGS,             /* recordings recording or running their post-stop stages */
        USER_RESOURCE_LOCKED_MEMORY,          /* bytes of perf ring buffers */
        USER_RESOURCE_CONTROL_RINGS,          /* control fd rings (Sysprof collector protocol) */
        USER_RESOURCE_PENDING_AUTHORIZATIONS, /* calls kept while polkit is asked */
        USER_RESOURCE_PERF_EVENTS,            /* perf event fds the daemon holds for the user's recordings */
        USER_RESOURCE_THREADS,                /* threads whose events the daemon opened (inherit follows the rest) */
        _USER_RESOURCE_MAX,
} UserResource;

/* The limits per uid; 0 means no limit. */
typedef struct UserLimitsConfig {
        uint64_t max[_USER_RESOURCE_MAX];
} UserLimitsConfig;

#define USER_LIMITS_DEFAULT_RECORDINGS 8
#define USER_LIMITS_DEFAULT_LOCKED_MEMORY (128ull << 20)
#define USER_LIMITS_DEFAULT_CONTROL_RINGS 32
#define USER_LIMITS_DEFAULT_PENDING_AUTHORIZATIONS 16
#define USER_LIMITS_DEFAULT_PERF_EVENTS 16384
#define USER_LIMITS_DEFAULT_THREADS 1024

/* The defaults: 8 recordings, 128 MiB of rings (or two DWARF recordings'
 * rings on this machine, whichever is more), 32 control rings, 16 calls
 * waiting for polkit, 16384 perf events (or a quarter of the process's
 * hard RLIMIT_NOFILE if less: one user never takes the daemon's fds),
 * 1024 followed threads. */
void user_limits_config_default(UserLimitsConfig *ret);

typedef struct UserLimits UserLimits;

/* What one holder (a recording, its rings) has charged of one resource to
 * one uid; zero-initialized means nothing charged. */
typedef struct UserCharge {
        UserLimits *limits;        /* NULL: nothing is counted (no limits given) */
        uid_t uid;
        UserResource resource;
        uint64_t amount;
} UserCharge;

int user_limits_new(const UserLimitsConfig *config, UserLimits **ret);
UserLimits *user_limits_free(UserLimits *l);

/* An empty charge of resource to uid in l (l may be NULL: no limits). */
void user_charge_init(UserCharge *c, UserLimits *l, uid_t uid, UserResource resource);

/* Adds amount to the charge. Past the uid's limit (never for root):
 * -EDQUOT, nothing added, and a message naming the limit, its value, what
 * the uid holds and the periscoped option that sets it. */
int user_charge_add(UserCharge *c, uint64_t amount, char *message, size_t message_size);

/* Whether amount more would fit, as user_charge_add() decides, adding
 * nothing: 0, or -EDQUOT with its message. */
int user_charge_check(const UserCharge *c, uint64_t amount, char *message, size_t message_size);

/* Gives amount of the charge back. */
void user_charge_sub(UserCharge *c, uint64_t amount);

/* Gives the whole charge back (no-op for an empty one). */
void user_charge_release(UserCharge *c);

/* What uid holds of resource now. */
uint64_t user_limits_get_usage(const UserLimits *l, uid_t uid, UserResource resource);

/* The option of periscoped that sets a resource's limit ("--max-recordings-per-user"). */
const char *user_resource_option(UserResource resource);
