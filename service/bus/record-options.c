/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* record-options.c: the option table of Record() and its checks. */
#include "record-options.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "authorization.h"
#include "process.h"
#include "basic.h"
#include "resolver.h"
#include "counters.h"
#include "protocol.h"

typedef struct RecordOptionSpec RecordOptionSpec;

/* Reads the option's value (the variant is entered, its type checked). */
typedef int (*RecordOptionParser)(sd_bus_message *m, RecordOptions *o, const RecordOptionSpec *spec,
                                  sd_bus_error *error);

struct RecordOptionSpec {
        const char *key;
        const char *signature;
        RecordOptionParser parse;
};

static int invalid(sd_bus_error *error, const char *key, const char *fmt, const char *detail) {
        return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION, "option '%s': %s%s", key, fmt,
                                 detail ? detail : "");
}

static int process_exists(int32_t pid) {
        char path[32];
        struct stat st;
        snprintf(path, sizeof(path), "/proc/%d", (int) pid);
        return stat(path, &st) == 0;
}

/* True when pid is a zombie (or dead): it exited and waits for its parent
 * to reap it; comm and ppid say which for the message. */
static bool process_is_zombie(int32_t pid, char comm[static 64], int *ret_ppid) {
        char path[32], buf[1024];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        if (n <= 0)
                return false;
        buf[n] = 0;
        /* "PID (COMM) STATE PPID …": COMM may hold anything, ')' included */
        char *open_paren = strchr(buf, '('), *close_paren = strrchr(buf, ')');
        char state;
        if (!open_paren || !close_paren || close_paren < open_paren ||
            sscanf(close_paren + 1, " %c %d", &state, ret_ppid) != 2)
                return false;
        snprintf(comm, 64, "%.*s", (int) (close_paren - open_paren - 1), open_paren + 1);
        return state == 'Z' || state == 'X';
}

/* A target that exists and is not a zombie, or error says which it is
 * (with its command and parent: only for callers who may record it). */
static int check_target(int32_t pid, const char *key, sd_bus_error *error) {
        char comm[64];
        int ppid = 0;
        if (!process_exists(pid))
                return sd_bus_error_setf(error, PERISCOPE_ERROR_NO_SUCH_PROCESS, "option '%s': process %d does not exist",
                                         key, (int) pid);
        if (process_is_zombie(pid, comm, &ppid))
                return sd_bus_error_setf(error, PERISCOPE_ERROR_NO_SUCH_PROCESS,
                                         "option '%s': process %d (%s) is a zombie: it has exited and only waits "
                                         "for its parent (pid %d) to collect its status; there is nothing left to "
                                         "record", key, (int) pid, comm, ppid);
        return 0;
}

static int parse_pids(sd_bus_message *m, RecordOptions *o, const RecordOptionSpec *spec, sd_bus_error *error) {
        const void *data;
        size_t size;
        int r = sd_bus_message_read_array(m, 'i', &data, &size);
        if (r < 0)
                return r;
        size_t n = size / sizeof(int32_t);
        if (n == 0)
                return invalid(error, spec->key, "the list of pids is empty", NULL);
        if (n > RECORD_OPTIONS_MAX_PIDS) {
                char buf[64];
                snprintf(buf, sizeof(buf), "%zu pids given, at most %d", n, RECORD_OPTIONS_MAX_PIDS);
                return invalid(error, spec->key, buf, " (use system=true for many processes)");
        }
        o->pids = malloc(size);
        if (!o->pids)
                return -ENOMEM;
        memcpy(o->pids, data, size);
        o->n_pids = o->n_given_pids = n;
        for (size_t i = 0; i < n; i++) {
                if (o->pids[i] <= 0)
                        return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                                 "option 'pids': %d is not a process id (must be > 0)",
                                                 (int) o->pids[i]);
        }
        return 0;
}

static int parse_bool(sd_bus_message *m, bool *ret) {
        int b;
        int r = sd_bus_message_read_basic(m, 'b', &b);
        if (r < 0)
                return r;
        *ret = b;
        return 0;
}

static int parse_system(sd_bus_message *m, RecordOptions *o, const RecordOptionSpec *spec, sd_bus_error *error) {
        return parse_bool(m, &o->system);
}

static int parse_symbolize(sd_bus_message *m, RecordOptions *o, const RecordOptionSpec *spec,
                           sd_bus_error *error) {
        return parse_bool(m, &o->symbolize);
}

static int parse_debuginfod(sd_bus_message *m, RecordOptions *o, const RecordOptionSpec *spec,
                            sd_bus_error *error) {
        return parse_bool(m, &o->debuginfod);
}

