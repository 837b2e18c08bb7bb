/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysprof3-service.c: org.gnome.Sysprof3.Service at /org/gnome/Sysprof3:
 * PerfEventOpen, GetProcFile, GetProcFd, ListProcesses, GetProcessInfo,
 * SetGovernor, SetParanoid, as Sysprof 3.46 and later call them, each
 * limited to what the caller may profile (docs/sysprofd-drop-in.md). */
#include "sysprof3-service.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "basic.h"
#include "bus.h"
#include "fiber.h"
#include "protocol.h"
#include "perf-open-options.h"
#include "proc-files.h"
#include "process.h"
#include "sysprof3-state.h"

/* Largest /proc file served (a big process's maps). */
#define PROC_FILE_MAX_BYTES (32u << 20)

static int caller_or_error(sd_bus_message *m, Caller *caller, sd_bus_error *error) {
        int r = caller_from_message(m, caller);
        if (r < 0)
                return bus_error_set_errnof(error, PERISCOPE_ERROR_NOT_AUTHORIZED, r, "cannot tell who is calling: %m");
        return 0;
}

/* The prologue of a method taking one string: who calls, and the string. */
static int caller_and_string(sd_bus_message *m, Caller *caller, const char **ret, sd_bus_error *error) {
        int r = caller_or_error(m, caller, error);
        if (r < 0)
                return r;
        return sd_bus_message_read(m, "s", ret);
}

/* ---- PerfEventOpen ---- */

/* Reads one option's variant ('b', 'u', 'i' or 't'). */
static int read_option(sd_bus_message *m, PerfOpenOption *o, sd_bus_error *error) {
        const char *contents = NULL;
        char type;
        int r = sd_bus_message_read(m, "s", &o->key);
        if (r < 0)
                return r;
        r = sd_bus_message_peek_type(m, &type, &contents);
        if (r < 0)
                return r;
        if (!contents || strlen(contents) != 1 || !strchr("buit", contents[0]))
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                         "option '%.64s' has type '%s'; perf_event_attr options are b, u, i or t",
                                         o->key, contents ? contents : "?");
        o->type = contents[0];
        r = sd_bus_message_enter_container(m, 'v', contents);
        if (r < 0)
                return r;
        union {
                int b;
                uint32_t u;
                int32_t i;
                uint64_t t;
        } v;
        r = sd_bus_message_read_basic(m, o->type, &v);
        if (r < 0)
                return r;
        o->value = o->type == 'b' ? (uint64_t) !!v.b : o->type == 'u' ? v.u : o->type == 'i' ? (uint64_t) (int64_t) v.i : v.t;
        return sd_bus_message_exit_container(m);
}

/* Reads PerfEventOpen's arguments: the attr (not yet narrowed), pid and cpu. */
static int read_perf_open(sd_bus_message *m, struct perf_event_attr *attr, int32_t *pid, int32_t *cpu,
                          sd_bus_error *error) {
        _cleanup_free_ char *why = NULL;
        *attr = (struct perf_event_attr) { .size = sizeof(*attr) };
        int r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                PerfOpenOption o;
                r = read_option(m, &o, error);
                if (r < 0 || sd_bus_error_is_set(error))
                        return r < 0 ? r : -EINVAL;
                r = perf_open_option_apply(attr, &o, &why);
                if (r < 0)
                        return bus_error_set_why(error, PERISCOPE_ERROR_INVALID_OPTION, r, why);
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0 || (r = sd_bus_message_exit_container(m)) < 0)
                return r;
        r = sd_bus_message_read(m, "ii", pid, cpu);
        if (r < 0)
                return r;
        int n_cpus = get_nprocs_conf();
        r = perf_open_target_check(*pid, *cpu, 0, n_cpus, &why);
        if (r < 0)
                return bus_error_set_why(error, PERISCOPE_ERROR_INVALID_OPTION, r, why);
        /* Check the attr now, so that polkit is not asked for nonsense. */
        struct perf_event_attr copy = *attr;
        r = perf_open_attr_restrict(&copy, false, &why);
        if (r < 0)
                return bus_error_set_why(error, PERISCOPE_ERROR_INVALID_OPTION, r, why);
        /* group_fd: Sysprof passes the handle -1 without any fd, which
         * sd-bus cannot read as a handle (-EBADMSG): that is "no group", and
         * then the flags cannot be read either; they matter not, as the
         * only one served, FD_CLOEXEC, is always set. A real fd is refused. */
        int group_fd;
        r = sd_bus_message_read(m, "h", &group_fd);
        if (r >= 0)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                         "group_fd is not served: pass -1 and open each event on its own");
        return r == -EBADMSG ? 0 : r;
}

