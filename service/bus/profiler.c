/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* profiler.c: the org.periscope.Profiler1 object: Record, ListTargets,
 * Version, Capabilities. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "authorization.h"
#include "bus-error.h"
#include "bus-refusal.h"
#include "caller-processes.h"
#include "capture-fd.h"
#include "basic.h"
#include "container-targets.h"
#include "counters.h"
#include "manager.h"
#include "process.h"
#include "protocol.h"
#include "record-options.h"
#include "recording-bus.h"

/* A Record call waiting for polkit's answer. */
typedef struct PendingRecord {
        PolkitWait wait;           /* its call owns the capture fd */
        RecordOptions options;
        int fd;
} PendingRecord;

static void pending_record_free(void *p) {
        PendingRecord *pr = p;
        polkit_wait_done(&pr->wait);
        record_options_done(&pr->options);
        free(pr);
}

/* Starts the recording for an authorized call, on a fiber that answers it
 * (its perf events wait for the opener off the event loop's stack). Only
 * now is the caller told that a pid it gave does not exist or is a zombie:
 * before authorization that would tell anyone about other users' processes. */
static int start_and_reply(Manager *mgr, sd_bus_message *call, const Caller *caller, RecordOptions *options,
                           const Authorization *auth, int fd, sd_bus_error *error) {
        int r = record_options_check_targets(options, error);
        if (r < 0)
                return r;
        int wfd = capture_fd_for_writer(fd);
        if (wfd < 0)
                return bus_error_set_errnof(error, PERISCOPE_ERROR_INVALID_CAPTURE, wfd,
                                            "the capture fd cannot be used: %m");
        return manager_start_recording_async(mgr, call, caller, options, auth, wfd, error);
}

static void on_authorized(const Authorization *auth, const sd_bus_error *error, void *userdata) {
        PendingRecord *pr = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        if (error) {
                (void) bus_reply_refused(pr->wait.call, &pr->wait.caller, 0, error);
                return;
        }
        int r = start_and_reply(pr->wait.mgr, pr->wait.call, &pr->wait.caller, &pr->options, auth, pr->fd, &e);
        if (r < 0) {
                if (!sd_bus_error_is_set(&e))
                        sd_bus_error_set_errno(&e, r);
                (void) bus_reply_refused(pr->wait.call, &pr->wait.caller, 0, &e);
        }
}

/* Authorizes a Record call whose options are complete and starts the
 * recording, now or once polkit answered: 1, or negative (error says why). */
static int authorize_and_start(Manager *mgr, sd_bus_message *m, const Caller *caller, RecordOptions *options, int fd,
                               sd_bus_error *error) {
        PendingRecord *pr = calloc(1, sizeof(PendingRecord));
        if (!pr)
                return -ENOMEM;
        Authorization auth;
        sd_bus_slot *slot = NULL;
        int r = authorize_recording_async(mgr->bus, mgr->limits, mgr->perf_event_paranoid_file, caller, options, &auth,
                                          on_authorized, pr, pending_record_free, &slot, error);
        if (r == 1) {
                /* polkit is being asked; the slot owns pr from now on. */
                pr->options = *options;
                pr->fd = fd;
                *options = (RecordOptions){};
                r = manager_keep_polkit_wait(mgr, slot, m, caller, &pr->wait);
                return r < 0 ? r : 1;
        }
        free(pr);
        if (r < 0)
                return r;
        r = start_and_reply(mgr, m, caller, options, &auth, fd, error);
        return r < 0 ? r : 1;
}

/* A Record call whose 'container' is looked up in a user-file job. */
typedef struct RecordExpand {
        Manager *mgr;
        sd_bus_message *call; /* holds the capture fd */
        Caller caller;
        RecordOptions options;
        int fd;
        sd_bus_error error;
} RecordExpand;

static int expand_on_fiber(UserFileJobs *j, void *userdata) {
        RecordExpand *x = userdata;
        _cleanup_resolver_ Resolver *res = NULL;
        int r = user_file_jobs_resolver_new(j, &res);
        if (r < 0)
                return r;
        r = record_options_expand_container(&x->options, x->caller.uid, res, &x->error);
        return r < 0 ? r : sd_bus_error_is_set(&x->error) ? -EINVAL : 0;
}

static void expand_done(int result, void *userdata) {
        RecordExpand *x = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        int r = result;
        if (r >= 0)
                r = authorize_and_start(x->mgr, x->call, &x->caller, &x->options, x->fd, &e);
        else if (sd_bus_error_is_set(&x->error))
                (void) sd_bus_error_move(&e, &x->error);
        /* -ECANCELED: the daemon is exiting, its callers get no answer */
        if (r < 0 && result != -ECANCELED) {
                if (!sd_bus_error_is_set(&e))
                        sd_bus_error_set_errno(&e, r);
                (void) sd_bus_reply_method_error(x->call, &e);
        }
        record_options_done(&x->options);
        sd_bus_error_free(&x->error);
        sd_bus_message_unref(x->call);
        free(x);
}

/* Too many calls wait for their users' files. */
static int jobs_limit_error(int r, sd_bus_error *error) {
        return sd_bus_error_setf(error, PERISCOPE_ERROR_LIMIT_EXCEEDED, "%s",
                                 r == -EDQUOT
                                         ? "too many of your calls wait for their containers to be looked up; try again"
                                         : "too many calls wait for their containers to be looked up; try again");
}

