/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* user-limits.c: per-uid accounting of recordings, ring memory, control
 * rings, perf events and followed threads (user-limits.h). */
#include "user-limits.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "basic.h"

typedef struct UserUsage {
        uid_t uid;
        uint64_t used[_USER_RESOURCE_MAX];
} UserUsage;

struct UserLimits {
        UserLimitsConfig config;
        UserUsage *users;          /* uids holding anything; few, so a plain array */
        size_t n_users, allocated_users;
};

static const char *const resource_options[_USER_RESOURCE_MAX] = {
        [USER_RESOURCE_RECORDINGS] = "--max-recordings-per-user",
        [USER_RESOURCE_LOCKED_MEMORY] = "--max-locked-memory-per-user",
        [USER_RESOURCE_CONTROL_RINGS] = "--max-control-rings-per-user",
        [USER_RESOURCE_PENDING_AUTHORIZATIONS] = "--max-pending-authorizations-per-user",
        [USER_RESOURCE_PERF_EVENTS] = "--max-perf-events-per-user",
        [USER_RESOURCE_THREADS] = "--max-threads-per-user",
};

/* What a refused caller can do about it. */
static const char *const resource_hints[_USER_RESOURCE_MAX] = {
        [USER_RESOURCE_RECORDINGS] = "end a recording of yours first",
        [USER_RESOURCE_LOCKED_MEMORY] = "end a recording of yours first",
        [USER_RESOURCE_CONTROL_RINGS] = "end a recording of yours first",
        [USER_RESOURCE_PENDING_AUTHORIZATIONS] = "wait for polkit's answer to your other calls first",
        [USER_RESOURCE_PERF_EVENTS] = "record fewer threads, or without --off-cpu (3 events per thread and CPU "
                                      "instead of 1), or end a recording of yours first",
        [USER_RESOURCE_THREADS] = "record fewer threads (the process with the work, not one with thousands of "
                                  "idle threads), or end a recording of yours first",
};

const char *user_resource_option(UserResource resource) {
        return resource < _USER_RESOURCE_MAX ? resource_options[resource] : "?";
}

/* A DWARF recording maps 4 MiB and a page per CPU (service/recording). */
#define DWARF_RING_BYTES ((4ull << 20) + 4096)

/* A quarter of the fds the daemon may raise its limit to (it takes the
 * hard limit at start): what one user's events may hold of them. */
static uint64_t quarter_of_fd_limit(void) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_max == RLIM_INFINITY)
                return UINT64_MAX;
        return (uint64_t) rl.rlim_max / 4;
}

void user_limits_config_default(UserLimitsConfig *ret) {
        long cpus = sysconf(_SC_NPROCESSORS_CONF);
        uint64_t two_dwarf = 2 * (uint64_t) (cpus > 0 ? cpus : 1) * DWARF_RING_BYTES;
        uint64_t fds = quarter_of_fd_limit();
        *ret = (UserLimitsConfig){ .max = {
                                           [USER_RESOURCE_RECORDINGS] = USER_LIMITS_DEFAULT_RECORDINGS,
                                           [USER_RESOURCE_LOCKED_MEMORY] = two_dwarf > USER_LIMITS_DEFAULT_LOCKED_MEMORY
                                                                                   ? two_dwarf
                                                                                   : USER_LIMITS_DEFAULT_LOCKED_MEMORY,
                                           [USER_RESOURCE_CONTROL_RINGS] = USER_LIMITS_DEFAULT_CONTROL_RINGS,
                                           [USER_RESOURCE_PENDING_AUTHORIZATIONS] =
                                                   USER_LIMITS_DEFAULT_PENDING_AUTHORIZATIONS,
                                           [USER_RESOURCE_PERF_EVENTS] = fds < USER_LIMITS_DEFAULT_PERF_EVENTS
                                                                                 ? (fds > 0 ? fds : 1)
                                                                                 : USER_LIMITS_DEFAULT_PERF_EVENTS,
                                           [USER_RESOURCE_THREADS] = USER_LIMITS_DEFAULT_THREADS,
                                   } };
}

int user_limits_new(const UserLimitsConfig *config, UserLimits **ret) {
        UserLimits *l = calloc(1, sizeof(UserLimits));
        if (!l)
                return -ENOMEM;
        l->config = *config;
        *ret = l;
        return 0;
}

UserLimits *user_limits_free(UserLimits *l) {
        if (!l)
                return NULL;
        free(l->users);
        free(l);
        return NULL;
}

static UserUsage *find_user(const UserLimits *l, uid_t uid) {
        for (size_t i = 0; i < l->n_users; i++)
                if (l->users[i].uid == uid)
                        return &l->users[i];
        return NULL;
}