/* A PerfEventOpen call whose event is opened on a fiber: the perf opener's
 * answer is awaited off the event loop's stack, so every other caller is
 * served meanwhile (a stopped opener stalls only this call). */
typedef struct PerfOpening {
        Sysprof3 *s;
        sd_bus_message *call;
        Caller caller; /* sender points into call */
        Authorization auth;
        struct perf_event_attr attr;
        int32_t pid, cpu;
        int pidfd;            /* the authorized process; -1 for a CPU of the whole system */
        sd_bus_track *client; /* the caller (NULL on a peer-to-peer connection): left meanwhile? */
        Fiber *fiber;
} PerfOpening;

/* On the fiber: opens the event, checks the process again and answers. */
static int perf_open_finish(PerfOpening *o, Fiber *f, sd_bus_error *error) {
        Sysprof3 *s = o->s;
        int32_t pid = o->pid, cpu = o->cpu;
        _cleanup_close_ int fd = perf_open_wait(s->mgr->perf_opener, &o->attr, pid, cpu, fiber_wait_readable, f);
        if (fd == -ECANCELED)
                return sd_bus_error_set(error, PERISCOPE_ERROR_FAILED,
                                        "periscoped is stopping (service stop or restart): try again once it is back");
        if (fd < 0) {
                char cause[640];
                return sd_bus_error_setf(error, PERISCOPE_ERROR_PERF_FAILED,
                                         "perf_event_open (type %u, config %llu, pid %d, cpu %d) failed: %s",
                                         o->attr.type, (unsigned long long) o->attr.config, pid, cpu,
                                         perf_open_error_hint(s->mgr->perf_opener, fd, cause, sizeof(cause)));
        }
        /* EPERM: alive, and another uid's (periscoped keeps no CAP_KILL) */
        if (o->pidfd >= 0 && syscall(SYS_pidfd_send_signal, o->pidfd, 0, NULL, 0) < 0 && errno == ESRCH)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_NO_SUCH_PROCESS, "process %d ended", pid);
        /* Still the caller's now that the event exists: an exec of a set-id
         * program since the check is seen (the fd is closed, never sent). */
        if (o->pidfd >= 0 && o->caller.uid != 0 && !o->auth.via_polkit) {
                int r = process_recheck_after_open(o->caller.uid, pid, "perf event");
                if (r == -ESRCH)
                        return sd_bus_error_setf(error, PERISCOPE_ERROR_NO_SUCH_PROCESS, "process %d ended", pid);
                if (r < 0)
                        return sd_bus_error_setf(error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                                 "process %d is not yours any more (did it exec a set-id program?): "
                                                 "its perf event was closed",
                                                 pid);
        }
        if (o->client && sd_bus_track_count_sender(o->client, o->call) <= 0) {
                log_info("sysprof3: uid %u left while its perf event (pid %d cpu %d) was opened: closed",
                         (unsigned) o->caller.uid, pid, cpu);
                return 0;
        }
        OpenedEvent e = {
                .uid = o->caller.uid,
                .pid = pid,
                .kernel = !o->attr.exclude_kernel,
                .sample_type = o->attr.sample_type,
                .sample_regs_user = o->attr.sample_regs_user,
                .sample_stack_user = o->attr.sample_stack_user,
        };
        if (ioctl(fd, PERF_EVENT_IOC_ID, &e.id) < 0)
                return -errno;
        int r = sysprof3_remember_event(s, &e);
        if (r < 0)
                return r;
        log_debug("sysprof3: PerfEventOpen for uid %u: pid %d cpu %d type %u%s", (unsigned) o->caller.uid, pid, cpu,
                  o->attr.type, o->attr.exclude_kernel ? " (user only)" : "");
        return sd_bus_reply_method_return(o->call, "h", fd);
}

