/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* process-frames.c: /proc readers for the start-of-recording snapshot. */
#include "process-frames.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "basic.h"
#include "container-frames.h"
#include "mapping-identity.h"
#include "process-ownership.h"
#include "vdso-image.h"

#define MOUNTINFO_MAX_BYTES (4u << 20)

int process_read_state(pid_t pid, char *ret) {
        char path[64], buf[512];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        ssize_t n = read_full(fd, buf, sizeof(buf) - 1, -1);
        if (n < 0)
                return (int) n;
        buf[n] = 0;
        /* the comm (field 2) may hold anything: the state follows its last ')' */
        const char *p = strrchr(buf, ')');
        if (!p || p[1] != ' ' || !p[2])
                return -EBADMSG;
        *ret = p[2];
        return 0;
}

char *process_read_cmdline(pid_t pid, const char *fallback) {
        char path[64], buf[4096];
        snprintf(path, sizeof(path), "/proc/%d/cmdline", (int) pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        if (n > 0) {
                for (ssize_t i = 0; i < n; i++)
                        if (buf[i] == 0)
                                buf[i] = ' ';
                while (n > 0 && buf[n - 1] == ' ')
                        n--;
                buf[n] = 0;
                if (n > 0)
                        return strdup(buf);
        }
        if (fallback) {
                char *s;
                return asprintf(&s, "[%s]", fallback) < 0 ? NULL : s;
        }
        snprintf(path, sizeof(path), "/proc/%d/comm", (int) pid);
        safe_close(fd);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        n = fd >= 0 ? read(fd, buf, sizeof(buf) - 3) : -1;
        if (n <= 0)
                return NULL;
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == 0))
                n--;
        buf[n] = 0;
        char *s;
        return asprintf(&s, "[%s]", buf) < 0 ? NULL : s;
}

/* Pins the file behind one file mapping of pid, if it can. */
static void pin_file_mapping(PinnedFiles *pinned, pid_t pid, ProcessMapping *mapping) {
        PinnedFile *p = NULL;
        uint64_t dev = makedev(mapping->dev_major, mapping->dev_minor);
        bool known = mapping->dev_major || mapping->dev_minor || mapping->inode;
        if (pinned_files_pin_mapping(pinned, pid, mapping->start, mapping->end, mapping->filename,
                                     known ? dev : 0, known ? mapping->inode : 0, &p) >= 0) {
                mapping->pinned = p;
                if (!known) {
                        /* MMAP2 with a build-id carries no identity: take the pinned file's. */
                        mapping->dev_major = major(p->dev);
                        mapping->dev_minor = minor(p->dev);
                        mapping->inode = p->inode;
                }
        }
}

int process_track_mapping(ProcessMaps *maps, PinnedFiles *pinned, pid_t pid, ProcessMapping *mapping) {
        PinnedFile *p = NULL;
        if (vdso_is_mapping(mapping->filename)) {
                /* No file: its image out of the process (gone: no names). */
                if (pinned_files_pin_vdso(pinned, pid, mapping->start, mapping->end, &p) >= 0)
                        mapping->pinned = p;
                return process_maps_add(maps, pid, mapping);
        }
        pin_file_mapping(pinned, pid, mapping);
        return process_maps_add(maps, pid, mapping);
}

size_t process_repin_mappings(ProcessMaps *maps, PinnedFiles *pinned, pid_t pid) {
        size_t n = 0, tried = 0, pinned_now = 0;
        ProcessMapping *m = process_maps_get_writable(maps, (int32_t) pid, &n);
        for (size_t i = 0; i < n; i++) {
                if (m[i].pinned || !m[i].filename || m[i].filename[0] != '/' || vdso_is_mapping(m[i].filename))
                        continue;
                uint64_t failures = pinned_files_get_failures(pinned);
                pin_file_mapping(pinned, pid, &m[i]);
                pinned_now += m[i].pinned != NULL;
                /* its first try failed and was counted: the retry's verdict stands */
                tried += m[i].pinned != NULL || pinned_files_get_failures(pinned) > failures;
        }
        pinned_files_forget_failures(pinned, tried);
        return pinned_now;
}

