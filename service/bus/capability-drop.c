/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capability-drop.c: keeps the daemon's own capabilities, drops the rest
 * (see capability-drop.h). */
#include "capability-drop.h"

#include <errno.h>
#include <stdbool.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "basic.h"

/* What each is for: docs/security.md, "Attack surface"; the same set as
 * systemd/periscoped.service.in's CapabilityBoundingSet=, which also has
 * CAP_SYS_ADMIN for the perf opener (service/perf/perf-opener.h): the
 * daemon never keeps it. */
static const cap_value_t kept_capabilities[] = {
        CAP_PERFMON,            /* perf_event_open on other users' tasks, system-wide, kernel stacks;
                                 * dropped too when the perf opener holds it */
        CAP_SYS_PTRACE,         /* /proc/PID/{maps,root,environ,mem} of other users' processes */
        CAP_CHECKPOINT_RESTORE, /* /proc/PID/map_files: the exact inode a process mapped */
        CAP_DAC_READ_SEARCH,    /* opening other users' mapped files and rootless Podman layers */
        CAP_IPC_LOCK,           /* ring buffers beyond perf_event_mlock_kb */
        CAP_SYSLOG,             /* kernel addresses in /proc/kallsyms */
        CAP_SETUID,             /* the helper, the fetcher: own unprivileged users; the caller opener */
        CAP_SETGID,
};

static bool is_kept(cap_value_t c, bool perf_opener) {
        if (c == CAP_PERFMON && perf_opener)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(kept_capabilities); i++)
                if (kept_capabilities[i] == c)
                        return true;
        return false;
}

static bool has_any_permitted(cap_t caps) {
        for (cap_value_t c = 0; c < (cap_value_t) cap_max_bits(); c++) {
                cap_flag_value_t v = CAP_CLEAR;
                if (cap_get_flag(caps, c, CAP_PERMITTED, &v) == 0 && v == CAP_SET)
                        return true;
        }
        return false;
}

int capability_drop_unused(bool perf_opener) {
        cap_t now = cap_get_proc();
        if (!now)
                return -errno;
        if (!has_any_permitted(now)) {
                cap_free(now);
                return 0;
        }
        /* The bounding set first, while CAP_SETPCAP is still ours: what root
         * gains on exec (bwrap) is limited by it. Only what is still in it:
         * under systemd's CapabilityBoundingSet= that is the perf opener's
         * CAP_SYS_ADMIN and CAP_PERFMON alone, which without CAP_SETPCAP
         * cannot be dropped: then no new privileges (the unit's
         * NoNewPrivileges=) keeps every exec at what the daemon holds. */
        cap_flag_value_t setpcap = CAP_CLEAR;
        (void) cap_get_flag(now, CAP_SETPCAP, CAP_EFFECTIVE, &setpcap);
        bool no_new_privs = false;
        int r = 0;
        for (cap_value_t c = 0; c < (cap_value_t) cap_max_bits() && r == 0; c++) {
                if (is_kept(c, perf_opener) || !CAP_IS_SUPPORTED(c) || cap_get_bound(c) <= 0)
                        continue;
                if (setpcap != CAP_SET)
                        no_new_privs = true;
                else if (cap_drop_bound(c) < 0)
                        r = -errno;
        }
        if (r == 0 && no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                r = -errno;
        if (r == 0 && cap_reset_ambient() < 0 && errno != EINVAL)
                r = -errno;
        cap_t want = r == 0 ? cap_init() : NULL;
        if (r == 0 && !want)
                r = -errno;
        for (size_t i = 0; r == 0 && i < ELEMENTSOF(kept_capabilities); i++) {
                cap_value_t c = kept_capabilities[i];
                cap_flag_value_t v = CAP_CLEAR;
                if (!is_kept(c, perf_opener))
                        continue;
                if (cap_get_flag(now, c, CAP_PERMITTED, &v) < 0 || v != CAP_SET)
                        continue;
                if (cap_set_flag(want, CAP_PERMITTED, 1, &c, CAP_SET) < 0 ||
                    cap_set_flag(want, CAP_EFFECTIVE, 1, &c, CAP_SET) < 0)
                        r = -errno;
        }
        if (r == 0 && cap_set_proc(want) < 0)
                r = -errno;
        cap_free(want);
        cap_free(now);
        return r;
}
