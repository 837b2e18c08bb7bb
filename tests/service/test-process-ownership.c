/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-process-ownership.c: who owns a process for profiling
 * (service/process-ownership.h): the pure decision over crafted credentials,
 * then real processes in real user namespaces (runs as root, as ./test.sh
 * does): a process under a "sub-uid" in a namespace owned by uid 1234 is
 * 1234's, also from a nested namespace, but not 1235's, and no longer once it
 * is not dumpable or gone; process_recheck_after_open() says the same as an
 * errno. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "process-ownership.h"
#include "test-check.h"

#define OWNER 1234u
#define SUBUID 200000u

static ProcessCreds creds(uid_t r, uid_t e, uid_t s, uid_t f, uid_t dump, bool child, uid_t owner) {
        return (ProcessCreds) { .ruid = r, .euid = e, .suid = s, .fsuid = f, .dump_owner = dump,
                                .in_child_userns = child, .userns_owner = owner };
}

static void test_decide(void) {
        ProcessCreds c;
        /* The caller's own process on the host. */
        c = creds(OWNER, OWNER, OWNER, OWNER, OWNER, false, 0);
        CHECK(process_ownership_decide(OWNER, &c) == PROCESS_OWNED);
        CHECK(process_ownership_decide(OWNER + 1, &c) == PROCESS_FOREIGN);
        /* Not dumpable (setuid exec, prctl): /proc/PID belongs to root. */
        c.dump_owner = 0;
        CHECK(process_ownership_decide(OWNER, &c) == PROCESS_NOT_DUMPABLE);
        /* Setuid program started by the caller: euid root. */
        c = creds(OWNER, 0, 0, 0, 0, false, 0);
        CHECK(process_ownership_decide(OWNER, &c) == PROCESS_FOREIGN);
        /* A sub-uid process in the caller's rootless container. */
        c = creds(SUBUID, SUBUID, SUBUID, SUBUID, SUBUID, true, OWNER);
        CHECK(process_ownership_decide(OWNER, &c) == PROCESS_OWNED_VIA_USERNS);
        CHECK(process_ownership_decide(OWNER + 1, &c) == PROCESS_FOREIGN);
        /* ... not dumpable: /proc/PID belongs to the container's root. */
        c.dump_owner = OWNER;
        CHECK(process_ownership_decide(OWNER, &c) == PROCESS_NOT_DUMPABLE);
        /* Mixed sub-uids (a program switching users inside the container). */
        c = creds(SUBUID, SUBUID + 5, SUBUID, SUBUID + 5, SUBUID + 5, true, OWNER);
        CHECK(process_ownership_decide(OWNER, &c) == PROCESS_OWNED_VIA_USERNS);
        /* The same sub-uids in someone else's namespace (e.g. root's). */
        c = creds(SUBUID, SUBUID, SUBUID, SUBUID, SUBUID, true, 0);
        CHECK(process_ownership_decide(OWNER, &c) == PROCESS_FOREIGN);
        /* Sub-uids but on the host, outside any namespace: another user's. */
        c = creds(SUBUID, SUBUID, SUBUID, SUBUID, SUBUID, false, OWNER);
        CHECK(process_ownership_decide(OWNER, &c) == PROCESS_FOREIGN);
        /* Host root mapped into the caller's namespace is never the caller's. */
        c = creds(0, 0, 0, 0, 0, true, OWNER);
        CHECK(process_ownership_decide(OWNER, &c) == PROCESS_FOREIGN);
        c = creds(SUBUID, SUBUID, 0, SUBUID, SUBUID, true, OWNER);
        CHECK(process_ownership_decide(OWNER, &c) == PROCESS_FOREIGN);
        /* A namespace owned by root gives root nothing through this rule,
         * and root's decision stays the plain one. */
        c = creds(SUBUID, SUBUID, SUBUID, SUBUID, SUBUID, true, 0);
        CHECK(process_ownership_decide(0, &c) == PROCESS_FOREIGN);
}

static void write_file(const char *path, const char *text) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t) strlen(text)) {
                fprintf(stderr, "FAIL: writing %s: %s\n", path, strerror(errno));
                failures++;
        }
        if (fd >= 0)
                close(fd);
}

/* The child's side: waits for the parent's byte that starts the next step. */
static void child_step(int in) {
        char b;
        if (read(in, &b, 1) != 1)
                _exit(1);
}

