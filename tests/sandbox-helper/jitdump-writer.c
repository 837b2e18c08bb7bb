/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jitdump-writer: a tiny JIT that describes its code in a jitdump file
 * the way perf's JIT interface documents it (Linux
 * tools/perf/Documentation/jitdump-specification.txt): it writes
 * DIR/jit-PID.dump, maps that file executable so a profiler sees it,
 * generates x86-64 code into an anonymous buffer and runs it:
 *   1. DEBUG_INFO + LOAD jit_alpha at A (source alpha.js), runs it;
 *   2. LOAD jit_beta at C, runs it;
 *   3. MOVE jit_alpha from A to B, unmaps A's page (the code is gone
 *      there), runs alpha at B;
 *   4. CLOSE.
 * Usage: jitdump-writer DIR CPU-MILLISECONDS-PER-PHASE [PERF-MAP-MODE]
 * With PERF-MAP-MODE it writes no jitdump but /tmp/perf-PID.map, naming
 * the same code: "file" a plain file; "symlink" a symlink to DIR/target
 * holding those lines (a profiler must not follow it); "foreign" a file
 * then given to uid 65534 (not the process's: must not be used). */
#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int dump_fd = -1;
static FILE *perf_map;
static uint64_t next_index = 1;

static uint64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

static void put(const void *p, size_t n) {
        if (dump_fd < 0)
                return; /* perf map mode */
        if (write(dump_fd, p, n) != (ssize_t) n) {
                perror("write");
                exit(1);
        }
}

static void record_header(uint32_t id, uint32_t size) {
        struct { uint32_t id, total_size; uint64_t timestamp; } h = { id, size, now_ns() };
        put(&h, sizeof h);
}

/* DEBUG_INFO: two line entries for the code at addr (its first byte, its loop). */
static void debug_info(uint64_t addr, const char *file, uint32_t line0, uint32_t line1) {
        size_t entry = 16 + strlen(file) + 1;
        record_header(2, (uint32_t) (16 + 16 + 2 * entry));
        uint64_t fixed[2] = { addr, 2 };
        put(fixed, sizeof fixed);
        for (int i = 0; i < 2; i++) {
                struct __attribute__((packed)) { uint64_t addr; uint32_t line, discrim; } e = {
                        addr + (i ? 3 : 0), i ? line1 : line0, 0 };
                put(&e, sizeof e);
                put(file, strlen(file) + 1);
        }
}

static void perf_map_line(const char *name, void *code, uint64_t size) {
        if (perf_map) {
                fprintf(perf_map, "%lx %lx %s\n", (unsigned long) (uintptr_t) code, (unsigned long) size, name);
                fflush(perf_map);
        }
}

static uint64_t load(const char *name, void *code, uint64_t size) {
        uint64_t index = next_index++;
        perf_map_line(name, code, size);
        record_header(0, (uint32_t) (16 + 40 + strlen(name) + 1 + size));
        struct __attribute__((packed)) { uint32_t pid, tid; uint64_t vma, code_addr, code_size, code_index; } l = {
                (uint32_t) getpid(), (uint32_t) getpid(), (uintptr_t) code, (uintptr_t) code, size, index };
        put(&l, sizeof l);
        put(name, strlen(name) + 1);
        put(code, size);
        return index;
}

static void move(uint64_t index, void *from, void *to, uint64_t size) {
        perf_map_line("jit_alpha", to, size);
        record_header(1, 16 + 48);
        struct __attribute__((packed)) { uint32_t pid, tid; uint64_t vma, old_addr, new_addr, code_size, code_index; } m = {
                (uint32_t) getpid(), (uint32_t) getpid(), (uintptr_t) to, (uintptr_t) from, (uintptr_t) to, size, index };
        put(&m, sizeof m);
}

/* mov rax, rdi; loop: dec rax; jnz loop; ret */
static const uint8_t spin_code[] = { 0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3 };

static uint64_t cpu_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* Runs the code for ms of CPU time (samples count CPU time, whatever the
 * machine's load). */
static void run(void *code, int ms) {
        uint64_t (*f)(uint64_t) = (uint64_t (*)(uint64_t)) code;
        uint64_t end = cpu_ns() + (uint64_t) ms * 1000000ull;
        while (cpu_ns() < end)
                f(200000);
}

int main(int argc, char **argv) {
        if (argc != 3 && argc != 4) {
                fprintf(stderr, "usage: %s DIR MS [file|symlink|foreign]\n", argv[0]);
                return 2;
        }
        int ms = atoi(argv[2]);
        char path[4096];
        if (argc == 4) {
                char map[64], target[4096];
                snprintf(map, sizeof map, "/tmp/perf-%d.map", (int) getpid());
                snprintf(target, sizeof target, "%s/target", argv[1]);
                bool link = strcmp(argv[3], "symlink") == 0;
                if (link && symlink(target, map) < 0) {
                        perror(map);
                        return 1;
                }
                perf_map = fopen(link ? target : map, "w");
                if (!perf_map || (strcmp(argv[3], "foreign") == 0 && fchown(fileno(perf_map), 65534, 65534) < 0)) {
                        perror(map);
                        return 1;
                }
                goto generate;
        }
        snprintf(path, sizeof path, "%s/jit-%d.dump", argv[1], (int) getpid());
        dump_fd = open(path, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
        if (dump_fd < 0) {
                perror(path);
                return 1;
        }
        struct { uint32_t magic, version, total_size, elf_mach, pad1, pid; uint64_t timestamp, flags; } h = {
                0x4A695444, 1, 40, EM_X86_64, 0, (uint32_t) getpid(), now_ns(), 0 };
        put(&h, sizeof h);
        /* Mapped executable, as perf's agents do, so the profiler sees the file. */
        if (mmap(NULL, (size_t) sysconf(_SC_PAGESIZE), PROT_READ | PROT_EXEC, MAP_PRIVATE, dump_fd, 0) == MAP_FAILED) {
                perror("mmap dump");
                return 1;
        }
generate:;
        long page = sysconf(_SC_PAGESIZE);
        uint8_t *pages = mmap(NULL, 3 * (size_t) page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (pages == MAP_FAILED) {
                perror("mmap code");
                return 1;
        }
        uint8_t *a = pages, *b = pages + page + 64, *c = pages + 2 * page + 128;
        memcpy(a, spin_code, sizeof spin_code);
        memcpy(b, spin_code, sizeof spin_code);
        memcpy(c, spin_code, sizeof spin_code);
        if (mprotect(pages, 3 * (size_t) page, PROT_READ | PROT_EXEC) < 0) {
                perror("mprotect");
                return 1;
        }
        debug_info((uintptr_t) a, "alpha.js", 10, 11);
        uint64_t alpha = load("jit_alpha", a, sizeof spin_code);
        run(a, ms);
        load("jit_beta", c, sizeof spin_code);
        run(c, ms);
        move(alpha, a, b, sizeof spin_code);
        munmap(a, (size_t) page); /* alpha's old place is gone */
        run(b, ms);
        record_header(3, 16);
        if (perf_map)
                printf("done /tmp/perf-%d.map\n", (int) getpid());
        else
                printf("done %s\n", path);
        return 0;
}
