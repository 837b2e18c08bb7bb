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

/* The caller's own process on the host; not dumpable (setuid exec, prctl):
 * /proc/PID belongs to root; a setuid program started by the caller. */
TEST(decide_host_process) {
        ProcessCreds c;
        c = creds(OWNER, OWNER, OWNER, OWNER, OWNER, false, 0);
        CHECK(process_ownership_decide(OWNER, &c) == PROCESS_OWNED);
        CHECK(process_ownership_decide(OWNER + 1, &c) == PROCESS_FOREIGN);
        c.dump_owner = 0;
        CHECK(process_ownership_decide(OWNER, &c) == PROCESS_NOT_DUMPABLE);
        /* Setuid program started by the caller: euid root. */
        c = creds(OWNER, 0, 0, 0, 0, false, 0);
        CHECK(process_ownership_decide(OWNER, &c) == PROCESS_FOREIGN);
}

/* A sub-uid process in the caller's rootless container. */
TEST(decide_rootless_container) {
        ProcessCreds c;
        c = creds(SUBUID, SUBUID, SUBUID, SUBUID, SUBUID, true, OWNER);
        CHECK(process_ownership_decide(OWNER, &c) == PROCESS_OWNED_VIA_USERNS);
        CHECK(process_ownership_decide(OWNER + 1, &c) == PROCESS_FOREIGN);
        /* ... not dumpable: /proc/PID belongs to the container's root. */
        c.dump_owner = OWNER;
        CHECK(process_ownership_decide(OWNER, &c) == PROCESS_NOT_DUMPABLE);
        /* Mixed sub-uids (a program switching users inside the container). */
        c = creds(SUBUID, SUBUID + 5, SUBUID, SUBUID + 5, SUBUID + 5, true, OWNER);
        CHECK(process_ownership_decide(OWNER, &c) == PROCESS_OWNED_VIA_USERNS);
}

/* Sub-uids that are not the caller's: in someone else's namespace, on the
 * host, or host root mapped into the caller's namespace. */
TEST(decide_foreign_sub_uids) {
        ProcessCreds c;
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
        ssize_t n = read(in, &b, 1);
        if (n == 0)
                _exit(0); /* the parent is done with it */
        if (n != 1)
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

/* A child of this test in a user namespace, driven step by step (child()). */
typedef struct NsChild {
        pid_t pid;
        int down, up;
} NsChild;

/* Starts the child and maps its namespace as newuidmap does for a rootless
 * container (ns root = OWNER, 1.. = sub-uids): it runs as SUBUID in
 * OWNER's namespace, or the case fails (returns false). */
static bool ns_child_start(NsChild *ch) {
        *ch = (NsChild) { .pid = -1, .down = -1, .up = -1 };
        if (getuid() != 0) {
                fail("the live part needs root (to map sub-uids as newuidmap does); run as root");
                return false;
        }
        int down[2], up[2];
        MUST(pipe2(down, O_CLOEXEC) < 0 ? -errno : 0);
        MUST(pipe2(up, O_CLOEXEC) < 0 ? -errno : 0);
        pid_t pid = fork();
        if (pid == 0) {
                close(down[1]);
                close(up[0]);
                child(down[0], up[1]);
        }
        close(down[0]);
        close(up[1]);
        *ch = (NsChild) { .pid = pid, .down = down[1], .up = up[0] };
        MUST(pid < 0 ? -errno : 0);
        char b;
        bool ok = read(ch->up, &b, 1) == 1;
        CHECK(ok);
        if (!ok)
                return false;
        char path[64], map[64];
        snprintf(map, sizeof(map), "0 %u 1\n1 %u 10\n", OWNER, SUBUID);
        snprintf(path, sizeof(path), "/proc/%d/uid_map", (int) pid);
        write_file(path, map);
        snprintf(path, sizeof(path), "/proc/%d/gid_map", (int) pid);
        write_file(path, map);
        ok = step(ch->down, ch->up);
        CHECK(ok);
        return ok;
}

/* The child's next step: 3 a nested namespace, 4 not dumpable. */
static bool ns_child_step(NsChild *ch) {
        bool ok = step(ch->down, ch->up);
        CHECK(ok);
        return ok;
}

/* Lets the child exit, reaps it and checks it did every step it was told. */
static void ns_child_finish(NsChild *ch) {
        if (ch->down >= 0)
                close(ch->down);
        if (ch->pid > 0) {
                int status = 0;
                CHECK(waitpid(ch->pid, &status, 0) == ch->pid);
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        fail("the namespace child failed at step %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        }
        if (ch->up >= 0)
                close(ch->up);
}

/* Ourselves: on the host, no namespace below the initial one. */
TEST(own_process_owned) {
        ProcessCreds c;
        CHECK(process_creds_read(getpid(), &c) == 0);
        CHECK(!c.in_child_userns);
        CHECK(process_ownership(getuid(), getpid(), NULL) == PROCESS_OWNED);
}

/* A sub-uid process in OWNER's namespace. */
TEST(sub_uid_in_owners_namespace) {
        NsChild ch;
        if (ns_child_start(&ch)) {
                ProcessCreds c;
                CHECK(process_creds_read(ch.pid, &c) == 0);
                CHECK(c.euid == SUBUID && c.dump_owner == SUBUID && c.in_child_userns && c.userns_owner == OWNER);
                CHECK(process_ownership(OWNER, ch.pid, NULL) == PROCESS_OWNED_VIA_USERNS);
                CHECK(process_ownership(OWNER + 1, ch.pid, NULL) == PROCESS_FOREIGN);
                CHECK(process_ownership(0, ch.pid, NULL) == PROCESS_OWNED);
        }
        ns_child_finish(&ch);
}

/* The check after an open: the same rule, as an errno. */
TEST(recheck_after_open) {
        NsChild ch;
        if (ns_child_start(&ch)) {
                CHECK(process_recheck_after_open(OWNER, ch.pid, "test fd") == 0);
                CHECK(process_recheck_after_open(OWNER + 1, ch.pid, "test fd") == -EPERM);
        }
        ns_child_finish(&ch);
}

/* Nested: the top namespace below the initial one decides. */
TEST(nested_namespace) {
        NsChild ch;
        if (ns_child_start(&ch) && ns_child_step(&ch)) {
                ProcessCreds c;
                CHECK(process_creds_read(ch.pid, &c) == 0);
                CHECK(c.in_child_userns && c.userns_owner == OWNER);
                CHECK(process_ownership(OWNER, ch.pid, NULL) == PROCESS_OWNED_VIA_USERNS);
                CHECK(process_ownership(SUBUID + 1, ch.pid, NULL) == PROCESS_FOREIGN);
        }
        ns_child_finish(&ch);
}

TEST(not_dumpable) {
        NsChild ch;
        if (ns_child_start(&ch) && ns_child_step(&ch) && ns_child_step(&ch)) {
                CHECK(process_ownership(OWNER, ch.pid, NULL) == PROCESS_NOT_DUMPABLE);
                CHECK(process_recheck_after_open(OWNER, ch.pid, "test fd") == -EPERM);
        }
        ns_child_finish(&ch);
}

/* Gone (and reaped): nobody's. */
TEST(gone) {
        NsChild ch;
        bool started = ns_child_start(&ch);
        ns_child_finish(&ch);
        if (started) {
                CHECK(process_ownership(OWNER, ch.pid, NULL) == PROCESS_GONE);
                CHECK(process_recheck_after_open(OWNER, ch.pid, "test fd") == -ESRCH);
        }
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
