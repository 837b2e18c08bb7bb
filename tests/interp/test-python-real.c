/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-python-real.c: service/interp's reader on a real CPython, read
 * through /proc/PID/mem as the daemon reads it. Runs frames-target.py
 * with the interpreter $PYTHON (a path inside $PYTHON_ROOT, chrooted there
 * in a mount namespace of its own when that is not /), finds _PyRuntime
 * and Py_Version in the interpreter's ELF file ($PYTHON_ELF where that is
 * a libpython beside it) with libelf and its load address in
 * /proc/PID/maps, and checks each thread's frames (names,
 * files, lines, in order) and the entry-frame split. $PYTHON_MINOR is the
 * version wanted (11 for 3.11).
 *
 *   PYTHON=/usr/bin/python3.11 PYTHON_MINOR=11 test-python-real
 *   PYTHON_ROOT=/…/root PYTHON=/usr/bin/python3.13 PYTHON_MINOR=13 test-python-real
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "interp.h"
#include "test-check.h"

#ifndef TARGET_SCRIPT_DIR
#error "TARGET_SCRIPT_DIR: the folder of frames-target.py"
#endif

typedef struct Target {
        pid_t pid;
        int mem_fd;
        uint64_t runtime, py_version;
        uint64_t guest_base; /* where qemu-user keeps an ET_EXEC of another machine: host = guest + this */
        uint16_t machine;
        char script[PATH_MAX]; /* the script's path as the interpreter sees it */
        long main_tid, other_tid;
        char threading_file[PATH_MAX];
} Target;

static int mem_read(void *userdata, uint64_t addr, void *buf, size_t n) {
        Target *t = userdata;
        if (addr > INT64_MAX)
                return -EFAULT;
        ssize_t k = pread(t->mem_fd, buf, n, (off_t) (addr + t->guest_base));
        if (k < 0)
                return errno == EIO ? -EFAULT : -errno;
        return (size_t) k == n ? 0 : -EFAULT;
}

/* The line of frames-target.py whose comment is "# mark:NAME". */
static int mark_line(const char *name) {
        char path[PATH_MAX], line[512], want[64];
        snprintf(path, sizeof(path), "%s/frames-target.py", TARGET_SCRIPT_DIR);
        snprintf(want, sizeof(want), "# mark:%s\n", name);
        FILE *f = fopen(path, "re");
        if (!f) {
                fail("%s: %m", path);
                return -1;
        }
        int n = 0, found = -1;
        while (fgets(line, sizeof(line), f)) {
                n++;
                size_t len = strlen(line), wl = strlen(want);
                if (len >= wl && strcmp(line + len - wl, want) == 0)
                        found = n;
        }
        fclose(f);
        CHECK_MSG(found > 0, "no mark:%s in %s", name, path);
        return found;
}

/* st_value of the symbol name in the ELF file at path (its symtab or
 * dynsym), and its machine. */
static int elf_symbol(const char *path, const char *name, uint64_t *ret, uint16_t *ret_machine) {
        int fd = open(path, O_RDONLY | O_CLOEXEC), r = -ENOENT;
        if (fd < 0)
                return -errno;
        elf_version(EV_CURRENT);
        Elf *e = elf_begin(fd, ELF_C_READ, NULL);
        GElf_Ehdr eh;
        if (!e || !gelf_getehdr(e, &eh)) {
                r = -EBADMSG;
                goto out;
        }
        *ret_machine = eh.e_machine;
        for (Elf_Scn *scn = NULL; r < 0 && (scn = elf_nextscn(e, scn));) {
                GElf_Shdr sh;
                if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
                    sh.sh_entsize == 0)
                        continue;
                Elf_Data *d = elf_getdata(scn, NULL);
                for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
                        GElf_Sym sym;
                        const char *s;
                        if (gelf_getsym(d, (int) i, &sym) && sym.st_value != 0 &&
                            (s = elf_strptr(e, sh.sh_link, sym.st_name)) && strcmp(s, name) == 0) {
                                *ret = sym.st_value;
                                r = 0;
                                break;
                        }
                }
        }
out:
        if (e)
                elf_end(e);
        close(fd);
        return r;
}

/* The lowest PT_LOAD's page-aligned address in the ELF file at path, and
 * whether the file is ET_EXEC (loaded at its own addresses). */
