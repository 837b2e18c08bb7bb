/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sandbox-seccomp.c: the sandboxes' system call filter (see sandbox-seccomp.h). */
#include "sandbox-seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "basic.h"

/* Fail with EPERM whatever the arguments. */
static const int denied_syscalls[] = {
        /* other processes' memory and registers */
        SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev), SCMP_SYS(pidfd_getfd),
        /* mounts and namespaces */
        SCMP_SYS(mount), SCMP_SYS(umount2), SCMP_SYS(pivot_root), SCMP_SYS(chroot), SCMP_SYS(open_tree),
        SCMP_SYS(move_mount), SCMP_SYS(fsopen), SCMP_SYS(fsconfig), SCMP_SYS(fsmount), SCMP_SYS(fspick),
        SCMP_SYS(mount_setattr), SCMP_SYS(unshare), SCMP_SYS(setns),
        /* kernel subsystems a parser never needs */
        SCMP_SYS(bpf), SCMP_SYS(perf_event_open), SCMP_SYS(userfaultfd), SCMP_SYS(io_uring_setup),
        SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register), SCMP_SYS(fanotify_init),
        SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key),
        SCMP_SYS(name_to_handle_at), SCMP_SYS(open_by_handle_at),
        /* the machine itself */
        SCMP_SYS(init_module), SCMP_SYS(finit_module), SCMP_SYS(delete_module), SCMP_SYS(kexec_load),
        SCMP_SYS(kexec_file_load), SCMP_SYS(reboot), SCMP_SYS(swapon), SCMP_SYS(swapoff), SCMP_SYS(acct),
        SCMP_SYS(quotactl), SCMP_SYS(syslog), SCMP_SYS(iopl), SCMP_SYS(ioperm), SCMP_SYS(settimeofday),
        SCMP_SYS(clock_settime), SCMP_SYS(clock_adjtime), SCMP_SYS(adjtimex), SCMP_SYS(vhangup),
};

/* clone with any of these creates a namespace. */
static const unsigned long namespace_flags[] = {
        CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS,
        CLONE_NEWCGROUP, CLONE_NEWTIME,
};

static int add_socket_rules(scmp_filter_ctx ctx, SandboxSeccompProfile profile) {
        int r;
        if (profile == SANDBOX_SECCOMP_PARSER)
                return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
                                        SCMP_A0_32(SCMP_CMP_NE, AF_UNIX));
        /* the fetcher: AF_UNIX, AF_INET, AF_INET6 (2 and 10) and nothing else */
        for (unsigned family = 0; family < AF_INET6; family++)
                if (family != AF_UNIX && family != AF_INET &&
                    (r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
                                          SCMP_A0_32(SCMP_CMP_EQ, family))) < 0)
                        return r;
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
                                SCMP_A0_32(SCMP_CMP_GT, AF_INET6));
}

static int build_filter(scmp_filter_ctx ctx, SandboxSeccompProfile profile) {
        int r;
        /* bwrap sets NO_NEW_PRIVS itself; a foreign architecture's calls
         * (int 0x80 on x86_64) would bypass the rules: kill */
        if ((r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0)) < 0 ||
            (r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(denied_syscalls); i++)
                if ((r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), denied_syscalls[i], 0)) < 0)
                        return r;
        for (size_t i = 0; i < ELEMENTSOF(namespace_flags); i++)
                if ((r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                          SCMP_A0_64(SCMP_CMP_MASKED_EQ, namespace_flags[i], namespace_flags[i]))) < 0)
                        return r;
        /* clone3's flags live in memory a filter cannot read: ENOSYS makes
         * libc fall back to clone */
        if ((r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0)) < 0)
                return r;
        return add_socket_rules(ctx, profile);
}

int sandbox_seccomp_filter_fd(SandboxSeccompProfile profile) {
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        if (!ctx)
                return -ENOMEM;
        int r = build_filter(ctx, profile);
        _cleanup_close_ int fd = -1;
        if (r >= 0) {
                fd = memfd_create("periscope-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
                r = fd < 0 ? -errno : seccomp_export_bpf(ctx, fd);
        }
        seccomp_release(ctx);
        if (r < 0)
                return r;
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0 ||
            lseek(fd, 0, SEEK_SET) < 0)
                return -errno;
        return TAKE_FD(fd);
}
