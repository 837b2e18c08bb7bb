/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-caller-opener.c: the opener of basic/caller-opener.h with a real
 * second user (periscope-user, scripts/setup.d/30-periscope-users.sh):
 * it opens what that user may open and nothing else (root-only files and
 * directories, symbolic links, another user's /proc/PID/root), with the
 * user's groups; it holds no capability and the user can neither signal
 * it nor make it hang the service (a stopped opener costs one second, once).
 * Links followed inside a rootless container's root (RESOLVE_IN_ROOT):
 * absolute ones start at that root, ".." stops there.
 * With --without-openat2 it runs under tests/lib/without-openat2 (openat2
 * answering ENOSYS, as under the unit): the walk of basic/path-walk.h. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "basic.h"
#include "no-openat2.h"
#include "test-check.h"

#define USER "periscope-user"
#define CONFINED (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

static char dir[] = "/tmp/periscope-opener.XXXXXX";

static void put(const char *name, const char *text, mode_t mode, gid_t gid) {
        char p[256];
        snprintf(p, sizeof(p), "%s/%s", dir, name);
        FILE *f = fopen(p, "we");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0 || chmod(p, mode) < 0 || chown(p, 0, gid) < 0) {
                fprintf(stderr, "FAIL: cannot create %s: %m\n", p);
                exit(1);
        }
}

/* What the opener returns for name (relative to dir, as an absolute path):
 * the file's first line, or the error. */
static int read_text(int fd, char *text, size_t size) {
        if (fd < 0)
                return fd;
        ssize_t n = read(fd, text, size - 1);
        close(fd);
        text[n > 0 ? n : 0] = 0;
        return 0;
}

static int open_as_user(CallerOpener *o, const char *name, uint64_t resolve, char *text, size_t size) {
        char p[256];
        snprintf(p, sizeof(p), "%s/%s", dir, name);
        return read_text(caller_opener_openat2(o, -1, p, O_RDONLY | O_NONBLOCK, resolve), text, size);
}

static long status_field(pid_t pid, const char *key, char *out, size_t size) {
        char p[64], line[256];
        snprintf(p, sizeof(p), "/proc/%d/status", (int) pid);
        FILE *f = fopen(p, "re");
        if (!f)
                return -1;
        out[0] = 0;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, key, strlen(key)) == 0) {
                        snprintf(out, size, "%s", line + strlen(key));
                        out[strcspn(out, "\n")] = 0;
                }
        fclose(f);
        return 0;
}

/* ---- the fixture: USER's ids, the tree in dir, one opener for USER ----
 * dir holds public (0644), rootonly (0600), group (0640, USER's group),
 * private/inside (in a 0700 directory), link -> DIR/public,
 * link-rootonly -> DIR/rootonly, and for a root of its own abs-in-root ->
 * /public and up-in-root -> ../../../../public. */
static uid_t uid;
static gid_t gid;
static bool tree_made;
static CallerOpener *shared_opener;

static void path_of(char *p, size_t size, const char *name) {
        snprintf(p, size, "%s/%s", dir, name);
}

static void link_to(const char *target, const char *name) {
        char p[256];
        path_of(p, sizeof(p), name);
        if (symlink(target, p) < 0) {
                fprintf(stderr, "FAIL: cannot create %s: %m\n", p);
                exit(1);
        }
}

static void make_tree(void) {
        if (tree_made)
                return;
        if (!mkdtemp(dir) || chmod(dir, 0755) < 0) {
                fprintf(stderr, "FAIL: mkdtemp: %m\n");
                exit(1);
        }
        tree_made = true;
        char sub[300], target[300];
        path_of(sub, sizeof(sub), "private");
        if (mkdir(sub, 0700) < 0) {
                fprintf(stderr, "FAIL: mkdir %s: %m\n", sub);
                exit(1);
        }
        put("public", "public\n", 0644, 0);
        put("rootonly", "rootonly\n", 0600, 0);
        put("group", "group\n", 0640, gid);
        put("private/inside", "inside\n", 0644, 0);
        path_of(target, sizeof(target), "public");
        link_to(target, "link");
        path_of(target, sizeof(target), "rootonly");
        link_to(target, "link-rootonly");
        /* in a root of its own (a process chrooted to dir): absolute, and climbing above it */
        link_to("/public", "abs-in-root");
        link_to("../../../../public", "up-in-root");
}

