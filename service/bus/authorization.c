/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* authorization.c: caller credentials, process ownership, polkit. */
#include "authorization.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic.h"
#include "bus-error.h"
#include "counters.h"
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

int authorization_perf_event_paranoid(const char *path) {
        int paranoid;
        /* Unreadable: the strictest level there is, so polkit is asked. */
        if (read_int_file(path ?: "/proc/sys/kernel/perf_event_paranoid", &paranoid) < 0)
                return 3;
        return paranoid;
}

bool kernel_addresses_allowed_for_users(void) {
        int paranoid, kptr;
        if (read_int_file("/proc/sys/kernel/perf_event_paranoid", &paranoid) < 0 ||
            read_int_file("/proc/sys/kernel/kptr_restrict", &kptr) < 0)
                return false;
        return paranoid <= 1 && kptr == 0;
}

/* Says in `what` which process the caller may not record on its own, and
 * nothing about it: another user's process, one that is not dumpable and
 * one that does not exist read alike (before polkit said yes, the caller
 * learns neither that it exists nor what it runs, as with hidepid=). */
static void describe_foreign(const RecordOptions *options, pid_t pid, bool from_container, char *what,
                             size_t what_size) {
        if (from_container)
                snprintf(what, what_size, "recording container '%s' (its process %d is not yours to record, or gone)",
                         options->container, (int) pid);
        else
                snprintf(what, what_size, "recording process %d (not yours to record, or it does not exist)",
                         (int) pid);
}

/* What a refusal by polkit tells the caller to do. */
static const char *denied_hint(const char *action) {
        if (strcmp(action, PERISCOPE_POLKIT_ACTION_OWN) == 0)
                return "by default polkit allows it in an active local session only; an administrator allows "
                       "others with a rule in /etc/polkit-1/rules.d/ (docs/security.md)";
        return "record your own processes instead, or ask an administrator";
}

/* Asks polkit whether the sender may do action. */
static int polkit_check(sd_bus *bus, const char *sender, const char *action, bool *ret_authorized,
                        sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        int r = sd_bus_message_new_method_call(bus, &call, "org.freedesktop.PolicyKit1",
                                               "/org/freedesktop/PolicyKit1/Authority",
                                               "org.freedesktop.PolicyKit1.Authority", "CheckAuthorization");
        if (r < 0)
                return r;
        r = sd_bus_message_append(call, "(sa{sv})sa{ss}us", "system-bus-name", 1, "name", "s", sender, action, 0,
                                  1u /* AllowUserInteraction */, "");
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

/* Either polkit says yes to action, or error says why not. */
static int authorize_via_polkit(sd_bus *bus, const Caller *caller, const char *what, const char *action,
                                sd_bus_error *error) {
        if (!caller->sender)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                         "%s needs root: the private periscoped runs with your rights; "
                                         "install the system service or run as root", what);
        bool authorized = false;
        _cleanup_(sd_bus_error_free) sd_bus_error perror = SD_BUS_ERROR_NULL;
        int r = polkit_check(bus, caller->sender, action, &authorized, &perror);
        if (r < 0 && perror.message)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                         "%s needs authorization through polkit (action %s), and polkit "
                                         "could not be asked: %s",
                                         what, action, perror.message);
        if (r < 0)
                return bus_error_set_errnof(error, PERISCOPE_ERROR_NOT_AUTHORIZED, r,
                                            "%s needs authorization through polkit (action %s), and polkit "
                                            "could not be asked: %m",
                                            what, action);
        if (!authorized)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                         "%s is not allowed for uid %u: polkit denied action %s; %s", what,
                                         (unsigned) caller->uid, action, denied_hint(action));
        return 0;
}

/* Decides what needs no polkit: 0 allowed (*ret filled), 1 polkit must be
 * asked about `what` for *ret_action (*ret then is what a yes grants),
 * negative refused (error set). */
