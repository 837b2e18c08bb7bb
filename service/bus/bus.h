/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus.h: service/bus/'s public header: what the daemon's main and its
 * second face (service/sysprof3/) use of the D-Bus face: the manager,
 * authorization, error replies, refusals, capture fds, the connection, the journal sink
 * and the capabilities a root daemon keeps (docs/ARCHITECTURE.md). */
#pragma once

#include "authorization.h"
#include "bus-connect.h"
#include "bus-error.h"
#include "bus-refusal.h"
#include "caller-processes.h"
#include "capability-drop.h"
#include "capture-fd.h"
#include "journal-log.h"
#include "manager.h"
#include "recording-bus.h"
#include "user-file-jobs.h"