static int elf_first_load(const char *path, uint64_t *ret, bool *ret_exec) {
        int fd = open(path, O_RDONLY | O_CLOEXEC), r = -ENOENT;
        if (fd < 0)
                return -errno;
        Elf *e = elf_begin(fd, ELF_C_READ, NULL);
        size_t n = 0;
        GElf_Ehdr eh;
        if (e && gelf_getehdr(e, &eh))
                *ret_exec = eh.e_type == ET_EXEC;
        if (e && elf_getphdrnum(e, &n) == 0)
                for (size_t i = 0; i < n; i++) {
                        GElf_Phdr ph;
                        if (gelf_getphdr(e, (int) i, &ph) && ph.p_type == PT_LOAD) {
                                *ret = ph.p_vaddr & ~(uint64_t) 0xfff;
                                r = 0;
                                break;
                        }
                }
        if (e)
                elf_end(e);
        close(fd);
        return r;
}

/* Where the file (dev, ino) is mapped from offset 0 in pid. */
static int map_start(pid_t pid, dev_t dev, ino_t ino, uint64_t *ret) {
        char path[64], line[1024];
        snprintf(path, sizeof(path), "/proc/%d/maps", (int) pid);
        FILE *f = fopen(path, "re");
        if (!f)
                return -errno;
        int r = -ENOENT;
        while (r < 0 && fgets(line, sizeof(line), f)) {
                unsigned long long start, end, offset, inode;
                unsigned maj, min;
                char perms[8];
                if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu", &start, &end, perms, &offset, &maj, &min, &inode) ==
                            7 &&
                    offset == 0 && inode == ino && makedev(maj, min) == dev) {
                        *ret = start;
                        r = 0;
                }
        }
        fclose(f);
        return r;
}

static Target target;
static bool target_started;

static void target_stop(void) {
        if (target.pid > 0) {
                kill(target.pid, SIGKILL);
                waitpid(target.pid, NULL, 0);
                target.pid = 0;
        }
}

/* Starts $PYTHON (in $PYTHON_ROOT) with args, its stdout a pipe whose
 * reading end is *ret_fd; the script folder is /tmp in a root (bound there in the
 * interpreter's own mount namespace: the root itself is not changed). */
static pid_t python_spawn(const char *const *args, int *ret_fd) {
        const char *python = getenv("PYTHON"), *root = getenv("PYTHON_ROOT");
        const char *argv[8] = { python };
        int pipefd[2];

        if (!python) {
                fprintf(stderr, "FAIL: $PYTHON (the interpreter to read) is not set\n");
                exit(1);
        }
        for (size_t i = 0; args[i] && i + 2 < sizeof(argv) / sizeof(argv[0]); i++)
                argv[i + 1] = args[i];
        MUST(pipe2(pipefd, O_CLOEXEC));
        pid_t pid = fork();
        MUST(pid);
        if (pid == 0) {
                if (dup2(pipefd[1], STDOUT_FILENO) < 0)
                        _exit(127);
                if (root && strcmp(root, "/") != 0) {
                        char mnt[PATH_MAX];
                        snprintf(mnt, sizeof(mnt), "%s/tmp", root);
                        /* The root stays as it is: the script is bound in a
                         * mount namespace of the interpreter's own. */
                        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
                            mount(TARGET_SCRIPT_DIR, mnt, NULL, MS_BIND, NULL) < 0 ||
                            mount(NULL, mnt, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL) < 0 || chroot(root) < 0 ||
                            chdir("/") < 0) {
                                fprintf(stderr, "FAIL: chroot into %s: %m\n", root);
                                _exit(127);
                        }
                }
                execv(python, (char *const *) argv);
                fprintf(stderr, "FAIL: %s: %m\n", python);
                _exit(127);
        }
        close(pipefd[1]);
        *ret_fd = pipefd[0];
        return pid;
}

/* Starts frames-target.py under $PYTHON (in $PYTHON_ROOT) and reads its
 * "ready" line; exits the test on any failure (every case needs it). */
