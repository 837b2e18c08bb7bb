/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf-events.c: opens the sampling events and reads their rings. */
#include "perf-events.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "basic.h"
#include "perf-record.h"

#define PERF_RING_DEFAULT_PAGES 64u
#define PERF_RING_MIN_PAGES 4u

typedef struct PerfRing {
        int cpu;
        int fd;                    /* the event whose mmap this is (owned by events[]) */
        void *base;                /* metadata page + data */
        size_t mmap_size;
        uint8_t *data;
        uint64_t data_size;        /* power of two */
        uint8_t *copy;             /* a record that wraps around the end, made contiguous */
} PerfRing;

/* One opened event: the task it samples (-1: a CPU), and whether it was
 * revoked (disabled for good: enabling all events skips it). */
typedef struct PerfEventFd {
        int fd;
        pid_t tid;
        bool revoked;
        int off_cpu; /* 0, or PERF_EVENTS_SWITCH_RECORDS or _STACKS (config.off_cpu) */
} PerfEventFd;

struct PerfEvents {
        PerfEventsConfig config;
        bool build_ids;            /* attr.build_id accepted */
        int n_cpus;
        PerfRing *rings;           /* n_cpus entries, fd == -1 until the CPU has an event */
        PerfRingReader *readers;   /* n_cpus entries, scratch for perf_events_drain */
        PerfEventFd *fds;
        size_t n_fds, allocated_fds;
        uint64_t bad_records;
        long page_size;
        uint64_t *switch_ids; /* ids of the context-switches events (off_cpu) */
        size_t n_switch_ids, allocated_switch_ids;
        bool enabled;              /* events opened from now on start enabled */
        int switches_paused;       /* ... except off-CPU ones of these kinds */
};

int perf_events_new(const PerfEventsConfig *config, PerfEvents **ret) {
        _cleanup_free_ PerfEvents *p = calloc(1, sizeof(PerfEvents));
        if (!p)
                return -ENOMEM;
        p->config = *config;
        if (p->config.ring_pages == 0)
                p->config.ring_pages = PERF_RING_DEFAULT_PAGES;
        if (p->config.ring_pages & (p->config.ring_pages - 1))
                return -EINVAL;
        p->build_ids = true;
        p->page_size = sysconf(_SC_PAGESIZE);
        long n = sysconf(_SC_NPROCESSORS_CONF);
        if (n <= 0 || n > 4096)
                return -EINVAL;
        p->n_cpus = (int) n;
        p->rings = calloc((size_t) n, sizeof(PerfRing));
        if (!p->rings)
                return -ENOMEM;
        p->readers = calloc((size_t) n, sizeof(PerfRingReader));
        if (!p->readers) {
                free(TAKE_PTR(p->rings));
                return -ENOMEM;
        }
        for (int i = 0; i < p->n_cpus; i++) {
                p->rings[i].cpu = i;
                p->rings[i].fd = -1;
        }
        *ret = TAKE_PTR(p);
        return 0;
}

PerfEvents *perf_events_free(PerfEvents *p) {
        if (!p)
                return NULL;
        for (int i = 0; i < p->n_cpus; i++) {
                if (p->rings[i].base)
                        munmap(p->rings[i].base, p->rings[i].mmap_size);
                free(p->rings[i].copy);
        }
        for (size_t i = 0; i < p->n_fds; i++)
                safe_close(p->fds[i].fd);
        free(p->fds);
        free(p->switch_ids);
        free(p->rings);
        free(p->readers);
        free(p);
        return NULL;
}

static void perf_events_fill_attr(const PerfEvents *p, bool inherit, struct perf_event_attr *attr) {
        memset(attr, 0, sizeof(*attr));
        attr->size = sizeof(*attr);
        attr->type = PERF_TYPE_SOFTWARE;
        attr->config = PERF_COUNT_SW_CPU_CLOCK;
        attr->freq = 1;
        attr->sample_freq = p->config.frequency;
        attr->sample_type = p->config.sample_type;
        attr->sample_regs_user = p->config.sample_regs_user;
        attr->sample_stack_user = p->config.sample_stack_user;
        attr->exclude_callchain_user = p->config.exclude_callchain_user;
        attr->disabled = 1;
        attr->inherit = inherit;
        attr->mmap = 1;
        attr->mmap2 = 1;
        attr->comm = 1;
        attr->comm_exec = 1;
        attr->task = 1;
        attr->sample_id_all = 1;
        attr->exclude_kernel = !p->config.kernel;
        attr->exclude_callchain_kernel = !p->config.kernel;
        attr->exclude_hv = 1;
        attr->exclude_guest = 1;
        attr->use_clockid = 1;
        attr->clockid = CLOCK_MONOTONIC;
        attr->build_id = p->build_ids;
        attr->watermark = 1;
        /* off-CPU: drained (and its switch rate looked at) after an eighth
         * of the ring, so a storm is paused long before the ring is full */
        attr->wakeup_watermark =
                (uint32_t) (p->config.ring_pages * (uint64_t) p->page_size / (p->config.off_cpu ? 8 : 2));
}