static int perf_open_on_fiber(Fiber *f, void *userdata) {
        PerfOpening *o = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        /* cancelled before it began: the daemon is exiting */
        int r = fiber_yield(f);
        if (r < 0)
                sd_bus_error_set(&e, PERISCOPE_ERROR_FAILED,
                                 "periscoped is stopping (service stop or restart): try again once it is back");
        else
                r = perf_open_finish(o, f, &e);
        if (r < 0 || sd_bus_error_is_set(&e)) {
                if (!sd_bus_error_is_set(&e))
                        sd_bus_error_set_errno(&e, r);
                (void) bus_reply_refused(o->call, &o->caller, 0, &e);
        }
        return r;
}

static void perf_opening_free(PerfOpening *o) {
        safe_close(o->pidfd);
        sd_bus_track_unref(o->client);
        sd_bus_message_unref(o->call);
        free(o);
}

static void perf_open_done(int result, void *userdata) {
        PerfOpening *o = userdata;
        Sysprof3 *s = o->s;
        for (size_t i = 0; i < s->n_openings; i++)
                if (s->openings[i] == o) {
                        memmove(s->openings + i, s->openings + i + 1, (s->n_openings - i - 1) * sizeof(PerfOpening *));
                        s->n_openings--;
                        break;
                }
        perf_opening_free(o);
}

void sysprof3_cancel_openings(Sysprof3 *s) {
        /* each ends inside fiber_cancel(), and its done forgets it */
        while (s->n_openings > 0)
                fiber_cancel(s->openings[0]->fiber);
}

static int perf_open_authorized(Sysprof3 *s, sd_bus_message *call, const Caller *caller, const Authorization *auth,
                                sd_bus_error *error) {
        struct perf_event_attr attr;
        int32_t pid, cpu;
        _cleanup_free_ char *why = NULL;
        int r = read_perf_open(call, &attr, &pid, &cpu, error);
        if (r < 0 || sd_bus_error_is_set(error))
                return r < 0 ? r : -EINVAL;
        r = perf_open_attr_restrict(&attr, auth->kernel, &why);
        if (r < 0)
                return bus_error_set_why(error, PERISCOPE_ERROR_INVALID_OPTION, r, why);
        size_t mine = 0;
        for (size_t i = 0; i < s->n_openings; i++)
                mine += s->openings[i]->caller.uid == caller->uid;
        if (mine >= SYSPROF3_MAX_OPENINGS_PER_USER)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_LIMIT_EXCEEDED,
                                         "uid %u has %zu PerfEventOpen calls waiting for the perf opener already: "
                                         "wait for their answers",
                                         (unsigned) caller->uid, mine);
        /* The process stays the authorized one: held by a pidfd, checked
         * again, and alive after the event was opened. */
        _cleanup_close_ int pidfd = -1;
        if (pid > 0) {
                pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
                if (pidfd < 0)
                        return bus_error_set_errnof(error, PERISCOPE_ERROR_NO_SUCH_PROCESS, -errno, "process %d: %m",
                                                    pid);
                if (caller->uid != 0 && !auth->via_polkit && !process_owned_by(pid, caller->uid))
                        return sd_bus_error_setf(error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                                 "process %d is not yours (any more)", pid);
        }
        if (GROW_ARRAY(s->openings, s->allocated_openings, s->n_openings + 1, 8) < 0)
                return -ENOMEM;
        PerfOpening *o = calloc(1, sizeof(*o));
        if (!o)
                return -ENOMEM;
        *o = (PerfOpening) {
                .s = s,
                .call = sd_bus_message_ref(call),
                .caller = *caller,
                .auth = *auth,
                .attr = attr,
                .pid = pid,
                .cpu = cpu,
                .pidfd = TAKE_FD(pidfd),
        };
        if (caller->sender) {
                r = sd_bus_track_new(s->mgr->bus, &o->client, NULL, NULL);
                if (r >= 0)
                        r = sd_bus_track_add_sender(o->client, call);
                if (r < 0) {
                        perf_opening_free(o);
                        return r;
                }
        }
        r = fiber_start(s->mgr->event, "opening a drop-in perf event", perf_open_on_fiber, perf_open_done, o,
                        &o->fiber);
        if (r < 0) {
                perf_opening_free(o);
                return r;
        }
        s->openings[s->n_openings++] = o;
        log_debug("sysprof3: PerfEventOpen of uid %u waits for the perf opener (%zu of theirs)", (unsigned) caller->uid,
                  mine + 1);
        return 1;
}

