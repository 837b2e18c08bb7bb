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

/* The app's id, named by the sandbox's /.flatpak-info (main writes it). */
static char app_id[64];
static char info_path[128];

/* A child of this test that chroot'ed into the sandbox: a member. */
static Child spawn_member(void) {
        Child ch = spawn();
        CHECK_MSG(ch.pid > 0, "fork failed");
        CHECK_MSG(command(&ch, 'c') == ch.pid, "chroot failed: %s", strerror(errno));
        return ch;
}

/* What every case starts from: a resolver, a follow of the app for root,
 * and what the join callback saw. */
typedef struct Fixture {
        Resolver *res;
        ContainerFollow *fl;
        Joins j;
} Fixture;

static void fixture_init(Fixture *fx) {
        *fx = (Fixture) {};
        MUST(resolver_new(&fx->res));
        MUST(container_follow_new(app_id, &fx->fl));
}

static void fixture_done(Fixture *fx) {
        kill_children();
        fx->fl = container_follow_free(fx->fl);
        fx->res = resolver_free(fx->res);
}

/* Scans n times; returns what the last scan returned. */
static int scan_times(Fixture *fx, int n) {
        int k = 0;
        for (int i = 0; i < n; i++)
                k = container_follow_scan(fx->fl, fx->res, on_join, &fx->j);
        return k;
}

/* The follow's stats: joined and members as given, not stopped. */
static void check_following(Fixture *fx, uint32_t joined, uint32_t members) {
        ContainerFollowStats st = container_follow_get_stats(fx->fl);
        CHECK_MSG(st.joined == joined && st.members == members && !st.stopped,
                  "stats joined=%u members=%u stopped=%d, expected joined=%u members=%u", st.joined, st.members,
                  st.stopped, joined, members);
}

/* A host process, a member, a member noted as recorded (a target), a member
 * that is refused: the member alone is joined, the refused one asked. */
TEST(members_joined_once) {
        Fixture fx;
        fixture_init(&fx);
        Child host = spawn(), member = spawn_member(), target = spawn_member(), refused = spawn_member();
        CHECK_MSG(host.pid > 0, "fork failed");
        CHECK_MSG(container_follow_note_recorded(fx.fl, target.pid) == 0, "note_recorded");
        fx.j.refuse = refused.pid;

        int k = scan_times(&fx, 1);
        CHECK_MSG(k == 1, "first scan joined %d, expected 1 (the member)", k);
        CHECK_MSG(count_joins(&fx.j, member.pid) == 1, "the member was not joined once");
        CHECK_MSG(count_joins(&fx.j, host.pid) == 0, "a host process was joined");
        CHECK_MSG(count_joins(&fx.j, target.pid) == 0, "a noted target was joined (it has events already)");
        CHECK_MSG(count_joins(&fx.j, refused.pid) == 1, "the refused member was not asked about");
        ContainerFollowStats st = container_follow_get_stats(fx.fl);
        CHECK_MSG(st.joined == 1 && st.refused == 1 && st.members == 2 && !st.stopped,
                  "stats joined=%u refused=%u members=%u stopped=%d", st.joined, st.refused, st.members, st.stopped);

        /* Nothing changed: nothing is joined or asked again. */
        size_t before = fx.j.n;
        k = scan_times(&fx, 1);
        CHECK_MSG(k == 0 && fx.j.n == before, "second scan called join %zu more times", fx.j.n - before);
        fixture_done(&fx);
}

/* A host process enters the sandbox after it was first seen: not seen while
 * its command is the same (classified once), seen once it changes (exec;
 * here a rename to a name that tests the /proc/PID/stat parser). */
