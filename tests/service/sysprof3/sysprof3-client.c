/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysprof3-client: a client of periscoped --sysprofd that calls it as
 * Sysprof does (with GDBus, as libsysprof does).
 *
 * `unwind`: calls org.gnome.Sysprof3.Unwinder.Unwind as
 * Sysprof 48's user sampler does (with GDBus, as libsysprof does): one
 * event per CPU through org.gnome.Sysprof3.Service.PerfEventOpen (pid -1,
 * no group fd, a user stack copy and the general registers; hardware
 * cycles first, then cpu-clock), an eventfd to end the session and the
 * write end of a pipe for the capture stream. It enables the events, runs
 * WORKLOAD, ends the session, reads the stream with Periscope's capture
 * reader, and checks that the workload's samples were unwound to whole
 * stacks: innermost user frame CHAIN[0], its callers CHAIN[1..] in order up
 * to the last (main), named from the workload's ELF symbol table through
 * the stream's MAP frames.
 *
 *   sysprof3-client unwind [--own] [--hold SECONDS] [--min-full PERCENT] CHAIN -- WORKLOAD [ARGS]
 *        --hold: keep the session open SECONDS after the workload, making
 *        no call meanwhile
 *        --own: events on the workload's process only (pid, every CPU), as
 *        an unprivileged user may open them; then no sample may hold a
 *        kernel address unless the system lets users see them
 *   sysprof3-client foreign-fd      Unwind must refuse a perf event the service did not open
 *   sysprof3-client sessions PID N SECONDS
 *        opens N Unwind sessions one after the other, each on its own
 *        events on process PID (one per CPU), printing "session I: started"
 *        or "session I: refused: ERROR"; enables the started ones' events,
 *        reads their streams for SECONDS, ends them (eventfd) and prints
 *        "session I: B bytes, S samples" for each
 *   sysprof3-client perf-open PID   PerfEventOpen on PID as Sysprof 3.46's perf source (per task)
 *   sysprof3-client proc-file PATH  GetProcFile(PATH): prints the first line
 *   sysprof3-client proc-fd PATH    GetProcFd(PATH): prints what the fd reads
 *
 * Exits 0 when the call or check succeeded, 1 with the reason (the
 * service's error message) otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <gio/gio.h>
#include <gio/gunixfdlist.h>
#include <libelf.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"

#define STACK_SIZE 16384u
#define MAX_CHAIN 16
#define MAX_CPUS 256
/* Sysprof 48's DWARF_NEEDED_REGS on x86-64: AX..IP and R8..R15. */
#define SYSPROF_REGS (((1ull << 9) - 1) | (((1ull << 8) - 1) << 16))

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        fputs("FAIL: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
        exit(1);
}

/* PerfEventOpen(options, -1, cpu, handle -1 without fds, 0) as Sysprof 48
 * calls it; the fd, or -1 with *error set. */
static int perf_event_open_via_service(GDBusConnection *bus, int pid, int cpu, bool hardware, GError **error) {
        GVariantBuilder b;
        g_variant_builder_init(&b, G_VARIANT_TYPE("a{sv}"));
        g_variant_builder_add(&b, "{sv}", "comm", g_variant_new_boolean(TRUE));
        g_variant_builder_add(&b, "{sv}", "clockid", g_variant_new_int32(CLOCK_MONOTONIC));
        g_variant_builder_add(&b, "{sv}", "use_clockid", g_variant_new_boolean(TRUE));
        g_variant_builder_add(&b, "{sv}", "config",
                              g_variant_new_uint64(hardware ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK));
        g_variant_builder_add(&b, "{sv}", "disabled", g_variant_new_boolean(TRUE));
        g_variant_builder_add(&b, "{sv}", "exclude_idle", g_variant_new_boolean(TRUE));
        g_variant_builder_add(&b, "{sv}", "mmap", g_variant_new_boolean(TRUE));
        g_variant_builder_add(&b, "{sv}", "mmap2", g_variant_new_boolean(TRUE));
        g_variant_builder_add(&b, "{sv}", "build_id", g_variant_new_boolean(FALSE));
        g_variant_builder_add(&b, "{sv}", "wakeup_events", g_variant_new_uint32(149));
        g_variant_builder_add(&b, "{sv}", "sample_id_all", g_variant_new_boolean(TRUE));
        g_variant_builder_add(&b, "{sv}", "sample_period", g_variant_new_uint64(hardware ? 1200000 : 1000000));
        g_variant_builder_add(&b, "{sv}", "sample_type",
                              g_variant_new_uint64(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER |
                                                   PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER |
                                                   PERF_SAMPLE_REGS_USER | PERF_SAMPLE_TIME));
        g_variant_builder_add(&b, "{sv}", "task", g_variant_new_boolean(TRUE));
        g_variant_builder_add(&b, "{sv}", "sample_stack_user", g_variant_new_uint32(STACK_SIZE));
        g_variant_builder_add(&b, "{sv}", "sample_regs_user", g_variant_new_uint64(SYSPROF_REGS));
        g_variant_builder_add(&b, "{sv}", "type", g_variant_new_uint32(hardware ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE));
        g_autoptr(GUnixFDList) out_fds = NULL;
        g_autoptr(GVariant) reply = g_dbus_connection_call_with_unix_fd_list_sync(
                bus, "org.gnome.Sysprof3", "/org/gnome/Sysprof3", "org.gnome.Sysprof3.Service", "PerfEventOpen",
                g_variant_new("(a{sv}iiht)", &b, pid, cpu, -1, (guint64) 0), G_VARIANT_TYPE("(h)"),
                G_DBUS_CALL_FLAGS_NONE, -1, NULL, &out_fds, NULL, error);
        if (!reply)
                return -1;
        gint32 handle;
        g_variant_get(reply, "(h)", &handle);
        return g_unix_fd_list_get(out_fds, handle, error);
}

/* Calls Unwind; true when the service took the session. */
static bool call_unwind(GDBusConnection *bus, const int *perf_fds, const int *cpus, int n, int event_fd, int capture_fd,
                        GError **error) {
        g_autoptr(GUnixFDList) fds = g_unix_fd_list_new();
        GVariantBuilder b;
        g_variant_builder_init(&b, G_VARIANT_TYPE("a(hi)"));
        for (int i = 0; i < n; i++)
                g_variant_builder_add(&b, "(hi)", g_unix_fd_list_append(fds, perf_fds[i], NULL), cpus[i]);
        int ev = g_unix_fd_list_append(fds, event_fd, NULL), cap = g_unix_fd_list_append(fds, capture_fd, NULL);
        g_autoptr(GVariant) reply = g_dbus_connection_call_with_unix_fd_list_sync(
                bus, "org.gnome.Sysprof3", "/org/gnome/Sysprof3/Unwinder", "org.gnome.Sysprof3.Unwinder", "Unwind",
                g_variant_new("(ua(hi)hh)", STACK_SIZE, &b, ev, cap), NULL, G_DBUS_CALL_FLAGS_NONE, -1, fds, NULL,
                NULL, error);
        return reply != NULL;
}

/* A perf event opened here, not by the service: Unwind must refuse it. */
static int check_foreign_fd(GDBusConnection *bus) {
        struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_SOFTWARE,
                                        .config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1000000,
                                        .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
                                        .disabled = 1, .exclude_kernel = 1 };
        int fd = (int) syscall(SYS_perf_event_open, &attr, getpid(), -1, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0)
                die("perf_event_open: %s", strerror(errno));
        int efd = eventfd(0, EFD_CLOEXEC), p[2];
        if (efd < 0 || pipe2(p, O_CLOEXEC) < 0)
                die("eventfd/pipe: %s", strerror(errno));
        int cpu = 0;
        g_autoptr(GError) error = NULL;
        if (call_unwind(bus, &fd, &cpu, 1, efd, p[1], &error))
                die("Unwind took a perf event the service did not open");
        printf("refused as expected: %s\n", error->message);
        if (!strstr(error->message, "not opened for you by this service"))
                die("the refusal does not say why: %s", error->message);
        return 0;
}

