/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-container-follow.c: the membership rescans of `record --container`
 * (service/container-follow.c) on real processes. Children of this test
 * chroot into a directory holding a /.flatpak-info, which is what makes a
 * process a Flatpak app's (container-info.h); the scans must hand each
 * member to the join callback exactly once: not host processes, not pids
 * noted as recorded (a target, a FORK record), a new child of a recorded
 * process only after one scan without its FORK record, a process that
 * entered the sandbox after it was first seen once its command changed
 * (even to a name with ") " in it), a refused one never again, none of
 * another owner's when following for a non-root caller. Root only
 * (chroot); a missing prerequisite fails. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "container-follow.h"
#include "test-check.h"

#define MAX_CHILDREN 16

static pid_t children[MAX_CHILDREN];
static size_t n_children;
static char sandbox[] = "/tmp/periscope-follow-test.XXXXXX";

/* What the join callback saw and answers. */
typedef struct Joins {
        pid_t pids[64];
        size_t n;
        pid_t refuse;              /* answered -EPERM */
} Joins;

static int on_join(pid_t pid, void *userdata) {
        Joins *j = userdata;
        if (j->n < 64)
                j->pids[j->n++] = pid;
        return pid == j->refuse ? -EPERM : 0;
}

static size_t count_joins(const Joins *j, pid_t pid) {
        size_t n = 0;
        for (size_t i = 0; i < j->n; i++)
                n += j->pids[i] == pid;
        return n;
}

/* A child that waits for one-letter commands on a pipe: 'c' chroot into the
 * sandbox, 'n' rename itself, 'f' fork a child (which sleeps) and report
 * its pid. Answers each command with a pid_t on the other pipe. */
typedef struct Child {
        pid_t pid;
        int cmd, reply;
} Child;

static void child_loop(int cmd, int reply) {
        char c;
        while (read(cmd, &c, 1) == 1) {
                pid_t answer = 0;
                if (c == 'c')
                        answer = chroot(sandbox) == 0 && chdir("/") == 0 ? getpid() : -1;
                else if (c == 'n')
                        answer = prctl(PR_SET_NAME, "x) y (z", 0, 0, 0) == 0 ? getpid() : -1;
                else if (c == 'f') {
                        answer = fork();
                        if (answer == 0)
                                for (;;)
                                        pause();
                }
                if (write(reply, &answer, sizeof(answer)) != sizeof(answer))
                        _exit(1);
        }
        _exit(0);
}

static Child spawn(void) {
        int a[2], b[2];
        Child ch = { .pid = -1 };
        if (pipe(a) < 0 || pipe(b) < 0)
                return ch;
        pid_t pid = fork();
        if (pid == 0) {
                close(a[1]);
                close(b[0]);
                child_loop(a[0], b[1]);
        }
        close(a[0]);
        close(b[1]);
        ch = (Child) { .pid = pid, .cmd = a[1], .reply = b[0] };
        if (pid > 0 && n_children < MAX_CHILDREN)
                children[n_children++] = pid;
        return ch;
}

static pid_t command(Child *ch, char c) {
        pid_t answer = -1;
        if (write(ch->cmd, &c, 1) != 1 || read(ch->reply, &answer, sizeof(answer)) != sizeof(answer))
                return -1;
        if (c == 'f' && answer > 0 && n_children < MAX_CHILDREN)
                children[n_children++] = answer;
        return answer;
}

/* Kills every child and grandchild and reaps them (this process is their
 * subreaper), so none is left even as a zombie. */
static void kill_children(void) {
        for (size_t i = 0; i < n_children; i++)
                if (children[i] > 0)
                        kill(children[i], SIGKILL);
        for (size_t i = 0; i < n_children; i++)
                if (children[i] > 0)
                        (void) waitpid(children[i], NULL, 0);
        n_children = 0;
}