static CallerOpener *new_opener(void) {
        make_tree();
        CallerOpener *o = NULL;
        int r = caller_opener_new(uid, &o);
        CHECK_MSG(r == 0, "caller_opener_new: %s", strerror(-r));
        if (r < 0)
                exit(1);
        return o;
}

/* The opener the cases share (made on first use; the stopped one is a case's own). */
static CallerOpener *opener(void) {
        if (!shared_opener)
                shared_opener = new_opener();
        return shared_opener;
}

/* What open_file(pid, DIR/name, follow) gives: 0 and the first line, or the error. */
static int open_file_text(pid_t pid, const char *name, bool follow, char *text, size_t size) {
        char p[256];
        path_of(p, sizeof(p), name);
        return read_text(caller_opener_open_file(opener(), pid, p, follow), text, size);
}

TEST(opens_public_file) {
        char text[64];
        make_tree();
        /* what it costs: the start, and an open through it */
        struct timespec s0, s1, s2;
        clock_gettime(CLOCK_MONOTONIC, &s0);
        CallerOpener *o = opener();
        clock_gettime(CLOCK_MONOTONIC, &s1);
        CHECK(open_as_user(o, "public", CONFINED, text, sizeof(text)) == 0 && strcmp(text, "public\n") == 0);
        path_of(text, sizeof(text), "public");
        for (int i = 0; i < 1000; i++)
                safe_close(caller_opener_open_file(o, 0, text, false));
        clock_gettime(CLOCK_MONOTONIC, &s2);
        printf("  start %.2f ms, open_file %.1f us each\n",
               ((s1.tv_sec - s0.tv_sec) * 1e9 + (s1.tv_nsec - s0.tv_nsec)) / 1e6,
               ((s2.tv_sec - s1.tv_sec) * 1e9 + (s2.tv_nsec - s1.tv_nsec)) / 1e3 / 1000);
}

/* One openat2 through the opener: what it must give (an errno, or 0 and the text). */
typedef struct UserOpen {
        const char *what, *name;
        uint64_t resolve;
        int error;
        const char *text;
} UserOpen;

static void expect_user_opens(const UserOpen *opens, size_t n) {
        for (size_t i = 0; i < n; i++) {
                char text[64];
                int r = open_as_user(opener(), opens[i].name, opens[i].resolve, text, sizeof(text));
                CHECK_MSG(r == opens[i].error && (r < 0 || strcmp(text, opens[i].text) == 0), "%s: %s", opens[i].what,
                          r < 0 ? strerror(-r) : text);
        }
}

/* The user's rights, with the user's groups: nothing root's, its group's file. */
TEST(user_rights_apply) {
        static const UserOpen opens[] = {
                { "a root-only file", "rootonly", CONFINED, -EACCES, NULL },
                { "a file in a root-only directory", "private/inside", CONFINED, -EACCES, NULL },
                { "a file of the user's group", "group", CONFINED, 0, "group\n" },
        };
        expect_user_opens(opens, ELEMENTSOF(opens));
}

TEST(symbolic_links_as_resolve_says) {
        static const UserOpen opens[] = {
                { "a symbolic link, no symlinks allowed", "link", CONFINED, -ELOOP, NULL },
                { "a symbolic link, links allowed", "link", 0, 0, "public\n" },
        };
        expect_user_opens(opens, ELEMENTSOF(opens));
}