/* The off-CPU events beside a sampling event (docs/off-cpu.md):
 * - PERF_EVENTS_SWITCH_RECORDS: a dummy event with context_switch=1:
 *   PERF_RECORD_SWITCH records at each switch-out and -in, no samples;
 * - PERF_EVENTS_SWITCH_STACKS: the context-switches software event with a
 *   period of 1: a sample (with the sampling event's stack fields) at every
 *   switch-out. It only counts in kernel mode (the switch happens there):
 *   exclude_kernel must be 0 even for a caller who may not see kernel
 *   addresses, whose samples then carry no kernel callchain
 *   (exclude_callchain_kernel) and whose IP is never written (the pump
 *   keeps only user addresses for them).
 * Each can be paused alone (perf_events_pause_switches()). */
static void perf_events_fill_switch_attr(const PerfEvents *p, bool inherit, int kind, struct perf_event_attr *attr) {
        perf_events_fill_attr(p, inherit, attr);
        if (kind == PERF_EVENTS_SWITCH_RECORDS) {
                attr->config = PERF_COUNT_SW_DUMMY;
                attr->context_switch = 1;
                attr->freq = 0;
                attr->sample_period = 0;
        } else {
                attr->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
                attr->exclude_kernel = 0;
                attr->freq = 0;
                attr->sample_period = 1;
        }
        /* mappings, comms and tasks come from the sampling event already */
        attr->mmap = 0;
        attr->mmap2 = 0;
        attr->comm = 0;
        attr->comm_exec = 0;
        attr->task = 0;
        attr->build_id = 0;
}

static int perf_events_add_switch_id(PerfEvents *p, int fd) {
        uint64_t id;
        if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
                return -errno;
        if (p->n_switch_ids == p->allocated_switch_ids) {
                size_t n = p->allocated_switch_ids ? p->allocated_switch_ids * 2 : 16;
                uint64_t *ids = reallocarray(p->switch_ids, n, sizeof(uint64_t));
                if (!ids)
                        return -ENOMEM;
                p->switch_ids = ids;
                p->allocated_switch_ids = n;
        }
        p->switch_ids[p->n_switch_ids++] = id;
        return 0;
}

const uint64_t *perf_events_get_switch_ids(const PerfEvents *p, size_t *ret_n) {
        *ret_n = p->n_switch_ids;
        return p->switch_ids;
}

static int perf_events_track_fd(PerfEvents *p, int fd, pid_t tid, int off_cpu) {
        if (p->n_fds == p->allocated_fds) {
                size_t n = p->allocated_fds ? p->allocated_fds * 2 : 16;
                PerfEventFd *fds = reallocarray(p->fds, n, sizeof(PerfEventFd));
                if (!fds)
                        return -ENOMEM;
                p->fds = fds;
                p->allocated_fds = n;
        }
        p->fds[p->n_fds++] = (PerfEventFd){ .fd = fd, .tid = tid, .off_cpu = off_cpu };
        return 0;
}

/* Maps the ring of a CPU on its first event, shrinking the ring when the
 * locked-memory budget (perf_event_mlock_kb) does not allow the default. */
static int perf_ring_map(PerfEvents *p, PerfRing *ring, int fd) {
        for (unsigned pages = p->config.ring_pages; pages >= PERF_RING_MIN_PAGES; pages /= 2) {
                size_t size = (size_t) (pages + 1) * (size_t) p->page_size;
                void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                if (base == MAP_FAILED) {
                        if (errno == EPERM || errno == ENOMEM)
                                continue;
                        return -errno;
                }
                ring->copy = malloc(UINT16_MAX + 1);
                if (!ring->copy) {
                        munmap(base, size);
                        return -ENOMEM;
                }
                ring->base = base;
                ring->mmap_size = size;
                ring->data = (uint8_t *) base + p->page_size;
                ring->data_size = (uint64_t) pages * (uint64_t) p->page_size;
                ring->fd = fd;
                return 0;
        }
        return -ENOMEM;
}

/* Tracks fd (owned from now on) as one of cpu's events: maps the CPU's
 * ring with the first, redirects later ones into it. */