int main(void) {
        if (geteuid() != 0) {
                fprintf(stderr, "FAIL: needs root (chroot into the test sandbox); ./test.sh runs as root\n");
                return 1;
        }
        char app_id[64], info[256], path[128];
        snprintf(app_id, sizeof(app_id), "org.periscope.FollowTest%d", (int) getpid());
        if (!mkdtemp(sandbox)) {
                fprintf(stderr, "FAIL: mkdtemp: %s\n", strerror(errno));
                return 1;
        }
        snprintf(path, sizeof(path), "%s/.flatpak-info", sandbox);
        int n = snprintf(info, sizeof(info), "[Application]\nname=%s\nruntime=runtime/org.example/x86_64/1\n\n"
                                             "[Instance]\ninstance-id=4242\n", app_id);
        FILE *f = fopen(path, "we");
        if (!f || fwrite(info, 1, (size_t) n, f) != (size_t) n || fclose(f) != 0) {
                fprintf(stderr, "FAIL: cannot write %s\n", path);
                return 1;
        }

        if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
                fprintf(stderr, "FAIL: PR_SET_CHILD_SUBREAPER: %s\n", strerror(errno));
                return 1;
        }
        Resolver *res = NULL;
        ContainerFollow *fl = NULL;
        if (resolver_new(&res) < 0 || container_follow_new(app_id, &fl) < 0) {
                fprintf(stderr, "FAIL: out of memory\n");
                return 1;
        }
        Joins j = {};

        /* A host process, a member, a member noted as recorded (a target),
         * a member that is refused, a host process that enters later. */
        Child host = spawn(), member = spawn(), target = spawn(), refused = spawn(), late = spawn();
        CHECK_MSG(host.pid > 0 && member.pid > 0 && target.pid > 0 && refused.pid > 0 && late.pid > 0, "fork failed");
        CHECK_MSG(command(&member, 'c') == member.pid, "chroot failed: %s", strerror(errno));
        CHECK_MSG(command(&target, 'c') == target.pid, "chroot failed");
        CHECK_MSG(command(&refused, 'c') == refused.pid, "chroot failed");
        CHECK_MSG(container_follow_note_recorded(fl, target.pid) == 0, "note_recorded");
        j.refuse = refused.pid;

        int k = container_follow_scan(fl, res, on_join, &j);
        CHECK_MSG(k == 1, "first scan joined %d, expected 1 (the member)", k);
        CHECK_MSG(count_joins(&j, member.pid) == 1, "the member was not joined once");
        CHECK_MSG(count_joins(&j, host.pid) == 0 && count_joins(&j, late.pid) == 0, "a host process was joined");
        CHECK_MSG(count_joins(&j, target.pid) == 0, "a noted target was joined (it has events already)");
        CHECK_MSG(count_joins(&j, refused.pid) == 1, "the refused member was not asked about");
        ContainerFollowStats st = container_follow_get_stats(fl);
        CHECK_MSG(st.joined == 1 && st.refused == 1 && st.members == 2 && !st.stopped,
                  "stats joined=%u refused=%u members=%u stopped=%d", st.joined, st.refused, st.members, st.stopped);

        /* Nothing changed: nothing is joined or asked again. */
        size_t before = j.n;
        k = container_follow_scan(fl, res, on_join, &j);
        CHECK_MSG(k == 0 && j.n == before, "second scan called join %zu more times", j.n - before);

        /* The late one enters the sandbox: not seen while its command is the
         * same (classified once), seen once it changes (exec; here a rename
         * to a name that tests the /proc/PID/stat parser). */
        CHECK_MSG(command(&late, 'c') == late.pid, "chroot failed");
        for (int i = 0; i < CONTAINER_FOLLOW_FULL_EVERY; i++)
                (void) container_follow_scan(fl, res, on_join, &j);
        CHECK_MSG(count_joins(&j, late.pid) == 0, "a process was classified again without a changed command");
        /* Within one round of scans, one of which reads every process. */
        CHECK_MSG(command(&late, 'n') == late.pid, "rename failed");
        for (int i = 0; i < CONTAINER_FOLLOW_FULL_EVERY && count_joins(&j, late.pid) == 0; i++)
                (void) container_follow_scan(fl, res, on_join, &j);
        CHECK_MSG(count_joins(&j, late.pid) == 1, "the process that entered and changed its command was not joined");

        /* A child forked by a recorded member: inherit follows it when its
         * FORK record says so; without one, it is joined one scan later. */
        pid_t inherited = command(&member, 'f');
        CHECK_MSG(inherited > 0, "fork failed");
        CHECK_MSG(container_follow_note_recorded(fl, inherited) == 0, "note_recorded");
        pid_t orphan = command(&target, 'f');
        CHECK_MSG(orphan > 0, "fork failed");
        k = container_follow_scan(fl, res, on_join, &j);
        CHECK_MSG(count_joins(&j, inherited) == 0, "a child with a FORK record was joined (events twice)");
        CHECK_MSG(count_joins(&j, orphan) == 0, "a new child of a recorded process was joined before its FORK record could come");
        k = container_follow_scan(fl, res, on_join, &j);
        CHECK_MSG(count_joins(&j, orphan) == 1, "a child without a FORK record was not joined on the next scan");
        CHECK_MSG(count_joins(&j, inherited) == 0, "the inherited child was joined later");

        /* The refused member changes its command: still not asked again. */
        CHECK_MSG(command(&refused, 'n') == refused.pid, "rename failed");
        for (int i = 0; i < CONTAINER_FOLLOW_FULL_EVERY; i++)
                k = container_follow_scan(fl, res, on_join, &j);
        CHECK_MSG(count_joins(&j, refused.pid) == 1, "a refused process was asked again");

        st = container_follow_get_stats(fl);
        CHECK_MSG(st.joined == 3 && st.members == 5 && !st.stopped, "stats joined=%u members=%u stopped=%d", st.joined,
                  st.members, st.stopped);

        /* Following for a non-root caller (uid 4321): these root-owned
         * members are another owner's namesakes, never joined. */
        ContainerFollow *other = NULL;
        Joins jo = {};
        CHECK_MSG(container_follow_new(app_id, &other) == 0, "out of memory");
        if (other) {
                container_follow_set_owner(other, 4321);
                k = container_follow_scan(other, res, on_join, &jo);
                CHECK_MSG(k == 0 && jo.n == 0, "%zu members of another owner joined", jo.n);
                container_follow_free(other);
        }

        /* A recording's resolver keeps /.flatpak-info unparsed: a member
         * waits (no join) until its owner had it parsed, then is joined; one
         * whose parse failed (dropped) never is. */
        Resolver *deferring = NULL;
        ContainerFollow *later = NULL;
        Joins jl = {};
        CHECK_MSG(resolver_new(&deferring) == 0 && container_follow_new(app_id, &later) == 0, "out of memory");
        if (deferring && later) {
                resolver_set_defer_user_files(deferring, true);
                Child waiting = spawn(), dropped = spawn();
                CHECK_MSG(waiting.pid > 0 && dropped.pid > 0, "fork failed");
                CHECK_MSG(command(&waiting, 'c') == waiting.pid && command(&dropped, 'c') == dropped.pid,
                          "chroot failed");
                (void) container_follow_scan(later, deferring, on_join, &jl);
                CHECK_MSG(count_joins(&jl, waiting.pid) == 0 && count_joins(&jl, dropped.pid) == 0,
                          "a member was joined before its /.flatpak-info was parsed");
                CHECK_MSG(resolver_count_pending(deferring) >= 2, "%zu files wait, expected the 2 new members'",
                          resolver_count_pending(deferring));
                resolver_drop_pending(deferring, dropped.pid);
                CHECK_MSG(resolver_parse_pending(deferring, waiting.pid, NULL) == 0, "the parse failed");
                CHECK_MSG(resolver_parse_pending(deferring, waiting.pid, NULL) == -ENOENT, "parsed twice");
                const ContainerInfo *ci = resolver_get_container(deferring, waiting.pid);
                CHECK_MSG(ci && ci->engine == CONTAINER_ENGINE_FLATPAK && strcmp(ci->name, app_id) == 0 &&
                                  strcmp(ci->id, "4242") == 0,
                          "the parsed member is not the app's instance");
                (void) container_follow_scan(later, deferring, on_join, &jl);
                CHECK_MSG(count_joins(&jl, waiting.pid) == 1, "the parsed member was not joined on the next scan");
                for (int i = 0; i < CONTAINER_FOLLOW_FULL_EVERY; i++)
                        (void) container_follow_scan(later, deferring, on_join, &jl);
                CHECK_MSG(count_joins(&jl, dropped.pid) == 0, "a member whose file was dropped was joined");
                CHECK_MSG(count_joins(&jl, waiting.pid) == 1, "the parsed member was joined again");
        }
        container_follow_free(later);
        resolver_free(deferring);

        /* The container stops: no member left. */
        kill_children();
        k = container_follow_scan(fl, res, on_join, &j);
        st = container_follow_get_stats(fl);
        CHECK_MSG(k == 0 && st.members == 0 && st.stopped, "after the members exited: members=%u stopped=%d", st.members,
                  st.stopped);

        container_follow_free(fl);
        resolver_free(res);
        unlink(path);
        rmdir(sandbox);
        if (failures == 0)
                printf("ok: container-follow: members joined once, host/noted/inherited ones never, late entry on "
                       "command change, refused not retried, deferred parses joined after them, stop seen\n");
        return failures ? 1 : 0;
}