static void target_start(void) {
        const char *python = getenv("PYTHON"), *root = getenv("PYTHON_ROOT"), *elf = getenv("PYTHON_ELF");
        char host_python[PATH_MAX], host_elf[PATH_MAX], line[2 * PATH_MAX];
        int fd;

        if (target_started)
                return;
        target_started = true;
        bool chrooted = root && strcmp(root, "/") != 0;
        snprintf(host_python, sizeof(host_python), "%s%s", chrooted ? root : "", python ?: "");
        snprintf(host_elf, sizeof(host_elf), "%s%s", chrooted ? root : "", elf ?: python ?: "");
        snprintf(target.script, sizeof(target.script), "%s/frames-target.py", chrooted ? "/tmp" : TARGET_SCRIPT_DIR);
        target.pid = python_spawn((const char *const[]){ target.script, NULL }, &fd);
        atexit(target_stop);

        FILE *out = fdopen(fd, "r");
        if (!out || !fgets(line, sizeof(line), out) ||
            sscanf(line, "ready %ld %ld %4095s", &target.main_tid, &target.other_tid, target.threading_file) != 3) {
                fprintf(stderr, "FAIL: %s did not say it is ready\n", host_python);
                exit(1);
        }
        /* the pipe stays open: the program must not die of SIGPIPE */

        /* _PyRuntime and Py_Version where the interpreter's file is mapped. */
        struct stat st;
        uint64_t runtime_sym = 0, version_sym = 0, first_load = 0, start = 0;
        MUST(stat(host_elf, &st));
        MUST(elf_symbol(host_elf, "_PyRuntime", &runtime_sym, &target.machine));
        MUST(elf_symbol(host_elf, "Py_Version", &version_sym, &target.machine));
        bool exec_file = false;
        MUST(elf_first_load(host_elf, &first_load, &exec_file));
        MUST(map_start(target.pid, st.st_dev, st.st_ino, &start));
        /* An ET_EXEC is at its own addresses, but qemu-user (an aarch64
         * interpreter here) may keep the guest's memory at an offset: every
         * address the reader sees is the guest's. */
        target.guest_base = exec_file ? start - first_load : 0;
        uint64_t bias = exec_file ? 0 : start - first_load;
        target.runtime = bias + runtime_sym;

        char mem[64];
        snprintf(mem, sizeof(mem), "/proc/%d/mem", (int) target.pid);
        target.mem_fd = open(mem, O_RDONLY | O_CLOEXEC);
        MUST(target.mem_fd);
        MUST(mem_read(&target, bias + version_sym, &target.py_version, 8));
}

static unsigned wanted_minor(void) {
        const char *m = getenv("PYTHON_MINOR");
        if (!m) {
                fprintf(stderr, "FAIL: $PYTHON_MINOR (the version wanted) is not set\n");
                exit(1);
        }
        return (unsigned) atoi(m);
}

static void load_layout(PyLayout *l) {
        char *why = NULL;
        int k = py_layout_load(mem_read, &target, target.runtime, (uint32_t) target.py_version, target.machine, l,
                               &why);
        if (k < 0) {
                fprintf(stderr, "FAIL: the layout of Python 0x%08" PRIx64 ": %s\n", target.py_version,
                        why ?: strerror(-k));
                exit(1);
        }
        free(why);
}

TEST(version) {
        target_start();
        CHECK_MSG(PY_VERSION_MAJOR(target.py_version) == 3 && PY_VERSION_MINOR(target.py_version) == wanted_minor(),
                  "Py_Version 0x%08" PRIx64 ", not 3.%u", target.py_version, wanted_minor());
        PyLayout l;
        load_layout(&l);
        CHECK(PY_VERSION_MINOR(l.version) == wanted_minor());
        CHECK(l.from_debug_offsets == (wanted_minor() >= 13));
}

/* The frames of each thread, read until both sleep where the script says
 * (the other thread may still be leaving Event.set() when "ready" comes). */
typedef struct Stacks {
        PyFrame main[64], other[64];
        size_t n_main, n_other;
} Stacks;

static bool read_stacks(PyReader *r, Stacks *s, char **why) {
        PyThread threads[16];
        int k = py_reader_threads(r, target.runtime, threads, 16, why);
        CHECK_MSG(k == 2, "%d thread states (%s)", k, *why ?: "");
        if (k != 2)
                return false;
        s->n_main = s->n_other = 0;
        for (int i = 0; i < k; i++) {
                bool is_main = (long) threads[i].native_thread_id == target.main_tid;
                CHECK_MSG(is_main || (long) threads[i].native_thread_id == target.other_tid,
                          "thread state of tid %" PRIu64 ", which the program did not name",
                          threads[i].native_thread_id);
                int w = py_reader_walk(r, threads[i].frame, is_main ? s->main : s->other, 64,
                                       is_main ? &s->n_main : &s->n_other, why);
                CHECK_MSG(w == 0, "walk of tid %" PRIu64 ": %s", threads[i].native_thread_id, *why ?: strerror(-w));
                if (w < 0)
                        return false;
        }
        return s->n_main > 0 && strcmp(s->main[0].name, "leaf") == 0 && s->n_other > 0 &&
               strcmp(s->other[0].name, "t_leaf") == 0;
}