uint64_t user_limits_get_usage(const UserLimits *l, uid_t uid, UserResource resource) {
        const UserUsage *u = l && resource < _USER_RESOURCE_MAX ? find_user(l, uid) : NULL;
        return u ? u->used[resource] : 0;
}

/* "8 recordings", "64.0 MiB of perf ring memory", "32 control rings",
 * "16 calls waiting for polkit", "6000 perf events", "1024 followed threads" */
static void format_amount(UserResource resource, uint64_t v, char *buf, size_t size) {
        static const char *const units[_USER_RESOURCE_MAX] = {
                [USER_RESOURCE_RECORDINGS] = "recordings",
                [USER_RESOURCE_CONTROL_RINGS] = "control rings",
                [USER_RESOURCE_PENDING_AUTHORIZATIONS] = "calls waiting for polkit",
                [USER_RESOURCE_PERF_EVENTS] = "perf events",
                [USER_RESOURCE_THREADS] = "followed threads",
        };
        if (resource == USER_RESOURCE_LOCKED_MEMORY)
                snprintf(buf, size, "%.1f MiB of perf ring memory", (double) v / (1 << 20));
        else
                snprintf(buf, size, "%llu %s", (unsigned long long) v, units[resource]);
}

void user_charge_init(UserCharge *c, UserLimits *l, uid_t uid, UserResource resource) {
        *c = (UserCharge) { .limits = l, .uid = uid, .resource = resource };
}

/* -EDQUOT and the message when amount more does not fit c's limit, else 0. */
static int charge_refusal(const UserCharge *c, const UserUsage *u, uint64_t amount, char *message,
                          size_t message_size) {
        const UserLimits *l = c->limits;
        uint64_t used = u ? u->used[c->resource] : 0, max = l->config.max[c->resource];
        if (c->uid == 0 || max == 0 || (amount <= max && used <= max - amount))
                return 0;
        char held[64], limit[64], want[64] = "";
        format_amount(c->resource, used, held, sizeof(held));
        format_amount(c->resource, max, limit, sizeof(limit));
        if (c->resource == USER_RESOURCE_LOCKED_MEMORY)
                snprintf(want, sizeof(want), " (this needs %.1f MiB more)", (double) amount / (1 << 20));
        else if (c->resource == USER_RESOURCE_PERF_EVENTS || c->resource == USER_RESOURCE_THREADS)
                snprintf(want, sizeof(want), " (this needs %llu more)", (unsigned long long) amount);
        snprintf(message, message_size,
                 "per-user limit reached: uid %u holds %s%s; the limit is %s per user (periscoped %s); %s",
                 (unsigned) c->uid, held, want, limit, user_resource_option(c->resource), resource_hints[c->resource]);
        return -EDQUOT;
}

int user_charge_check(const UserCharge *c, uint64_t amount, char *message, size_t message_size) {
        if (!c->limits)
                return 0;
        if (c->resource >= _USER_RESOURCE_MAX)
                return -EINVAL;
        return charge_refusal(c, find_user(c->limits, c->uid), amount, message, message_size);
}

int user_charge_add(UserCharge *c, uint64_t amount, char *message, size_t message_size) {
        UserLimits *l = c->limits;
        if (!l)
                return 0;
        if (c->resource >= _USER_RESOURCE_MAX)
                return -EINVAL;
        UserUsage *u = find_user(l, c->uid);
        int r = charge_refusal(c, u, amount, message, message_size);
        if (r < 0)
                return r;
        if (!u) {
                if (GROW_ARRAY(l->users, l->allocated_users, l->n_users + 1, 8) < 0)
                        return -ENOMEM;
                u = &l->users[l->n_users++];
                *u = (UserUsage) { .uid = c->uid };
        }
        u->used[c->resource] += amount;
        c->amount += amount;
        return 0;
}

void user_charge_sub(UserCharge *c, uint64_t amount) {
        UserLimits *l = c->limits;
        if (!l || c->resource >= _USER_RESOURCE_MAX)
                return;
        if (amount > c->amount)
                amount = c->amount;
        c->amount -= amount;
        UserUsage *u = find_user(l, c->uid);
        if (!u)
                return;
        u->used[c->resource] -= amount <= u->used[c->resource] ? amount : u->used[c->resource];
        bool empty = true;
        for (size_t i = 0; i < _USER_RESOURCE_MAX; i++)
                empty = empty && u->used[i] == 0;
        if (empty)
                *u = l->users[--l->n_users];
}

void user_charge_release(UserCharge *c) {
        if (!c)
                return;
        user_charge_sub(c, c->amount);
        *c = (UserCharge) {};
}