/* PerfEventOpen on one process, every CPU (cpu -1), software clock. */
static int call_perf_open(GDBusConnection *bus, int pid) {
        g_autoptr(GError) error = NULL;
        int fd = perf_event_open_via_service(bus, pid, -1, false, &error);
        if (fd < 0) {
                printf("refused: %s\n", error->message);
                return 1;
        }
        printf("opened: perf event fd for process %d\n", pid);
        close(fd);
        return 0;
}

static int call_get_proc_file(GDBusConnection *bus, const char *path) {
        g_autoptr(GError) error = NULL;
        g_autoptr(GVariant) reply = g_dbus_connection_call_sync(
                bus, "org.gnome.Sysprof3", "/org/gnome/Sysprof3", "org.gnome.Sysprof3.Service", "GetProcFile",
                g_variant_new("(^ay)", path), G_VARIANT_TYPE("(ay)"), G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);
        if (!reply) {
                printf("refused: %s\n", error->message);
                return 1;
        }
        g_autofree char *contents = NULL;
        g_variant_get(reply, "(^ay)", &contents);
        printf("contents: %.*s\n", (int) strcspn(contents, "\n"), contents);
        return 0;
}

static int call_get_proc_fd(GDBusConnection *bus, const char *path) {
        g_autoptr(GError) error = NULL;
        g_autoptr(GUnixFDList) out_fds = NULL;
        g_autoptr(GVariant) reply = g_dbus_connection_call_with_unix_fd_list_sync(
                bus, "org.gnome.Sysprof3", "/org/gnome/Sysprof3", "org.gnome.Sysprof3.Service", "GetProcFd",
                g_variant_new("(^ay)", path), G_VARIANT_TYPE("(h)"), G_DBUS_CALL_FLAGS_NONE, -1, NULL, &out_fds, NULL,
                &error);
        if (!reply) {
                printf("refused: %s\n", error->message);
                return 1;
        }
        gint32 handle;
        g_variant_get(reply, "(h)", &handle);
        int fd = g_unix_fd_list_get(out_fds, handle, &error);
        if (fd < 0)
                die("GetProcFd answered without an fd: %s", error->message);
        /* all of it (an ASan program's maps start with its shadow) */
        printf("contents:\n");
        char buf[4096];
        ssize_t n;
        while ((n = read(fd, buf, sizeof(buf))) > 0)
                fwrite(buf, 1, (size_t) n, stdout);
        if (n < 0)
                die("reading the fd: %s", strerror(errno));
        close(fd);
        return 0;
}