int process_frames_write_mmap2(CaptureWriter *w, ProcessMaps *maps, PinnedFiles *pinned, const PerfMmap2 *m) {
        if (!(m->prot & PROT_EXEC) || m->len == 0)
                return 0;
        ProcessMapping pm = {
                .start = m->addr, .end = m->addr + m->len, .pgoff = m->pgoff,
                .dev_major = m->dev_major, .dev_minor = m->dev_minor, .inode = m->inode,
                .build_id_size = m->build_id_size, .filename = (char *) m->filename, .time = (int64_t) m->id.time,
        };
        memcpy(pm.build_id, m->build_id, sizeof(pm.build_id));
        int r = process_track_mapping(maps, pinned, (pid_t) m->pid, &pm);
        if (r < 0)
                return r;
        r = mapping_identity_write(w, (int64_t) m->id.time, (int) m->id.cpu, (pid_t) m->pid, &pm);
        if (r < 0)
                return r;
        return capture_writer_add_map(w, (int64_t) m->id.time, (int) m->id.cpu, (int32_t) m->pid, pm.start, pm.end,
                                      pm.pgoff, pm.inode, m->filename);
}

int process_frames_write_exec(CaptureWriter *w, ProcessMaps *maps, const PerfComm *c) {
        /* Only an exec starts a new program; thread renames are not processes. */
        if (!c->exec || c->pid != c->tid)
                return 0;
        int r = process_maps_exec(maps, (int32_t) c->pid, (int64_t) c->id.time);
        if (r < 0)
                return r;
        _cleanup_free_ char *cmdline = process_read_cmdline((pid_t) c->pid, c->comm);
        if (!cmdline)
                return -ENOMEM;
        return capture_writer_add_process(w, (int64_t) c->id.time, (int) c->id.cpu, (int32_t) c->pid, cmdline);
}

int process_frames_write_task(CaptureWriter *w, ProcessMaps *maps, const PerfTask *t, bool fork) {
        if (fork) {
                if (t->pid == t->ppid)
                        return 0; /* a new thread */
                int r = process_maps_fork(maps, (int32_t) t->ppid, (int32_t) t->pid, (int64_t) t->time);
                if (r < 0)
                        return r;
                return capture_writer_add_fork(w, (int64_t) t->time, (int) t->id.cpu, (int32_t) t->ppid,
                                               (int32_t) t->pid);
        }
        if (t->pid != t->tid)
                return 0; /* a thread ended */
        return capture_writer_add_exit(w, (int64_t) t->time, (int) t->id.cpu, (int32_t) t->pid);
}

/* Parses one /proc/PID/maps line; returns 1 for an executable mapping. */
static int parse_maps_line(char *line, ProcessMapping *m) {
        unsigned long long start, end, off, ino;
        unsigned maj, min;
        char perms[8];
        int pos = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj, &min, &ino, &pos) < 7)
                return -EBADMSG;
        if (strlen(perms) < 3 || perms[2] != 'x' || end <= start)
                return 0;
        char *name = line + pos;
        size_t len = strlen(name);
        while (len > 0 && (name[len - 1] == '\n' || isspace((unsigned char) name[len - 1])))
                name[--len] = 0;
        *m = (ProcessMapping) {
                .start = start, .end = end, .pgoff = off,
                .dev_major = maj, .dev_minor = min, .inode = ino,
                .filename = name,
        };
        return 1;
}

int process_frames_write(CaptureWriter *w, ProcessMaps *maps, PinnedFiles *pinned, int64_t time, pid_t pid, uid_t owner,
                         char **ret_cmdline) {
        char path[64];
        int r;

        _cleanup_free_ char *cmdline = process_read_cmdline(pid, NULL);
        if (!cmdline)
                return -ESRCH;
        snprintf(path, sizeof(path), "/proc/%d/maps", (int) pid);
        _cleanup_(fclosep) FILE *f = fopen(path, "re");
        if (!f)
                return errno == ENOENT ? -ESRCH : -errno;
        /* The maps hold the mm the open saw: a set-id program's if the
         * process exec'd one since its events were checked (or another
         * process's if its pid was reused). */
        if (owner != PROCESS_FRAMES_ANY_OWNER && process_recheck_after_open(owner, pid, "maps") < 0)
                return -ESRCH;
        if (ret_cmdline)
                *ret_cmdline = TAKE_PTR(cmdline);
        else if ((r = capture_writer_add_process(w, time, -1, pid, cmdline)) < 0)
                return r;

        _cleanup_free_ char *line = NULL;
        size_t n = 0;
        while (getline(&line, &n, f) > 0) {
                ProcessMapping m;
                if (parse_maps_line(line, &m) <= 0)
                        continue;
                r = process_track_mapping(maps, pinned, pid, &m);
                if (r < 0)
                        return r;
                r = mapping_identity_write(w, time, -1, pid, &m);
                if (r < 0)
                        return r;
                r = capture_writer_add_map(w, time, -1, pid, m.start, m.end, m.pgoff, m.inode, m.filename);
                if (r < 0)
                        return r;
        }

        snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int) pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                r = capture_writer_add_file_fd(w, time, -1, pid, path, fd, MOUNTINFO_MAX_BYTES);
                if (r < 0 && r != -EFBIG)
                        return r;
        }
        /* Container/app, /.flatpak-info, /run/.containerenv, Podman layers. */
        return container_frames_write(w, pinned_files_get_resolver(pinned), time, pid);
}

