/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysprof3.c: the org.gnome.Sysprof3 objects on the bus: registers the
 * three, ends their sessions at shutdown, and says whether one is busy. */
#include "sysprof3.h"

#include <errno.h>
#include <stdlib.h>

#include "basic.h"
#include "bus.h"
#include "live-unwind.h"
#include "sysprof3-profiler.h"
#include "sysprof3-service.h"
#include "sysprof3-state.h"
#include "sysprof3-unwinder.h"

/* The manager's helper wait hook: every Unwind session's rings too. */
static void spill_unwind_rings(void *userdata) {
        Sysprof3 *s = userdata;
        for (size_t i = 0; i < s->n_unwinds; i++)
                live_unwind_spill_rings(s->unwinds[i].live);
}

/* A call is work: the idle timeout counts from the last one, as
 * sysprofd's does (Sysprof opens events one call at a time, then Unwind). */
static int on_message(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Sysprof3 *s = userdata;
        (void) sd_event_now(s->mgr->event, CLOCK_MONOTONIC, &s->mgr->busy_until);
        return 0;
}

int sysprof3_new(Manager *mgr, Sysprof3 **ret) {
        _cleanup_free_ Sysprof3 *s = calloc(1, sizeof(Sysprof3));
        if (!s)
                return -ENOMEM;
        s->mgr = mgr;
        int r = sd_bus_add_object_vtable(mgr->bus, &s->service_slot, SYSPROF3_SERVICE_PATH,
                                         SYSPROF3_SERVICE_INTERFACE, sysprof3_service_vtable, s);
        if (r >= 0)
                r = sd_bus_add_object_vtable(mgr->bus, &s->unwinder_slot, SYSPROF3_UNWINDER_PATH,
                                             SYSPROF3_UNWINDER_INTERFACE, sysprof3_unwinder_vtable, s);
        if (r >= 0)
                r = sd_bus_add_object_vtable(mgr->bus, &s->profiler_slot, SYSPROF3_PROFILER_PATH,
                                             SYSPROF3_PROFILER_INTERFACE, sysprof3_profiler_vtable, s);
        if (r >= 0)
                r = sd_bus_add_filter(mgr->bus, &s->activity_slot, on_message, s);
        if (r < 0) {
                sd_bus_slot_unref(s->service_slot);
                sd_bus_slot_unref(s->unwinder_slot);
                sd_bus_slot_unref(s->profiler_slot);
                return r;
        }
        mgr->spill_others = spill_unwind_rings;
        mgr->spill_others_userdata = s;
        *ret = TAKE_PTR(s);
        return 0;
}

Sysprof3 *sysprof3_free(Sysprof3 *s) {
        if (!s)
                return NULL;
        s->mgr->spill_others = NULL;
        sysprof3_cancel_openings(s);
        free(s->openings);
        sysprof3_unwinder_end_all(s);
        sysprof3_profiler_end(s);
        free(s->unwinds);
        free(s->opened);
        sd_bus_slot_unref(s->service_slot);
        sd_bus_slot_unref(s->unwinder_slot);
        sd_bus_slot_unref(s->profiler_slot);
        sd_bus_slot_unref(s->activity_slot);
        free(s);
        return NULL;
}

bool sysprof3_busy(const Sysprof3 *s) {
        return s && (s->n_unwinds > 0 || s->energy || s->n_openings > 0);
}
