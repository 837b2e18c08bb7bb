/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* authorization.c: caller credentials, process ownership, polkit. */
#include "authorization.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "basic.h"
#include "protocol.h"
#include "process.h"


int caller_from_message(sd_bus_message *m, Caller *ret) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        const char *sender = sd_bus_message_get_sender(m);
        uint64_t mask = SD_BUS_CREDS_EUID | SD_BUS_CREDS_PID;
        int r;

        if (sender)
                r = sd_bus_query_sender_creds(m, mask, &creds);
        else
                r = sd_bus_get_owner_creds(sd_bus_message_get_bus(m), mask, &creds);
        if (r < 0)
                return r;
        uid_t uid;
        pid_t pid = 0;
        r = sd_bus_creds_get_euid(creds, &uid);
        if (r < 0)
                return r;
        (void) sd_bus_creds_get_pid(creds, &pid);
        *ret = (Caller) { .uid = uid, .pid = pid, .sender = sender };
        return 0;
}

static int read_int_file(const char *path, int *ret) {
        FILE *f = fopen(path, "re");
        if (!f)
                return -errno;
        int ok = fscanf(f, "%d", ret) == 1;
        fclose(f);
        return ok ? 0 : -EBADMSG;
}

bool kernel_addresses_allowed_for_users(void) {
        int paranoid, kptr;
        if (read_int_file("/proc/sys/kernel/perf_event_paranoid", &paranoid) < 0 ||
            read_int_file("/proc/sys/kernel/kptr_restrict", &kptr) < 0)
                return false;
        return paranoid <= 1 && kptr == 0;
}

/* Says in `what` why caller may not record pid on its own: which process
 * (of which container), whose it is, and why that matters. */
static void describe_foreign(const RecordOptions *options, pid_t pid, bool from_container, ProcessOwnership o,
                             const ProcessCreds *c, char *what, size_t what_size) {
        char why[160];
        if (o == PROCESS_FOREIGN)
                snprintf(why, sizeof(why), "not yours: it runs as uid %u, neither yours nor in a user namespace "
                         "you own", (unsigned) c->euid);
        else
                snprintf(why, sizeof(why), "%s", process_ownership_to_string(o));
        if (from_container)
                snprintf(what, what_size, "recording container '%s' (its process %d is %s)", options->container,
                         (int) pid, why);
        else
                snprintf(what, what_size, "recording process %d (%s)", (int) pid, why);
}

/* Asks polkit whether the sender may do PERISCOPE_POLKIT_ACTION. */
static int polkit_check(sd_bus *bus, const char *sender, bool *ret_authorized, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        int r = sd_bus_message_new_method_call(bus, &call, "org.freedesktop.PolicyKit1",
                                               "/org/freedesktop/PolicyKit1/Authority",
                                               "org.freedesktop.PolicyKit1.Authority", "CheckAuthorization");
        if (r < 0)
                return r;
        r = sd_bus_message_append(call, "(sa{sv})sa{ss}us", "system-bus-name", 1, "name", "s", sender,
                                  PERISCOPE_POLKIT_ACTION, 0, 1u /* AllowUserInteraction */, "");
        if (r < 0)
                return r;
        r = sd_bus_call(bus, call, 10 * 1000000ull, error, &reply);
        if (r < 0)
                return r;
        int authorized, challenge;
        r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
        if (r < 0)
                return r;
        r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
        if (r < 0)
                return r;
        *ret_authorized = authorized;
        return 0;
}

/* Either polkit says yes, or error says why not. */
static int authorize_via_polkit(sd_bus *bus, const Caller *caller, const char *what, sd_bus_error *error) {
        if (!caller->sender)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                         "%s needs root: the private periscoped runs with your rights; "
                                         "install the system service or run as root", what);
        bool authorized = false;
        _cleanup_(sd_bus_error_free) sd_bus_error perror = SD_BUS_ERROR_NULL;
        int r = polkit_check(bus, caller->sender, &authorized, &perror);
        if (r < 0)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                         "%s needs authorization through polkit (action %s), and polkit "
                                         "could not be asked: %s",
                                         what, PERISCOPE_POLKIT_ACTION, perror.message ? perror.message : strerror(-r));
        if (!authorized)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                         "%s is not allowed for uid %u: polkit denied action %s; record your "
                                         "own processes instead, or ask an administrator",
                                         what, (unsigned) caller->uid, PERISCOPE_POLKIT_ACTION);
        return 0;
}