static int parse_off_cpu(sd_bus_message *m, RecordOptions *o, const RecordOptionSpec *spec, sd_bus_error *error) {
        return parse_bool(m, &o->off_cpu);
}

static int parse_python_frames(sd_bus_message *m, RecordOptions *o, const RecordOptionSpec *spec, sd_bus_error *error) {
        return parse_bool(m, &o->python_frames);
}

static int parse_off_cpu_min(sd_bus_message *m, RecordOptions *o, const RecordOptionSpec *spec, sd_bus_error *error) {
        uint64_t ns;
        int r = sd_bus_message_read_basic(m, 't', &ns);
        if (r < 0)
                return r;
        if (ns > RECORD_OPTIONS_MAX_OFF_CPU_MIN_NS)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                         "option 'off-cpu-min-ns': %llu is out of range (0..%llu ns; default "
                                         "%llu)",
                                         (unsigned long long) ns, RECORD_OPTIONS_MAX_OFF_CPU_MIN_NS,
                                         RECORD_OPTIONS_DEFAULT_OFF_CPU_MIN_NS);
        o->off_cpu_min_ns = ns;
        return 0;
}

static int parse_kernel(sd_bus_message *m, RecordOptions *o, const RecordOptionSpec *spec, sd_bus_error *error) {
        bool b;
        int r = parse_bool(m, &b);
        if (r < 0)
                return r;
        o->kernel = b;
        return 0;
}

static int parse_command_pid(sd_bus_message *m, RecordOptions *o, const RecordOptionSpec *spec,
                             sd_bus_error *error) {
        int32_t pid;
        int r = sd_bus_message_read_basic(m, 'i', &pid);
        if (r < 0)
                return r;
        if (pid <= 0)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                         "option 'command-pid': %d is not a process id (must be > 0)", (int) pid);
        o->command_pid = pid;
        return 0;
}

static uint32_t max_sample_rate(void) {
        _cleanup_free_ char *line = NULL;
        FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
        unsigned long v = 0;
        if (f) {
                if (fscanf(f, "%lu", &v) != 1)
                        v = 0;
                fclose(f);
        }
        return v > 0 && v < UINT32_MAX ? (uint32_t) v : 100000;
}

static int parse_frequency(sd_bus_message *m, RecordOptions *o, const RecordOptionSpec *spec,
                           sd_bus_error *error) {
        uint32_t hz;
        int r = sd_bus_message_read_basic(m, 'u', &hz);
        if (r < 0)
                return r;
        uint32_t max = max_sample_rate();
        if (hz == 0 || hz > max)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                         "option 'frequency': %u Hz is out of range (1..%u, the limit is "
                                         "/proc/sys/kernel/perf_event_max_sample_rate)",
                                         hz, max);
        o->frequency = hz;
        return 0;
}

static int parse_duration(sd_bus_message *m, RecordOptions *o, const RecordOptionSpec *spec,
                          sd_bus_error *error) {
        uint32_t ms;
        int r = sd_bus_message_read_basic(m, 'u', &ms);
        if (r < 0)
                return r;
        if (ms == 0 || ms > RECORD_OPTIONS_MAX_DURATION_MS)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                         "option 'duration-ms': %u is out of range (1..%u; leave it out to "
                                         "record until Stop)",
                                         ms, RECORD_OPTIONS_MAX_DURATION_MS);
        o->duration_ms = ms;
        return 0;
}

static int parse_unwind(sd_bus_message *m, RecordOptions *o, const RecordOptionSpec *spec, sd_bus_error *error) {
        const char *s;
        int r = sd_bus_message_read_basic(m, 's', &s);
        if (r < 0)
                return r;
        int u = record_unwind_from_string(s);
        if (u >= 0) {
                o->unwind = (RecordUnwind) u;
                return 0;
        }
        return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                 "option 'unwind': '%.64s' is not an unwinder (use 'fp', 'dwarf' or 'auto')", s);
}

static int parse_stack_size(sd_bus_message *m, RecordOptions *o, const RecordOptionSpec *spec, sd_bus_error *error) {
        uint32_t v;
        int r = sd_bus_message_read_basic(m, 'u', &v);
        if (r < 0)
                return r;
        if (v == 0 || v % 8 != 0 || v > RECORD_OPTIONS_MAX_STACK_SIZE)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                         "option 'stack-size': %u is not a multiple of 8 between 8 and %u "
                                         "(bytes of user stack copied per sample; default %u)",
                                         v, RECORD_OPTIONS_MAX_STACK_SIZE, RECORD_OPTIONS_DEFAULT_STACK_SIZE);
        o->stack_size = v;
        return 0;
}