/* ---- naming the workload's addresses ---- */

typedef struct Symbol {
        uint64_t start, end;
        char *name;
} Symbol;

typedef struct Binary {
        char path[PATH_MAX];
        Symbol *symbols;
        size_t n_symbols;
        struct {
                uint64_t offset, vaddr, filesz;
        } loads[16];
        size_t n_loads;
} Binary;

static void binary_load(Binary *bin, const char *path) {
        if (!realpath(path, bin->path))
                die("%s: %s", path, strerror(errno));
        elf_version(EV_CURRENT);
        int fd = open(bin->path, O_RDONLY | O_CLOEXEC);
        Elf *elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
        size_t n_phdrs;
        if (!elf || elf_getphdrnum(elf, &n_phdrs) < 0)
                die("%s: not an ELF file", bin->path);
        for (size_t i = 0; i < n_phdrs && bin->n_loads < 16; i++) {
                GElf_Phdr ph;
                if (gelf_getphdr(elf, (int) i, &ph) && ph.p_type == PT_LOAD)
                        bin->loads[bin->n_loads++] = (typeof(bin->loads[0])) { ph.p_offset, ph.p_vaddr, ph.p_filesz };
        }
        Elf_Scn *scn = NULL;
        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh;
                if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
                        continue;
                Elf_Data *data = elf_getdata(scn, NULL);
                size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
                bin->symbols = calloc(n, sizeof(Symbol));
                for (size_t i = 0; data && i < n; i++) {
                        GElf_Sym sym;
                        if (!gelf_getsym(data, (int) i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size)
                                continue;
                        bin->symbols[bin->n_symbols++] = (Symbol) { sym.st_value, sym.st_value + sym.st_size,
                                                                    strdup(elf_strptr(elf, sh.sh_link, sym.st_name)) };
                }
        }
        if (bin->n_symbols == 0)
                die("%s has no symbol table", bin->path);
        elf_end(elf);
        close(fd);
}

