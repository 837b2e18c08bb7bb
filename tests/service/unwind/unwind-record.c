/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind-record: runs a command under perf_event_open with REGS_USER +
 * STACK_USER (as periscoped samples), compiles every mapped file's unwind
 * table with the helper's compiler, validates it, unwinds every sample with
 * the service's executor, and names the frames from the program's own symbol
 * table (test side only: the daemon never parses ELF). Then it checks the
 * unwound stacks against the expected call chains.
 *
 *   unwind-record [--chain F1,F2,...]... [--min-ok PERCENT] [--min-full PERCENT]
 *                 [--expect-fp-fallback] [--expect-debug-frame] [--period-ns N] [--stack-size N]
 *                 [--replay-seconds S] [--print N] [--helper] -- COMMAND [ARGS...]
 *
 * --helper compiles the tables through the sandboxed periscope-helper
 * (COMPILE_UNWIND, $PERISCOPE_HELPER) instead of in-process.
 *
 * A chain lists the program's own functions from the root (main or a
 * thread's start routine) to the hottest leaf; "*" stands for one or more
 * frames outside the program (libc, libstdc++, the signal trampoline). A
 * sample is correct when its own-function sequence, read from the root, is a
 * prefix of one of the chains with that root (optionally followed by "*"
 * for a leaf outside the program). --min-ok (default 99) is the percentage of
 * samples that must be correct; --min-full (default 30) the percentage that
 * must show a whole chain, so a workload that never reaches its leaf fails.
 * --replay-seconds unwinds all samples again and again for that long and
 * prints frames per second (benchmark; never asserted). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "basic.h"
#include "helper-client.h"
#include "perf.h"
#include "protocol.h"
#include "unwind-compile.h"
#include "unwind-maps.h"
#include "unwinder.h"

#define RING_PAGES 256
#define MAX_CPUS 64
#define MAX_CHAINS 16
#define MAX_TOKENS 64

#define REG_MASK PERF_REGS_UNWIND_MASK /* this machine's: x86-64 bp, sp, ip; aarch64 x29, x30, sp, pc */

typedef struct Sample {
        uint32_t pid, tid;
        UnwindRegs regs;
        uint8_t *stack;
        size_t stack_size;
} Sample;

typedef struct Symbol {
        uint64_t addr, size;
        char *name;
} Symbol;

typedef struct File {
        char *path;
        bool own;                        /* the program under test */
        void *blob;
        size_t blob_size;
        UnwindTable table;
        bool has_table;
        UnwindCompileStats stats;
        GElf_Phdr *loads;
        size_t n_loads;
        Symbol *symbols;
        size_t n_symbols;
} File;

typedef struct Mapping {
        uint64_t start, end, pgoff;
        File *file;
} Mapping;

static Sample *samples;
static size_t n_samples, allocated_samples;
static Mapping *mappings;
static size_t n_mappings;
static File **files;
static size_t n_files;
static size_t lost_records;
static HelperClient *helper; /* --helper: tables come from the sandboxed helper */

static char *chains[MAX_CHAINS][MAX_TOKENS];
static size_t chain_len[MAX_CHAINS], n_chains;

static void *xrealloc(void *p, size_t n) {
        p = realloc(p, n ? n : 1);
        if (!p) {
                fprintf(stderr, "out of memory\n");
                exit(1);
        }
        return p;
}

static File *file_get(const char *path) {
        for (size_t i = 0; i < n_files; i++)
                if (strcmp(files[i]->path, path) == 0)
                        return files[i];
        files = xrealloc(files, (n_files + 1) * sizeof(File *));
        files[n_files] = xrealloc(NULL, sizeof(File));
        *files[n_files] = (File) { .path = strdup(path) };
        return files[n_files++];
}

/* ---- perf ring reading ---- */

