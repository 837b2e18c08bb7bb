/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* container-follow.c: membership rescans for `container` recordings (see
 * container-follow.h). */
#include "container-follow.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic.h"
#include "resolver.h"

#define PROC_STAT_MAX 1024
#define COMM_MAX 16

typedef enum PidState {
        PID_OTHER,                 /* not a member (host, another container), as of comm */
        PID_RECORDED,              /* has events: target, inherited child or joined */
        PID_DEFERRED,              /* new child of a recorded process: wait one scan for its FORK record */
        PID_FAILED,                /* a member that could not be recorded: not retried */
} PidState;

typedef struct PidEntry {
        pid_t pid;
        uint64_t ino;              /* of /proc/PID: a new process under a reused pid gets a new one */
        uint64_t start_time;       /* field 22 of /proc/PID/stat: tells a reused pid apart */
        char comm[COMM_MAX];
        PidState state;
} PidEntry;

/* Match verdict of one container instance, so Podman storage is read once
 * per instance, not once per new process. */
typedef struct InstanceVerdict {
        ContainerEngine engine;
        char id[CONTAINER_FIELD_MAX];
        uid_t owner_uid;
        bool member;
} InstanceVerdict;

struct ContainerFollow {
        char *query;
        PidEntry *pids;            /* ascending pid; what the last scan saw */
        size_t n_pids;
        pid_t *recorded;           /* noted as having events, not yet seen by a scan */
        size_t n_recorded;
        InstanceVerdict *verdicts;
        size_t n_verdicts;
        ContainerFollowStats stats;
        unsigned n_scans;
        bool any_owner;
        uid_t owner_uid;           /* unless any_owner */
};

int container_follow_new(const char *query, ContainerFollow **ret) {
        ContainerFollow *f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        f->any_owner = true;
        f->query = strdup(query);
        if (!f->query) {
                free(f);
                return -ENOMEM;
        }
        *ret = f;
        return 0;
}

ContainerFollow *container_follow_free(ContainerFollow *f) {
        if (!f)
                return NULL;
        free(f->query);
        free(f->pids);
        free(f->recorded);
        free(f->verdicts);
        free(f);
        return NULL;
}

void container_follow_set_owner(ContainerFollow *f, uid_t uid) {
        f->any_owner = false;
        f->owner_uid = uid;
}

int container_follow_note_recorded(ContainerFollow *f, pid_t pid) {
        for (size_t i = 0; i < f->n_recorded; i++)
                if (f->recorded[i] == pid)
                        return 0;
        pid_t *n = reallocarray(f->recorded, f->n_recorded + 1, sizeof(pid_t));
        if (!n)
                return -ENOMEM;
        f->recorded = n;
        f->recorded[f->n_recorded++] = pid;
        return 0;
}

ContainerFollowStats container_follow_get_stats(const ContainerFollow *f) {
        return f->stats;
}

static bool take_recorded(ContainerFollow *f, pid_t pid) {
        for (size_t i = 0; i < f->n_recorded; i++)
                if (f->recorded[i] == pid) {
                        f->recorded[i] = f->recorded[--f->n_recorded];
                        return true;
                }
        return false;
}

/* Start time, parent and command name from /proc/PID/stat; -ESRCH when gone. */
static int read_stat(pid_t pid, uint64_t *ret_start, pid_t *ret_ppid, char comm[COMM_MAX]) {
        char path[64], buf[PROC_STAT_MAX];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return n < 0 ? (errno == ESRCH ? -ESRCH : -errno) : -ESRCH;
        buf[n] = 0;
        /* "pid (comm) state ppid …": comm may hold spaces and ')'. */
        char *open_paren = strchr(buf, '('), *close_paren = strrchr(buf, ')');
        if (!open_paren || !close_paren || close_paren < open_paren)
                return -EBADMSG;
        size_t cl = (size_t) (close_paren - open_paren - 1);
        if (cl >= COMM_MAX)
                cl = COMM_MAX - 1;
        memcpy(comm, open_paren + 1, cl);
        comm[cl] = 0;
        /* Fields after comm, space-separated: 3 state, 4 ppid, … 22 starttime. */
        char *save = NULL, *ppid_field = NULL, *start_field = NULL;
        int field = 3;
        for (char *t = strtok_r(close_paren + 1, " ", &save); t && field <= 22; t = strtok_r(NULL, " ", &save), field++) {
                if (field == 4)
                        ppid_field = t;
                else if (field == 22)
                        start_field = t;
        }
        if (!ppid_field || !start_field)
                return -EBADMSG;
        char *end;
        errno = 0;
        long ppid = strtol(ppid_field, &end, 10);
        if (errno || *end || ppid < 0 || ppid > INT32_MAX)
                return -EBADMSG;
        unsigned long long start = strtoull(start_field, &end, 10);
        if (errno || *end)
                return -EBADMSG;
        *ret_start = start;
        *ret_ppid = (pid_t) ppid;
        return 0;
}