TEST(late_entry_joined_on_command_change) {
        Fixture fx;
        fixture_init(&fx);
        Child late = spawn();
        CHECK_MSG(late.pid > 0, "fork failed");
        (void) scan_times(&fx, 1);
        CHECK_MSG(count_joins(&fx.j, late.pid) == 0, "a host process was joined");

        CHECK_MSG(command(&late, 'c') == late.pid, "chroot failed");
        (void) scan_times(&fx, CONTAINER_FOLLOW_FULL_EVERY);
        CHECK_MSG(count_joins(&fx.j, late.pid) == 0, "a process was classified again without a changed command");
        /* Within one round of scans, one of which reads every process. */
        CHECK_MSG(command(&late, 'n') == late.pid, "rename failed");
        for (int i = 0; i < CONTAINER_FOLLOW_FULL_EVERY && count_joins(&fx.j, late.pid) == 0; i++)
                (void) scan_times(&fx, 1);
        CHECK_MSG(count_joins(&fx.j, late.pid) == 1, "the process that entered and changed its command was not joined");
        check_following(&fx, 1, 1);
        fixture_done(&fx);
}

/* A child forked by a recorded member: inherit follows it when its FORK
 * record says so; without one, it is joined one scan later. */
TEST(child_without_fork_record_joined_next_scan) {
        Fixture fx;
        fixture_init(&fx);
        Child member = spawn_member(), target = spawn_member();
        CHECK_MSG(container_follow_note_recorded(fx.fl, target.pid) == 0, "note_recorded");
        (void) scan_times(&fx, 1);
        CHECK_MSG(count_joins(&fx.j, member.pid) == 1, "the member was not joined once");

        pid_t inherited = command(&member, 'f');
        CHECK_MSG(inherited > 0, "fork failed");
        CHECK_MSG(container_follow_note_recorded(fx.fl, inherited) == 0, "note_recorded");
        pid_t orphan = command(&target, 'f');
        CHECK_MSG(orphan > 0, "fork failed");
        (void) scan_times(&fx, 1);
        CHECK_MSG(count_joins(&fx.j, inherited) == 0, "a child with a FORK record was joined (events twice)");
        CHECK_MSG(count_joins(&fx.j, orphan) == 0,
                  "a new child of a recorded process was joined before its FORK record could come");
        (void) scan_times(&fx, 1);
        CHECK_MSG(count_joins(&fx.j, orphan) == 1, "a child without a FORK record was not joined on the next scan");
        CHECK_MSG(count_joins(&fx.j, inherited) == 0, "the inherited child was joined later");
        /* the member, the target and both children have events */
        check_following(&fx, 2, 4);
        fixture_done(&fx);
}

/* A refused member that changes its command is still not asked again. */
TEST(refused_not_asked_again) {
        Fixture fx;
        fixture_init(&fx);
        Child refused = spawn_member();
        fx.j.refuse = refused.pid;
        (void) scan_times(&fx, 1);
        CHECK_MSG(count_joins(&fx.j, refused.pid) == 1, "the refused member was not asked about");
        CHECK_MSG(command(&refused, 'n') == refused.pid, "rename failed");
        (void) scan_times(&fx, CONTAINER_FOLLOW_FULL_EVERY);
        CHECK_MSG(count_joins(&fx.j, refused.pid) == 1, "a refused process was asked again");
        ContainerFollowStats st = container_follow_get_stats(fx.fl);
        CHECK_MSG(st.joined == 0 && st.refused == 1 && st.members == 0, "stats joined=%u refused=%u members=%u",
                  st.joined, st.refused, st.members);
        fixture_done(&fx);
}

/* Following for a non-root caller (uid 4321): root-owned members are
 * another owner's namesakes, never joined (the follow for root joins them). */
TEST(other_owner_never_joined) {
        Fixture fx;
        fixture_init(&fx);
        Child member = spawn_member();
        ContainerFollow *other = NULL;
        Joins jo = {};
        MUST(container_follow_new(app_id, &other));
        container_follow_set_owner(other, 4321);
        int k = container_follow_scan(other, fx.res, on_join, &jo);
        CHECK_MSG(k == 0 && jo.n == 0, "%zu members of another owner joined", jo.n);
        container_follow_free(other);
        (void) scan_times(&fx, 1);
        CHECK_MSG(count_joins(&fx.j, member.pid) == 1, "the member was not joined by the follow for root");
        fixture_done(&fx);
}