static void handle_record(const struct perf_event_header *h) {
        const uint8_t *p = (const uint8_t *) (h + 1), *end = (const uint8_t *) h + h->size;

        if (h->type == PERF_RECORD_SAMPLE) {
                Sample s = {};
                uint64_t v[PERF_REGS_UNWIND_N], abi, size, dyn;
                PerfUnwindRegs r;

                if (end - p < 8 + 8 + 8 + 8)
                        return;
                p += 8; /* ip */
                memcpy(&s.pid, p, 4);
                memcpy(&s.tid, p + 4, 4);
                p += 8;
                p += 8; /* time */
                memcpy(&abi, p, 8);
                p += 8;
                if (abi == 0)
                        return; /* no user registers: a kernel thread */
                if ((size_t) (end - p) < sizeof(v) + 8)
                        return;
                memcpy(v, p, sizeof(v));
                p += sizeof(v);
                if (!perf_regs_pick(REG_MASK, v, PERF_REGS_UNWIND_N, &r))
                        return;
                s.regs = (UnwindRegs){ .fp = r.fp, .sp = r.sp, .ip = r.ip, .lr = r.lr };
#if defined(__aarch64__)
                s.regs.arch = UNWIND_ARCH_AARCH64;
                s.regs.pac_mask = UNWIND_AARCH64_PAC_MASK_VA48;
#endif
                memcpy(&size, p, 8);
                p += 8;
                if (size > (size_t) (end - p) || (size && (size_t) (end - p) < size + 8))
                        return;
                dyn = 0;
                if (size) {
                        memcpy(&dyn, p + size, 8);
                        if (dyn > size)
                                dyn = size;
                }
                s.stack = xrealloc(NULL, dyn);
                memcpy(s.stack, p, dyn);
                s.stack_size = dyn;
                if (n_samples == allocated_samples) {
                        allocated_samples = allocated_samples ? allocated_samples * 2 : 1024;
                        samples = xrealloc(samples, allocated_samples * sizeof(Sample));
                }
                samples[n_samples++] = s;
        } else if (h->type == PERF_RECORD_MMAP2) {
                uint64_t addr, len, pgoff;
                uint32_t prot;
                const char *name;

                if (end - p < 8 + 24 + 8 + 16 + 8)
                        return;
                memcpy(&addr, p + 8, 8);
                memcpy(&len, p + 16, 8);
                memcpy(&pgoff, p + 24, 8);
                memcpy(&prot, p + 56, 4);
                name = (const char *) (p + 64);
                if (!(prot & PROT_EXEC) || !memchr(name, 0, (size_t) (end - (const uint8_t *) name)))
                        return;
                mappings = xrealloc(mappings, (n_mappings + 1) * sizeof(Mapping));
                mappings[n_mappings++] = (Mapping) { addr, addr + len, pgoff, file_get(name) };
        } else if (h->type == PERF_RECORD_LOST)
                lost_records++;
}

typedef struct Ring {
        int fd;
        struct perf_event_mmap_page *meta;
        uint8_t *data;
        size_t size;
} Ring;

static void drain(Ring *r) {
        uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE), tail = r->meta->data_tail;
        static uint8_t tmp[65536];

        while (tail < head) {
                struct perf_event_header h;
                size_t off = tail % r->size;

                for (size_t i = 0; i < sizeof(h); i++)
                        ((uint8_t *) &h)[i] = r->data[(off + i) % r->size];
                if (h.size < sizeof(h) || tail + h.size > head)
                        break;
                for (size_t i = 0; i < h.size; i++)
                        tmp[i] = r->data[(off + i) % r->size];
                handle_record((const struct perf_event_header *) tmp);
                tail += h.size;
        }
        __atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