static int method_perf_event_open(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Sysprof3 *s = userdata;
        struct perf_event_attr attr;
        int32_t pid, cpu;
        Caller caller;
        int r = caller_or_error(m, &caller, error);
        if (r < 0)
                return r;
        r = read_perf_open(m, &attr, &pid, &cpu, error);
        if (r < 0 || sd_bus_error_is_set(error))
                return r < 0 ? r : -EINVAL;
        if (pid > 0 && kill(pid, 0) < 0 && errno == ESRCH)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_NO_SUCH_PROCESS, "there is no process %d", pid);
        return sysprof3_authorize(s, m, &caller, pid, perf_open_authorized, error);
}

/* ---- GetProcFile, GetProcFd ---- */

static int read_proc_path(sd_bus_message *m, ProcFilePath *ret, sd_bus_error *error) {
        const void *bytes;
        size_t size;
        const char *why = NULL;
        int r = sd_bus_message_read_array(m, 'y', &bytes, &size);
        if (r < 0)
                return r;
        r = proc_file_path_parse(bytes, size, ret, &why);
        if (r < 0)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_NOT_AUTHORIZED, "refused path '%.*s': %s",
                                         (int) (size > 128 ? 128 : size), (const char *) bytes, why);
        return 0;
}

/* Opens the file the call names, for an authorized caller. */
static int open_proc_file(sd_bus_message *call, const Caller *caller, const Authorization *auth, ProcFilePath *path,
                          sd_bus_error *error) {
        bool foreign;
        int r = read_proc_path(call, path, error);
        if (r < 0)
                return r;
        int fd = proc_file_open(path, caller->uid, auth->via_polkit, &foreign);
        if (fd == -ESRCH)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_NO_SUCH_PROCESS, "there is no process %d",
                                         (int) path->pid);
        if (fd == -EPERM)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                         "/proc/%d/%s: process %d is not yours (any more)", (int) path->pid,
                                         path->relative, (int) path->pid);
        if (fd < 0)
                return bus_error_set_errnof(error, NULL, fd, "/proc/%d/%s: %m", (int) path->pid, path->relative);
        return fd;
}