static void binary_done(Binary *bin) {
        for (size_t i = 0; i < bin->n_symbols; i++)
                free(bin->symbols[i].name);
        free(bin->symbols);
}

static const char *binary_name(const Binary *bin, uint64_t file_offset) {
        for (size_t i = 0; i < bin->n_loads; i++) {
                if (file_offset < bin->loads[i].offset || file_offset >= bin->loads[i].offset + bin->loads[i].filesz)
                        continue;
                uint64_t vaddr = file_offset - bin->loads[i].offset + bin->loads[i].vaddr;
                for (size_t j = 0; j < bin->n_symbols; j++)
                        if (vaddr >= bin->symbols[j].start && vaddr < bin->symbols[j].end)
                                return bin->symbols[j].name;
        }
        return NULL;
}

typedef struct Map {
        uint64_t start, end, offset;
        bool ours;
} Map;

/* Name of a user frame of the workload: its function, "?" outside it. */
static const char *frame_name(const Binary *bin, const Map *maps, size_t n_maps, uint64_t addr) {
        const char *name = NULL;
        for (size_t i = n_maps; i-- > 0;) /* the newest mapping wins */
                if (addr >= maps[i].start && addr < maps[i].end) {
                        if (maps[i].ours)
                                name = binary_name(bin, addr - maps[i].start + maps[i].offset);
                        break;
                }
        return name ? name : "?";
}

/* Whether the system lets unprivileged users see kernel addresses (as
 * periscoped decides: perf_event_paranoid <= 1 and kptr_restrict == 0). */
static bool kernel_addresses_visible(void) {
        int paranoid = 2, kptr = 1;
        FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
        if (f) {
                if (fscanf(f, "%d", &paranoid) != 1)
                        paranoid = 2;
                fclose(f);
        }
        f = fopen("/proc/sys/kernel/kptr_restrict", "re");
        if (f) {
                if (fscanf(f, "%d", &kptr) != 1)
                        kptr = 1;
                fclose(f);
        }
        return getuid() == 0 || (paranoid <= 1 && kptr == 0);
}

/* ---- the session ---- */

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* Reads what the pipe has within timeout_ms; false at end of file. */
static bool read_some(int fd, GByteArray *out, int timeout_ms) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        if (poll(&pfd, 1, timeout_ms) <= 0)
                return true;
        uint8_t buf[65536];
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                return true;
        if (n < 0)
                die("reading the capture pipe: %s", strerror(errno));
        if (n == 0)
                return false;
        g_byte_array_append(out, buf, (guint) n);
        return true;
}

typedef struct Session {
        int number;                /* which call it was (1...) */
        int perf_fds[MAX_CPUS], n, event_fd, pipe_fd;
        GByteArray *stream;
} Session;

/* Samples in a stream (a capture as Sysprof's muxer reads it). */
static size_t stream_samples(GByteArray *stream) {
        CaptureReader *reader;
        char *msg = NULL;
        if (capture_reader_open_memory(stream->data, stream->len, &reader, &msg) < 0)
                die("the stream (%u bytes) is not a capture: %s", stream->len, msg ? msg : "?");
        CaptureFrame f;
        size_t samples = 0;
        int r;
        while ((r = capture_reader_next(reader, &f)) > 0)
                samples += f.type == CAPTURE_FRAME_SAMPLE;
        if (r < 0)
                die("reading the stream: %s", capture_reader_error(reader));
        capture_reader_free(reader);
        return samples;
}

