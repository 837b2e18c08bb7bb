/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* periscope-helper: the only Periscope program that parses ELF/DWARF. Started
 * by the service's helper client through bwrap; serves requests on an inherited
 * SOCK_SEQPACKET socket (docs/sandbox-helper.md).
 *   periscope-helper --fd N                     serve on fd N
 *   periscope-helper --probe [--open PATH]... [--connect PORT]   report confinement */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "basic.h"
#include "helper-server.h"
#include "probe.h"

static int parse_int(const char *s, int min, int max, int *ret) {
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (errno || end == s || *end || v < min || v > max)
                return -EINVAL;
        *ret = (int) v;
        return 0;
}

int main(int argc, char *argv[]) {
        enum { ARG_FD = 0x100, ARG_PROBE, ARG_OPEN, ARG_CONNECT };
        static const struct option options[] = {
                { "fd", required_argument, NULL, ARG_FD },
                { "probe", no_argument, NULL, ARG_PROBE },
                { "open", required_argument, NULL, ARG_OPEN },
                { "connect", required_argument, NULL, ARG_CONNECT },
                {}
        };
        int fd = -1, port = 0;
        bool probe = false;
        char *paths[16];
        size_t n_paths = 0;
        int c;
        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0) {
                switch (c) {
                case ARG_FD:
                        if (parse_int(optarg, 3, 65535, &fd) < 0) {
                                log_error("invalid --fd '%s'", optarg);
                                return 2;
                        }
                        break;
                case ARG_PROBE:
                        probe = true;
                        break;
                case ARG_OPEN:
                        if (n_paths >= ELEMENTSOF(paths)) {
                                log_error("too many --open");
                                return 2;
                        }
                        paths[n_paths++] = optarg;
                        break;
                case ARG_CONNECT:
                        if (parse_int(optarg, 1, 65535, &port) < 0) {
                                log_error("invalid --connect '%s'", optarg);
                                return 2;
                        }
                        break;
                default:
                        return 2;
                }
        }
        if (probe)
                return helper_probe(paths, n_paths, port, stdout) < 0 ? 1 : 0;
        if (fd < 0) {
                log_error("started by periscoped; use --fd N (or --probe)");
                return 2;
        }
        int type = 0;
        socklen_t len = sizeof type;
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_SEQPACKET) {
                log_error("fd %d is not a SOCK_SEQPACKET socket", fd);
                return 2;
        }
        if (elf_version(EV_CURRENT) == EV_NONE) {
                log_error("libelf is too old");
                return 1;
        }
        int r = helper_serve(fd);
        if (r < 0) {
                log_error_errno(r, "%m");
                return 1;
        }
        return 0;
}
