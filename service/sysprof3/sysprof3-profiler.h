/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysprof3-profiler.h: org.gnome.Sysprof3.Profiler at
 * /org/gnome/Sysprof3/RAPL (sysprof3-profiler.c). */
#pragma once

#include <systemd/sd-bus.h>

#include "sysprof3-state.h"

extern const sd_bus_vtable sysprof3_profiler_vtable[];

/* Ends the Profiler session, if one runs (shutdown, Stop, its caller gone). */
void sysprof3_profiler_end(Sysprof3 *s);
