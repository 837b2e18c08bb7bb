/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* counter-sources.c: readers of /proc and /sys for the system counters.
 * Categories and names follow what Sysprof's own sources write ("CPU
 * Percent", "Memory", "Network", "Disk", "CPU Frequency", "Battery Charge"),
 * so Sysprof's GUI shows them in its usual rows. */
#include "counter-sources.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic.h"

#define MAX_DEVICES 16

int counter_source_define(CounterSource *s, const char *category, const char *name, const char *description,
                          int type) {
        if (s->n >= COUNTER_SOURCE_MAX_COUNTERS)
                return -ENOSPC;
        CaptureCounterDef *d = &s->defs[s->n];
        memset(d, 0, sizeof(*d));
        snprintf(d->category, sizeof(d->category), "%s", category);
        snprintf(d->name, sizeof(d->name), "%s", name);
        snprintf(d->description, sizeof(d->description), "%s", description);
        d->type = (uint8_t) type;
        return (int) s->n++;
}

/* Reads a small file whole (NUL-terminated); returns its length or -errno. */
static ssize_t read_small_file(const char *path, char *buf, size_t size) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t len = read_full(fd, buf, size - 1, -1);
        if (len < 0)
                return len;
        buf[len] = 0;
        return len;
}

static int read_u64_file(const char *path, uint64_t *ret) {
        char buf[64];
        ssize_t k = read_small_file(path, buf, sizeof(buf));
        if (k < 0)
                return (int) k;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(buf, &end, 10);
        if (errno || end == buf)
                return -EBADMSG;
        *ret = v;
        return 0;
}

static double rate(uint64_t now, uint64_t before, int64_t dt_nsec) {
        if (dt_nsec <= 0 || now < before)
                return 0.0;
        return (double) (now - before) * 1e9 / (double) dt_nsec;
}

/* ---- cpu: /proc/stat ---- */

typedef struct CpuTimes {
        uint64_t busy, total;
} CpuTimes;

typedef struct CpuState {
        int n_cpus;            /* per-CPU rows after "Combined" */
        int cpu_index[COUNTER_SOURCE_MAX_COUNTERS]; /* kernel CPU number of row i+1 */
        CpuTimes prev[COUNTER_SOURCE_MAX_COUNTERS];
        char buf[65536];
} CpuState;

/* Parses "cpuN user nice system idle iowait irq softirq steal ..." lines;
 * calls back with cpu = -1 for the combined line. */