/* Decides what needs no polkit: 0 allowed (*ret filled), 1 polkit must be
 * asked about `what`, negative refused (error set). */
static int authorize_locally(const Caller *caller, const RecordOptions *options, Authorization *ret, char *what,
                             size_t what_size, sd_bus_error *error) {
        *ret = (Authorization) {};
        if (caller->uid == 0) {
                ret->kernel = true;
                return 0;
        }
        /* Every target process: the caller's own uid, or one of its rootless
         * containers (a user namespace it owns), and dumpable. */
        pid_t foreign = 0;
        bool from_container = false;
        ProcessOwnership o = PROCESS_OWNED;
        ProcessCreds c = {};
        for (size_t i = 0; i < options->n_pids + (options->command_pid > 0) && !foreign; i++) {
                pid_t pid = i < options->n_pids ? options->pids[i] : options->command_pid;
                bool of_container = options->container && i >= options->n_given_pids && i < options->n_pids;
                o = process_ownership(caller->uid, pid, &c);
                /* A container's short-lived process that already exited
                 * grants nothing: the recording skips it. */
                if (o == PROCESS_GONE && of_container)
                        continue;
                if (o != PROCESS_OWNED && o != PROCESS_OWNED_VIA_USERNS) {
                        foreign = pid;
                        from_container = of_container;
                }
        }

        if (options->system || foreign) {
                if (options->system)
                        snprintf(what, what_size, "recording the whole system");
                else
                        describe_foreign(options, foreign, from_container, o, &c, what, what_size);
                if (!caller->sender)
                        return sd_bus_error_setf(error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                                 "%s needs root: the private periscoped runs with your rights; "
                                                 "install the system service or run as root", what);
                return 1;
        }
        ret->kernel = kernel_addresses_allowed_for_users();
        if (options->kernel == 1 && !ret->kernel)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                         "option 'kernel': kernel stacks are not allowed for uid %u on this "
                                         "system (perf_event_paranoid > 1 or kptr_restrict != 0); leave "
                                         "'kernel' out or set it to false",
                                         (unsigned) caller->uid);
        return 0;
}

int authorize_recording(sd_bus *bus, const Caller *caller, const RecordOptions *options, Authorization *ret,
                        sd_bus_error *error) {
        char what[512];
        int r = authorize_locally(caller, options, ret, what, sizeof(what), error);
        if (r <= 0)
                return r;
        r = authorize_via_polkit(bus, caller, what, error);
        if (r < 0)
                return r;
        *ret = (Authorization) { .kernel = true, .via_polkit = true };
        return 0;
}

typedef struct PolkitQuery {
        char what[512];
        char cancel_id[32];        /* CheckAuthorization's cancellation id */
        uid_t uid;
        UserCharge pending;        /* one call waiting, against the caller's limit */
        sd_bus *bus;
        sd_bus_track *caller;      /* its leaving the bus cancels the question */
        AuthorizationDone done;
        void *userdata;
        void (*userdata_free)(void *);
} PolkitQuery;

static void polkit_query_free(void *p) {
        PolkitQuery *q = p;
        if (q->userdata_free)
                q->userdata_free(q->userdata);
        user_charge_release(&q->pending);
        sd_bus_track_unref(q->caller);
        free(q);
}

/* The caller left while polkit asks (its agent may show a dialog for
 * minutes): cancel the question; polkitd then answers it, and the wait
 * and its charge go. */
static int on_caller_gone(sd_bus_track *track, void *userdata) {
        PolkitQuery *q = userdata;
        log_info("polkit: uid %u left the bus while polkit was asked; cancelling %s", (unsigned) q->uid,
                 q->cancel_id);
        (void) sd_bus_call_method_async(q->bus, NULL, "org.freedesktop.PolicyKit1",
                                        "/org/freedesktop/PolicyKit1/Authority",
                                        "org.freedesktop.PolicyKit1.Authority", "CancelCheckAuthorization", NULL,
                                        NULL, "s", q->cancel_id);
        q->caller = sd_bus_track_unref(track); /* once: an empty track would be dispatched again */
        return 0;
}