static int method_record(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Manager *mgr = userdata;
        _cleanup_(record_options_done) RecordOptions options = {};
        Caller caller;
        int fd, r;

        r = caller_from_message(m, &caller);
        if (r < 0)
                return bus_error_set_errnof(error, PERISCOPE_ERROR_NOT_AUTHORIZED, r, "cannot tell who is calling: %m");
        r = record_options_parse(m, &options, error);
        if (r < 0 || sd_bus_error_is_set(error))
                return r < 0 ? r : -EINVAL;
        r = sd_bus_message_read(m, "h", &fd);
        if (r < 0)
                return r;
        r = capture_fd_check(fd, error);
        if (r < 0)
                return r;
        if (!options.container)
                return authorize_and_start(mgr, m, &caller, &options, fd, error);
        /* the containers' files are parsed off the event loop, then on */
        UserFileJobs *jobs = manager_get_user_file_jobs(mgr);
        RecordExpand *x = jobs ? calloc(1, sizeof(*x)) : NULL;
        if (!x)
                return -ENOMEM;
        *x = (RecordExpand) { .mgr = mgr,
                             .call = sd_bus_message_ref(m),
                             .caller = caller,
                             .options = options,
                             .fd = fd,
                             .error = SD_BUS_ERROR_NULL };
        r = user_file_jobs_add(jobs, caller.uid, expand_on_fiber, expand_done, x);
        if (r < 0) {
                sd_bus_message_unref(x->call);
                free(x); /* options stay ours */
                return r == -EBUSY || r == -EDQUOT ? jobs_limit_error(r, error) : r;
        }
        options = (RecordOptions){};
        return 1;
}

BUS_METHOD_LOG_REFUSALS(method_record)

/* One target: a process the caller may record. Gone meanwhile: skipped. */
static int append_process_target(sd_bus_message *reply, pid_t pid, void *userdata) {
        _cleanup_free_ char *cmdline = process_read_cmdline(pid, NULL);
        char path[64];
        struct stat st;
        snprintf(path, sizeof(path), "/proc/%d", (int) pid);
        if (!cmdline || stat(path, &st) < 0)
                return 0;
        return sd_bus_message_append(reply, "a{sv}", 4, "kind", "s", "process", "pid", "i", (int32_t) pid, "uid",
                                     "u", (uint32_t) st.st_uid, "cmdline", "s", cmdline);
}

/* The processes now; the Podman containers and Flatpak instances, with
 * theirs, from the fiber that parses their files, which sends the reply. */
static int method_list_targets(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Manager *mgr = userdata;
        Caller caller;
        int r = caller_from_message(m, &caller);
        if (r < 0)
                return r;
        UserFileJobs *jobs = manager_get_user_file_jobs(mgr);
        if (!jobs)
                return -ENOMEM;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        r = caller_processes_start_reply(m, &caller, append_process_target, NULL, &reply);
        if (r < 0)
                return r;
        r = container_targets_reply(jobs, m, reply, caller.uid);
        if (r == -EBUSY || r == -EDQUOT)
                return jobs_limit_error(r, error);
        return r < 0 ? r : 1;
}

BUS_METHOD_LOG_REFUSALS(method_list_targets)

static int property_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", PERISCOPE_VERSION);
}

static int append_strv_entry(sd_bus_message *reply, const char *key, char **strv) {
        int r = sd_bus_message_open_container(reply, 'e', "sv");
        if (r >= 0)
                r = sd_bus_message_append(reply, "s", key);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'v', "as");
        if (r >= 0)
                r = sd_bus_message_append_strv(reply, strv);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}
/* Appends the Capabilities entries "counters" (sources this machine has)
 * and "counters-unavailable" (known sources it lacks) to an open a{sv}. */
static int append_counter_capabilities(sd_bus_message *reply) {
        const char *const *known = counters_known_sources();
        const char *have[16] = { NULL }, *lack[16] = { NULL };
        size_t n_have = 0, n_lack = 0;
        for (size_t i = 0; known[i] && i < 15; i++) {
                if (counters_source_available(known[i]))
                        have[n_have++] = known[i];
                else
                        lack[n_lack++] = known[i];
        }
        int r = append_strv_entry(reply, "counters", (char **) have);
        if (r < 0)
                return r;
        return append_strv_entry(reply, "counters-unavailable", (char **) lack);
}

static int property_capabilities(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        bool kernel = kernel_addresses_allowed_for_users();
        sd_bus_message *call = sd_bus_get_current_message(bus);
        Caller caller;
        if (call && caller_from_message(call, &caller) >= 0 && caller.uid == 0)
                kernel = true;
        FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
        unsigned max = 0;
        if (f) {
                if (fscanf(f, "%u", &max) != 1)
                        max = 0;
                fclose(f);
        }
        int r = sd_bus_message_open_container(reply, 'a', "{sv}");
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "{sv}{sv}{sv}{sv}", "unwinders", "as", 3, "fp", "dwarf", "auto",
                                  "max-frequency", "u", max, "kernel-stacks", "b", kernel, "options", "s",
                                  record_options_known_keys());
        if (r < 0)
                return r;
        r = append_counter_capabilities(reply);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static const sd_bus_vtable profiler_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD_WITH_ARGS("Record", SD_BUS_ARGS("a{sv}", options, "h", capture), SD_BUS_RESULT("o", recording),
                                method_record_logged, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListTargets", SD_BUS_NO_ARGS, SD_BUS_RESULT("aa{sv}", targets),
                                method_list_targets_logged, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_PROPERTY("Version", "s", property_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Capabilities", "a{sv}", property_capabilities, 0, 0),
        SD_BUS_VTABLE_END,
};

int profiler_register(Manager *m) {
        return sd_bus_add_object_vtable(m->bus, &m->profiler_slot, PROFILER_PATH, PROFILER_INTERFACE, profiler_vtable,
                                        m);
}