static int parse_container(sd_bus_message *m, RecordOptions *o, const RecordOptionSpec *spec, sd_bus_error *error) {
        const char *s;
        int r = sd_bus_message_read(m, "s", &s);
        if (r < 0)
                return r;
        size_t len = strlen(s);
        if (len == 0 || len > 255)
                return invalid(error, spec->key, "give a Podman container name or id, or a Flatpak app id (1-255 characters)", NULL);
        for (size_t i = 0; i < len; i++)
                if ((unsigned char) s[i] < 0x20 || s[i] == '/')
                        return invalid(error, spec->key, "a container name has no control characters or '/'", NULL);
        o->container = strdup(s);
        return o->container ? 0 : -ENOMEM;
}

/* Whether caller_uid may record any process of inst on its own (root: yes). */
static bool instance_is_callers(const ContainerInstance *inst, uid_t caller_uid) {
        if (caller_uid == 0)
                return true;
        for (size_t j = 0; j < inst->n_pids; j++)
                if (process_owned_by(inst->pids[j], caller_uid))
                        return true;
        return false;
}

/* Rootless containers of different users often share names: the caller's
 * own win. Authorization then applies to each pid as to given ones. */
int record_options_expand_container(RecordOptions *o, uid_t caller_uid, Resolver *res, sd_bus_error *error) {
        ContainerInstance *inst = NULL;
        size_t n = 0, added = 0;
        if (!o->container)
                return 0;
        int r = container_list_instances(res, &inst, &n);
        if (r < 0)
                return r;
        bool *take = calloc(n ? n : 1, sizeof(bool));
        if (!take) {
                container_instances_free(inst, n);
                return -ENOMEM;
        }
        bool any_callers = false;
        for (size_t i = 0; i < n; i++)
                if (container_instance_matches(&inst[i].info, o->container)) {
                        take[i] = true;
                        any_callers = any_callers || instance_is_callers(&inst[i], caller_uid);
                }
        for (size_t i = 0; i < n && r >= 0; i++) {
                if (!take[i] || (any_callers && !instance_is_callers(&inst[i], caller_uid)))
                        continue;
                for (size_t j = 0; j < inst[i].n_pids; j++) {
                        if (o->n_pids >= RECORD_OPTIONS_MAX_PIDS) {
                                r = sd_bus_error_setf(
                                        error, PERISCOPE_ERROR_INVALID_OPTION,
                                        "option 'container': '%s' has more than %d processes (use system=true)",
                                        o->container, RECORD_OPTIONS_MAX_PIDS);
                                break;
                        }
                        int32_t *np = realloc(o->pids, (o->n_pids + 1) * sizeof(int32_t));
                        if (!np) {
                                r = -ENOMEM;
                                break;
                        }
                        o->pids = np;
                        o->pids[o->n_pids++] = inst[i].pids[j];
                        added++;
                }
        }
        free(take);
        container_instances_free(inst, n);
        if (r < 0)
                return r;
        /* Not running now but it exists (a stopped Podman container, an
         * installed Flatpak app): the recording waits for its processes. */
        if (added == 0 && container_exists(res, o->container, caller_uid)) {
                o->container_waiting = true;
                return 0;
        }
        if (added == 0)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_NO_SUCH_PROCESS,
                                         "option 'container': no running Podman container or Flatpak app matches '%s', "
                                         "and no stopped container or installed app has that name "
                                         "(ListTargets shows them; `podman ps -a`, `flatpak list --app`)",
                                         o->container);
        return 0;
}

static int parse_counters(sd_bus_message *m, RecordOptions *o, const RecordOptionSpec *spec, sd_bus_error *error) {
        char **names = NULL;
        int r = sd_bus_message_read_strv(m, &names);
        if (r < 0)
                return r;
        o->counters = names; /* freed by record_options_done(), also on the error below */
        _cleanup_free_ char *msg = NULL;
        if (counters_validate(names, 0, &msg) < 0)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION, "option 'counters': %s",
                                         msg ? msg : "invalid");
        return 0;
}

static int parse_counter_interval(sd_bus_message *m, RecordOptions *o, const RecordOptionSpec *spec,
                                  sd_bus_error *error) {
        uint32_t ms;
        int r = sd_bus_message_read_basic(m, 'u', &ms);
        if (r < 0)
                return r;
        _cleanup_free_ char *msg = NULL;
        if (ms == 0 || counters_validate(NULL, ms, &msg) < 0)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                         "option 'counter-interval-ms': %u is out of range (%d..%d)", ms,
                                         COUNTERS_MIN_INTERVAL_MS, COUNTERS_MAX_INTERVAL_MS);
        o->counter_interval_ms = ms;
        return 0;
}