static int perf_events_attach_fd(PerfEvents *p, int fd, pid_t pid, int cpu, int off_cpu) {
        _cleanup_close_ int owned = fd;
        int r = perf_events_track_fd(p, fd, pid, off_cpu);
        if (r < 0)
                return r;
        TAKE_FD(owned);

        PerfRing *ring = &p->rings[cpu];
        if (ring->fd < 0)
                r = perf_ring_map(p, ring, fd);
        else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring->fd) < 0)
                r = -errno;
        if (r < 0)
                return r;
        /* A task's events wait for perf_events_start_task(): its process
         * is checked again once they exist. */
        if (pid < 0 && p->enabled && !(off_cpu & p->switches_paused) && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
                return -errno;
        return 0;
}

static int perf_events_open_on_cpu(PerfEvents *p, pid_t pid, int cpu, bool inherit) {
        struct perf_event_attr attr;
        perf_events_fill_attr(p, inherit, &attr);
        int fd = perf_open_wait(p->config.opener, &attr, pid, cpu, p->config.wait, p->config.wait_userdata);
        if (fd == -EINVAL && p->build_ids) {
                /* Kernels before 5.12 do not know attr.build_id. */
                p->build_ids = false;
                perf_events_fill_attr(p, inherit, &attr);
                fd = perf_open_wait(p->config.opener, &attr, pid, cpu, p->config.wait, p->config.wait_userdata);
        }
        if (fd < 0)
                return fd;
        int r = perf_events_attach_fd(p, fd, pid, cpu, 0);
        if (r < 0 || !p->config.off_cpu)
                return r;
        /* after the sampling event: the CPU's ring exists, these join it */
        for (int kind = PERF_EVENTS_SWITCH_RECORDS; kind <= PERF_EVENTS_SWITCH_STACKS; kind <<= 1) {
                perf_events_fill_switch_attr(p, inherit, kind, &attr);
                fd = perf_open_wait(p->config.opener, &attr, pid, cpu, p->config.wait, p->config.wait_userdata);
                if (fd < 0)
                        return fd;
                if (kind == PERF_EVENTS_SWITCH_STACKS) {
                        r = perf_events_add_switch_id(p, fd);
                        if (r < 0) {
                                safe_close(fd);
                                return r;
                        }
                }
                r = perf_events_attach_fd(p, fd, pid, cpu, kind);
                if (r < 0)
                        return r;
        }
        return 0;
}

void perf_events_set_wait(PerfEvents *p, PerfOpenerWait wait, void *userdata) {
        p->config.wait = wait;
        p->config.wait_userdata = userdata;
}

int perf_events_adopt(PerfEvents *p, int fd, int cpu) {
        if (cpu < 0 || cpu >= p->n_cpus) {
                safe_close(fd);
                return -EINVAL;
        }
        return perf_events_attach_fd(p, fd, -1, cpu, 0);
}

size_t perf_events_fds_per_task(const PerfEvents *p) {
        return (size_t) p->n_cpus * (p->config.off_cpu ? 3 : 1);
}

static int perf_events_reserve(PerfEvents *p, pid_t tid) {
        return p->config.reserve ? p->config.reserve(p->config.reserve_userdata, tid, perf_events_fds_per_task(p)) : 0;
}

int perf_events_add_task(PerfEvents *p, pid_t tid) {
        int opened = 0;
        if (tid <= 0)
                return -EINVAL;
        int r = perf_events_reserve(p, tid);
        if (r < 0)
                return r;
        for (int cpu = 0; cpu < p->n_cpus; cpu++) {
                r = perf_events_open_on_cpu(p, tid, cpu, true);
                if (r == -ENODEV || r == -ENOENT) /* CPU offline */
                        continue;
                if (r < 0)
                        return r;
                opened++;
        }
        return opened > 0 ? 0 : -ENODEV;
}

int perf_events_add_system(PerfEvents *p) {
        int opened = 0;
        int r = perf_events_reserve(p, -1);
        if (r < 0)
                return r;
        for (int cpu = 0; cpu < p->n_cpus; cpu++) {
                r = perf_events_open_on_cpu(p, -1, cpu, false);
                if (r == -ENODEV || r == -ENOENT)
                        continue;
                if (r < 0)
                        return r;
                opened++;
        }
        return opened > 0 ? 0 : -ENODEV;
}

static int perf_events_ioctl_all(PerfEvents *p, unsigned long request) {
        for (size_t i = 0; i < p->n_fds; i++) {
                if (p->fds[i].revoked || (request == PERF_EVENT_IOC_ENABLE && (p->fds[i].off_cpu & p->switches_paused)))
                        continue;
                if (ioctl(p->fds[i].fd, request, 0) < 0)
                        return -errno;
        }
        return 0;
}