static int cpu_parse(CpuState *st, void (*fn)(CpuState *st, int cpu, CpuTimes t, void *ud), void *ud) {
        ssize_t k = read_small_file("/proc/stat", st->buf, sizeof(st->buf));
        if (k < 0)
                return (int) k;
        char *save = NULL;
        for (char *line = strtok_r(st->buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                if (strncmp(line, "cpu", 3) != 0)
                        continue;
                int cpu = -1;
                char *p = line + 3;
                if (*p != ' ') {
                        char *end;
                        long n = strtol(p, &end, 10);
                        if (end == p || n < 0 || n > 1000000)
                                continue;
                        cpu = (int) n;
                        p = end;
                }
                uint64_t v[10] = { 0 };
                int nf = sscanf(p, " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
                                   " %" SCNu64,
                                &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
                if (nf < 4)
                        continue;
                CpuTimes t = { 0, 0 };
                for (int i = 0; i < nf; i++)
                        t.total += v[i];
                t.busy = t.total - v[3] - (nf > 4 ? v[4] : 0); /* idle and iowait are not busy */
                fn(st, cpu, t, ud);
        }
        return 0;
}

static void cpu_count_cb(CpuState *st, int cpu, CpuTimes t, void *ud) {
        (void) t;
        (void) ud;
        if (cpu >= 0 && st->n_cpus < COUNTER_SOURCE_MAX_COUNTERS - 1)
                st->cpu_index[st->n_cpus++] = cpu;
}

static int cpu_open(CounterSource *s) {
        CpuState *st = calloc(1, sizeof(*st));
        if (!st)
                return -ENOMEM;
        s->state = st;
        int r = cpu_parse(st, cpu_count_cb, NULL);
        if (r < 0)
                return r;
        if (st->n_cpus == 0)
                return -ENOENT;
        counter_source_define(s, "CPU Percent", "Combined", "CPU busy (not idle or iowait), all CPUs, %",
                              CAPTURE_COUNTER_DOUBLE);
        for (int i = 0; i < st->n_cpus; i++) {
                char name[32];
                snprintf(name, sizeof(name), "Total CPU %d", st->cpu_index[i]);
                counter_source_define(s, "CPU Percent", name, "CPU busy (not idle or iowait), %",
                                      CAPTURE_COUNTER_DOUBLE);
        }
        return 0;
}

typedef struct CpuSampleCtx {
        CounterSource *s;
        bool have_prev;
} CpuSampleCtx;

static void cpu_sample_cb(CpuState *st, int cpu, CpuTimes t, void *ud) {
        CpuSampleCtx *ctx = ud;
        int row = -1;
        if (cpu < 0)
                row = 0;
        else
                for (int i = 0; i < st->n_cpus; i++)
                        if (st->cpu_index[i] == cpu)
                                row = i + 1;
        if (row < 0)
                return; /* a CPU that came online later */
        CpuTimes p = st->prev[row];
        double pct = 0.0;
        if (t.total > p.total && t.busy >= p.busy)
                pct = 100.0 * (double) (t.busy - p.busy) / (double) (t.total - p.total);
        if (pct > 100.0)
                pct = 100.0;
        ctx->s->values[row].vdbl = pct;
        st->prev[row] = t;
}

static int cpu_sample(CounterSource *s, int64_t dt_nsec) {
        CpuState *st = s->state;
        CpuSampleCtx ctx = { s, dt_nsec > 0 };
        int r = cpu_parse(st, cpu_sample_cb, &ctx);
        if (r < 0)
                return r;
        return dt_nsec > 0 ? 1 : 0;
}

static void free_state(CounterSource *s) {
        free(s->state);
        s->state = NULL;
}

static const CounterSourceOps cpu_ops = {
        .name = "cpu", .description = "CPU usage, total and per CPU (/proc/stat)",
        .open = cpu_open, .sample = cpu_sample, .close = free_state,
};

/* ---- memory: /proc/meminfo ---- */

static int meminfo_read(uint64_t *total, uint64_t *avail, uint64_t *swap_total, uint64_t *swap_free) {
        char buf[8192];
        ssize_t k = read_small_file("/proc/meminfo", buf, sizeof(buf));
        if (k < 0)
                return (int) k;
        int found = 0;
        char *save = NULL;
        for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                uint64_t v;
                if (sscanf(line, "MemTotal: %" SCNu64, &v) == 1)
                        *total = v * 1024, found |= 1;
                else if (sscanf(line, "MemAvailable: %" SCNu64, &v) == 1)
                        *avail = v * 1024, found |= 2;
                else if (sscanf(line, "SwapTotal: %" SCNu64, &v) == 1)
                        *swap_total = v * 1024, found |= 4;
                else if (sscanf(line, "SwapFree: %" SCNu64, &v) == 1)
                        *swap_free = v * 1024, found |= 8;
        }
        return found == 15 ? 0 : -ENOENT;
}

static int memory_open(CounterSource *s) {
        uint64_t a, b, c, d;
        int r = meminfo_read(&a, &b, &c, &d);
        if (r < 0)
                return r;
        counter_source_define(s, "Memory", "Used", "MemTotal - MemAvailable, bytes", CAPTURE_COUNTER_INT64);
        counter_source_define(s, "Memory", "Available", "MemAvailable, bytes", CAPTURE_COUNTER_INT64);
        counter_source_define(s, "Memory", "Swap Used", "SwapTotal - SwapFree, bytes", CAPTURE_COUNTER_INT64);
        return 0;
}

static int memory_sample(CounterSource *s, int64_t dt_nsec) {
        (void) dt_nsec;
        uint64_t total = 0, avail = 0, swap_total = 0, swap_free = 0;
        int r = meminfo_read(&total, &avail, &swap_total, &swap_free);
        if (r < 0)
                return r;
        s->values[0].v64 = (int64_t) (total > avail ? total - avail : 0);
        s->values[1].v64 = (int64_t) avail;
        s->values[2].v64 = (int64_t) (swap_total > swap_free ? swap_total - swap_free : 0);
        return 1;
}

static const CounterSourceOps memory_ops = {
        .name = "memory", .description = "memory used and available, swap used (/proc/meminfo)",
        .open = memory_open, .sample = memory_sample,
};

/* ---- disk (/proc/diskstats) and net (/proc/net/dev): byte rates ---- */

typedef struct DeviceState {
        int n;
        char names[MAX_DEVICES][32];
        uint64_t prev[MAX_DEVICES][2];
        uint64_t now[MAX_DEVICES][2];
        bool seen[MAX_DEVICES];
        char buf[65536];
} DeviceState;

static int device_index(DeviceState *st, const char *name) {
        for (int i = 0; i < st->n; i++)
                if (strcmp(st->names[i], name) == 0)
                        return i;
        return -1;
}

static bool disk_wanted(const char *name) {
        if (strncmp(name, "loop", 4) == 0 || strncmp(name, "ram", 3) == 0)
                return false;
        char path[300];
        snprintf(path, sizeof(path), "/sys/block/%s", name); /* whole disks only, not partitions */
        return access(path, F_OK) == 0;
}

/* Reads per-device (read bytes, written bytes); adds devices when adding. */
static int disk_read(DeviceState *st, bool adding) {
        ssize_t k = read_small_file("/proc/diskstats", st->buf, sizeof(st->buf));
        if (k < 0)
                return (int) k;
        memset(st->seen, 0, sizeof(st->seen));
        char *save = NULL;
        for (char *line = strtok_r(st->buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                unsigned maj, min;
                char name[32];
                uint64_t rd, rd_merged, rd_sectors, rd_ms, wr, wr_merged, wr_sectors;
                if (sscanf(line, " %u %u %31s %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
                                 " %" SCNu64,
                           &maj, &min, name, &rd, &rd_merged, &rd_sectors, &rd_ms, &wr, &wr_merged, &wr_sectors) != 10)
                        continue;
                int i = device_index(st, name);
                if (i < 0) {
                        if (!adding || st->n >= MAX_DEVICES || !disk_wanted(name))
                                continue;
                        i = st->n++;
                        snprintf(st->names[i], sizeof(st->names[i]), "%s", name);
                }
                st->now[i][0] = rd_sectors * 512; /* diskstats sectors are always 512 bytes */
                st->now[i][1] = wr_sectors * 512;
                st->seen[i] = true;
        }
        return 0;
}

static int net_read(DeviceState *st, bool adding) {
        /* The machine's interfaces are those of PID 1's network namespace:
         * under its unit (PrivateNetwork=yes) the daemon's own has only
         * loopback. A daemon that cannot see PID 1 (hidepid=) reads its own. */
        ssize_t k = read_small_file("/proc/1/net/dev", st->buf, sizeof(st->buf));
        if (k < 0)
                k = read_small_file("/proc/net/dev", st->buf, sizeof(st->buf));
        if (k < 0)
                return (int) k;
        memset(st->seen, 0, sizeof(st->seen));
        char *save = NULL;
        for (char *line = strtok_r(st->buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *colon = strchr(line, ':');
                if (!colon)
                        continue;
                *colon = 0;
                char *name = line + strspn(line, " ");
                if (strcmp(name, "lo") == 0 || strlen(name) > 20)
                        continue;
                uint64_t v[9];
                if (sscanf(colon + 1, " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
                                      " %" SCNu64 " %" SCNu64,
                           &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]) != 9)
                        continue;
                int i = device_index(st, name);
                if (i < 0) {
                        if (!adding || st->n >= MAX_DEVICES)
                                continue;
                        i = st->n++;
                        snprintf(st->names[i], sizeof(st->names[i]), "%s", name);
                }
                st->now[i][0] = v[0]; /* received bytes */
                st->now[i][1] = v[8]; /* transmitted bytes */
                st->seen[i] = true;
        }
        return 0;
}

static int devices_open(CounterSource *s, int (*reader)(DeviceState *, bool), const char *category,
                        const char *what0, const char *what1, const char *desc0, const char *desc1) {
        DeviceState *st = calloc(1, sizeof(*st));
        if (!st)
                return -ENOMEM;
        s->state = st;
        int r = reader(st, true);
        if (r < 0)
                return r;
        if (st->n == 0)
                return -ENOENT;
        char name[40];
        snprintf(name, sizeof(name), "Total %s", what0);
        counter_source_define(s, category, name, desc0, CAPTURE_COUNTER_DOUBLE);
        snprintf(name, sizeof(name), "Total %s", what1);
        counter_source_define(s, category, name, desc1, CAPTURE_COUNTER_DOUBLE);
        for (int i = 0; i < st->n; i++) {
                snprintf(name, sizeof(name), "%s %s", st->names[i], what0);
                counter_source_define(s, category, name, desc0, CAPTURE_COUNTER_DOUBLE);
                snprintf(name, sizeof(name), "%s %s", st->names[i], what1);
                counter_source_define(s, category, name, desc1, CAPTURE_COUNTER_DOUBLE);
        }
        memcpy(st->prev, st->now, sizeof(st->prev));
        return 0;
}

static int devices_sample(CounterSource *s, int (*reader)(DeviceState *, bool), int64_t dt_nsec) {
        DeviceState *st = s->state;
        int r = reader(st, false);
        if (r < 0)
                return r;
        double total0 = 0, total1 = 0;
        for (int i = 0; i < st->n; i++) {
                double r0 = 0, r1 = 0;
                if (st->seen[i]) {
                        r0 = rate(st->now[i][0], st->prev[i][0], dt_nsec);
                        r1 = rate(st->now[i][1], st->prev[i][1], dt_nsec);
                        st->prev[i][0] = st->now[i][0];
                        st->prev[i][1] = st->now[i][1];
                }
                s->values[2 + 2 * i].vdbl = r0;
                s->values[3 + 2 * i].vdbl = r1;
                total0 += r0;
                total1 += r1;
        }
        s->values[0].vdbl = total0;
        s->values[1].vdbl = total1;
        return dt_nsec > 0 ? 1 : 0;
}

static int disk_open(CounterSource *s) {
        return devices_open(s, disk_read, "Disk", "Reads", "Writes", "bytes read per second",
                            "bytes written per second");
}

static int disk_sample(CounterSource *s, int64_t dt_nsec) {
        return devices_sample(s, disk_read, dt_nsec);
}

static int net_open(CounterSource *s) {
        return devices_open(s, net_read, "Network", "RX", "TX", "bytes received per second",
                            "bytes sent per second");
}

static int net_sample(CounterSource *s, int64_t dt_nsec) {
        return devices_sample(s, net_read, dt_nsec);
}

static const CounterSourceOps disk_ops = {
        .name = "disk", .description = "disk throughput, total and per disk (/proc/diskstats)",
        .open = disk_open, .sample = disk_sample, .close = free_state,
};

static const CounterSourceOps net_ops = {
        .name = "net", .description = "network throughput, total and per interface (/proc/net/dev)",
        .open = net_open, .sample = net_sample, .close = free_state,
};

/* ---- files under /sys, one counter each: cpufreq, energy, battery ---- */

typedef struct FileState {
        int n;
        char paths[COUNTER_SOURCE_MAX_COUNTERS][160];
        uint64_t prev[COUNTER_SOURCE_MAX_COUNTERS];
        uint64_t range[COUNTER_SOURCE_MAX_COUNTERS]; /* energy counters wrap at this */
} FileState;

static int cpufreq_open(CounterSource *s) {
        FileState *st = calloc(1, sizeof(*st));
        if (!st)
                return -ENOMEM;
        s->state = st;
        for (int cpu = 0; cpu < 4096 && st->n < COUNTER_SOURCE_MAX_COUNTERS; cpu++) {
                char path[160];
                snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", cpu);
                uint64_t v;
                if (read_u64_file(path, &v) < 0) {
                        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d", cpu);
                        if (access(path, F_OK) < 0)
                                break;
                        continue;
                }
                char name[32];
                snprintf(name, sizeof(name), "CPU %d", cpu);
                counter_source_define(s, "CPU Frequency", name, "current frequency, MHz", CAPTURE_COUNTER_DOUBLE);
                snprintf(st->paths[st->n++], sizeof(st->paths[0]), "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq",
                         cpu);
        }
        return st->n > 0 ? 0 : -ENOENT;
}

static int cpufreq_sample(CounterSource *s, int64_t dt_nsec) {
        (void) dt_nsec;
        FileState *st = s->state;
        for (int i = 0; i < st->n; i++) {
                uint64_t khz = 0;
                (void) read_u64_file(st->paths[i], &khz);
                s->values[i].vdbl = (double) khz / 1000.0;
        }
        return 1;
}

static const CounterSourceOps cpufreq_ops = {
        .name = "cpufreq", .description = "CPU frequency per CPU (cpufreq scaling_cur_freq)",
        .open = cpufreq_open, .sample = cpufreq_sample, .close = free_state,
};

/* Calls add() for each entry of the /sys/class directory dir (names of at
 * most 64 bytes) until the source holds its most counters. */
static int file_state_open_class(CounterSource *s, const char *dir,
                                 void (*add)(CounterSource *s, FileState *st, const char *dir, const char *entry)) {
        FileState *st = calloc(1, sizeof(*st));
        if (!st)
                return -ENOMEM;
        s->state = st;
        _cleanup_closedir_ DIR *d = opendir(dir);
        if (!d)
                return -ENOENT;
        struct dirent *de;
        while ((de = readdir(d)) && st->n < COUNTER_SOURCE_MAX_COUNTERS)
                if (de->d_name[0] != '.' && strlen(de->d_name) <= 64)
                        add(s, st, dir, de->d_name);
        return st->n > 0 ? 0 : -ENOENT;
}

static void energy_add(CounterSource *s, FileState *st, const char *dir, const char *entry) {
        char path[160], label[64] = "";
        snprintf(path, sizeof(path), "%s/%s/energy_uj", dir, entry);
        uint64_t v, range = 0;
        if (read_u64_file(path, &v) < 0)
                return;
        char rpath[160];
        snprintf(rpath, sizeof(rpath), "%s/%s/max_energy_range_uj", dir, entry);
        (void) read_u64_file(rpath, &range);
        snprintf(rpath, sizeof(rpath), "%s/%s/name", dir, entry);
        if (read_small_file(rpath, label, sizeof(label)) > 0)
                label[strcspn(label, "\n")] = 0;
        char name[32];
        snprintf(name, sizeof(name), "%s %s", entry, label);
        counter_source_define(s, "Energy", name, "power from RAPL/powercap, watts", CAPTURE_COUNTER_DOUBLE);
        snprintf(st->paths[st->n], sizeof(st->paths[0]), "%s", path);
        st->prev[st->n] = v;
        st->range[st->n] = range;
        st->n++;
}

static int energy_open(CounterSource *s) {
        return file_state_open_class(s, "/sys/class/powercap", energy_add);
}

static int energy_sample(CounterSource *s, int64_t dt_nsec) {
        FileState *st = s->state;
        for (int i = 0; i < st->n; i++) {
                uint64_t v = st->prev[i];
                (void) read_u64_file(st->paths[i], &v);
                uint64_t delta = v >= st->prev[i] ? v - st->prev[i] : v + st->range[i] - st->prev[i];
                s->values[i].vdbl = dt_nsec > 0 ? (double) delta / 1e6 * 1e9 / (double) dt_nsec : 0.0;
                st->prev[i] = v;
        }
        return dt_nsec > 0 ? 1 : 0;
}

static const CounterSourceOps energy_ops = {
        .name = "energy",
        .description = "power per RAPL/powercap zone (/sys/class/powercap)",
        .open = energy_open,
        .sample = energy_sample,
        .close = free_state,
        /* energy_uj is 0400 since CVE-2020-8694 (Platypus): power draw
         * tells apart the data other users' code computes on */
        .root_only = true,
};

static void battery_add(CounterSource *s, FileState *st, const char *dir, const char *entry) {
        char path[160], type[32];
        snprintf(path, sizeof(path), "%s/%s/type", dir, entry);
        if (read_small_file(path, type, sizeof(type)) <= 0 || strncmp(type, "Battery", 7) != 0)
                return;
        snprintf(path, sizeof(path), "%s/%s/capacity", dir, entry);
        uint64_t v;
        if (read_u64_file(path, &v) < 0)
                return;
        char name[32];
        snprintf(name, sizeof(name), "%s", entry);
        counter_source_define(s, "Battery Charge", name, "charge, %", CAPTURE_COUNTER_DOUBLE);
        snprintf(st->paths[st->n++], sizeof(st->paths[0]), "%s", path);
}

static int battery_open(CounterSource *s) {
        return file_state_open_class(s, "/sys/class/power_supply", battery_add);
}

static int battery_sample(CounterSource *s, int64_t dt_nsec) {
        (void) dt_nsec;
        FileState *st = s->state;
        for (int i = 0; i < st->n; i++) {
                uint64_t v = 0;
                (void) read_u64_file(st->paths[i], &v);
                s->values[i].vdbl = (double) v;
        }
        return 1;
}

static const CounterSourceOps battery_ops = {
        .name = "battery", .description = "battery charge (/sys/class/power_supply)",
        .open = battery_open, .sample = battery_sample, .close = free_state,
};

const CounterSourceOps *const counter_source_table[] = {
        &cpu_ops, &memory_ops, &disk_ops, &net_ops, &cpufreq_ops, &energy_ops, &battery_ops,
};
const size_t counter_source_table_size = ELEMENTSOF(counter_source_table);

const CounterSourceOps *counter_source_lookup(const char *name) {
        for (size_t i = 0; i < counter_source_table_size; i++)
                if (strcmp(counter_source_table[i]->name, name) == 0)
                        return counter_source_table[i];
        return NULL;
}