static _Noreturn void child(int in, int out) {
        char ok = 'k';
        /* 1. Become uid OWNER and create a user namespace (owned by OWNER). */
        if (setresgid(OWNER, OWNER, OWNER) < 0 || setresuid(OWNER, OWNER, OWNER) < 0 || unshare(CLONE_NEWUSER) < 0)
                _exit(2);
        if (write(out, &ok, 1) != 1)
                _exit(1);
        /* 2. The parent wrote the maps: switch to namespace uid 1 (host SUBUID). */
        child_step(in);
        if (setresgid(1, 1, 1) < 0 || setresuid(1, 1, 1) < 0 || prctl(PR_SET_DUMPABLE, 1) < 0)
                _exit(3);
        if (write(out, &ok, 1) != 1)
                _exit(1);
        /* 3. A nested namespace (owned by SUBUID). */
        child_step(in);
        if (unshare(CLONE_NEWUSER) < 0 || prctl(PR_SET_DUMPABLE, 1) < 0)
                _exit(4);
        if (write(out, &ok, 1) != 1)
                _exit(1);
        /* 4. Not dumpable any more. */
        child_step(in);
        if (prctl(PR_SET_DUMPABLE, 0) < 0)
                _exit(5);
        if (write(out, &ok, 1) != 1)
                _exit(1);
        child_step(in);
        _exit(0);
}

static bool step(int to_child, int from_child) {
        char b = 'g';
        return write(to_child, &b, 1) == 1 && read(from_child, &b, 1) == 1;
}

static void test_live(void) {
        ProcessCreds c;
        /* Ourselves: on the host, no namespace below the initial one. */
        CHECK(process_creds_read(getpid(), &c) == 0);
        CHECK(!c.in_child_userns);
        CHECK(process_ownership(getuid(), getpid(), NULL) == PROCESS_OWNED);

        if (getuid() != 0) {
                fprintf(stderr, "FAIL: the live part needs root (to map sub-uids as newuidmap does); run as root\n");
                failures++;
                return;
        }
        int down[2], up[2];
        if (pipe2(down, O_CLOEXEC) < 0 || pipe2(up, O_CLOEXEC) < 0) {
                perror("pipe");
                failures++;
                return;
        }
        pid_t pid = fork();
        if (pid == 0) {
                close(down[1]);
                close(up[0]);
                child(down[0], up[1]);
        }
        close(down[0]);
        close(up[1]);
        if (pid < 0) {
                perror("fork");
                failures++;
                close(down[1]);
                close(up[0]);
                return;
        }
        char b;
        bool ok = read(up[0], &b, 1) == 1;
        CHECK(ok);
        if (!ok)
                goto out;
        /* As newuidmap does for a rootless container: ns root = OWNER, 1.. = sub-uids. */
        char path[64], map[64];
        snprintf(map, sizeof(map), "0 %u 1\n1 %u 10\n", OWNER, SUBUID);
        snprintf(path, sizeof(path), "/proc/%d/uid_map", (int) pid);
        write_file(path, map);
        snprintf(path, sizeof(path), "/proc/%d/gid_map", (int) pid);
        write_file(path, map);
        ok = step(down[1], up[0]);
        CHECK(ok);
        if (!ok)
                goto out;
        /* A sub-uid process in OWNER's namespace. */
        CHECK(process_creds_read(pid, &c) == 0);
        CHECK(c.euid == SUBUID && c.dump_owner == SUBUID && c.in_child_userns && c.userns_owner == OWNER);
        CHECK(process_ownership(OWNER, pid, NULL) == PROCESS_OWNED_VIA_USERNS);
        CHECK(process_ownership(OWNER + 1, pid, NULL) == PROCESS_FOREIGN);
        CHECK(process_ownership(0, pid, NULL) == PROCESS_OWNED);
        /* The check after an open: the same rule, as an errno. */
        CHECK(process_recheck_after_open(OWNER, pid, "test fd") == 0);
        CHECK(process_recheck_after_open(OWNER + 1, pid, "test fd") == -EPERM);

        ok = step(down[1], up[0]);
        CHECK(ok);
        if (!ok)
                goto out;
        /* Nested: the top namespace below the initial one decides. */
        CHECK(process_creds_read(pid, &c) == 0);
        CHECK(c.in_child_userns && c.userns_owner == OWNER);
        CHECK(process_ownership(OWNER, pid, NULL) == PROCESS_OWNED_VIA_USERNS);
        CHECK(process_ownership(SUBUID + 1, pid, NULL) == PROCESS_FOREIGN);

        ok = step(down[1], up[0]);
        CHECK(ok);
        if (!ok)
                goto out;
        CHECK(process_ownership(OWNER, pid, NULL) == PROCESS_NOT_DUMPABLE);
        CHECK(process_recheck_after_open(OWNER, pid, "test fd") == -EPERM);

        b = 'g';
        CHECK(write(down[1], &b, 1) == 1);
out:
        close(down[1]);
        int status = 0;
        CHECK(waitpid(pid, &status, 0) == pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "FAIL: the namespace child failed at step %d\n",
                        WIFEXITED(status) ? WEXITSTATUS(status) : -1);
                failures++;
        }
        /* Gone (and reaped): nobody's. */
        CHECK(process_ownership(OWNER, pid, NULL) == PROCESS_GONE);
        CHECK(process_recheck_after_open(OWNER, pid, "test fd") == -ESRCH);
        close(up[0]);
}

int main(void) {
        test_decide();
        test_live();
        if (failures) {
                fprintf(stderr, "%d failure(s)\n", failures);
                return 1;
        }
        printf("ok: process ownership by uid and user namespace\n");
        return 0;
}
