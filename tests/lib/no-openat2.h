/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* no-openat2.h: the seccomp filter systemd's RestrictSUIDSGID= installs,
 * as far as openat2() goes: every call answered with ENOSYS (systemd cannot
 * look at the mode inside struct open_how). For tests of the fallback
 * walk (basic/path-walk.h) and of programs run as under the unit. */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <seccomp.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Installs the filter in this process (and so in all it starts). Root
 * keeps no_new_privs unset, as systemd does for a unit with
 * CAP_SYS_ADMIN. Returns 0 or a negative errno. */
static inline int forbid_openat2(void) {
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        if (!ctx)
                return -ENOMEM;
        int r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, geteuid() == 0 ? 0 : 1);
        if (r == 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0);
        if (r == 0)
                r = seccomp_load(ctx);
        seccomp_release(ctx);
        return r;
}

/* True when openat2() answers ENOSYS here (the filter is on). */
static inline int openat2_forbidden(void) {
        struct open_how how = { .flags = O_PATH | O_CLOEXEC };
        long fd = syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));
        if (fd >= 0) {
                close((int) fd);
                return 0;
        }
        return errno == ENOSYS;
}
