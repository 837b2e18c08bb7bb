/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* user-file-jobs.c: calls whose users' files the helper parses, one at a
 * time on a fiber (see user-file-jobs.h). */
#include "user-file-jobs.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "fiber.h"
#include "recording.h"

typedef struct UserFileJob {
        uid_t uid;
        UserFileJobRun run;
        UserFileJobDone done;
        void *userdata;
} UserFileJob;

struct UserFileJobs {
        sd_event *event;
        HelperClientConfig helper_config;
        HelperClient *helper; /* the running job's uid's; asked on the fiber only */
        uid_t helper_owner;
        bool helper_tried; /* for helper_owner */
        Fiber *fiber; /* running jobs[0] */
        UserFileJob jobs[USER_FILE_JOBS_MAX];
        size_t n_jobs;
        bool freeing;
};

static int jobs_wait_readable(int fd, unsigned timeout_ms, void *userdata) {
        UserFileJobs *j = userdata;
        if (!j->fiber) { /* never: the helper is asked on the fiber only */
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int r = poll(&p, 1, (int) timeout_ms);
                return r < 0 ? (errno == EINTR ? 0 : -errno) : r > 0;
        }
        return fiber_wait_readable(fd, timeout_ms, j->fiber);
}

static void jobs_yield(void *userdata) {
        UserFileJobs *j = userdata;
        if (j->fiber)
                (void) fiber_yield(j->fiber);
}

int user_file_jobs_new(sd_event *e, const HelperClientConfig *helper_config, UserFileJobs **ret) {
        UserFileJobs *j = calloc(1, sizeof(*j));
        if (!j)
                return -ENOMEM;
        j->event = sd_event_ref(e);
        if (helper_config)
                j->helper_config = *helper_config;
        j->helper_config.wait_readable = jobs_wait_readable;
        j->helper_config.wait_readable_userdata = j;
        j->helper_config.yield = jobs_yield;
        *ret = j;
        return 0;
}

int user_file_jobs_resolver_new(UserFileJobs *j, Resolver **ret) {
        int r;
        /* a helper of the job's uid's own: never one that parsed another
         * user's files */
        if (j->helper_tried && j->helper_owner != j->jobs[0].uid) {
                j->helper = helper_client_free(j->helper);
                j->helper_tried = false;
        }
        if (!j->helper_tried) {
                j->helper_tried = true;
                j->helper_owner = j->jobs[0].uid;
                HelperClientConfig c = j->helper_config;
                c.owner = j->helper_owner;
                r = helper_client_new(&c, &j->helper);
                if (r < 0) {
                        j->helper = NULL; /* then each file's rejection says why */
                        log_warning_errno(r, "no sandboxed helper for users' files: %m");
                }
        }
        Resolver *res = NULL;
        r = daemon_resolver_new(j->helper, &res);
        if (r < 0)
                return r;
        resolver_set_yield_func(res, jobs_yield, j);
        *ret = res;
        return 0;
}

static int job_on_fiber(Fiber *f, void *userdata) {
        UserFileJobs *j = userdata;
        return j->jobs[0].run(j, j->jobs[0].userdata);
}

static void start_next(UserFileJobs *j);

static UserFileJob take_first(UserFileJobs *j) {
        UserFileJob job = j->jobs[0];
        memmove(&j->jobs[0], &j->jobs[1], (j->n_jobs - 1) * sizeof(j->jobs[0]));
        j->n_jobs--;
        return job;
}

static void job_done(int result, void *userdata) {
        UserFileJobs *j = userdata;
        j->fiber = NULL;
        UserFileJob job = take_first(j);
        /* cut short by the end of the daemon: whatever the job made of it */
        job.done(j->freeing ? -ECANCELED : result, job.userdata);
        if (j->freeing)
                return;
        /* the uid has no job left: its helper stops */
        bool more = false;
        for (size_t i = 0; i < j->n_jobs; i++)
                more = more || j->jobs[i].uid == j->helper_owner;
        if (j->helper_tried && !more) {
                j->helper = helper_client_free(j->helper);
                j->helper_tried = false;
        }
        start_next(j);
}

static void start_next(UserFileJobs *j) {
        while (!j->fiber && j->n_jobs > 0) {
                int r = fiber_start(j->event, "parsing users' files for a call", job_on_fiber, job_done, j, &j->fiber);
                if (r >= 0)
                        return;
                UserFileJob job = take_first(j);
                job.done(r, job.userdata);
        }
}

int user_file_jobs_add(UserFileJobs *j, uid_t uid, UserFileJobRun run, UserFileJobDone done, void *userdata) {
        if (j->n_jobs >= USER_FILE_JOBS_MAX)
                return -EBUSY;
        size_t mine = 0;
        for (size_t i = 0; i < j->n_jobs; i++)
                mine += j->jobs[i].uid == uid;
        if (mine >= USER_FILE_JOBS_PER_UID)
                return -EDQUOT;
        j->jobs[j->n_jobs++] = (UserFileJob){ uid, run, done, userdata };
        start_next(j);
        return 0;
}

UserFileJobs *user_file_jobs_free(UserFileJobs *j) {
        if (!j)
                return NULL;
        j->freeing = true;
        if (j->fiber)
                fiber_cancel(j->fiber); /* its done takes jobs[0] */
        while (j->n_jobs > 0) {
                UserFileJob job = take_first(j);
                job.done(-ECANCELED, job.userdata);
        }
        helper_client_free(j->helper);
        sd_event_unref(j->event);
        free(j);
        return NULL;
}