/* One row per option. Keep docs/dbus-api.md in step. */
static const RecordOptionSpec option_table[] = {
        { "pids", "ai", parse_pids },
        { "system", "b", parse_system },
        { "command-pid", "i", parse_command_pid },
        { "frequency", "u", parse_frequency },
        { "kernel", "b", parse_kernel },
        { "duration-ms", "u", parse_duration },
        { "unwind", "s", parse_unwind },
        { "stack-size", "u", parse_stack_size },
        { "symbolize", "b", parse_symbolize },
        { "debuginfod", "b", parse_debuginfod },
        { "container", "s", parse_container },
        { "counters", "as", parse_counters },
        { "counter-interval-ms", "u", parse_counter_interval },
        { "off-cpu", "b", parse_off_cpu },
        { "off-cpu-min-ns", "t", parse_off_cpu_min },
        { "python-frames", "b", parse_python_frames },
};

int record_options_check_targets(const RecordOptions *o, sd_bus_error *error) {
        int r;
        for (size_t i = 0; i < o->n_given_pids; i++)
                if ((r = check_target(o->pids[i], "pids", error)) < 0)
                        return r;
        if (o->command_pid > 0 && (r = check_target(o->command_pid, "command-pid", error)) < 0)
                return r;
        return 0;
}

const char *record_options_known_keys(void) {
        static char buf[512];
        if (buf[0] == 0) {
                size_t off = 0;
                for (size_t i = 0; i < ELEMENTSOF(option_table); i++)
                        off += (size_t) snprintf(buf + off, sizeof(buf) - off, "%s%s", i ? ", " : "",
                                                 option_table[i].key);
        }
        return buf;
}

static const RecordOptionSpec *find_option(const char *key) {
        for (size_t i = 0; i < ELEMENTSOF(option_table); i++)
                if (strcmp(option_table[i].key, key) == 0)
                        return &option_table[i];
        return NULL;
}

static int record_options_check(RecordOptions *o, sd_bus_error *error) {
        if (o->container && o->system)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                         "option 'system': already records every process; leave out 'container'");
        /* 'container': its processes (or a wait for them) come with
         * record_options_expand_container() */
        int targets = (o->n_pids > 0 || o->container) + o->system + (o->command_pid > 0);
        if (targets == 0)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                         "no target: give 'pids', 'command-pid', 'container' or 'system'");
        /* With 'system', 'command-pid' only says when to end (the command
         * exited), as `perf record -a -- COMMAND` does. */
        if (o->system && o->n_pids > 0)
                return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                         "option 'system': already records every process; leave out 'pids'");
        return 0;
}

int record_options_parse(sd_bus_message *m, RecordOptions *o, sd_bus_error *error) {
        bool seen[ELEMENTSOF(option_table)] = {};
        int r;

        *o = (RecordOptions){
                .frequency = RECORD_OPTIONS_DEFAULT_FREQUENCY,
                .kernel = -1,
                .unwind = RECORD_UNWIND_AUTO,
                .stack_size = RECORD_OPTIONS_DEFAULT_STACK_SIZE,
                .symbolize = true,
                .off_cpu_min_ns = RECORD_OPTIONS_DEFAULT_OFF_CPU_MIN_NS,
                .python_frames = true,
        };
        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        for (;;) {
                const char *key, *contents;
                char type;
                r = sd_bus_message_enter_container(m, 'e', "sv");
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                r = sd_bus_message_read_basic(m, 's', &key);
                if (r < 0)
                        return r;
                const RecordOptionSpec *spec = find_option(key);
                if (!spec)
                        return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                                 "unknown option '%.64s' (known options: %s)", key,
                                                 record_options_known_keys());
                if (seen[spec - option_table])
                        return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                                 "option '%s' is given twice", spec->key);
                seen[spec - option_table] = true;
                r = sd_bus_message_peek_type(m, &type, &contents);
                if (r < 0)
                        return r;
                if (type != 'v' || !contents || strcmp(contents, spec->signature) != 0)
                        return sd_bus_error_setf(error, PERISCOPE_ERROR_INVALID_OPTION,
                                                 "option '%s' must have type '%s', got '%.32s'", spec->key,
                                                 spec->signature, contents ? contents : "?");
                r = sd_bus_message_enter_container(m, 'v', contents);
                if (r < 0)
                        return r;
                r = spec->parse(m, o, spec, error);
                if (r < 0 || sd_bus_error_is_set(error))
                        return r < 0 ? r : -EINVAL;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_exit_container(m);
        if (r < 0)
                return r;
        r = record_options_check(o, error);
        return r < 0 ? r : 0;
}
