/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-perf-opener.c: the perf opener (service/perf/perf-opener.h) on real
 * perf events, as root:
 *   - it keeps CAP_PERFMON alone here (perf_event_paranoid <= 2), no new
 *     privileges, and no fd but stderr and its socket;
 *   - a cpu-clock event it opens on a spinning child counts its CPU time;
 *     a recording's events through it (frame pointers and DWARF) sample;
 *   - the attrs the sysprofd drop-in opens, narrowed by its own rules, are
 *     served; generic hardware events reach the kernel;
 *   - it refuses another attr size, cache/raw/breakpoint/tracepoint and
 *     PMU events, a group fd, flags, bits periscoped never sets, pid 0 or
 *     its own pid, with -EBADRQC; malformed datagrams (short, long, empty,
 *     with an fd) with -EBADMSG, and goes on serving;
 *   - awaited through a wait hook (a fiber's): the hook waits, not on the
 *     socket itself; a caller without one meanwhile gets its own answer
 *     and the waiting one its own; the answer of a wait that gave up is
 *     dropped, not handed to the next;
 *   - a refusal's message names the sysctl and the capability;
 *   - killed, every open fails with -ENOLINK and the hint says so. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/hw_breakpoint.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "basic.h"
#include "perf-open-options.h"
#include "perf-opener-policy.h"
#include "perf.h"
#include "test-check.h"

static volatile unsigned long sink;

static pid_t spawn_spinner(void) {
        pid_t pid = fork();
        if (pid == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                for (;;)
                        sink++;
        }
        return pid;
}

static void sleep_ms(int ms) {
        struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000 };
        nanosleep(&ts, NULL);
}

/* A counting cpu-clock event as periscoped's recordings set it up. */
static struct perf_event_attr cpu_clock(void) {
        struct perf_event_attr a;
        memset(&a, 0, sizeof(a));
        a.size = sizeof(a);
        a.type = PERF_TYPE_SOFTWARE;
        a.config = PERF_COUNT_SW_CPU_CLOCK;
        a.exclude_kernel = 1;
        a.exclude_hv = 1;
        a.exclude_guest = 1;
        return a;
}

static PerfOpenerRequest request(pid_t pid) {
        return (PerfOpenerRequest) {
                .pid = pid, .cpu = -1, .group_fd = -1, .flags = PERF_FLAG_FD_CLOEXEC, .attr = cpu_clock()
        };
}

static unsigned long long status_field(pid_t pid, const char *field) {
        char path[64], line[256];
        unsigned long long v = ~0ull;
        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        FILE *f = fopen(path, "re");
        if (!f)
                return v;
        size_t n = strlen(field);
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, field, n) == 0 && line[n] == ':')
                        v = strtoull(line + n + 1, NULL, strstr(field, "Cap") ? 16 : 10);
        fclose(f);
        return v;
}

static void check_process(PerfOpener *o) {
        pid_t pid = perf_opener_pid(o);
        unsigned long long perfmon = 1ull << CAP_PERFMON;
        CHECK_MSG(status_field(pid, "CapEff") == perfmon && status_field(pid, "CapPrm") == perfmon,
                  "the opener's CapEff %llx, CapPrm %llx, expected CAP_PERFMON alone (%llx)",
                  status_field(pid, "CapEff"), status_field(pid, "CapPrm"), perfmon);
        CHECK(status_field(pid, "CapInh") == 0 && status_field(pid, "CapAmb") == 0);
        CHECK(status_field(pid, "NoNewPrivs") == 1);
        CHECK(!perf_opener_has_sys_admin(o));
        char path[64];
        int n = 0;
        for (int fd = 0; fd < 64; fd++) {
                snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) pid, fd);
                if (access(path, F_OK) == 0) {
                        CHECK_MSG(fd == 2 || fd == 3, "the opener holds fd %d", fd);
                        n++;
                }
        }
        CHECK_MSG(n == 2, "the opener holds %d fds, expected stderr and its socket", n);
        printf("  opener pid %d: CAP_PERFMON only, no new privileges, fds 2 and 3\n", (int) pid);
}