static int get_proc_file_authorized(Sysprof3 *s, sd_bus_message *call, const Caller *caller, const Authorization *auth,
                                    sd_bus_error *error) {
        ProcFilePath path;
        _cleanup_close_ int fd = open_proc_file(call, caller, auth, &path, error);
        if (fd < 0)
                return fd;
        _cleanup_free_ char *contents = NULL;
        size_t len;
        int r = read_fd_bounded(fd, PROC_FILE_MAX_BYTES, true, &contents, &len);
        if (r < 0)
                return bus_error_set_errnof(error, PERISCOPE_ERROR_FAILED, r, "reading the file failed: %m");
        /* Entries such as status or io are made at read time, read here with
         * root's rights: the process is checked once more after the read. */
        if (caller->uid != 0 && !auth->via_polkit) {
                r = process_recheck_after_open(caller->uid, path.pid, "/proc file's contents");
                if (r == -ESRCH)
                        return sd_bus_error_setf(error, PERISCOPE_ERROR_NO_SUCH_PROCESS, "process %d ended",
                                                 (int) path.pid);
                if (r < 0)
                        return sd_bus_error_setf(error, PERISCOPE_ERROR_NOT_AUTHORIZED,
                                                 "/proc/%d/%s: process %d is not yours (any more)", (int) path.pid,
                                                 path.relative, (int) path.pid);
        }
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        r = sd_bus_message_new_method_return(call, &reply);
        if (r < 0)
                return r;
        /* With its NUL: Sysprof reads the answer as a C string. */
        r = sd_bus_message_append_array(reply, 'y', contents, len + 1);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int get_proc_fd_authorized(Sysprof3 *s, sd_bus_message *call, const Caller *caller, const Authorization *auth,
                                  sd_bus_error *error) {
        ProcFilePath path;
        _cleanup_close_ int fd = open_proc_file(call, caller, auth, &path, error);
        if (fd < 0)
                return fd;
        return sd_bus_reply_method_return(call, "h", fd);
}

static int authorize_proc_call(sd_bus_message *m, Sysprof3 *s, Sysprof3Continue next, sd_bus_error *error) {
        ProcFilePath path;
        Caller caller;
        int r = caller_or_error(m, &caller, error);
        if (r < 0)
                return r;
        r = read_proc_path(m, &path, error);
        if (r < 0)
                return r;
        if (kill(path.pid, 0) < 0 && errno == ESRCH)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_NO_SUCH_PROCESS, "there is no process %d",
                                         (int) path.pid);
        return sysprof3_authorize(s, m, &caller, path.pid, next, error);
}

static int method_get_proc_file(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return authorize_proc_call(m, userdata, get_proc_file_authorized, error);
}

static int method_get_proc_fd(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return authorize_proc_call(m, userdata, get_proc_fd_authorized, error);
}

/* ---- ListProcesses, GetProcessInfo ---- */

typedef struct PidList {
        int32_t *pids;
        size_t n, allocated;
} PidList;

static int pid_list_add(pid_t pid, void *userdata) {
        PidList *l = userdata;
        if (GROW_ARRAY(l->pids, l->allocated, l->n + 1, 256) < 0)
                return -ENOMEM;
        l->pids[l->n++] = pid;
        return 0;
}

