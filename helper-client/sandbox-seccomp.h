/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sandbox-seccomp.h: the system call filter every bubblewrap sandbox of
 * Periscope runs under (bwrap --seccomp FD): a BPF program built with
 * libseccomp that makes the calls a parser or a fetcher never needs, and
 * that would widen the kernel surface a compromised one could reach, fail
 * with EPERM: ptrace and cross-process memory access, mount and the new
 * mount API, namespace creation (unshare, setns, clone with CLONE_NEW*
 * flags; clone3 answers ENOSYS so libc falls back to clone, whose flags a
 * filter can see), bpf, perf_event_open, keyctl and the key syscalls,
 * userfaultfd, io_uring, module and kexec loading, handle-based opens,
 * chroot, clock and swap changes, and, unless network is allowed, every
 * socket family but AF_UNIX. Calls of a foreign architecture (32-bit x86 on
 * x86_64) kill the process. docs/security.md lists it with the reasons. */
#pragma once

#include <stdbool.h>

typedef enum SandboxSeccompProfile {
        SANDBOX_SECCOMP_PARSER,   /* the helper: no sockets but AF_UNIX */
        SANDBOX_SECCOMP_FETCHER,  /* the debuginfod fetcher: IPv4/IPv6 sockets too */
} SandboxSeccompProfile;

/* A sealed memfd holding the BPF program for profile, positioned at 0, for
 * bwrap's --seccomp; or a negative errno. */
int sandbox_seccomp_filter_fd(SandboxSeccompProfile profile);