static void check_frame(const PyFrame *f, const char *name, const char *file, int line, int entry) {
        CHECK_MSG(strcmp(f->name, name) == 0, "name %s, not %s", f->name, name);
        CHECK_MSG(strcmp(f->filename, file) == 0, "%s: file %s, not %s", name, f->filename, file);
        CHECK_MSG(line < 0 || f->line == line, "%s: line %d, not %d", name, f->line, line);
        CHECK_MSG(entry < 0 || f->entry == entry, "%s: entry %d, not %d", name, f->entry, entry);
}

TEST(frames) {
        PyReader *r = NULL;
        PyLayout l;
        Stacks s;
        char *why = NULL;
        bool ready = false;

        target_start();
        load_layout(&l);
        MUST(py_reader_new(&l, mem_read, &target, &r));
        for (int i = 0; i < 500 && !ready; i++) {
                ready = read_stacks(r, &s, &why);
                if (failures)
                        break;
                if (!ready)
                        nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
        }
        CHECK_MSG(ready, "the threads never slept where the script says (main in %s, other in %s)",
                  s.n_main ? s.main[0].name : "nothing", s.n_other ? s.other[0].name : "nothing");
        if (!ready)
                goto out;

        for (size_t i = 0; i < s.n_main; i++)
                fprintf(stderr, "main  %zu: %s %s:%d%s\n", i, s.main[i].name, s.main[i].filename, s.main[i].line,
                        s.main[i].entry ? " (entry)" : "");
        for (size_t i = 0; i < s.n_other; i++)
                fprintf(stderr, "other %zu: %s %s:%d%s\n", i, s.other[i].name, s.other[i].filename, s.other[i].line,
                        s.other[i].entry ? " (entry)" : "");

        /* main: leaf began an eval call of its own (map called it from C);
         * middle, outer and <module> are one call's, which began with
         * <module>. */
        CHECK_MSG(s.n_main == 4, "main thread: %zu frames", s.n_main);
        if (s.n_main == 4) {
                check_frame(&s.main[0], "leaf", target.script, mark_line("leaf"), true);
                check_frame(&s.main[1], "Worker.middle", target.script, mark_line("middle"), false);
                check_frame(&s.main[2], "outer", target.script, mark_line("outer"), false);
                check_frame(&s.main[3], "<module>", target.script, mark_line("module"), true);
        }

        /* other: t_leaf, t_outer, then threading's Thread.run and the
         * bootstrap that the thread's C start called. Whether t_outer
         * begins an eval call (Thread.run's call with *args) varies by
         * version; leaf's caller never does. */
        CHECK_MSG(s.n_other >= 4, "other thread: %zu frames", s.n_other);
        if (s.n_other >= 4) {
                check_frame(&s.other[0], "t_leaf", target.script, mark_line("t_leaf"), false);
                check_frame(&s.other[1], "t_outer", target.script, mark_line("t_outer"), -1);
                check_frame(&s.other[2], "Thread.run", target.threading_file, -1, -1);
                for (size_t i = 2; i < s.n_other; i++) {
                        CHECK_MSG(strcmp(s.other[i].filename, target.threading_file) == 0, "other %zu: file %s", i,
                                  s.other[i].filename);
                        CHECK_MSG(s.other[i].line > 0, "other %zu: no line", i);
                }
                CHECK(strcmp(s.other[s.n_other - 1].name, "Thread._bootstrap") == 0);
                CHECK(s.other[s.n_other - 1].entry);
        }

        /* Once read, a sample costs the chain and one check per frame. */
        PyReaderStats before, after;
        py_reader_get_stats(r, &before);
        size_t n;
        PyFrame again[64];
        MUST(py_reader_walk(r, s.main[0].address, again, 64, &n, &why));
        py_reader_get_stats(r, &after);
        CHECK(n == s.n_main);
        CHECK_MSG(after.reads - before.reads <= 2 * 2 * n,
                  "%" PRIu64 " reads for %zu frames, whose code objects are cached", after.reads - before.reads, n);
        CHECK(after.code_hits - before.code_hits == n);
out:
        free(why);
        py_reader_free(r);
}