/* sessions PID N SECONDS (see the top of the file). */
static int run_sessions(GDBusConnection *bus, int pid, int n_sessions, double seconds) {
        Session *sessions = calloc((size_t) n_sessions, sizeof(Session));
        int n_cpus = (int) sysconf(_SC_NPROCESSORS_CONF), started = 0;
        if (!sessions)
                die("out of memory");
        for (int i = 0; i < n_sessions; i++) {
                Session *se = &sessions[started];
                g_autoptr(GError) error = NULL;
                for (int cpu = 0; cpu < n_cpus && cpu < MAX_CPUS; cpu++) {
                        int fd = perf_event_open_via_service(bus, pid, cpu, false, &error);
                        if (fd < 0)
                                die("PerfEventOpen for cpu %d: %s", cpu, error->message);
                        se->perf_fds[se->n++] = fd;
                }
                int p[2];
                se->event_fd = eventfd(0, EFD_CLOEXEC);
                if (se->event_fd < 0 || pipe2(p, O_CLOEXEC) < 0)
                        die("eventfd/pipe: %s", strerror(errno));
                int *cpus = calloc((size_t) se->n, sizeof(int));
                for (int k = 0; cpus && k < se->n; k++)
                        cpus[k] = k;
                bool ok = cpus && call_unwind(bus, se->perf_fds, cpus, se->n, se->event_fd, p[1], &error);
                free(cpus);
                close(p[1]);
                if (!ok) {
                        printf("session %d: refused: %s\n", i + 1, error ? error->message : "out of memory");
                        fflush(stdout);
                        for (int k = 0; k < se->n; k++)
                                close(se->perf_fds[k]);
                        close(se->event_fd);
                        close(p[0]);
                        *se = (Session) {};
                        continue;
                }
                printf("session %d: started\n", i + 1);
                fflush(stdout);
                se->number = i + 1;
                se->pipe_fd = p[0];
                se->stream = g_byte_array_new();
                started++;
        }
        for (int i = 0; i < started; i++)
                for (int k = 0; k < sessions[i].n; k++)
                        if (ioctl(sessions[i].perf_fds[k], PERF_EVENT_IOC_ENABLE, 0) < 0)
                                die("enabling an event: %s", strerror(errno));
        for (double until = now_s() + seconds; now_s() < until;)
                for (int i = 0; i < started; i++)
                        (void) read_some(sessions[i].pipe_fd, sessions[i].stream, 10);
        uint64_t one = 1;
        for (int i = 0; i < started; i++)
                if (write(sessions[i].event_fd, &one, sizeof(one)) != sizeof(one))
                        die("writing the eventfd: %s", strerror(errno));
        for (int i = 0; i < started; i++) {
                Session *se = &sessions[i];
                bool open = true;
                for (double until = now_s() + 90; open && now_s() < until;)
                        open = read_some(se->pipe_fd, se->stream, 100);
                if (open)
                        die("the service did not close session %d's stream within 90 s of the eventfd", se->number);
                printf("session %d: %u bytes, %zu samples\n", se->number, se->stream->len, stream_samples(se->stream));
                for (int k = 0; k < se->n; k++)
                        close(se->perf_fds[k]);
                close(se->event_fd);
                close(se->pipe_fd);
                g_byte_array_unref(se->stream);
        }
        free(sessions);
        return 0;
}