static int authorize_locally(const Caller *caller, const RecordOptions *options, const char *paranoid_path,
                             Authorization *ret, char *what, size_t what_size, const char **ret_action,
                             sd_bus_error *error) {
        *ret = (Authorization) {};
        *ret_action = PERISCOPE_POLKIT_ACTION;
        if (caller->uid == 0) {
                ret->kernel = true;
                return 0;
        }
        /* Every target process: the caller's own uid, or one of its rootless
         * containers (a user namespace it owns), and dumpable. */
        pid_t foreign = 0;
        bool from_container = false;
        for (size_t i = 0; i < options->n_pids + (options->command_pid > 0) && !foreign; i++) {
                pid_t pid = i < options->n_pids ? options->pids[i] : options->command_pid;
                bool of_container = options->container && i >= options->n_given_pids && i < options->n_pids;
                ProcessOwnership o = process_ownership(caller->uid, pid, NULL);
                /* A container's short-lived process that already exited
                 * grants nothing: the recording skips it. */
                if (o == PROCESS_GONE && of_container)
                        continue;
                /* Gone, another user's, not dumpable or not verified: the
                 * same question and, if refused, the same answer. */
                if (o != PROCESS_OWNED && o != PROCESS_OWNED_VIA_USERNS) {
                        foreign = pid;
                        from_container = of_container;
                }
        }

        const char *root_only = counters_root_only_source(options->counters);
        if (options->system || foreign || root_only) {
                if (options->system)
                        snprintf(what, what_size, "recording the whole system");
                else if (foreign)
                        describe_foreign(options, foreign, from_container, what, what_size);
                else
                        snprintf(what, what_size,
                                 "reading the '%s' counters (RAPL power readings, which the kernel "
                                 "gives root alone since CVE-2020-8694)",
                                 root_only);
                if (!caller->sender)
                        return sd_bus_error_setf(error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                                 "%s needs root: the private periscoped runs with your rights; "
                                                 "install the system service or run as root", what);
                *ret = (Authorization){ .kernel = true, .via_polkit = true };
                return 1;
        }
        ret->kernel = kernel_addresses_allowed_for_users();
        if (options->kernel == 1 && !ret->kernel)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                         "option 'kernel': kernel stacks are not allowed for uid %u on this "
                                         "system (perf_event_paranoid > 1 or kptr_restrict != 0); leave "
                                         "'kernel' out or set it to false",
                                         (unsigned) caller->uid);
        /* At paranoid 3 and above (Debian's kernels) the kernel gives perf to
         * no user: the service's perf on one's own processes is then
         * polkit's to grant. A daemon without root (a user's private one)
         * opens its events itself, and the kernel decides. */
        int paranoid = authorization_perf_event_paranoid(paranoid_path);
        if (paranoid < 3 || geteuid() != 0)
                return 0;
        snprintf(what, what_size, "recording your own processes at kernel.perf_event_paranoid=%d", paranoid);
        *ret_action = PERISCOPE_POLKIT_ACTION_OWN;
        if (!caller->sender)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                         "%s needs polkit's action %s, which a private periscoped cannot ask; "
                                         "use the system service",
                                         what, PERISCOPE_POLKIT_ACTION_OWN);
        return 1;
}

int authorize_recording(sd_bus *bus, const Caller *caller, const RecordOptions *options, const char *paranoid_path,
                        Authorization *ret, sd_bus_error *error) {
        char what[512];
        const char *action;
        Authorization grant;
        int r = authorize_locally(caller, options, paranoid_path, &grant, what, sizeof(what), &action, error);
        if (r <= 0) {
                *ret = grant;
                return r;
        }
        r = authorize_via_polkit(bus, caller, what, action, error);
        if (r < 0)
                return r;
        *ret = grant;
        return 0;
}

typedef struct PolkitQuery {
        char what[512];
        const char *action;        /* asked about */
        Authorization grant;       /* what its yes grants */
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
                sd_bus_error_setf(
                        &error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                        "%s needs authorization through polkit (action %s), and polkit could not be asked: %s", q->what,
                        q->action, e && e->message ? e->message : "no answer");
        } else if ((r = sd_bus_message_enter_container(reply, 'r', "bba{ss}")) < 0 ||
                   (r = sd_bus_message_read(reply, "bb", &authorized, &challenge)) < 0) {
                bus_error_set_errnof(&error, PERISCOPE_ERROR_NOT_AUTHORIZED, r,
                                     "%s needs authorization through polkit, whose answer was malformed: %m", q->what);
        } else if (!authorized) {
                sd_bus_error_setf(&error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                  "%s is not allowed for uid %u: polkit denied action %s; %s", q->what,
                                  (unsigned) q->uid, q->action, denied_hint(q->action));
        }
        q->done(&q->grant, sd_bus_error_is_set(&error) ? &error : NULL, q->userdata);
        return 0;
}

int authorize_recording_async(sd_bus *bus, UserLimits *limits, const char *paranoid_path, const Caller *caller,
                              const RecordOptions *options, Authorization *ret, AuthorizationDone done, void *userdata,
                              void (*userdata_free)(void *), sd_bus_slot **ret_slot, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        char what[512], why[512];
        const char *action;
        Authorization grant;
        int r = authorize_locally(caller, options, paranoid_path, &grant, what, sizeof(what), &action, error);
        if (r <= 0) {
                *ret = grant;
                return r;
        }
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
        q->action = action;
        q->grant = grant;
        snprintf(q->cancel_id, sizeof(q->cancel_id), "periscoped-%" PRIxPTR, (uintptr_t) q);
        q->uid = caller->uid;
        q->bus = bus;
        q->done = done;
        r = sd_bus_message_new_method_call(bus, &call, "org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                                           "org.freedesktop.PolicyKit1.Authority", "CheckAuthorization");
        if (r >= 0)
                r = sd_bus_message_append(call, "(sa{sv})sa{ss}us", "system-bus-name", 1, "name", "s", caller->sender,
                                          action, 0, 1u /* AllowUserInteraction */, q->cancel_id);
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
