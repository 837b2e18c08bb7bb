/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon-resolver.h: a resolver as periscoped owns one (for a recording,
 * a Record() call's containers, ListTargets): what it rejects and why goes
 * to the daemon's log, and it borrows the daemon's helper for the files
 * users write. */
#pragma once

#include "helper-client.h"
#include "resolver.h"

/* A new resolver, logging "resolver: MESSAGE" as a warning, with
 * user_file_helper lent (NULL: it starts its own on first use). */
int daemon_resolver_new(HelperClient *user_file_helper, Resolver **ret);