static int method_list_processes(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ int32_t *pids = NULL;
        PidList list = {};
        Caller caller;
        int r = caller_or_error(m, &caller, error);
        if (r < 0)
                return r;
        r = caller_processes_foreach(&caller, pid_list_add, &list);
        pids = list.pids;
        if (r < 0)
                return r;
        r = sd_bus_message_new_method_return(m, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_append_array(reply, 'i', pids, list.n * sizeof(int32_t));
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

/* D-Bus strings are UTF-8: bytes that are not become '?'. */
static void make_utf8(char *s) {
        for (unsigned char *p = (unsigned char *) s; *p;) {
                size_t n = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 : (*p & 0xf8) == 0xf0 ? 4 : 0;
                bool ok = n > 0 && !(n == 2 && *p < 0xc2) && !(n == 4 && *p > 0xf4);
                for (size_t i = 1; ok && i < n; i++)
                        ok = (p[i] & 0xc0) == 0x80;
                if (!ok) {
                        *p++ = '?';
                        continue;
                }
                p += n;
        }
}

/* One /proc/PID file as GetProcessInfo gives it: the command line with
 * spaces between arguments, the others without trailing white space. */
static char *read_info_file(int dfd, const char *name) {
        char *contents = NULL;
        size_t len;
        if (read_file_bounded(dfd, name, PROC_FILE_MAX_BYTES, true, &contents, &len) < 0)
                return NULL;
        if (strcmp(name, "cmdline") == 0)
                for (size_t i = 0; i < len; i++)
                        if (contents[i] == '\0')
                                contents[i] = ' ';
        while (len > 0 && (contents[len - 1] == ' ' || contents[len - 1] == '\n' || contents[len - 1] == '\0'))
                contents[--len] = '\0';
        make_utf8(contents);
        return contents;
}

typedef struct ProcessInfoRequest {
        unsigned want; /* PROC_INFO_* */
        uid_t uid;     /* the caller */
} ProcessInfoRequest;

#define PROC_INFO_N 6 /* bits up to PROC_INFO_CGROUP */
_Static_assert(PROC_INFO_CGROUP == 1u << (PROC_INFO_N - 1), "PROC_INFO_N must count the PROC_INFO_* bits");

static void free_info_values(char *(*values)[PROC_INFO_N]) {
        for (size_t i = 0; i < PROC_INFO_N; i++)
                free((*values)[i]);
}

static int append_process_info(sd_bus_message *reply, pid_t pid, void *userdata) {
        const ProcessInfoRequest *req = userdata;
        char dir[32];
        snprintf(dir, sizeof(dir), "/proc/%d", (int) pid);
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return 0; /* gone meanwhile */
        _cleanup_(free_info_values) char *values[PROC_INFO_N] = {};
        for (unsigned i = 0; i < PROC_INFO_N; i++)
                if (req->want & (1u << i))
                        values[i] = read_info_file(dfd, proc_info_attribute_name(1u << i));
        /* Listed as the caller's before the files were read: still so now
         * (maps of a set-id program it exec'd meanwhile are not its). */
        if (req->uid != 0 && process_recheck_after_open(req->uid, pid, "/proc files") < 0)
                return 0;
        int r = sd_bus_message_open_container(reply, 'a', "{sv}");
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "{sv}", "pid", "i", (int32_t) pid);
        for (unsigned i = 0; r >= 0 && i < PROC_INFO_N; i++)
                if (values[i])
                        r = sd_bus_message_append(reply, "{sv}", proc_info_attribute_name(1u << i), "s", values[i]);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static int method_get_process_info(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *attributes;
        char bad[80];
        unsigned want;
        Caller caller;
        int r = caller_and_string(m, &caller, &attributes, error);
        if (r < 0)
                return r;
        if (proc_info_attributes_parse(attributes, &want, bad, sizeof(bad)) < 0)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                         "unknown process attribute '%s' (known: pid, cmdline, comm, maps, statm, "
                                         "mountinfo, cgroup)", bad);
        return caller_processes_reply(m, &caller, append_process_info, NULL,
                                      &(ProcessInfoRequest) { .want = want, .uid = caller.uid });
}

/* ---- SetGovernor, SetParanoid ---- */

#define CPUFREQ_DIR "/sys/devices/system/cpu"

/* Whether word is one of the space-separated words of list. */
static bool word_in_list(const char *list, const char *word) {
        size_t n = strlen(word);
        for (const char *p = list; (p = strstr(p, word)); p += n)
                if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
                        return true;
        return false;
}

static int write_governor(int cpu, const char *governor) {
        char path[128];
        snprintf(path, sizeof(path), CPUFREQ_DIR "/cpu%d/cpufreq/scaling_governor", cpu);
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        ssize_t n = write(fd, governor, strlen(governor));
        return n < 0 ? -errno : 0;
}

static int set_governor_authorized(Sysprof3 *s, sd_bus_message *call, const Caller *caller, const Authorization *auth,
                                   sd_bus_error *error) {
        const char *governor;
        int r = sd_bus_message_read(call, "s", &governor);
        if (r < 0)
                return r;
        _cleanup_free_ char *available = NULL, *previous = NULL;
        size_t len;
        r = read_file_bounded(AT_FDCWD, CPUFREQ_DIR "/cpu0/cpufreq/scaling_available_governors", 4096, true,
                              &available, &len);
        if (r < 0)
                return bus_error_set_errnof(error, PERISCOPE_ERROR_NOT_SUPPORTED, r,
                                            "this machine has no CPU frequency governors (cpufreq): %m");
        if (!word_in_list(available, governor))
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                         "governor '%.32s' is not one of this machine's: %s", governor, available);
        r = read_file_bounded(AT_FDCWD, CPUFREQ_DIR "/cpu0/cpufreq/scaling_governor", 4096, true, &previous, &len);
        if (r < 0)
                return bus_error_set_errnof(error, PERISCOPE_ERROR_FAILED, r, "reading the governor failed: %m");
        previous[strcspn(previous, "\n")] = '\0';
        int n_cpus = get_nprocs_conf();
        for (int cpu = 0; cpu < n_cpus; cpu++) {
                r = write_governor(cpu, governor);
                if (r < 0 && r != -ENOENT)
                        return bus_error_set_errnof(error, PERISCOPE_ERROR_FAILED, r,
                                                    "setting the governor of cpu %d: %m", cpu);
        }
        log_info("sysprof3: uid %u set the CPU governor to %s (was %s)", (unsigned) caller->uid, governor, previous);
        return sd_bus_reply_method_return(call, "s", previous);
}

