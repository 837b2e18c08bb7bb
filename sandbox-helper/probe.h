/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* probe.h: the helper's --probe mode, which reports what the sandbox lets it
 * do (for the sandbox tests; serves no requests). */
#pragma once

#include <stdio.h>

/* Tries to open each path, to connect to 127.0.0.1:port (when port > 0), and
 * asks the kernel for CapEff/CapPrm/NoNewPrivs/Seccomp (capget, prctl: the
 * sandbox has no /proc) and RLIMIT_NPROC, and tries system
 * calls the sandbox's filter denies; writes one line per check to out:
 * "open PATH: ok|<error>", "connect 127.0.0.1:PORT: ok|<error>",
 * "CapEff: HEX", "uid: N", "syscall CALL: allowed|<error>|killed".
 * Returns 0. */
int helper_probe(char *const *paths, size_t n_paths, int port, FILE *out);
