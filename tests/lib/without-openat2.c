/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* without-openat2: runs a command with openat2() answering ENOSYS, as
 * systemd's RestrictSUIDSGID= does to periscoped under its unit
 * (no-openat2.h): `without-openat2 COMMAND [ARG…]`. Everything the command
 * starts inherits the filter. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "no-openat2.h"

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: without-openat2 COMMAND [ARG...]\n");
                return 2;
        }
        int r = forbid_openat2();
        if (r < 0 || !openat2_forbidden()) {
                fprintf(stderr, "without-openat2: cannot install the seccomp filter: %s\n",
                        r < 0 ? strerror(-r) : "openat2 still answers");
                return 127;
        }
        execvp(argv[1], argv + 1);
        fprintf(stderr, "without-openat2: %s: %m\n", argv[1]);
        return 127;
}
