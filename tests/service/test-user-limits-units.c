/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-user-limits-units.c: the per-uid account of service/recording/
 * user-limits.c: charges add up per uid and resource, a refusal leaves
 * nothing charged and names the limit, root is never refused, giving back
 * restores the room, 0 means no limit, a charge without limits counts
 * nothing, calls waiting for polkit are limited on their own, and so are
 * perf events and followed threads (a check adds nothing), whose default
 * stays within a quarter of the fd limit. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "test-check.h"
#include "user-limits.h"

static UserLimits *limits_new(uint64_t recordings, uint64_t bytes, uint64_t rings) {
        UserLimitsConfig c = { .max = { [USER_RESOURCE_RECORDINGS] = recordings,
                                        [USER_RESOURCE_LOCKED_MEMORY] = bytes,
                                        [USER_RESOURCE_CONTROL_RINGS] = rings } };
        UserLimits *l = NULL;
        CHECK(user_limits_new(&c, &l) == 0 && l);
        return l;
}

/* A limit of 2 recordings per user, and uid 1000's two charged on a, b. */
static UserLimits *two_recordings_held(UserCharge *a, UserCharge *b) {
        UserLimits *l = limits_new(2, 0, 0);
        char msg[512] = "";
        user_charge_init(a, l, 1000, USER_RESOURCE_RECORDINGS);
        user_charge_init(b, l, 1000, USER_RESOURCE_RECORDINGS);
        CHECK(user_charge_add(a, 1, msg, sizeof(msg)) == 0);
        CHECK(user_charge_add(b, 1, msg, sizeof(msg)) == 0);
        return l;
}

/* A refusal leaves nothing charged and names the limit and its option. */
TEST(recordings_refused_at_limit) {
        UserCharge a, b, c;
        char msg[512] = "";
        UserLimits *l = two_recordings_held(&a, &b);
        user_charge_init(&c, l, 1000, USER_RESOURCE_RECORDINGS);
        CHECK(user_charge_add(&c, 1, msg, sizeof(msg)) == -EDQUOT);
        CHECK_MSG(strcmp(msg, "per-user limit reached: uid 1000 holds 2 recordings; the limit is 2 recordings per user "
                              "(periscoped --max-recordings-per-user); end a recording of yours first") == 0,
                  "message: %s", msg);
        CHECK(c.amount == 0 && user_limits_get_usage(l, 1000, USER_RESOURCE_RECORDINGS) == 2);
        user_charge_release(&a);
        user_charge_release(&b);
        user_limits_free(l);
}

/* another uid has its own room; root is counted, never refused */
TEST(other_uid_and_root) {
        UserCharge a, b, other, root;
        char msg[512] = "";
        UserLimits *l = two_recordings_held(&a, &b);
        user_charge_init(&other, l, 1001, USER_RESOURCE_RECORDINGS);
        CHECK(user_charge_add(&other, 2, msg, sizeof(msg)) == 0);
        user_charge_init(&root, l, 0, USER_RESOURCE_RECORDINGS);
        CHECK(user_charge_add(&root, 50, msg, sizeof(msg)) == 0);
        CHECK(user_limits_get_usage(l, 0, USER_RESOURCE_RECORDINGS) == 50);
        user_charge_release(&other);
        user_charge_release(&root);
        CHECK(user_limits_get_usage(l, 0, USER_RESOURCE_RECORDINGS) == 0);
        user_charge_release(&a);
        user_charge_release(&b);
        user_limits_free(l);
}

/* giving one back makes room for one; every charge given back, nothing held */
TEST(release_makes_room) {
        UserCharge a, b, c;
        char msg[512] = "";
        UserLimits *l = two_recordings_held(&a, &b);
        user_charge_init(&c, l, 1000, USER_RESOURCE_RECORDINGS);
        CHECK(user_charge_add(&c, 1, msg, sizeof(msg)) == -EDQUOT);
        user_charge_release(&a);
        CHECK(a.limits == NULL && a.amount == 0);
        CHECK(user_charge_add(&c, 1, msg, sizeof(msg)) == 0);
        user_charge_release(&a); /* twice: no-op */
        CHECK(user_limits_get_usage(l, 1000, USER_RESOURCE_RECORDINGS) == 2);
        user_charge_release(&b);
        user_charge_release(&c);
        CHECK(user_limits_get_usage(l, 1000, USER_RESOURCE_RECORDINGS) == 0);
        user_limits_free(l);
}