static int record(char **argv, uint64_t period_ns, uint32_t stack_size) {
        int go[2];
        pid_t pid;
        Ring rings[MAX_CPUS];
        long n_cpus = sysconf(_SC_NPROCESSORS_CONF);
        int status;

        if (n_cpus > MAX_CPUS)
                n_cpus = MAX_CPUS;
        if (pipe2(go, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                char c;
                close(go[1]);
                if (read(go[0], &c, 1) != 1)
                        _exit(126);
                execvp(argv[0], argv);
                fprintf(stderr, "exec %s: %m\n", argv[0]);
                _exit(127);
        }
        close(go[0]);

        for (long cpu = 0; cpu < n_cpus; cpu++) {
                struct perf_event_attr a = {
                        .size = sizeof(a),
                        .type = PERF_TYPE_SOFTWARE,
                        .config = PERF_COUNT_SW_CPU_CLOCK,
                        .sample_period = period_ns,
                        .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                       PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
                        .sample_regs_user = REG_MASK,
                        .sample_stack_user = stack_size,
                        .disabled = 1,
                        .enable_on_exec = 1,
                        .inherit = 1,
                        .mmap = 1,
                        .mmap2 = 1,
                        .comm = 1,
                        .task = 1,
                        .exclude_kernel = 1,
                        .exclude_hv = 1,
                        .wakeup_events = 1,
                };
                int fd = (int) syscall(SYS_perf_event_open, &a, pid, (int) cpu, -1, PERF_FLAG_FD_CLOEXEC);
                if (fd < 0) {
                        fprintf(stderr, "perf_event_open(cpu %ld): %m (run as root or lower perf_event_paranoid)\n", cpu);
                        kill(pid, SIGKILL);
                        return -errno;
                }
                size_t page = (size_t) sysconf(_SC_PAGESIZE);
                void *m = mmap(NULL, page * (RING_PAGES + 1), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                if (m == MAP_FAILED) {
                        fprintf(stderr, "mmap perf ring: %m\n");
                        kill(pid, SIGKILL);
                        return -errno;
                }
                rings[cpu] = (Ring) { fd, m, (uint8_t *) m + page, page * RING_PAGES };
        }

        if (write(go[1], "g", 1) != 1)
                return -errno;
        close(go[1]);

        for (;;) {
                struct pollfd pfd[MAX_CPUS];
                for (long i = 0; i < n_cpus; i++)
                        pfd[i] = (struct pollfd) { .fd = rings[i].fd, .events = POLLIN };
                (void) poll(pfd, (nfds_t) n_cpus, 5);
                for (long i = 0; i < n_cpus; i++)
                        drain(&rings[i]);
                pid_t w = waitpid(pid, &status, WNOHANG);
                if (w == pid)
                        break;
        }
        for (long i = 0; i < n_cpus; i++) {
                drain(&rings[i]);
                close(rings[i].fd);
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "workload %s failed (status %#x)\n", argv[0], status);
                return -ECHILD;
        }
        return 0;
}

/* ---- tables and symbols ---- */

static void load_symbols(File *f, Elf *elf) {
        Elf_Scn *scn = NULL;
        size_t n;

        if (elf_getphdrnum(elf, &n) == 0)
                for (size_t i = 0; i < n; i++) {
                        GElf_Phdr ph;
                        if (gelf_getphdr(elf, (int) i, &ph) && ph.p_type == PT_LOAD) {
                                f->loads = xrealloc(f->loads, (f->n_loads + 1) * sizeof(GElf_Phdr));
                                f->loads[f->n_loads++] = ph;
                        }
                }
        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh;
                Elf_Data *d;
                if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
                    sh.sh_entsize == 0 || !(d = elf_getdata(scn, NULL)))
                        continue;
                for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
                        GElf_Sym sym;
                        const char *name;
                        if (!gelf_getsym(d, (int) i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
                            sym.st_value == 0 || !(name = elf_strptr(elf, sh.sh_link, sym.st_name)))
                                continue;
                        f->symbols = xrealloc(f->symbols, (f->n_symbols + 1) * sizeof(Symbol));
                        /* GCC clones ("f.constprop.0", "f.isra.0") are still f. */
                        f->symbols[f->n_symbols++] = (Symbol) { sym.st_value, sym.st_size ? sym.st_size : 1,
                                                                strndup(name, strcspn(name, ".")) };
                }
        }
}