TEST(open_file_failures_read_as_absent) {
        /* Every failure of open_file reads as "not there". */
        char text[64];
        CHECK(open_file_text(0, "rootonly", false, text, sizeof(text)) == -ENOENT);
        CHECK(open_file_text(0, "link", false, text, sizeof(text)) == -ENOENT);
}

TEST(open_file_follows_links_with_user_rights) {
        /* Links followed (inside the root), still with the user's rights. */
        char text[64];
        int r = open_file_text(0, "link", true, text, sizeof(text));
        CHECK_MSG(r == 0, "a link to a public file, links followed: %s", strerror(-r));
        CHECK(open_file_text(0, "link-rootonly", true, text, sizeof(text)) == -ENOENT);
        CHECK(open_file_text(0, "public", false, text, sizeof(text)) == 0);
}

TEST(root_process_root_refused) {
        /* Root's process: its root is not the user's to enter; open_file
         * then looks in the service's "/", with the user's rights. */
        char text[64];
        opener();
        pid_t sleeper = fork();
        MUST(sleeper < 0 ? -errno : 0);
        if (sleeper == 0) {
                pause();
                _exit(0);
        }
        char p[64];
        snprintf(p, sizeof(p), "/proc/%d/root", (int) sleeper);
        int r = caller_opener_openat2(opener(), -1, p, O_PATH | O_DIRECTORY, 0);
        CHECK_MSG(r == -EACCES || r == -EPERM, "root's /proc/PID/root: %s", r >= 0 ? "opened" : strerror(-r));
        if (r >= 0)
                close(r);
        CHECK(open_file_text(sleeper, "public", false, text, sizeof(text)) == 0);
        kill(sleeper, SIGKILL);
        waitpid(sleeper, NULL, 0);
}

/* The user's own process in a user namespace of its own (a rootless
 * container) with dir as its root; killed by the caller. */
static pid_t spawn_rootless_container(void) {
        make_tree();
        int ready[2];
        MUST(pipe(ready) < 0 ? -errno : 0);
        pid_t pid = fork();
        MUST(pid < 0 ? -errno : 0);
        if (pid == 0) {
                /* dumpable again after setuid, as after an exec */
                if (setgid(gid) < 0 || setuid(uid) < 0 || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0 ||
                    unshare(CLONE_NEWUSER) < 0 || chroot(dir) < 0)
                        _exit(1);
                (void) !write(ready[1], "x", 1);
                pause();
                _exit(0);
        }
        close(ready[1]);
        char x;
        CHECK(read(ready[0], &x, 1) == 1);
        close(ready[0]);
        return pid;
}

static void kill_and_reap(pid_t pid) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
}

TEST(rootless_container_root_entered) {
        /* its root is the user's to enter */
        pid_t inns = spawn_rootless_container();
        char p[64];
        snprintf(p, sizeof(p), "/proc/%d/root", (int) inns);
        int r = caller_opener_openat2(opener(), -1, p, O_PATH | O_DIRECTORY, 0);
        CHECK_MSG(r >= 0, "the user's process in its own user namespace: %s", strerror(-r));
        if (r >= 0)
                close(r);
        kill_and_reap(inns);
}

TEST(links_followed_inside_container_root) {
        pid_t inns = spawn_rootless_container();
        const char *in_root[][2] = { { "/public", "public\n" },
                                     { "/abs-in-root", "public\n" },
                                     { "/up-in-root", "public\n" } };
        char text[64];
        for (size_t i = 0; i < ELEMENTSOF(in_root); i++) {
                int r = read_text(caller_opener_open_file(opener(), inns, in_root[i][0], true), text, sizeof(text));
                CHECK_MSG(r >= 0 && strcmp(text, in_root[i][1]) == 0, "%s in the process's root, links followed: %s",
                          in_root[i][0], r < 0 ? strerror(-r) : text);
        }
        kill_and_reap(inns);
}

