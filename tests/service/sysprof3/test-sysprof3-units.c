/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-sysprof3-units: the pure decisions of the sysprofd drop-in: which
 * /proc paths GetProcFile/GetProcFd serve (and what they refuse, with
 * real opens of this process's files), the GetProcessInfo attribute list,
 * and how PerfEventOpen's attributes are decoded and narrowed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "perf-open-options.h"
#include "proc-files.h"
#include "test-check.h"

static int parse(const char *path, ProcFilePath *p) {
        const char *why = NULL;
        int r = proc_file_path_parse(path, strlen(path) + 1, p, &why); /* with its NUL, as Sysprof sends it */
        if (r < 0)
                CHECK_MSG(why && *why, "refusal of %s says nothing", path);
        return r;
}

TEST(proc_paths) {
        ProcFilePath p;
        CHECK(parse("/proc/123/maps", &p) == 0 && p.pid == 123 && strcmp(p.relative, "maps") == 0);
        CHECK(parse("/proc/7/task/8/stat", &p) == 0 && p.pid == 7 && strcmp(p.relative, "task/8/stat") == 0);
        CHECK(parse("/proc/1/mountinfo", &p) == 0);
        static const char *const refused[] = {
                "/proc/1/root/etc/shadow", "/proc/1/root", "/proc/1/cwd/x", "/proc/1/exe", "/proc/1/fd/3",
                "/proc/1/map_files/400000-401000", "/proc/1/mem", "/proc/1/environ", "/proc/1/../1/maps",
                "/proc/1/./maps", "/proc/1//maps", "/proc/self/maps", "/proc/01/maps", "/proc/-1/maps",
                "/proc/kallsyms", "/proc/stat", "/sys/kernel/notes", "/etc/passwd", "proc/1/maps", "/proc/1/task/2/root",
                "/proc/1/task/x/stat", "/proc/1/maps/", "", "/proc/1/maps/x",
        };
        for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
                CHECK_MSG(parse(refused[i], &p) < 0, "'%s' was accepted", refused[i]);
        const char embedded[] = "/proc/1/maps\0/root";
        const char *why;
        CHECK(proc_file_path_parse(embedded, sizeof(embedded), &p, &why) == -EINVAL);
}

TEST(proc_file_open) {
        ProcFilePath p;
        bool foreign;
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/cmdline", (int) getpid());
        CHECK(parse(path, &p) == 0);
        int fd = proc_file_open(&p, getuid(), false, &foreign);
        CHECK_MSG(fd >= 0, "own cmdline: %s", strerror(-fd));
        if (fd >= 0)
                close(fd);
        p.pid = 1 << 22; /* beyond pid_max */
        CHECK(proc_file_open(&p, getuid(), false, &foreign) == -ESRCH);
        /* pid 1 is root's: another uid is refused and told polkit could allow it. */
        CHECK(parse("/proc/1/maps", &p) == 0);
        CHECK(proc_file_open(&p, 65534, false, &foreign) == -EPERM && foreign);
}

TEST(process_info_attributes) {
        unsigned want;
        char bad[80];
        CHECK(proc_info_attributes_parse("pid,maps,mountinfo,cmdline,comm,cgroup", &want, bad, sizeof(bad)) == 0);
        CHECK(want == (PROC_INFO_MAPS | PROC_INFO_MOUNTINFO | PROC_INFO_CMDLINE | PROC_INFO_COMM | PROC_INFO_CGROUP));
        CHECK(proc_info_attributes_parse("pid,environ", &want, bad, sizeof(bad)) == -EINVAL && strcmp(bad, "environ") == 0);
        CHECK(proc_info_attributes_parse("", &want, bad, sizeof(bad)) == 0 && want == 0);
}

static int apply(struct perf_event_attr *a, const char *key, char type, uint64_t v) {
        PerfOpenOption o = { key, type, v };
        return perf_open_option_apply(a, &o, NULL);
}

/* A cpu-clock event decoded from the options Sysprof sends. */
static struct perf_event_attr cpu_clock_attr(void) {
        struct perf_event_attr a = {};
        CHECK(apply(&a, "type", 'u', PERF_TYPE_SOFTWARE) == 0);
        CHECK(apply(&a, "config", 't', PERF_COUNT_SW_CPU_CLOCK) == 0);
        CHECK(apply(&a, "sample_period", 't', 1000000) == 0);
        CHECK(apply(&a, "sample_type", 't', PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN) == 0);
        CHECK(apply(&a, "disabled", 'b', 1) == 0 && a.disabled);
        return a;
}

TEST(perf_options_decoded) {
        struct perf_event_attr a = cpu_clock_attr();
        CHECK(a.type == PERF_TYPE_SOFTWARE && a.config == PERF_COUNT_SW_CPU_CLOCK && a.sample_period == 1000000);
        CHECK(apply(&a, "type", 't', 1) == -EINVAL);          /* wrong D-Bus type */
        CHECK(apply(&a, "exclude_kernel", 'b', 0) == -EINVAL); /* not the caller's to choose */
        CHECK(apply(&a, "inherit", 'b', 1) == -EINVAL);
}

/* The kernel's part only for root; never the hypervisor's, never inherit. */
TEST(perf_attr_narrowed) {
        struct perf_event_attr a = cpu_clock_attr();
        struct perf_event_attr user = a, root = a;
        CHECK(perf_open_attr_restrict(&user, false, NULL) == 0);
        CHECK(user.exclude_kernel && user.exclude_callchain_kernel && user.exclude_hv && !user.inherit);
        CHECK(perf_open_attr_restrict(&root, true, NULL) == 0);
        CHECK(!root.exclude_kernel && root.exclude_hv);
}

TEST(perf_attr_refused) {
        struct perf_event_attr a = cpu_clock_attr();
        struct perf_event_attr bad = a;
        bad.type = PERF_TYPE_TRACEPOINT;
        CHECK(perf_open_attr_restrict(&bad, true, NULL) == -EINVAL);
        bad = a;
        bad.sample_type |= PERF_SAMPLE_RAW;
        CHECK(perf_open_attr_restrict(&bad, true, NULL) == -EINVAL);
        bad = a;
        bad.sample_period = 100;
        CHECK(perf_open_attr_restrict(&bad, true, NULL) == -EINVAL);
        bad = a;
        bad.sample_stack_user = 65536;
        CHECK(perf_open_attr_restrict(&bad, true, NULL) == -EINVAL);
        bad = a;
        bad.use_clockid = 1;
        bad.clockid = 42;
        CHECK(perf_open_attr_restrict(&bad, true, NULL) == -EINVAL);
}

TEST(perf_target_checked) {
        CHECK(perf_open_target_check(123, -1, 0, 4, NULL) == 0);
        CHECK(perf_open_target_check(-1, 2, PERF_FLAG_FD_CLOEXEC, 4, NULL) == 0);
        CHECK(perf_open_target_check(0, 0, 0, 4, NULL) == -EINVAL);   /* the daemon itself */
        CHECK(perf_open_target_check(-1, -1, 0, 4, NULL) == -EINVAL); /* needs a cpu */
        CHECK(perf_open_target_check(5, 4, 0, 4, NULL) == -EINVAL);
        CHECK(perf_open_target_check(5, 0, PERF_FLAG_PID_CGROUP, 4, NULL) == -EINVAL);
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