static int compile_file(File *f, const char *vdso_path) {
        _cleanup_close_ int fd = -1;
        UnwindCompileStats st = {};
        const char *reason;
        Elf *elf;
        int r;

        if (strcmp(f->path, "[vdso]") == 0) {
                /* The child's vdso is the kernel's one image: compile ours. */
                const void *vdso = (const void *) getauxval(AT_SYSINFO_EHDR);
                size_t size = 0;
                FILE *m = fopen("/proc/self/maps", "re");
                char line[512];
                while (m && fgets(line, sizeof(line), m)) {
                        unsigned long s, e;
                        if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &s, &e) == 2)
                                size = e - s;
                }
                if (m)
                        fclose(m);
                if (!vdso || !size)
                        return -ENOENT;
                if (helper) {
                        _cleanup_free_ char *why = NULL;
                        r = helper_client_compile_unwind(helper, -1, vdso, size, &f->blob, &f->blob_size, &why);
                        if (r < 0 && why)
                                fprintf(stderr, "helper: %s\n", why);
                } else
                        r = unwind_compile_memory(vdso, size, &f->blob, &f->blob_size, &st);
                elf_version(EV_CURRENT);
                elf = elf_memory((char *) vdso, size);
        } else {
                fd = open(vdso_path ? vdso_path : f->path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        return -errno;
                if (helper) {
                        _cleanup_free_ char *why = NULL;
                        r = helper_client_compile_unwind(helper, fd, NULL, 0, &f->blob, &f->blob_size, &why);
                        if (r < 0 && why)
                                fprintf(stderr, "helper: %s\n", why);
                        /* Statistics are not in the client API: recount here for the checks. */
                        if (r >= 0) {
                                _cleanup_free_ void *again = NULL;
                                size_t again_size;
                                if (unwind_compile_fd(fd, &again, &again_size, &st) == 0 &&
                                    (again_size != f->blob_size || memcmp(again, f->blob, again_size) != 0)) {
                                        fprintf(stderr, "FAIL: the helper's table of %s differs from the in-process one\n", f->path);
                                        return -EBADMSG;
                                }
                        }
                } else
                        r = unwind_compile_fd(fd, &f->blob, &f->blob_size, &st);
                elf_version(EV_CURRENT);
                elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        }
        if (elf) {
                load_symbols(f, elf);
                elf_end(elf);
        }
        if (r < 0) {
                fprintf(stderr, "note: no unwind table for %s: %s\n", f->path, strerror(-r));
                return 0;
        }
        r = unwind_table_validate(f->blob, f->blob_size, &f->table, &reason);
        if (r < 0) {
                fprintf(stderr, "FAIL: table of %s does not validate: %s\n", f->path, reason);
                return r;
        }
        f->has_table = true;
        f->stats = st;
        fprintf(stderr, "table %s: %u rows (%u unsupported, %u plt, %u signal), %zu bytes\n", f->path, st.rows,
                st.rows_unsupported, st.rows_plt, st.rows_signal, f->blob_size);
        return 0;
}

static const Mapping *mapping_of(uint64_t addr) {
        /* Later mappings replace earlier ones. */
        for (size_t i = n_mappings; i-- > 0;)
                if (addr >= mappings[i].start && addr < mappings[i].end)
                        return &mappings[i];
        return NULL;
}

static const char *symbolize(uint64_t addr, bool *own) {
        const Mapping *m = mapping_of(addr);
        uint64_t off, vaddr = 0;
        bool found = false;

        *own = false;
        if (!m)
                return "?";
        *own = m->file->own;
        off = addr - m->start + m->pgoff;
        for (size_t i = 0; i < m->file->n_loads; i++) {
                const GElf_Phdr *ph = &m->file->loads[i];
                if (off >= ph->p_offset && off - ph->p_offset < ph->p_filesz) {
                        vaddr = off - ph->p_offset + ph->p_vaddr;
                        found = true;
                        break;
                }
        }
        if (!found)
                return "?";
        for (size_t i = 0; i < m->file->n_symbols; i++) {
                const Symbol *s = &m->file->symbols[i];
                if (vaddr >= s->addr && vaddr - s->addr < s->size)
                        return s->name;
        }
        return "?";
}

/* ---- checking ---- */

static void parse_chain(const char *spec) {
        char *copy = strdup(spec), *save = NULL;
        if (n_chains == MAX_CHAINS) {
                fprintf(stderr, "too many chains\n");
                exit(2);
        }
        for (char *t = strtok_r(copy, ",", &save); t && chain_len[n_chains] < MAX_TOKENS; t = strtok_r(NULL, ",", &save))
                chains[n_chains][chain_len[n_chains]++] = strdup(t);
        n_chains++;
        free(copy);
}

typedef enum Verdict { VERDICT_NO_ROOT, VERDICT_WRONG, VERDICT_OK, VERDICT_FULL } Verdict;

/* Tokens of one unwound stack, root first: own function names and "*" for
 * each run of foreign frames, starting at the outermost chain root found. */
static Verdict check_stack(const uint64_t *frames, size_t n, char **tokens, size_t *n_tokens) {
        size_t nt = 0;

        /* frames[0] is the leaf; walk from the root end. */
        for (size_t k = n; k-- > 0;) {
                bool own;
                const char *name = symbolize(k == 0 ? frames[k] : frames[k] - 1, &own);
                /* Code of the program without a symbol (its .plt) counts as foreign. */
                const char *tok = own && strcmp(name, "?") != 0 ? name : "*";
                if (nt > 0 && strcmp(tok, "*") == 0 && strcmp(tokens[nt - 1], "*") == 0)
                        continue;
                if (nt < MAX_TOKENS)
                        tokens[nt++] = (char *) tok;
        }
        *n_tokens = nt;

        /* Find the first token that is some chain's root. */
        for (size_t start = 0; start < nt; start++) {
                bool is_root = false;
                for (size_t c = 0; c < n_chains; c++)
                        if (strcmp(tokens[start], chains[c][0]) == 0)
                                is_root = true;
                if (!is_root)
                        continue;
                size_t len = nt - start;
                if (len > 1 && strcmp(tokens[nt - 1], "*") == 0)
                        len--; /* leaf outside the program */
                for (size_t c = 0; c < n_chains; c++) {
                        if (strcmp(tokens[start], chains[c][0]) != 0 || len > chain_len[c])
                                continue;
                        bool match = true;
                        for (size_t i = 0; i < len && match; i++)
                                match = strcmp(tokens[start + i], chains[c][i]) == 0;
                        if (match)
                                return len == chain_len[c] ? VERDICT_FULL : VERDICT_OK;
                }
                return VERDICT_WRONG;
        }
        return VERDICT_NO_ROOT;
}

