/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* user-file-jobs.h: the daemon's D-Bus work that has the sandboxed helper
 * parse files users write (/.flatpak-info, Podman's storage JSON) for a
 * call: ListTargets' containers, Record's 'container'. One job at a time
 * runs on a fiber (service/fiber) with a helper of its own whose waits give
 * the event loop back, so no caller waits for another user's files; the
 * call is answered from the job's done callback. The helper is the job's
 * uid's own: started for its first job, stopped when that uid has no job
 * left or another uid's job runs. */
#pragma once

#include <sys/types.h>
#include <systemd/sd-event.h>

#include "helper-client.h"
#include "resolver.h"

typedef struct UserFileJobs UserFileJobs;

/* On the fiber: the job's work; its result goes to done. */
typedef int (*UserFileJobRun)(UserFileJobs *j, void *userdata);
/* On the loop, once per job: after run, or with -ECANCELED when the jobs
 * are freed first (the daemon is exiting); frees what userdata holds. */
typedef void (*UserFileJobDone)(int result, void *userdata);

/* Jobs waiting or running at most: per uid, and in all. */
#define USER_FILE_JOBS_PER_UID 8
#define USER_FILE_JOBS_MAX 64

int user_file_jobs_new(sd_event *e, const HelperClientConfig *helper_config, UserFileJobs **ret);
/* Ends the running job and calls every waiting job's done with -ECANCELED. */
UserFileJobs *user_file_jobs_free(UserFileJobs *j);

/* Queues a job for uid: 0, -EDQUOT when uid has USER_FILE_JOBS_PER_UID
 * already, -EBUSY past USER_FILE_JOBS_MAX (done is not called then). */
int user_file_jobs_add(UserFileJobs *j, uid_t uid, UserFileJobRun run, UserFileJobDone done, void *userdata);

/* On the fiber: a resolver for the running job, with the jobs' helper,
 * that gives way to the event loop between processes. */
int user_file_jobs_resolver_new(UserFileJobs *j, Resolver **ret);