static int method_set_governor(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *governor;
        Caller caller;
        int r = caller_and_string(m, &caller, &governor, error);
        if (r < 0)
                return r;
        size_t n = strlen(governor);
        if (n == 0 || n > 32 || strspn(governor, "abcdefghijklmnopqrstuvwxyz0123456789_-") != n)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                         "'%.32s' is not a governor name (lowercase letters, digits, '_', '-')",
                                         governor);
        /* The governor is the whole machine's: as the whole system. */
        return sysprof3_authorize(userdata, m, &caller, -1, set_governor_authorized, error);
}

static int method_set_paranoid(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        int32_t paranoid;
        int r = sd_bus_message_read(m, "i", &paranoid);
        if (r < 0)
                return r;
        if (paranoid < -1 || paranoid > 4)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                         "perf_event_paranoid %d is out of range (-1…4)", paranoid);
        /* periscoped opens the events itself, for whom it decides: the
         * system's setting stays as the administrator left it. */
        _cleanup_free_ char *current = NULL;
        size_t len;
        r = read_file_bounded(AT_FDCWD, "/proc/sys/kernel/perf_event_paranoid", 64, true, &current, &len);
        if (r < 0)
                return bus_error_set_errnof(error, PERISCOPE_ERROR_FAILED, r, "reading perf_event_paranoid failed: %m");
        return sd_bus_reply_method_return(m, "i", (int32_t) strtol(current, NULL, 10));
}

BUS_METHOD_LOG_REFUSALS(method_perf_event_open)
BUS_METHOD_LOG_REFUSALS(method_get_proc_file)
BUS_METHOD_LOG_REFUSALS(method_get_proc_fd)
BUS_METHOD_LOG_REFUSALS(method_list_processes)
BUS_METHOD_LOG_REFUSALS(method_get_process_info)
BUS_METHOD_LOG_REFUSALS(method_set_governor)
BUS_METHOD_LOG_REFUSALS(method_set_paranoid)

const sd_bus_vtable sysprof3_service_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD_WITH_ARGS(
                "PerfEventOpen", SD_BUS_ARGS("a{sv}", options, "i", pid, "i", cpu, "h", group_fd, "t", flags),
                SD_BUS_RESULT("h", perf_stream_fd), method_perf_event_open_logged, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetProcFile", SD_BUS_ARGS("ay", path), SD_BUS_RESULT("ay", contents),
                                method_get_proc_file_logged, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetProcFd", SD_BUS_ARGS("ay", path), SD_BUS_RESULT("h", fd), method_get_proc_fd_logged,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListProcesses", SD_BUS_NO_ARGS, SD_BUS_RESULT("ai", processes),
                                method_list_processes_logged, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetProcessInfo", SD_BUS_ARGS("s", attributes), SD_BUS_RESULT("aa{sv}", processes),
                                method_get_process_info_logged, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetGovernor", SD_BUS_ARGS("s", governor), SD_BUS_RESULT("s", old_governor),
                                method_set_governor_logged, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetParanoid", SD_BUS_ARGS("i", paranoid), SD_BUS_RESULT("i", old_paranoid),
                                method_set_paranoid_logged, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};