static double thread_cpu(void) {
        struct timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
        double min_ok = 99.0, min_full = 30.0, replay_seconds = 0;
        uint64_t period_ns = 250000;
        uint32_t stack_size = 16384;
        bool expect_fp = false, expect_debug_frame = false;
        int print = 5, i, r;
        char exe[4096];
        static uint64_t frames[UNWINDER_MAX_FRAMES];
        size_t verdicts[4] = {}, with_fp = 0, stops[_UNWIND_STOP_MAX] = {}, total_frames = 0;
        UnwindMaps maps = {};

        for (i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--") == 0) {
                        i++;
                        break;
                } else if (strcmp(argv[i], "--chain") == 0 && i + 1 < argc)
                        parse_chain(argv[++i]);
                else if (strcmp(argv[i], "--min-ok") == 0 && i + 1 < argc)
                        min_ok = atof(argv[++i]);
                else if (strcmp(argv[i], "--min-full") == 0 && i + 1 < argc)
                        min_full = atof(argv[++i]);
                else if (strcmp(argv[i], "--period-ns") == 0 && i + 1 < argc)
                        period_ns = strtoull(argv[++i], NULL, 0);
                else if (strcmp(argv[i], "--stack-size") == 0 && i + 1 < argc)
                        stack_size = (uint32_t) strtoul(argv[++i], NULL, 0);
                else if (strcmp(argv[i], "--replay-seconds") == 0 && i + 1 < argc)
                        replay_seconds = atof(argv[++i]);
                else if (strcmp(argv[i], "--print") == 0 && i + 1 < argc)
                        print = atoi(argv[++i]);
                else if (strcmp(argv[i], "--expect-fp-fallback") == 0)
                        expect_fp = true;
                else if (strcmp(argv[i], "--expect-debug-frame") == 0)
                        expect_debug_frame = true;
                else if (strcmp(argv[i], "--helper") == 0) {
                        r = helper_client_new(&(HelperClientConfig) {}, &helper);
                        if (r < 0) {
                                fprintf(stderr, "FAIL: helper client: %s\n", strerror(-r));
                                return 1;
                        }
                }
                else {
                        fprintf(stderr, "unknown option %s\n", argv[i]);
                        return 2;
                }
        }
        if (i >= argc || n_chains == 0) {
                fprintf(stderr, "usage: %s --chain main,f,g [...] -- COMMAND [ARGS]\n", argv[0]);
                return 2;
        }
        if (!realpath(argv[i], exe)) {
                fprintf(stderr, "FAIL: %s: %m\n", argv[i]);
                return 1;
        }

        r = record(argv + i, period_ns, stack_size);
        if (r < 0) {
                fprintf(stderr, "FAIL: recording failed: %s\n", strerror(-r));
                return 1;
        }
        fprintf(stderr, "%zu samples, %zu mappings, %zu files, %zu lost records\n", n_samples, n_mappings, n_files,
                lost_records);
        if (n_samples < 100) {
                fprintf(stderr, "FAIL: only %zu samples recorded\n", n_samples);
                return 1;
        }
        for (size_t k = 0; k < n_files; k++) {
                files[k]->own = strcmp(files[k]->path, exe) == 0;
                if (compile_file(files[k], NULL) < 0)
                        return 1;
        }
        for (size_t k = 0; k < n_mappings; k++)
                if (unwind_maps_add(&maps, mappings[k].start, mappings[k].end, mappings[k].pgoff,
                                    mappings[k].file->has_table ? &mappings[k].file->table : NULL) < 0)
                        return 1;

        for (size_t k = 0; k < n_samples; k++) {
                UnwindStack st = { samples[k].regs.sp, samples[k].stack, samples[k].stack_size };
                UnwindResult res;
                char *tokens[MAX_TOKENS];
                size_t nt;
                Verdict v;

                unwinder_unwind(&samples[k].regs, &st, unwind_maps_find, &maps, frames, UNWINDER_MAX_FRAMES, &res);
                stops[res.stop]++;
                total_frames += res.n_frames;
                v = check_stack(frames, res.n_frames, tokens, &nt);
                verdicts[v]++;
                if (v == VERDICT_FULL && res.n_fp_frames > 0)
                        with_fp++;
                if (v < VERDICT_OK && print > 0) {
                        print--;
                        fprintf(stderr, "bad sample (tid %u, stop %s, %zu frames):", samples[k].tid,
                                unwind_stop_to_string(res.stop), res.n_frames);
                        for (size_t f = 0; f < res.n_frames; f++) {
                                bool own;
                                fprintf(stderr, " %s@%#" PRIx64, symbolize(f ? frames[f] - 1 : frames[f], &own), frames[f]);
                        }
                        fputc('\n', stderr);
                }
        }

        double ok = 100.0 * (double) (verdicts[VERDICT_OK] + verdicts[VERDICT_FULL]) / (double) n_samples;
        double full = 100.0 * (double) verdicts[VERDICT_FULL] / (double) n_samples;
        printf("samples %zu: correct to the root %.2f%% (whole chain %.2f%%), wrong %zu, root not reached %zu; "
               "%.1f frames/sample; stops:", n_samples, ok, full, verdicts[VERDICT_WRONG], verdicts[VERDICT_NO_ROOT],
               (double) total_frames / (double) n_samples);
        for (int s = 0; s < _UNWIND_STOP_MAX; s++)
                if (stops[s])
                        printf(" %s=%zu", unwind_stop_to_string(s), stops[s]);
        printf("; whole chains through frame-pointer fallback %zu\n", with_fp);

        if (replay_seconds > 0) {
                size_t replayed_frames = 0, rounds = 0;
                double t0 = now(), c0 = thread_cpu(), t;
                do {
                        for (size_t k = 0; k < n_samples; k++) {
                                UnwindStack st = { samples[k].regs.sp, samples[k].stack, samples[k].stack_size };
                                UnwindResult res;
                                unwinder_unwind(&samples[k].regs, &st, unwind_maps_find, &maps, frames,
                                                UNWINDER_MAX_FRAMES, &res);
                                replayed_frames += res.n_frames;
                        }
                        rounds++;
                        t = now() - t0;
                } while (t < replay_seconds);
                double c = thread_cpu() - c0;
                /* On a shared machine wall time includes other processes' turns:
                 * CPU time of this thread is what one core spends. */
                printf("replay: %zu rounds of %zu samples, %zu frames in %.3f s wall, %.3f s CPU: "
                       "%.2f M frames per CPU-second (%.1f ns/frame), %.2f M frames per wall second\n",
                       rounds, n_samples, replayed_frames, t, c, (double) replayed_frames / c / 1e6,
                       c * 1e9 / (double) replayed_frames, (double) replayed_frames / t / 1e6);
        }

        r = 0;
        if (ok < min_ok) {
                fprintf(stderr, "FAIL: %.2f%% of samples unwound correctly to the root, need %.1f%%\n", ok, min_ok);
                r = 1;
        }
        if (full < min_full) {
                fprintf(stderr, "FAIL: only %.2f%% of samples show a whole expected chain, need %.1f%%\n", full, min_full);
                r = 1;
        }
        if (expect_fp && with_fp * 2 < verdicts[VERDICT_FULL]) {
                fprintf(stderr, "FAIL: expected the frame-pointer fallback in whole chains, used in %zu of %zu\n",
                        with_fp, verdicts[VERDICT_FULL]);
                r = 1;
        }
        if (expect_debug_frame) {
                const File *own = NULL;
                for (size_t k = 0; k < n_files; k++)
                        if (files[k]->own)
                                own = files[k];
                if (!own || own->stats.fdes_debug_frame == 0) {
                        fprintf(stderr, "FAIL: the program's table took nothing from .debug_frame\n");
                        r = 1;
                }
        }
        unwind_maps_clear(&maps);
        if (helper) {
                printf("helper started %u time(s)\n", helper_client_get_starts(helper));
                helper_client_free(helper);
        }
        return r;
}