/* The other version's table (3.12's, or 3.11's on a 3.12): whatever it
 * reads, every failure has a reason, and no walk finds the script's
 * frames where they are not. Under ASan: nothing read out of bounds. */
TEST(wrong_layout) {
        PyReader *r = NULL;
        PyThread threads[16];
        PyLayout l;
        char *why = NULL;

        target_start();
        MUST(py_layout_from_table(3, wanted_minor() == 12 ? 11 : 12, target.machine, &l, NULL));
        MUST(py_reader_new(&l, mem_read, &target, &r));
        int k = py_reader_threads(r, target.runtime, threads, 16, &why);
        CHECK(k >= 0 || (why && *why));
        for (int i = 0; i < k; i++) {
                PyFrame frames[64];
                size_t n;
                int w = py_reader_walk(r, threads[i].frame, frames, 64, &n, &why);
                CHECK(w >= 0 || (why && *why));
                CHECK_MSG(n == 0 || strcmp(frames[0].name, "leaf") != 0, "a wrong layout found leaf");
        }
        fprintf(stderr, "the other table: %s\n", why ?: "nothing read");
        free(why);
        py_reader_free(r);
}

/* The interpreter's own co_lines() of every code object of threading,
 * json.decoder and frames-target.py, against py_linetable_line() on the
 * same co_linetable: the line of every instruction agrees. */
static const char lines_program[] = "import sys, threading, json.decoder\n"
                                    "def walk(c):\n"
                                    "    print('C', c.co_firstlineno, c.co_linetable.hex() or '-')\n"
                                    "    for start, end, line in c.co_lines():\n"
                                    "        print('L', start, end, -1 if line is None else line)\n"
                                    "    for k in c.co_consts:\n"
                                    "        if hasattr(k, 'co_lines'):\n"
                                    "            walk(k)\n"
                                    "for path in [threading.__file__, json.decoder.__file__, sys.argv[1]]:\n"
                                    "    walk(compile(open(path).read(), path, 'exec'))\n";

TEST(linetable_matches_co_lines) {
        const char *root = getenv("PYTHON_ROOT");
        char script[PATH_MAX];
        int fd;
        snprintf(script, sizeof(script), "%s/frames-target.py",
                 root && strcmp(root, "/") != 0 ? "/tmp" : TARGET_SCRIPT_DIR);
        pid_t pid = python_spawn((const char *const[]){ "-c", lines_program, script, NULL }, &fd);
        FILE *f = fdopen(fd, "r");
        MUST(f ? 0 : -errno);

        static uint8_t table[PY_LINETABLE_MAX];
        static char line[2 * PY_LINETABLE_MAX + 64];
        size_t size = 0, n_codes = 0, n_units = 0, wrong = 0;
        int firstlineno = 0;
        while (fgets(line, sizeof(line), f)) {
                char hex[8];
                long start, end, want;
                if (line[0] == 'C') {
                        char *p = line + 2, *end_p;
                        firstlineno = (int) strtol(p, &end_p, 10);
                        p = end_p + 1;
                        size = 0;
                        while (p[0] != '-' && p[0] && p[0] != '\n' && size < sizeof(table)) {
                                memcpy(hex, p, 2);
                                hex[2] = 0;
                                table[size++] = (uint8_t) strtoul(hex, NULL, 16);
                                p += 2;
                        }
                        n_codes++;
                } else if (sscanf(line, "L %ld %ld %ld", &start, &end, &want) == 3) {
                        for (long a = start; a < end; a += 2) {
                                int got = py_linetable_line(table, size, firstlineno, a);
                                n_units++;
                                if (got != (want < 0 ? 0 : want) && wrong++ < 10)
                                        fail("offset %ld of the code object at line %d: line %d, co_lines says %ld", a,
                                             firstlineno, got, want);
                        }
                }
        }
        fclose(f);
        int status;
        MUST(waitpid(pid, &status, 0));
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the interpreter's co_lines() program failed");
        CHECK_MSG(n_codes > 100 && n_units > 5000, "%zu code objects, %zu instructions compared", n_codes, n_units);
        fprintf(stderr, "%zu code objects, %zu instructions: %zu lines differ\n", n_codes, n_units, wrong);
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