static void check_counts(PerfOpener *o, pid_t spinner) {
        int fd = perf_open(o, &(struct perf_event_attr) { 0 }, spinner, -1);
        CHECK_MSG(fd == -EBADRQC, "a zeroed attr: %d", fd);
        struct perf_event_attr a = cpu_clock();
        fd = perf_open(o, &a, spinner, -1);
        CHECK_MSG(fd >= 0, "cpu-clock on the spinner: %s", strerror(-fd));
        if (fd < 0)
                return;
        CHECK((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
        sleep_ms(200);
        uint64_t ns = 0;
        CHECK(read(fd, &ns, sizeof(ns)) == sizeof(ns));
        /* the machine may be busy: any CPU time counted will do */
        CHECK_MSG(ns > 1000 * 1000, "the spinner ran %llu ns in 200 ms", (unsigned long long) ns);
        printf("  the opener's cpu-clock fd counted %llu ms of the spinner's 200\n",
               (unsigned long long) (ns / 1000000));
        close(fd);
}

static int count_samples(const struct perf_event_header *h, size_t size, void *userdata) {
        (void) size;
        if (h->type == PERF_RECORD_SAMPLE)
                (*(int *) userdata)++;
        return 0;
}

/* Events as a recording opens them (perf-events.c), through the opener. */
static void check_recording_events(PerfOpener *o, pid_t spinner, bool dwarf) {
        PerfEventsConfig cfg = {
                .frequency = 999,
                .sample_type =
                        PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN,
                .kernel = true,
                .opener = o,
        };
        if (dwarf) {
                cfg.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
                cfg.sample_regs_user = (1ull << 6) | (1ull << 7) | (1ull << 8);
                cfg.sample_stack_user = 8192;
                cfg.exclude_callchain_user = true;
        }
        PerfEvents *p = NULL;
        CHECK(perf_events_new(&cfg, &p) == 0);
        if (!p)
                return;
        int r = perf_events_add_task(p, spinner);
        CHECK_MSG(r == 0, "perf_events_add_task through the opener: %s", strerror(-r));
        CHECK(perf_events_enable(p) == 0);
        sleep_ms(300);
        int samples = 0;
        (void) perf_events_drain(p, count_samples, &samples);
        CHECK_MSG(samples >= 5, "%d samples in 300 ms at 999 Hz", samples);
        CHECK(perf_events_get_bad_records(p) == 0);
        printf("  a recording's %s events through the opener: %d samples in 300 ms\n", dwarf ? "DWARF" : "fp", samples);
        perf_events_free(p);
}

/* What Sysprof 3.46 asks PerfEventOpen, narrowed as the drop-in does. */
static void check_drop_in_attrs(PerfOpener *o, pid_t spinner) {
        _cleanup_free_ char *why = NULL;
        for (int hw = 0; hw < 2; hw++) {
                for (int kernel = 0; kernel < 2; kernel++) {
                        struct perf_event_attr a = { .size = sizeof(a) };
                        a.type = hw ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE;
                        a.config = hw ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK;
                        a.sample_period = hw ? 1200000 : 1000000;
                        a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_TIME |
                                        PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
                        a.sample_regs_user = 0xff;
                        a.sample_stack_user = 16384;
                        a.wakeup_events = 149;
                        a.disabled = a.mmap = a.mmap2 = a.comm = a.task = a.exclude_idle = a.sample_id_all = 1;
                        a.use_clockid = a.build_id = 1;
                        a.clockid = CLOCK_MONOTONIC;
                        CHECK(perf_open_attr_restrict(&a, kernel, NULL) == 0);
                        PerfOpenerRequest q = request(spinner);
                        q.attr = a;
                        CHECK_MSG(perf_opener_check(&q, 1, &why) == 0,
                                  "the drop-in's %s attr (kernel %d) is refused: %s", hw ? "cycles" : "cpu-clock",
                                  kernel, why);
                        int fd = perf_opener_request(o, &q);
                        /* no PMU on some machines: the kernel's ENOENT, not the opener's refusal */
                        CHECK_MSG(hw ? fd >= 0 || (fd != -EBADRQC && fd != -EBADMSG) : fd >= 0,
                                  "the drop-in's %s attr through the opener: %s", hw ? "cycles" : "cpu-clock",
                                  strerror(-fd));
                        if (fd >= 0)
                                close(fd);
                }
        }
        printf("  the drop-in's cpu-clock and cycles attrs pass the opener\n");
}

static void expect_refused(PerfOpener *o, const char *what, PerfOpenerRequest q) {
        int fd = perf_opener_request(o, &q);
        CHECK_MSG(fd == -EBADRQC, "%s: %d (%s), expected -EBADRQC", what, fd, fd < 0 ? strerror(-fd) : "an fd");
        if (fd >= 0)
                close(fd);
}

static void check_refusals(PerfOpener *o, pid_t spinner) {
        PerfOpenerRequest q;
        q = request(spinner), q.attr.size = PERF_ATTR_SIZE_VER5;
        expect_refused(o, "a smaller attr.size", q);
        q = request(spinner), q.attr.size = sizeof(q.attr) + 8;
        expect_refused(o, "a larger attr.size", q);
        q = request(spinner), q.attr.type = PERF_TYPE_HW_CACHE, q.attr.config = PERF_COUNT_HW_CACHE_L1D;
        expect_refused(o, "a hardware cache event", q);
        q = request(spinner), q.attr.type = PERF_TYPE_HARDWARE, q.attr.config = PERF_COUNT_HW_MAX;
        expect_refused(o, "a hardware event beyond the generic ones", q);
        q = request(spinner), q.attr.type = PERF_TYPE_HARDWARE, q.attr.config = (4ull << 32) | PERF_COUNT_HW_CPU_CYCLES;
        expect_refused(o, "a hardware event of another PMU", q);
        q = request(spinner), q.attr.type = PERF_TYPE_RAW, q.attr.config = 0x3c;
        expect_refused(o, "a raw event", q);
        q = request(spinner), q.attr.type = PERF_TYPE_TRACEPOINT, q.attr.config = 1;
        expect_refused(o, "a tracepoint", q);
        q = request(spinner), q.attr.type = PERF_TYPE_BREAKPOINT, q.attr.bp_type = HW_BREAKPOINT_W,
        q.attr.bp_addr = 0x1000, q.attr.bp_len = HW_BREAKPOINT_LEN_8;
        expect_refused(o, "a breakpoint", q);
        q = request(spinner), q.attr.type = 8; /* a dynamic PMU's type */
        expect_refused(o, "a PMU's event", q);
        q = request(spinner), q.attr.config = PERF_COUNT_SW_BPF_OUTPUT;
        expect_refused(o, "bpf-output", q);
        q = request(spinner), q.group_fd = 0;
        expect_refused(o, "a group fd", q);
        q = request(spinner), q.flags = PERF_FLAG_FD_CLOEXEC | PERF_FLAG_FD_OUTPUT;
        expect_refused(o, "PERF_FLAG_FD_OUTPUT", q);
        q = request(spinner), q.flags = PERF_FLAG_PID_CGROUP;
        expect_refused(o, "PERF_FLAG_PID_CGROUP", q);
        q = request(spinner), q.reserved = 1;
        expect_refused(o, "the reserved field", q);
        q = request(spinner), q.attr.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
        q.attr.sample_stack_user = 8192, q.attr.sample_regs_user = PERF_REGS_UNWIND_MASK | (1ull << 46);
        expect_refused(o, "arm64's VG (bit 46) or any register beyond the general ones", q);
        /* what the unwinders sample (on arm64 every general register, x0-x30, sp, pc, is valid too) */
#if defined(__aarch64__)
        q.attr.sample_regs_user = PERF_REGS_USER_MASK;
#else
        q.attr.sample_regs_user = PERF_REGS_UNWIND_MASK;
#endif
        {
                int fd = perf_opener_request(o, &q);
                CHECK_MSG(fd >= 0, "user registers %#llx: %s", (unsigned long long) q.attr.sample_regs_user,
                          fd < 0 ? strerror(-fd) : "");
                if (fd >= 0)
                        close(fd);
        }
        q = request(spinner), q.attr.sigtrap = 1, q.attr.remove_on_exec = 1;
        expect_refused(o, "sigtrap", q);
        q = request(spinner), q.attr.enable_on_exec = 1;
        expect_refused(o, "enable_on_exec", q);
        q = request(spinner), q.attr.pinned = 1;
        expect_refused(o, "pinned", q);
        q = request(spinner), q.attr.precise_ip = 2;
        expect_refused(o, "precise_ip", q);
        q = request(spinner), q.attr.read_format = PERF_FORMAT_GROUP;
        expect_refused(o, "read_format", q);
        q = request(spinner), q.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_RAW;
        expect_refused(o, "PERF_SAMPLE_RAW", q);
        q = request(spinner), q.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_REGS_INTR, q.attr.sample_regs_intr = 1;
        expect_refused(o, "interrupt registers", q);
        q = request(spinner), q.attr.sample_type = PERF_SAMPLE_BRANCH_STACK,
        q.attr.branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
        expect_refused(o, "a branch stack", q);
        q = request(spinner), q.attr.sample_period = 100;
        expect_refused(o, "a 100 ns period", q);
        q = request(spinner), q.attr.exclude_hv = 0;
        expect_refused(o, "the hypervisor's part", q);
        q = request(spinner), q.attr.context_switch = 1;
        expect_refused(o, "context switch records", q);
        q = request(spinner), q.attr.aux_watermark = 4096;
        expect_refused(o, "aux", q);
        q = request(0);
        expect_refused(o, "pid 0 (the opener itself)", q);
        q = request(perf_opener_pid(o));
        expect_refused(o, "the opener's pid", q);
        q = request(-1);
        expect_refused(o, "pid -1 without a cpu", q);
        q = request(-1), q.cpu = 0, q.attr.inherit = 1;
        expect_refused(o, "inherit on a CPU", q);
        printf("  the opener refused 31 requests periscoped never makes\n");
}

/* Off-CPU's two events (docs/off-cpu.md) are served, and only they get
 * context_switch and a period of one switch. */
static void check_off_cpu(PerfOpener *o, pid_t spinner) {
        PerfOpenerRequest q = request(spinner);
        q.attr.config = PERF_COUNT_SW_DUMMY, q.attr.freq = 0, q.attr.sample_period = 0, q.attr.context_switch = 1;
        int fd = perf_opener_request(o, &q);
        CHECK_MSG(fd >= 0, "the dummy event with context_switch: %s", strerror(-fd));
        close(fd);
        q = request(spinner);
        q.attr.config = PERF_COUNT_SW_CONTEXT_SWITCHES, q.attr.freq = 0, q.attr.sample_period = 1;
        q.attr.exclude_kernel = 0;
        fd = perf_opener_request(o, &q);
        CHECK_MSG(fd >= 0, "context-switches sampling every switch: %s", strerror(-fd));
        close(fd);
        q.attr.context_switch = 1;
        expect_refused(o, "context_switch on the context-switches event", q);
        q = request(spinner), q.attr.freq = 0, q.attr.sample_period = 1;
        expect_refused(o, "cpu-clock at a period of 1 ns", q);
        q = request(spinner), q.attr.config = PERF_COUNT_SW_PAGE_FAULTS, q.attr.freq = 0, q.attr.sample_period = 1;
        expect_refused(o, "page faults at a period of 1", q);
        printf("  off-CPU's dummy and context-switches events are served, nothing else gets what they get\n");
}

/* Sends a raw datagram (with fd when >= 0) and returns the answer's error,
 * 1 if an fd came with it, or -1000 when no answer came. */
static int raw_exchange(PerfOpener *o, const void *data, size_t size, int fd) {
        int sock = perf_opener_socket(o);
        if (fd_send_with_data(sock, data, size, fd, MSG_NOSIGNAL) < 0)
                return -1000;
        PerfOpenerAnswer a;
        int got = -1;
        ssize_t k = fd_receive_with_data(sock, &a, sizeof(a), MSG_CMSG_CLOEXEC, &got);
        if (got >= 0) {
                close(got);
                return 1;
        }
        return k == sizeof(a) ? a.error : -1000;
}

static void check_malformed(PerfOpener *o, pid_t spinner) {
        PerfOpenerRequest q = request(spinner);
        uint8_t big[sizeof(q) + 64];
        memset(big, 0, sizeof(big));
        memcpy(big, &q, sizeof(q));
        int r = raw_exchange(o, &q, 10, -1);
        CHECK_MSG(r == -EBADMSG, "a 10-byte request: %d", r);
        r = raw_exchange(o, &q, sizeof(q) - 1, -1);
        CHECK_MSG(r == -EBADMSG, "a request one byte short: %d", r);
        r = raw_exchange(o, big, sizeof(q) + 1, -1);
        CHECK_MSG(r == -EBADMSG, "a request one byte long: %d", r);
        r = raw_exchange(o, big, sizeof(big), -1);
        CHECK_MSG(r == -EBADMSG, "a request 64 bytes long: %d", r);
        r = raw_exchange(o, big, 0, -1);
        CHECK_MSG(r == -EBADMSG, "an empty datagram: %d", r);
        int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
        r = raw_exchange(o, &q, sizeof(q), devnull);
        CHECK_MSG(r == -EBADMSG, "a request with an fd: %d", r);
        close(devnull);
        memset(big, 0xff, sizeof(big));
        r = raw_exchange(o, big, sizeof(q), -1);
        CHECK_MSG(r == -EBADRQC, "a request of 0xff bytes: %d", r);
        /* still serving */
        r = raw_exchange(o, &q, sizeof(q), -1);
        CHECK_MSG(r == 1, "a valid request after the garbage: %d", r);
        CHECK(!perf_opener_gone(o));
        printf("  malformed requests answered -EBADMSG; the opener still serves\n");
}

/* What a refusal says, at Debian's level 3 and below (the wording of every
 * cause is test-perf-diagnose's; here: the opener is named as the holder). */
static void check_hints(PerfOpener *o) {
        char h[640];
        perf_open_error_hint_at(o, 3, -EACCES, h, sizeof(h));
        CHECK_MSG(strstr(h, "kernel.perf_event_paranoid=3") &&
                          strstr(h, "CAP_SYS_ADMIN, which periscoped's perf opener") &&
                          strstr(h, "CapabilityBoundingSet="),
                  "level 3, an opener without CAP_SYS_ADMIN: %s", h);
        printf("  %s\n", h);
        perf_open_error_hint_at(o, 2, -EACCES, h, sizeof(h));
        CHECK_MSG(strstr(h, "periscoped's perf opener has CAP_PERFMON") && strstr(h, "kernel.perf_event_paranoid=2") &&
                          (strstr(h, "seccomp") || strstr(h, "security module")),
                  "level 2, the opener refused: %s", h);
        perf_open_error_hint_at(o, 2, -EBADRQC, h, sizeof(h));
        CHECK_MSG(strstr(h, "refused the event"), "a refusal of the opener: %s", h);
}

/* A PerfOpenerWait as a fiber's: it polls, or gives up (-ECANCELED);
 * meanwhile (as the loop would) a caller without a wait opens nested. */
typedef struct TestWait {
        PerfOpener *o;
        pid_t spinner;
        bool cancel;
        const struct perf_event_attr *nested_attr; /* NULL: none */
        unsigned calls;
        int fd_seen;
        int nested;        /* what that caller got */
        bool woken_nested; /* the fd was readable at once after it (the answer kept for this caller) */
} TestWait;

static int test_wait(int fd, unsigned timeout_ms, void *userdata) {
        TestWait *w = userdata;
        if (w->calls++ == 0 && w->nested_attr) {
                w->nested = perf_open(w->o, w->nested_attr, w->spinner, -1);
                struct pollfd now = { .fd = fd, .events = POLLIN };
                w->woken_nested = poll(&now, 1, 0) == 1;
        }
        w->fd_seen = fd;
        if (w->cancel)
                return -ECANCELED;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int r = poll(&p, 1, (int) timeout_ms);
        return r < 0 ? -errno : r > 0;
}

static void check_wait(PerfOpener *o, pid_t spinner) {
        struct perf_event_attr a = cpu_clock();
        struct perf_event_attr refused = a;
        refused.type = PERF_TYPE_BREAKPOINT;
        TestWait w = { .o = o, .spinner = spinner };
        int fd = perf_open_wait(o, &a, spinner, -1, test_wait, &w);
        CHECK_MSG(fd >= 0, "an open through a wait hook: %d", fd);
        safe_close(fd);
        CHECK_MSG(w.calls >= 1 && w.fd_seen >= 0 && w.fd_seen != perf_opener_socket(o),
                  "the hook waited %u times, on fd %d (the socket is %d)", w.calls, w.fd_seen, perf_opener_socket(o));
        /* a caller on the loop's stack meanwhile: each gets its own answer */
        w = (TestWait){ .o = o, .spinner = spinner, .nested_attr = &refused };
        fd = perf_open_wait(o, &a, spinner, -1, test_wait, &w);
        CHECK_MSG(fd >= 0 && w.nested == -EBADRQC, "waiting: %d (an event), meanwhile: %d (a refusal)", fd, w.nested);
        CHECK_MSG(w.woken_nested, "the waiting caller was not woken for the answer kept for it");
        safe_close(fd);
        w = (TestWait){ .o = o, .spinner = spinner, .nested_attr = &a };
        fd = perf_open_wait(o, &refused, spinner, -1, test_wait, &w);
        CHECK_MSG(fd == -EBADRQC && w.nested >= 0, "waiting: %d (a refusal), meanwhile: %d (an event)", fd, w.nested);
        safe_close(w.nested);
        /* given up: the answer (a refusal) comes later, and is not the
         * next one's; likewise when it came meanwhile */
        w = (TestWait){ .o = o, .spinner = spinner, .cancel = true };
        fd = perf_open_wait(o, &refused, spinner, -1, test_wait, &w);
        CHECK_MSG(fd == -ECANCELED, "a wait that gave up: %d", fd);
        fd = perf_open(o, &a, spinner, -1);
        CHECK_MSG(fd >= 0, "the open after a wait that gave up got %d (the earlier answer?)", fd);
        safe_close(fd);
        w = (TestWait){ .o = o, .spinner = spinner, .cancel = true, .nested_attr = &a };
        fd = perf_open_wait(o, &refused, spinner, -1, test_wait, &w);
        CHECK_MSG(fd == -ECANCELED && w.nested >= 0, "a wait that gave up: %d, meanwhile: %d", fd, w.nested);
        safe_close(w.nested);
        fd = perf_open(o, &a, spinner, -1);
        CHECK_MSG(fd >= 0, "the open after a wait that gave up (answered meanwhile) got %d", fd);
        safe_close(fd);
        CHECK(!perf_opener_gone(o));
        printf("  through a wait hook; a caller without one meanwhile; given-up answers dropped\n");
}

static void check_death(PerfOpener *o, pid_t spinner) {
        pid_t pid = perf_opener_pid(o);
        CHECK(kill(pid, SIGKILL) == 0);
        sleep_ms(50);
        struct perf_event_attr a = cpu_clock();
        int fd = perf_open(o, &a, spinner, -1);
        CHECK_MSG(fd == -PERF_OPENER_GONE, "an open after the opener's death: %d", fd);
        CHECK(perf_opener_gone(o));
        fd = perf_open(o, &a, spinner, -1);
        CHECK_MSG(fd == -PERF_OPENER_GONE, "a second open after the opener's death: %d", fd);
        char hint[640];
        perf_open_error_hint(o, fd, hint, sizeof(hint));
        CHECK_MSG(strstr(hint, "perf opener") && strstr(hint, "killed by signal 9"), "hint: %s", hint);
        PerfEventsConfig cfg = { .frequency = 99, .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID, .opener = o };
        PerfEvents *p = NULL;
        CHECK(perf_events_new(&cfg, &p) == 0);
        if (p) {
                CHECK(perf_events_add_task(p, spinner) == -PERF_OPENER_GONE);
                perf_events_free(p);
        }
        CHECK(kill(pid, 0) < 0 && errno == ESRCH); /* reaped */
        printf("  after its death: %s\n", hint);
}

/* Each case has an opener and a spinning child of its own. */
typedef struct Fixture {
        PerfOpener *o;
        pid_t spinner;
} Fixture;

static Fixture fixture_init(void) {
        Fixture fx = {};
        MUST(perf_opener_start(&fx.o));
        fx.spinner = spawn_spinner();
        MUST(fx.spinner);
        return fx;
}

static void fixture_done(Fixture *fx) {
        perf_opener_free(fx->o);
        kill(fx->spinner, SIGKILL);
        waitpid(fx->spinner, NULL, 0);
}

TEST(capabilities_and_fds) {
        Fixture fx = fixture_init();
        if (perf_event_paranoid() <= 2)
                check_process(fx.o);
        else
                fail("kernel.perf_event_paranoid is above 2 here: the checks assume CAP_PERFMON alone");
        fixture_done(&fx);
}

TEST(cpu_clock_counts) {
        Fixture fx = fixture_init();
        check_counts(fx.o, fx.spinner);
        fixture_done(&fx);
}

TEST(recording_events_fp) {
        Fixture fx = fixture_init();
        check_recording_events(fx.o, fx.spinner, false);
        fixture_done(&fx);
}

TEST(recording_events_dwarf) {
        Fixture fx = fixture_init();
        check_recording_events(fx.o, fx.spinner, true);
        fixture_done(&fx);
}

TEST(drop_in_attrs_served) {
        Fixture fx = fixture_init();
        check_drop_in_attrs(fx.o, fx.spinner);
        fixture_done(&fx);
}

TEST(refusals) {
        Fixture fx = fixture_init();
        check_refusals(fx.o, fx.spinner);
        fixture_done(&fx);
}

TEST(off_cpu_events) {
        Fixture fx = fixture_init();
        check_off_cpu(fx.o, fx.spinner);
        fixture_done(&fx);
}

TEST(malformed_datagrams) {
        Fixture fx = fixture_init();
        check_malformed(fx.o, fx.spinner);
        fixture_done(&fx);
}

TEST(wait_hook) {
        Fixture fx = fixture_init();
        check_wait(fx.o, fx.spinner);
        fixture_done(&fx);
}

TEST(refusal_hints) {
        Fixture fx = fixture_init();
        check_hints(fx.o);
        fixture_done(&fx);
}

TEST(death) {
        Fixture fx = fixture_init();
        check_death(fx.o, fx.spinner);
        fixture_done(&fx);
}

int main(int argc, char **argv) {
        if (geteuid() != 0) {
                fprintf(stderr, "FAIL: run as root (the opener keeps root's CAP_PERFMON), as ./test.sh does\n");
                return 1;
        }
        return test_main(argc, argv);
}
