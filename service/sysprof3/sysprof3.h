/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysprof3.h: periscoped as a drop-in for Sysprof's sysprofd: the
 * org.gnome.Sysprof3 bus name's objects (docs/sysprofd-drop-in.md):
 *   /org/gnome/Sysprof3           org.gnome.Sysprof3.Service
 *   /org/gnome/Sysprof3/Unwinder  org.gnome.Sysprof3.Unwinder
 *   /org/gnome/Sysprof3/RAPL      org.gnome.Sysprof3.Profiler
 * under Periscope's authorization (service/bus/authorization.h), not
 * sysprofd's "administrator for everything". periscoped --sysprofd serves
 * them instead of org.periscope.Profiler1. */
#pragma once

#include <stdbool.h>

#include "bus.h"

#define SYSPROF3_BUS_NAME "org.gnome.Sysprof3"
#define SYSPROF3_SERVICE_PATH "/org/gnome/Sysprof3"
#define SYSPROF3_SERVICE_INTERFACE "org.gnome.Sysprof3.Service"
#define SYSPROF3_UNWINDER_PATH "/org/gnome/Sysprof3/Unwinder"
#define SYSPROF3_UNWINDER_INTERFACE "org.gnome.Sysprof3.Unwinder"
#define SYSPROF3_PROFILER_PATH "/org/gnome/Sysprof3/RAPL"
#define SYSPROF3_PROFILER_INTERFACE "org.gnome.Sysprof3.Profiler"

typedef struct Sysprof3 Sysprof3;

/* Registers the three objects on mgr->bus (the name is the caller's to
 * request). */
int sysprof3_new(Manager *mgr, Sysprof3 **ret);

/* Ends every session and unregisters. NULL is a no-op. */
Sysprof3 *sysprof3_free(Sysprof3 *s);

/* Whether a session is running or a PerfEventOpen awaits the perf opener
 * (the daemon is not idle). */
bool sysprof3_busy(const Sysprof3 *s);