int perf_events_set_switch_period(PerfEvents *p, uint64_t period) {
        if (period == 0)
                return -EINVAL;
        for (size_t i = 0; i < p->n_fds; i++)
                if (p->fds[i].off_cpu == PERF_EVENTS_SWITCH_STACKS && !p->fds[i].revoked &&
                    ioctl(p->fds[i].fd, PERF_EVENT_IOC_PERIOD, &period) < 0)
                        return -errno;
        return 0;
}

int perf_events_pause_switches(PerfEvents *p, int kinds, bool pause) {
        int now = pause ? (p->switches_paused | kinds) : (p->switches_paused & ~kinds);
        if (now == p->switches_paused)
                return 0;
        p->switches_paused = now;
        if (!p->enabled)
                return 0;
        for (size_t i = 0; i < p->n_fds; i++)
                if ((p->fds[i].off_cpu & kinds) && !p->fds[i].revoked &&
                    ioctl(p->fds[i].fd, pause ? PERF_EVENT_IOC_DISABLE : PERF_EVENT_IOC_ENABLE, 0) < 0)
                        return -errno;
        return 1;
}

int perf_events_revoke_task(PerfEvents *p, pid_t tid) {
        int n = 0;
        for (size_t i = 0; i < p->n_fds; i++) {
                if (p->fds[i].tid != tid || p->fds[i].revoked)
                        continue;
                /* Disabled, not closed: the fd may own its CPU's ring. */
                if (ioctl(p->fds[i].fd, PERF_EVENT_IOC_DISABLE, 0) < 0)
                        return -errno;
                p->fds[i].revoked = true;
                n++;
        }
        return n;
}

int perf_events_start_task(PerfEvents *p, pid_t tid) {
        if (!p->enabled)
                return 0;
        for (size_t i = 0; i < p->n_fds; i++)
                if (p->fds[i].tid == tid && !p->fds[i].revoked && !(p->fds[i].off_cpu & p->switches_paused) &&
                    ioctl(p->fds[i].fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
                        return -errno;
        return 0;
}

int perf_events_enable(PerfEvents *p) {
        int r = perf_events_ioctl_all(p, PERF_EVENT_IOC_ENABLE);
        if (r >= 0)
                p->enabled = true;
        return r;
}

int perf_events_disable(PerfEvents *p) {
        p->enabled = false;
        return perf_events_ioctl_all(p, PERF_EVENT_IOC_DISABLE);
}

uint64_t perf_events_get_max_ring_bytes(const PerfEvents *p) {
        return (uint64_t) p->n_cpus * ((uint64_t) p->config.ring_pages + 1) * (uint64_t) p->page_size;
}

size_t perf_events_get_n_rings(const PerfEvents *p) {
        return (size_t) p->n_cpus;
}

int perf_events_get_ring_fd(const PerfEvents *p, size_t i) {
        if (i >= (size_t) p->n_cpus)
                return -1;
        return p->rings[i].fd;
}

/* Time of a record from the layout the events were opened with. */
static uint64_t perf_events_record_time(const struct perf_event_header *h, size_t size, void *userdata) {
        const PerfEvents *p = userdata;
        PerfRecordLayout layout = { .sample_type = p->config.sample_type,
                                    .sample_regs_user = p->config.sample_regs_user };
        return perf_record_time(&layout, h, size);
}

int perf_events_drain(PerfEvents *p, PerfRecordHandler handler, void *userdata) {
        PerfRingReader *readers = p->readers;
        size_t n = 0;

        /* One snapshot of every head first, then one merge by time. */
        for (int i = 0; i < p->n_cpus; i++) {
                PerfRing *ring = &p->rings[i];
                if (!ring->base)
                        continue;
                struct perf_event_mmap_page *meta = ring->base;
                readers[n++] = (PerfRingReader) {
                        .data = ring->data, .data_size = ring->data_size,
                        .head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE),
                        .tail = meta->data_tail, .copy = ring->copy,
                };
        }
        int total = perf_rings_merge(readers, n, perf_events_record_time, p, handler, userdata);
        n = 0;
        for (int i = 0; i < p->n_cpus; i++) {
                PerfRing *ring = &p->rings[i];
                if (!ring->base)
                        continue;
                struct perf_event_mmap_page *meta = ring->base;
                p->bad_records += readers[n].bad_records;
                __atomic_store_n(&meta->data_tail, readers[n].tail, __ATOMIC_RELEASE);
                n++;
        }
        return total;
}

uint64_t perf_events_get_bad_records(const PerfEvents *p) {
        return p->bad_records;
}

size_t perf_events_get_n_events(const PerfEvents *p) {
        return p->n_fds;
}

bool perf_events_have_build_ids(const PerfEvents *p) {
        return p->build_ids;
}