/* A recording's resolver keeps /.flatpak-info unparsed: a member waits (no
 * join) until its owner had it parsed, then is joined; one whose parse
 * failed (dropped) never is. */
TEST(deferred_parse_joined_after) {
        Fixture fx;
        fixture_init(&fx);
        resolver_set_defer_user_files(fx.res, true);
        Child waiting = spawn_member(), dropped = spawn_member();
        (void) scan_times(&fx, 1);
        CHECK_MSG(count_joins(&fx.j, waiting.pid) == 0 && count_joins(&fx.j, dropped.pid) == 0,
                  "a member was joined before its /.flatpak-info was parsed");
        CHECK_MSG(resolver_count_pending(fx.res) >= 2, "%zu files wait, expected the 2 new members'",
                  resolver_count_pending(fx.res));
        resolver_drop_pending(fx.res, dropped.pid);
        CHECK_MSG(resolver_parse_pending(fx.res, waiting.pid, NULL) == 0, "the parse failed");
        CHECK_MSG(resolver_parse_pending(fx.res, waiting.pid, NULL) == -ENOENT, "parsed twice");
        const ContainerInfo *ci = resolver_get_container(fx.res, waiting.pid);
        CHECK_MSG(ci && ci->engine == CONTAINER_ENGINE_FLATPAK && strcmp(ci->name, app_id) == 0 &&
                          strcmp(ci->id, "4242") == 0,
                  "the parsed member is not the app's instance");
        (void) scan_times(&fx, 1);
        CHECK_MSG(count_joins(&fx.j, waiting.pid) == 1, "the parsed member was not joined on the next scan");
        (void) scan_times(&fx, CONTAINER_FOLLOW_FULL_EVERY);
        CHECK_MSG(count_joins(&fx.j, dropped.pid) == 0, "a member whose file was dropped was joined");
        CHECK_MSG(count_joins(&fx.j, waiting.pid) == 1, "the parsed member was joined again");
        fixture_done(&fx);
}

/* The container stops: no member left. */
TEST(stop_seen) {
        Fixture fx;
        fixture_init(&fx);
        Child member = spawn_member();
        (void) scan_times(&fx, 1);
        CHECK_MSG(count_joins(&fx.j, member.pid) == 1, "the member was not joined once");
        kill_children();
        int k = scan_times(&fx, 1);
        ContainerFollowStats st = container_follow_get_stats(fx.fl);
        CHECK_MSG(k == 0 && st.members == 0 && st.stopped, "after the members exited: members=%u stopped=%d",
                  st.members, st.stopped);
        fixture_done(&fx);
}

/* The sandbox: a directory whose /.flatpak-info names app_id. */
static int make_sandbox(void) {
        snprintf(app_id, sizeof(app_id), "org.periscope.FollowTest%d", (int) getpid());
        if (!mkdtemp(sandbox))
                return -errno;
        snprintf(info_path, sizeof(info_path), "%s/.flatpak-info", sandbox);
        char info[256];
        int n = snprintf(info, sizeof(info),
                         "[Application]\nname=%s\nruntime=runtime/org.example/x86_64/1\n\n"
                         "[Instance]\ninstance-id=4242\n",
                         app_id);
        FILE *f = fopen(info_path, "we");
        if (!f)
                return -errno;
        bool ok = fwrite(info, 1, (size_t) n, f) == (size_t) n;
        if (fclose(f) != 0 || !ok)
                return -EIO;
        return 0;
}

int main(int argc, char **argv) {
        if (geteuid() != 0) {
                fprintf(stderr, "FAIL: needs root (chroot into the test sandbox); ./test.sh runs as root\n");
                return 1;
        }
        MUST(make_sandbox());
        /* this process reaps the grandchildren too, so none is left */
        if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
                fprintf(stderr, "FAIL: PR_SET_CHILD_SUBREAPER: %s\n", strerror(errno));
                return 1;
        }
        int r = test_main(argc, argv);
        unlink(info_path);
        rmdir(sandbox);
        return r;
}
