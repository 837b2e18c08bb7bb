/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysprof3-state.c: the events handed out, and authorizing a call
 * before it goes on (sysprof3-state.h). */
#include "sysprof3-state.h"

#include <errno.h>
#include <stdlib.h>

#include "basic.h"
#include "recording.h"

int sysprof3_remember_event(Sysprof3 *s, const OpenedEvent *e) {
        if (s->n_opened < SYSPROF3_MAX_OPENED_EVENTS) {
                if (GROW_ARRAY(s->opened, s->allocated_opened, s->n_opened + 1, 64) < 0)
                        return -ENOMEM;
                s->opened[s->n_opened++] = *e;
                return 0;
        }
        /* Full: the oldest entry goes. */
        s->opened[s->next_opened] = *e;
        s->next_opened = (s->next_opened + 1) % SYSPROF3_MAX_OPENED_EVENTS;
        return 0;
}

const OpenedEvent *sysprof3_find_event(const Sysprof3 *s, uint64_t id) {
        for (size_t i = 0; i < s->n_opened; i++)
                if (s->opened[i].id == id)
                        return &s->opened[i];
        return NULL;
}

/* A call waiting for polkit. */
typedef struct PendingCall {
        PolkitWait wait; /* its manager outlives the bus, which frees a pending call last */
        Sysprof3 *s;
        Sysprof3Continue next;
} PendingCall;

static void pending_call_free(void *p) {
        PendingCall *pc = p;
        polkit_wait_done(&pc->wait);
        free(pc);
}

/* Runs next and answers the call with its error when it fails. */
static void continue_call(Sysprof3 *s, sd_bus_message *call, const Caller *caller, const Authorization *auth,
                          Sysprof3Continue next) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        (void) sd_bus_message_rewind(call, true);
        int r = next(s, call, caller, auth, &e);
        if (r < 0 || sd_bus_error_is_set(&e)) {
                if (!sd_bus_error_is_set(&e))
                        sd_bus_error_set_errno(&e, r);
                (void) bus_reply_refused(call, caller, 0, &e);
        }
}

static void on_authorized(const Authorization *auth, const sd_bus_error *error, void *userdata) {
        PendingCall *pc = userdata;
        if (error) {
                (void) bus_reply_refused(pc->wait.call, &pc->wait.caller, 0, error);
                return;
        }
        continue_call(pc->s, pc->wait.call, &pc->wait.caller, auth, pc->next);
}

int sysprof3_authorize(Sysprof3 *s, sd_bus_message *call, const Caller *caller, int32_t pid, Sysprof3Continue next,
                       sd_bus_error *error) {
        int32_t pids[1] = { pid };
        RecordOptions options = { .kernel = -1 };
        if (pid == -1)
                options.system = true;
        else {
                options.pids = pids;
                options.n_pids = options.n_given_pids = 1;
        }
        return sysprof3_authorize_options(s, call, caller, &options, next, error);
}

int sysprof3_authorize_options(Sysprof3 *s, sd_bus_message *call, const Caller *caller, const RecordOptions *options,
                               Sysprof3Continue next, sd_bus_error *error) {
        PendingCall *pc = calloc(1, sizeof(PendingCall));
        if (!pc)
                return -ENOMEM;
        Authorization auth;
        sd_bus_slot *slot = NULL;
        int r = authorize_recording_async(s->mgr->bus, s->mgr->limits, s->mgr->perf_event_paranoid_file, caller,
                                          options, &auth, on_authorized, pc, pending_call_free, &slot, error);
        if (r == 1) {
                /* polkit is being asked; the slot owns pc from now on. */
                pc->s = s;
                pc->next = next;
                r = manager_keep_polkit_wait(s->mgr, slot, call, caller, &pc->wait);
                return r < 0 ? r : 1;
        }
        free(pc);
        if (r < 0)
                return r;
        continue_call(s, call, caller, &auth, next);
        return 1;
}