TEST(locked_memory) {
        UserLimits *l = limits_new(0, 10u << 20, 3);
        UserCharge m;
        char msg[512] = "";
        user_charge_init(&m, l, 1000, USER_RESOURCE_LOCKED_MEMORY);
        CHECK(user_charge_add(&m, 8u << 20, msg, sizeof(msg)) == 0);
        CHECK(user_charge_add(&m, 4u << 20, msg, sizeof(msg)) == -EDQUOT);
        CHECK_MSG(strstr(msg, "uid 1000 holds 8.0 MiB of perf ring memory (this needs 4.0 MiB more); the limit is "
                              "10.0 MiB of perf ring memory per user (periscoped --max-locked-memory-per-user)") != NULL,
                  "message: %s", msg);
        /* an amount past the limit on its own, and one that would overflow */
        CHECK(user_charge_add(&m, UINT64_MAX, msg, sizeof(msg)) == -EDQUOT);
        CHECK(m.amount == 8u << 20);
        user_charge_release(&m);
        CHECK(user_limits_get_usage(l, 1000, USER_RESOURCE_LOCKED_MEMORY) == 0);
        user_limits_free(l);
}

/* rings come and go one by one on one charge */
TEST(control_rings) {
        UserLimits *l = limits_new(0, 10u << 20, 3);
        UserCharge r;
        char msg[512] = "";
        user_charge_init(&r, l, 1000, USER_RESOURCE_CONTROL_RINGS);
        for (int i = 0; i < 3; i++)
                CHECK(user_charge_add(&r, 1, msg, sizeof(msg)) == 0);
        CHECK(user_charge_add(&r, 1, msg, sizeof(msg)) == -EDQUOT);
        CHECK(strstr(msg, "holds 3 control rings; the limit is 3 control rings per user") != NULL);
        user_charge_sub(&r, 1);
        CHECK(user_charge_add(&r, 1, msg, sizeof(msg)) == 0);
        user_charge_sub(&r, 10); /* more than charged: gives back what it has */
        CHECK(r.amount == 0 && user_limits_get_usage(l, 1000, USER_RESOURCE_CONTROL_RINGS) == 0);
        user_limits_free(l);
}

/* the recordings limit is 0: none */
TEST(zero_is_no_limit) {
        UserLimits *l = limits_new(0, 10u << 20, 3);
        UserCharge many;
        char msg[512] = "";
        user_charge_init(&many, l, 1000, USER_RESOURCE_RECORDINGS);
        CHECK(user_charge_add(&many, 100000, msg, sizeof(msg)) == 0);
        user_charge_release(&many);
        user_limits_free(l);
}

/* without limits nothing is counted or refused */
TEST(no_limits_counts_nothing) {
        UserCharge free_charge;
        char msg[512] = "";
        user_charge_init(&free_charge, NULL, 1000, USER_RESOURCE_RECORDINGS);
        CHECK(user_charge_add(&free_charge, UINT64_MAX, msg, sizeof(msg)) == 0);
        user_charge_release(&free_charge);
}

/* Calls waiting for polkit: their own resource, with their own advice;
 * a charge given back (polkit answered) makes room for the next call. */
