/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysprof3-service.h: org.gnome.Sysprof3.Service at /org/gnome/Sysprof3
 * (sysprof3-service.c). */
#pragma once

#include <systemd/sd-bus.h>

extern const sd_bus_vtable sysprof3_service_vtable[];