TEST(container_root_keeps_links_and_rights) {
        pid_t inns = spawn_rootless_container();
        CHECK(caller_opener_open_file(opener(), inns, "/abs-in-root", false) == -ENOENT);
        CHECK(caller_opener_open_file(opener(), inns, "/rootonly", true) == -ENOENT);
        kill_and_reap(inns);
}

/* The opener: the user's effective and filesystem identity, no
 * capability, real and saved uid root (the user cannot signal or trace it). */
TEST(opener_holds_no_capability) {
        pid_t opid = caller_opener_pid(opener());
        char v[128];
        status_field(opid, "CapEff:", v, sizeof(v));
        CHECK_MSG(strcmp(v, "\t0000000000000000") == 0, "opener's CapEff:%s", v);
        status_field(opid, "CapPrm:", v, sizeof(v));
        CHECK_MSG(strcmp(v, "\t0000000000000000") == 0, "opener's CapPrm:%s", v);
}

TEST(opener_runs_as_user_with_root_real_uid) {
        pid_t opid = caller_opener_pid(opener());
        char v[128], want[64];
        status_field(opid, "Uid:", v, sizeof(v));
        snprintf(want, sizeof(want), "\t0\t%u\t0\t%u", (unsigned) uid, (unsigned) uid);
        CHECK_MSG(strcmp(v, want) == 0, "opener's Uid:%s", v);
}

TEST(user_cannot_signal_opener) {
        pid_t opid = caller_opener_pid(opener());
        pid_t probe = fork();
        MUST(probe < 0 ? -errno : 0);
        if (probe == 0) {
                if (setgid(gid) < 0 || setuid(uid) < 0)
                        _exit(2);
                _exit(kill(opid, SIGSTOP) < 0 && errno == EPERM ? 0 : 1);
        }
        int st = 0;
        waitpid(probe, &st, 0);
        CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the user could signal the opener");
}

TEST(stopped_opener_costs_one_second_once) {
        /* Stopped (by root here): one call waits its second, then every
         * call fails at once. An opener of this case's own. */
        CallerOpener *o = new_opener();
        char target[256];
        path_of(target, sizeof(target), "public");
        kill(caller_opener_pid(o), SIGSTOP);
        struct timespec t0, t1, t2;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int r = caller_opener_open_file(o, 0, target, false);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        CHECK(r == -ENOENT);
        r = caller_opener_openat2(o, -1, target, O_RDONLY, 0);
        clock_gettime(CLOCK_MONOTONIC, &t2);
        CHECK_MSG(r == -EIO, "after a timeout: %s", strerror(-r));
        double first = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
        double second = (t2.tv_sec - t1.tv_sec) + (t2.tv_nsec - t1.tv_nsec) / 1e9;
        CHECK_MSG(first < 3.0 && second < 0.1, "a stopped opener took %.2f s, then %.2f s", first, second);
        caller_opener_free(o);
}

int main(int argc, char **argv) {
        bool without_openat2 = argc > 1 && strcmp(argv[1], "--without-openat2") == 0;
        if (openat2_forbidden() != without_openat2) {
                fprintf(stderr, "FAIL: openat2 %s here\n", without_openat2 ? "still answers" : "is filtered");
                return 1;
        }
        struct passwd *pw = getpwnam(USER);
        if (getuid() != 0 || !pw) {
                fprintf(stderr, "FAIL: needs root and the user " USER " (scripts/setup.d/30-periscope-users.sh)\n");
                return 1;
        }
        uid = pw->pw_uid;
        gid = pw->pw_gid;
        /* [--without-openat2] [CASE...] */
        int r = without_openat2 ? test_main(argc - 1, argv + 1) : test_main(argc, argv);
        shared_opener = caller_opener_free(shared_opener);
        if (tree_made) {
                char cmd[400];
                snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
                if (system(cmd) != 0) {
                        fprintf(stderr, "FAIL: cannot remove %s\n", dir);
                        return 1;
                }
        }
        return r;
}
