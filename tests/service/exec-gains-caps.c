/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* exec-gains-caps: drops CAP_SYS_NICE from its permitted set (it stays in
 * the bounding set) and execs argv[1..]. As root the exec gains the
 * capability back, which makes the new image non-dumpable: the kernel then
 * removes every perf event attached to the process (begin_new_exec calls
 * perf_event_exit_task), as it does for set-id programs. */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: exec-gains-caps PROGRAM [ARG...]\n");
                return 2;
        }
        struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[2];
        if (syscall(SYS_capget, &hdr, data) < 0) {
                fprintf(stderr, "exec-gains-caps: capget: %s\n", strerror(errno));
                return 1;
        }
        data[0].permitted &= ~(1u << CAP_SYS_NICE);
        data[0].effective &= ~(1u << CAP_SYS_NICE);
        data[0].inheritable &= ~(1u << CAP_SYS_NICE);
        if (syscall(SYS_capset, &hdr, data) < 0) {
                fprintf(stderr, "exec-gains-caps: capset: %s\n", strerror(errno));
                return 1;
        }
        execv(argv[1], argv + 1);
        fprintf(stderr, "exec-gains-caps: exec %s: %s\n", argv[1], strerror(errno));
        return 127;
}
