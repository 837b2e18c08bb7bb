/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* protocol.h: protocol/'s public header. The contracts between Periscope's
 * processes: the sandbox helper's messages and the unwind-table format it
 * compiles (service <-> helper), the D-Bus names and errors (service <->
 * clients). Uses only basic/ (docs/ARCHITECTURE.md). */
#pragma once

#include "dbus-api.h"
#include "helper-protocol.h"
#include "unwind-table.h"