static int on_polkit_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        PolkitQuery *q = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int authorized = 0, challenge = 0, r;

        if (sd_bus_message_is_method_error(reply, NULL)) {
                const sd_bus_error *e = sd_bus_message_get_error(reply);
                sd_bus_error_setf(&error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                  "%s needs authorization through polkit (action %s), and polkit could not be asked: %s",
                                  q->what, PERISCOPE_POLKIT_ACTION, e && e->message ? e->message : "no answer");
        } else if ((r = sd_bus_message_enter_container(reply, 'r', "bba{ss}")) < 0 ||
                   (r = sd_bus_message_read(reply, "bb", &authorized, &challenge)) < 0) {
                sd_bus_error_setf(&error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                  "%s needs authorization through polkit, whose answer was malformed: %s", q->what,
                                  strerror(-r));
        } else if (!authorized) {
                sd_bus_error_setf(&error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                  "%s is not allowed for uid %u: polkit denied action %s; record your own processes "
                                  "instead, or ask an administrator",
                                  q->what, (unsigned) q->uid, PERISCOPE_POLKIT_ACTION);
        }
        Authorization auth = { .kernel = true, .via_polkit = true };
        q->done(&auth, sd_bus_error_is_set(&error) ? &error : NULL, q->userdata);
        return 0;
}

int authorize_recording_async(sd_bus *bus, UserLimits *limits, const Caller *caller, const RecordOptions *options,
                              Authorization *ret, AuthorizationDone done, void *userdata,
                              void (*userdata_free)(void *), sd_bus_slot **ret_slot, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        char what[512], why[512];
        int r = authorize_locally(caller, options, ret, what, sizeof(what), error);
        if (r <= 0)
                return r;
        PolkitQuery *q = calloc(1, sizeof(PolkitQuery));
        if (!q)
                return -ENOMEM;
        /* Each waiting call holds its message (fds, options) and a polkit
         * request: a user may not queue them without bound. */
        user_charge_init(&q->pending, limits, caller->uid, USER_RESOURCE_PENDING_AUTHORIZATIONS);
        r = user_charge_add(&q->pending, 1, why, sizeof(why));
        if (r < 0) {
                free(q);
                return sd_bus_error_setf(error, periscope_error_from_errno(r), "%s needs polkit's answer: %s", what,
                                         why);
        }
        memcpy(q->what, what, sizeof(what));
        snprintf(q->cancel_id, sizeof(q->cancel_id), "periscoped-%" PRIxPTR, (uintptr_t) q);
        q->uid = caller->uid;
        q->bus = bus;
        q->done = done;
        r = sd_bus_message_new_method_call(bus, &call, "org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                                           "org.freedesktop.PolicyKit1.Authority", "CheckAuthorization");
        if (r >= 0)
                r = sd_bus_message_append(call, "(sa{sv})sa{ss}us", "system-bus-name", 1, "name", "s", caller->sender,
                                          PERISCOPE_POLKIT_ACTION, 0, 1u /* AllowUserInteraction */,
                                          q->cancel_id);
        sd_bus_slot *slot = NULL;
        if (r >= 0)
                /* Interactive authentication may take a while: allow two minutes. */
                r = sd_bus_call_async(bus, &slot, call, on_polkit_reply, q, 120 * 1000000ull);
        if (r < 0) {
                user_charge_release(&q->pending);
                free(q);
                return r;
        }
        /* From here the slot owns q (and through it userdata). */
        q->userdata = userdata;
        q->userdata_free = userdata_free;
        (void) sd_bus_slot_set_destroy_callback(slot, polkit_query_free);
        /* Without the watch the question still works; it is only not cancelled early. */
        if (sd_bus_track_new(bus, &q->caller, on_caller_gone, q) < 0 ||
            sd_bus_track_add_name(q->caller, caller->sender) < 0)
                q->caller = sd_bus_track_unref(q->caller);
        *ret_slot = slot;
        return 1;
}
