/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysprof3-unwinder.h: org.gnome.Sysprof3.Unwinder at
 * /org/gnome/Sysprof3/Unwinder (sysprof3-unwinder.c). */
#pragma once

#include <systemd/sd-bus.h>

#include "sysprof3-state.h"

extern const sd_bus_vtable sysprof3_unwinder_vtable[];

/* Ends every Unwind session (shutdown). */
void sysprof3_unwinder_end_all(Sysprof3 *s);