int main(int argc, char **argv) {
        double min_full = 90;
        char *chain[MAX_CHAIN];
        size_t n_chain = 0;
        int i = 1;
        g_autoptr(GError) error = NULL;
        g_autoptr(GDBusConnection) bus = g_bus_get_sync(G_BUS_TYPE_SYSTEM, NULL, &error);
        if (!bus)
                die("no system bus: %s", error->message);
        if (argc == 2 && strcmp(argv[1], "foreign-fd") == 0)
                return check_foreign_fd(bus);
        if (argc == 3 && strcmp(argv[1], "perf-open") == 0)
                return call_perf_open(bus, atoi(argv[2]));
        if (argc == 3 && strcmp(argv[1], "proc-file") == 0)
                return call_get_proc_file(bus, argv[2]);
        if (argc == 3 && strcmp(argv[1], "proc-fd") == 0)
                return call_get_proc_fd(bus, argv[2]);
        if (argc == 5 && strcmp(argv[1], "sessions") == 0)
                return run_sessions(bus, atoi(argv[2]), atoi(argv[3]), atof(argv[4]));
        if (argc < 2 || strcmp(argv[1], "unwind") != 0)
                die("usage: %s unwind|foreign-fd|perf-open PID|proc-file PATH|proc-fd PATH ...", argv[0]);
        i = 2;
        bool own = false;
        double hold = 0.3;
        if (i < argc && strcmp(argv[i], "--own") == 0) {
                own = true;
                i++;
        }
        if (i + 1 < argc && strcmp(argv[i], "--hold") == 0) {
                hold = atof(argv[i + 1]);
                i += 2;
        }
        if (i + 1 < argc && strcmp(argv[i], "--min-full") == 0) {
                min_full = atof(argv[i + 1]);
                i += 2;
        }
        if (i + 2 >= argc || strcmp(argv[i + 1], "--") != 0)
                die("usage: %s [--min-full PERCENT] leaf,caller,...,main -- WORKLOAD [ARGS]", argv[0]);
        for (char *save = NULL, *t = strtok_r(argv[i], ",", &save); t && n_chain < MAX_CHAIN; t = strtok_r(NULL, ",", &save))
                chain[n_chain++] = t;
        char **workload = argv + i + 2;
        Binary bin = {};
        binary_load(&bin, workload[0]);

        /* With --own the workload exists first (waiting for a byte) so
         * that the events can name it. */
        int go[2];
        if (pipe2(go, O_CLOEXEC) < 0)
                die("pipe: %s", strerror(errno));
        pid_t child = fork();
        if (child < 0)
                die("fork: %s", strerror(errno));
        if (child == 0) {
                char c;
                close(go[1]);
                if (read(go[0], &c, 1) != 1)
                        _exit(126);
                execv(workload[0], workload);
                _exit(127);
        }
        close(go[0]);

        /* One event per CPU, as Sysprof: hardware cycles, else cpu-clock. */
        int perf_fds[MAX_CPUS], cpus[MAX_CPUS], n = 0;
        int n_cpus = (int) sysconf(_SC_NPROCESSORS_CONF);
        int target = own ? (int) child : -1;
        for (int cpu = 0; cpu < n_cpus && cpu < MAX_CPUS; cpu++) {
                g_clear_error(&error);
                int fd = perf_event_open_via_service(bus, target, cpu, true, &error);
                if (fd < 0) {
                        g_clear_error(&error);
                        fd = perf_event_open_via_service(bus, target, cpu, false, &error);
                }
                if (fd < 0)
                        die("PerfEventOpen for cpu %d: %s", cpu, error->message);
                perf_fds[n] = fd;
                cpus[n++] = cpu;
        }
        int efd = eventfd(0, EFD_CLOEXEC), p[2];
        if (efd < 0 || pipe2(p, O_CLOEXEC) < 0)
                die("eventfd/pipe: %s", strerror(errno));
        g_clear_error(&error);
        if (!call_unwind(bus, perf_fds, cpus, n, efd, p[1], &error))
                die("Unwind: %s", error->message);
        close(p[1]);
        for (int k = 0; k < n; k++)
                if (ioctl(perf_fds[k], PERF_EVENT_IOC_ENABLE, 0) < 0)
                        die("enabling the event of cpu %d: %s", cpus[k], strerror(errno));

        g_autoptr(GByteArray) stream = g_byte_array_new();
        if (write(go[1], "g", 1) != 1)
                die("starting the workload: %s", strerror(errno));
        close(go[1]);
        int status = 0;
        while (waitpid(child, &status, WNOHANG) == 0)
                (void) read_some(p[0], stream, 50);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                die("the workload failed (status 0x%x)", status);
        for (double until = now_s() + hold; now_s() < until;)
                (void) read_some(p[0], stream, 50);
        uint64_t one = 1;
        if (write(efd, &one, sizeof(one)) != sizeof(one))
                die("writing the eventfd: %s", strerror(errno));
        bool open = true;
        for (double until = now_s() + 90; open && now_s() < until;)
                open = read_some(p[0], stream, 100);
        if (open)
                die("the service did not close the capture stream within 90 s of the eventfd");
        for (int k = 0; k < n; k++)
                close(perf_fds[k]);

        /* Check the stream: a capture as Sysprof's muxer reads it. */
        CaptureReader *reader;
        char *msg = NULL;
        if (capture_reader_open_memory(stream->data, stream->len, &reader, &msg) < 0)
                die("the stream (%u bytes) is not a capture: %s", stream->len, msg ? msg : "?");
        Map *maps = NULL;
        size_t n_maps = 0, samples = 0, ours = 0, full = 0, all_samples = 0, shown = 0, with_kernel = 0;
        CaptureFrame f;
        int r;
        while ((r = capture_reader_next(reader, &f)) > 0) {
                if (f.type == CAPTURE_FRAME_MAP && f.pid == child) {
                        maps = realloc(maps, (n_maps + 1) * sizeof(Map));
                        maps[n_maps++] = (Map) { f.map.start, f.map.end, f.map.offset,
                                                 strcmp(f.map.filename, bin.path) == 0 };
                        continue;
                }
                if (f.type != CAPTURE_FRAME_SAMPLE)
                        continue;
                all_samples++;
                for (size_t k = 0; k < f.sample.n_addrs; k++)
                        if (f.sample.addrs[k] == CAPTURE_CONTEXT_KERNEL) {
                                with_kernel++;
                                break;
                        }
                if (f.pid != child)
                        continue;
                samples++;
                /* The user part: after CAPTURE_CONTEXT_USER (or all of it). */
                size_t start = 0;
                for (size_t k = 0; k < f.sample.n_addrs; k++)
                        if (f.sample.addrs[k] == CAPTURE_CONTEXT_USER)
                                start = k + 1;
                const char *names[64];
                size_t n_names = 0;
                for (size_t k = start; k < f.sample.n_addrs && n_names < 64; k++) {
                        uint64_t a = f.sample.addrs[k];
                        if (capture_address_is_context(a))
                                break;
                        names[n_names++] = frame_name(&bin, maps, n_maps, k == start ? a : a - 1);
                }
                if (n_names == 0 || strcmp(names[0], "?") == 0)
                        continue;
                ours++;
                bool whole = n_names >= n_chain;
                for (size_t k = 0; whole && k < n_chain; k++)
                        whole = strcmp(names[k], chain[k]) == 0;
                full += whole;
                if (shown < 3 || (!whole && shown < 6)) {
                        shown++;
                        printf("sample %s:", whole ? "whole" : "cut");
                        for (size_t k = 0; k < n_names; k++)
                                printf(" %s", names[k]);
                        printf("\n");
                }
        }
        if (r < 0)
                die("reading the stream: %s", capture_reader_error(reader));
        printf("stream: %u bytes, %zu samples, %zu of the workload (pid %d), %zu in its own code, %zu whole "
               "stacks %s..%s\n", stream->len, all_samples, samples, (int) child, ours, full, chain[0],
               chain[n_chain - 1]);
        capture_reader_free(reader);
        free(maps);
        binary_done(&bin);
        if (own && samples != all_samples)
                die("%zu samples of other processes reached a session on the workload's process alone",
                    all_samples - samples);
        if (own && with_kernel > 0 && !kernel_addresses_visible())
                die("%zu samples carry kernel addresses, which this user may not see", with_kernel);
        if (own)
                printf("only the workload's samples, %zu with a kernel part\n", with_kernel);
        if (ours < 20)
                die("only %zu samples of the workload's own code (at least 20 expected)", ours);
        double pct = 100.0 * (double) full / (double) ours;
        if (pct < min_full)
                die("only %.1f%% of the workload's samples have the whole stack %s..%s (%.0f%% expected)", pct,
                    chain[0], chain[n_chain - 1], min_full);
        printf("ok: %.1f%% whole DWARF stacks down from %s to %s\n", pct, chain[0], chain[n_chain - 1]);
        return 0;
}