TEST(pending_authorizations) {
        UserLimitsConfig c = { .max = { [USER_RESOURCE_PENDING_AUTHORIZATIONS] = 2 } };
        UserLimits *l = NULL;
        CHECK(user_limits_new(&c, &l) == 0 && l);
        UserCharge calls[3], recording;
        char msg[512] = "";
        for (int i = 0; i < 3; i++)
                user_charge_init(&calls[i], l, 1000, USER_RESOURCE_PENDING_AUTHORIZATIONS);
        CHECK(user_charge_add(&calls[0], 1, msg, sizeof(msg)) == 0);
        CHECK(user_charge_add(&calls[1], 1, msg, sizeof(msg)) == 0);
        CHECK(user_charge_add(&calls[2], 1, msg, sizeof(msg)) == -EDQUOT);
        CHECK_MSG(strcmp(msg, "per-user limit reached: uid 1000 holds 2 calls waiting for polkit; the limit is 2 calls "
                              "waiting for polkit per user (periscoped --max-pending-authorizations-per-user); wait "
                              "for polkit's answer to your other calls first") == 0,
                  "message: %s", msg);
        /* the other resources are not limited by it */
        user_charge_init(&recording, l, 1000, USER_RESOURCE_RECORDINGS);
        CHECK(user_charge_add(&recording, 1, msg, sizeof(msg)) == 0);
        user_charge_release(&calls[0]);
        CHECK(user_charge_add(&calls[2], 1, msg, sizeof(msg)) == 0);
        CHECK(user_limits_get_usage(l, 1000, USER_RESOURCE_PENDING_AUTHORIZATIONS) == 2);
        CHECK(strcmp(user_resource_option(USER_RESOURCE_PENDING_AUTHORIZATIONS),
                     "--max-pending-authorizations-per-user") == 0);
        user_charge_release(&calls[1]);
        user_charge_release(&calls[2]);
        user_charge_release(&recording);
        CHECK(user_limits_get_usage(l, 1000, USER_RESOURCE_PENDING_AUTHORIZATIONS) == 0);
        user_limits_free(l);
}

TEST(events_and_threads) {
        UserLimitsConfig c = { .max = { [USER_RESOURCE_PERF_EVENTS] = 12, [USER_RESOURCE_THREADS] = 3 } };
        UserLimits *l = NULL;
        CHECK(user_limits_new(&c, &l) == 0 && l);
        UserCharge events, threads, root;
        char msg[512] = "";
        user_charge_init(&events, l, 1000, USER_RESOURCE_PERF_EVENTS);
        user_charge_init(&threads, l, 1000, USER_RESOURCE_THREADS);
        CHECK(user_charge_add(&events, 6, msg, sizeof(msg)) == 0);
        CHECK(user_charge_add(&threads, 2, msg, sizeof(msg)) == 0);
        /* a check refuses as an add would, and adds nothing */
        CHECK(user_charge_check(&events, 7, msg, sizeof(msg)) == -EDQUOT);
        CHECK_MSG(strstr(msg, "uid 1000 holds 6 perf events (this needs 7 more); the limit is 12 perf events per "
                              "user (periscoped --max-perf-events-per-user); record fewer threads") != NULL,
                  "%s", msg);
        CHECK(user_charge_check(&events, 6, msg, sizeof(msg)) == 0);
        CHECK(user_limits_get_usage(l, 1000, USER_RESOURCE_PERF_EVENTS) == 6);
        CHECK(user_charge_add(&threads, 2, msg, sizeof(msg)) == -EDQUOT);
        CHECK_MSG(strstr(msg, "uid 1000 holds 2 followed threads (this needs 2 more); the limit is 3 followed "
                              "threads per user (periscoped --max-threads-per-user)") != NULL,
                  "%s", msg);
        CHECK(user_limits_get_usage(l, 1000, USER_RESOURCE_THREADS) == 2);
        user_charge_init(&root, l, 0, USER_RESOURCE_THREADS);
        CHECK(user_charge_check(&root, 5000, msg, sizeof(msg)) == 0);
        user_charge_release(&events);
        user_charge_release(&threads);
        CHECK(user_charge_check(&events, 12, msg, sizeof(msg)) == 0);
        user_limits_free(l);
}

TEST(defaults) {
        UserLimitsConfig c;
        user_limits_config_default(&c);
        struct rlimit rl;
        CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
        CHECK(c.max[USER_RESOURCE_PERF_EVENTS] > 0 && c.max[USER_RESOURCE_PERF_EVENTS] <= 16384);
        CHECK(rl.rlim_max == RLIM_INFINITY || c.max[USER_RESOURCE_PERF_EVENTS] <= rl.rlim_max / 4 + 1);
        CHECK(c.max[USER_RESOURCE_THREADS] == 1024);
        CHECK(c.max[USER_RESOURCE_RECORDINGS] == 8);
        CHECK(c.max[USER_RESOURCE_LOCKED_MEMORY] >= 128ull << 20);
        CHECK(c.max[USER_RESOURCE_CONTROL_RINGS] == 32);
        CHECK(c.max[USER_RESOURCE_PENDING_AUTHORIZATIONS] == 16);
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