static const PidEntry *find_entry(const PidEntry *list, size_t n, pid_t pid) {
        size_t lo = 0, hi = n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (list[mid].pid == pid)
                        return &list[mid];
                if (list[mid].pid < pid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

static int compare_entries(const void *a, const void *b) {
        pid_t x = ((const PidEntry *) a)->pid, y = ((const PidEntry *) b)->pid;
        return x < y ? -1 : x > y;
}

/* Whether pid belongs to what the query names, decided like the start of
 * the recording does (container_list_instances + container_instance_matches).
 * 1: not known yet (its /.flatpak-info waits for the resolver's owner to
 * have it parsed, off the event loop): asked again on the next scan. */
static int classify_member(ContainerFollow *f, Resolver *res, pid_t pid, bool *ret) {
        ContainerInfo info;
        int r = container_info_classify(pid, resolver_user_file_parser(res), &info);
        if (r < 0)
                return r;
        bool pending = info.flatpak_pending;
        container_info_clear(&info);
        *ret = false;
        if (!f->any_owner && info.owner_uid != f->owner_uid)
                return 0;
        if (pending) {
                /* the resolver remembers it, its owner has the file parsed */
                const ContainerInfo *ci = resolver_get_container(res, pid);
                if (!ci)
                        return -ESRCH;
                if (ci->flatpak_pending)
                        return 1;
                info = *ci;
                info.flatpak_info = info.containerenv = NULL; /* the resolver's */
        }
        if (info.engine == CONTAINER_ENGINE_NONE || !info.id[0])
                return 0;
        for (size_t i = 0; i < f->n_verdicts; i++) {
                const InstanceVerdict *v = &f->verdicts[i];
                if (v->engine == info.engine && v->owner_uid == info.owner_uid && strcmp(v->id, info.id) == 0) {
                        *ret = v->member;
                        return 0;
                }
        }
        /* Podman names and images come from the owner's store, which the
         * resolver's owner may have parsed off the event loop: pid is
         * remembered, and asked about again on the next scan. */
        bool member = container_instance_matches(&info, f->query);
        if (!member && info.engine == CONTAINER_ENGINE_PODMAN) {
                const ContainerInfo *ci = resolver_get_container(res, pid);
                if (!ci)
                        return -ESRCH;
                if (ci->podman_pending)
                        return 1;
                if (ci->engine == CONTAINER_ENGINE_PODMAN && strcmp(ci->id, info.id) == 0 && ci->name[0]) {
                        memcpy(info.name, ci->name, sizeof(info.name));
                        memcpy(info.image, ci->image, sizeof(info.image));
                        member = container_instance_matches(&info, f->query);
                }
        }
        InstanceVerdict *nv = reallocarray(f->verdicts, f->n_verdicts + 1, sizeof(*nv));
        if (!nv)
                return -ENOMEM;
        f->verdicts = nv;
        InstanceVerdict *v = &f->verdicts[f->n_verdicts++];
        *v = (InstanceVerdict) { .engine = info.engine, .owner_uid = info.owner_uid, .member = member };
        memcpy(v->id, info.id, sizeof(v->id));
        *ret = member;
        return 0;
}

static bool pid_in(const pid_t *list, size_t n, pid_t pid) {
        for (size_t i = 0; i < n; i++)
                if (list[i] == pid)
                        return true;
        return false;
}

int container_follow_scan(ContainerFollow *f, Resolver *res, ContainerFollowJoinFunc join, void *userdata) {
        _cleanup_free_ PidEntry *seen = NULL;
        _cleanup_free_ pid_t *joined_now = NULL;
        size_t n_seen = 0, allocated = 0, n_joined_now = 0;
        uint32_t members = 0;
        int joined = 0, r = 0;
        /* Most scans trust /proc/PID's inode number from readdir alone (no
         * read per process); every CONTAINER_FOLLOW_FULL_EVERY-th one reads
         * every process's stat, to see the command changes of non-members. */
        bool full = f->n_scans++ % CONTAINER_FOLLOW_FULL_EVERY == 0;

        _cleanup_closedir_ DIR *d = opendir("/proc");
        if (!d)
                return -errno;
        pid_t pid;
        ino_t ino;
        while (proc_dir_next_pid(d, &pid, &ino)) {
                const PidEntry *old = find_entry(f->pids, f->n_pids, pid);
                PidEntry e = { .pid = pid, .ino = ino };
                pid_t ppid;
                if (!full && old && old->ino == e.ino && old->state != PID_DEFERRED) {
                        e = *old; /* the same process, as last seen */
                        if (e.state == PID_RECORDED)
                                members++;
                        goto keep;
                }
                if (read_stat(pid, &e.start_time, &ppid, e.comm) < 0)
                        continue; /* gone meanwhile, or unreadable: not ours to follow */
                if (old && old->start_time != e.start_time)
                        old = NULL; /* the pid was reused */
                if (old && (old->state == PID_RECORDED || old->state == PID_FAILED)) {
                        e.state = old->state;
                } else if (take_recorded(f, pid)) {
                        e.state = PID_RECORDED; /* a target, or a child inherit follows */
                } else if (old && old->state == PID_OTHER && strcmp(old->comm, e.comm) == 0) {
                        e.state = PID_OTHER;
                } else {
                        /* A new child of a recorded process inherited its events
                         * unless it was forked before its parent had them; the
                         * FORK record says which, one drain later. */
                        const PidEntry *parent = find_entry(f->pids, f->n_pids, ppid);
                        bool parent_recorded = (parent && parent->state == PID_RECORDED) ||
                                               pid_in(joined_now, n_joined_now, ppid);
                        bool member = false;
                        if (!old && parent_recorded) {
                                e.state = PID_DEFERRED;
                        } else if ((r = classify_member(f, res, pid, &member)) < 0) {
                                if (r == -ENOMEM)
                                        break;
                                r = 0;
                                continue; /* gone mid-check */
                        } else if (r > 0) {
                                r = 0;
                                e.state = PID_DEFERRED; /* its /.flatpak-info is parsed meanwhile */
                        } else if (!member) {
                                e.state = PID_OTHER;
                        } else {
                                /* Room first: a joined pid must not be forgotten. */
                                pid_t *nj = reallocarray(joined_now, n_joined_now + 1, sizeof(pid_t));
                                if (!nj) {
                                        r = -ENOMEM;
                                        break;
                                }
                                joined_now = nj;
                                r = join(pid, userdata);
                                if (r == -ESRCH) {
                                        r = 0;
                                        continue;
                                }
                                if (r < 0) {
                                        /* Not retried: it may hold some events already. */
                                        e.state = PID_FAILED;
                                        if (r == -EPERM)
                                                f->stats.refused++;
                                        else
                                                f->stats.failed++;
                                        r = 0;
                                } else {
                                        e.state = PID_RECORDED;
                                        joined++;
                                        f->stats.joined++;
                                        joined_now[n_joined_now++] = pid;
                                }
                        }
                }
                if (e.state == PID_RECORDED)
                        members++;
        keep:
                if (GROW_ARRAY(seen, allocated, n_seen + 1, 256) < 0) {
                        r = -ENOMEM;
                        break;
                }
                seen[n_seen++] = e;
        }
        if (r < 0) {
                /* The old table stays; what this scan joined is known next time. */
                for (size_t i = 0; i < n_joined_now; i++)
                        (void) container_follow_note_recorded(f, joined_now[i]);
                return r;
        }
        /* /proc lists pids ascending; sort anyway, lookups bisect. */
        qsort(seen, n_seen, sizeof(PidEntry), compare_entries);
        free(f->pids);
        f->pids = TAKE_PTR(seen);
        f->n_pids = n_seen;
        /* Noted pids that no scan saw are gone (their FORK records came
         * after their exit); later ones are noted again. */
        f->n_recorded = 0;
        f->stats.members = members;
        f->stats.stopped = members == 0;
        return joined;
        }