int process_frames_write_threads(CaptureWriter *w, ThreadTable *names, int64_t time, pid_t pid) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
        _cleanup_closedir_ DIR *d = opendir(path);
        if (!d)
                return errno == ENOENT ? -ESRCH : -errno;
        pid_t tid;
        while (proc_dir_next_pid(d, &tid, NULL)) {
                char name[CAPTURE_THREAD_NAME_MAX + 2];
                snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int) pid, (int) tid);
                _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
                ssize_t n = fd >= 0 ? read(fd, name, sizeof(name) - 1) : -1;
                if (n <= 0)
                        continue; /* the thread ended meanwhile */
                if (name[n - 1] == '\n')
                        n--;
                name[n] = 0;
                int r = thread_table_set(names, (int32_t) tid, name);
                if (r < 0)
                        return r;
                r = capture_writer_add_thread_name(w, time, -1, (int32_t) pid, (int32_t) tid, name, false);
                if (r < 0)
                        return r;
        }
        return 0;
}

int process_frames_write_thread_name(CaptureWriter *w, ThreadTable *names, const PerfComm *c) {
        /* A task outside the service's pid namespace comes as pid and tid 0
         * (a whole-system recording by a service in a container): it has
         * no name to keep. */
        if ((int32_t) c->tid <= 0)
                return 0;
        /* every rename of a thread (prctl(PR_SET_NAME), exec): once, not per sample */
        int r = thread_table_set(names, (int32_t) c->tid, c->comm);
        if (r < 0)
                return r;
        return capture_writer_add_thread_name(w, (int64_t) c->id.time, (int) c->id.cpu, (int32_t) c->pid,
                                              (int32_t) c->tid, c->comm, c->exec);
}

int process_frames_write_thread_task(CaptureWriter *w, ThreadTable *names, const PerfTask *t, bool fork) {
        if (!fork) {
                thread_table_remove(names, (int32_t) t->tid);
                return 0;
        }
        if (t->tid == t->ptid || (int32_t) t->tid <= 0 || (int32_t) t->ptid <= 0)
                return 0; /* a process, or a task outside our pid namespace */
        const char *name = thread_table_get(names, (int32_t) t->ptid);
        if (!name)
                return 0;
        /* copied: setting the new thread's entry may move the creator's */
        char inherited[CAPTURE_THREAD_NAME_MAX + 1];
        snprintf(inherited, sizeof(inherited), "%s", name);
        int r = thread_table_set(names, (int32_t) t->tid, inherited);
        if (r < 0)
                return r;
        return capture_writer_add_thread_name(w, (int64_t) t->time, (int) t->id.cpu, (int32_t) t->pid, (int32_t) t->tid,
                                              inherited, false);
}

int process_frames_write_all(CaptureWriter *w, ProcessMaps *maps, PinnedFiles *pinned, int64_t time,
                             ThreadTable *thread_names, void (*between)(void *userdata), void *userdata) {
        _cleanup_closedir_ DIR *d = opendir("/proc");
        if (!d)
                return -errno;
        int count = 0, r = 0;
        pid_t pid;
        while (proc_dir_next_pid(d, &pid, NULL)) {
                r = process_frames_write(w, maps, pinned, time, pid, PROCESS_FRAMES_ANY_OWNER, NULL);
                if (r >= 0 && thread_names)
                        r = process_frames_write_threads(w, thread_names, time, pid);
                if (between)
                        between(userdata);
                if (r == -ESRCH || r == -EACCES) {
                        r = 0;
                        continue;
                }
                if (r < 0)
                        break;
                count++;
        }
        return r < 0 ? r : count;
}
