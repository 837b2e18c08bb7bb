/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pinned-files.c: a sorted array of pins, looked up by binary search. */
#include "pinned-files.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include "basic.h"
#include "resolver.h"
#include "vdso-image.h"

/* A vdso image pinned as a memfd, known by its bytes (a process may have
 * rewritten its own copy: only the same bytes share a pin). */
typedef struct VdsoPin {
        uint8_t *image;
        size_t size;
        PinnedFile *pin;           /* owned by files[] */
} VdsoPin;

#define PINNED_FILES_MAX_VDSOS 8

struct PinnedFiles {
        PinnedFile **files;
        size_t n_files, allocated;
        size_t max_files;
        uint64_t failures;
        Resolver *resolver;        /* borrowed; NULL: no fallback */
        PinFailure *reasons;       /* why a (dev, inode) could not be pinned, first one kept */
        size_t n_reasons;
        VdsoPin *vdsos;            /* the distinct vdso images pinned */
        size_t n_vdsos;
        uid_t owner; /* whose a process must be when its vdso is read (VDSO_IMAGE_ANY_OWNER) */
};

int pinned_files_new(size_t max_files, PinnedFiles **ret) {
        PinnedFiles *f = calloc(1, sizeof(PinnedFiles));
        if (!f)
                return -ENOMEM;
        f->max_files = max_files;
        f->owner = VDSO_IMAGE_ANY_OWNER;
        *ret = f;
        return 0;
}

void pinned_files_set_owner(PinnedFiles *f, uid_t owner_uid) {
        f->owner = owner_uid;
}

static void pinned_file_free(PinnedFile *p) {
        if (!p)
                return;
        safe_close(p->fd);
        free(p->path);
        free(p->provenance);
        free(p);
}

PinnedFiles *pinned_files_free(PinnedFiles *f) {
        if (!f)
                return NULL;
        for (size_t i = 0; i < f->n_files; i++)
                pinned_file_free(f->files[i]);
        free(f->files);
        for (size_t i = 0; i < f->n_reasons; i++)
                free(f->reasons[i].reason);
        free(f->reasons);
        for (size_t i = 0; i < f->n_vdsos; i++)
                free(f->vdsos[i].image);
        free(f->vdsos);
        free(f);
        return NULL;
}

static int key_cmp(uint64_t dev_a, uint64_t ino_a, uint64_t dev_b, uint64_t ino_b) {
        if (dev_a != dev_b)
                return dev_a < dev_b ? -1 : 1;
        if (ino_a != ino_b)
                return ino_a < ino_b ? -1 : 1;
        return 0;
}

/* Index of the first pin >= key. */
static size_t pinned_files_bsearch(const PinnedFiles *f, uint64_t dev, uint64_t inode) {
        size_t lo = 0, hi = f->n_files;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (key_cmp(f->files[mid]->dev, f->files[mid]->inode, dev, inode) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

PinnedFile *pinned_files_lookup(const PinnedFiles *f, uint64_t dev, uint64_t inode) {
        size_t i = pinned_files_bsearch(f, dev, inode);
        if (i < f->n_files && f->files[i]->dev == dev && f->files[i]->inode == inode)
                return f->files[i];
        return NULL;
}

/* The mount id of the mount holding fd, from /proc/self/fdinfo. */
static int fd_mount_id(int fd) {
        char p[64];
        snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", fd);
        _cleanup_(fclosep) FILE *f = fopen(p, "re");
        if (!f)
                return -errno;
        char line[256];
        while (fgets(line, sizeof(line), f)) {
                int id;
                if (sscanf(line, "mnt_id: %d", &id) == 1)
                        return id;
        }
        return -ENODATA;
}

/* Whether fd lies on the mount whose device (as mountinfo lists it: for
 * btrfs the superblock's, which is what maps and MMAP2 report) is dev.
 * Mount ids are unique across namespaces, so the target's table is searched
 * first (the file may be on a mount only it sees), then ours. */
static bool mount_device_matches(int fd, pid_t pid, uint64_t dev) {
        int id = fd_mount_id(fd);
        if (id < 0)
                return false;
        pid_t where[] = { pid, 0 };
        for (size_t i = 0; i < ELEMENTSOF(where); i++) {
                _cleanup_(mount_table_freep) MountTable *t = NULL;
                if (mount_table_load(where[i], &t) < 0)
                        continue;
                const MountEntry *m = mount_table_find_by_id(t, id);
                if (m)
                        return makedev(m->dev_major, m->dev_minor) == dev;
        }
        return false;
}

/* Whether an opened file is the one the kernel named. btrfs reports the
 * superblock's device in maps but a per-subvolume device to stat(): there
 * the inode must match and the file's mount must be on the mapped device. */
static bool identity_matches(int fd, pid_t pid, const struct stat *st, uint64_t dev, uint64_t inode) {
        if ((uint64_t) st->st_ino != inode)
                return false;
        if ((uint64_t) st->st_dev == dev)
                return true;
        struct statfs sfs;
        if (fstatfs(fd, &sfs) < 0 || sfs.f_type != BTRFS_SUPER_MAGIC)
                return false;
        return mount_device_matches(fd, pid, dev);
}

static int open_regular(const char *path, struct stat *st) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        if (fstat(fd, st) < 0)
                return -errno;
        if (!S_ISREG(st->st_mode))
                return -EBADFD;
        return TAKE_FD(fd);
}

const char *pinned_files_get_failure_reason(const PinnedFiles *f, uint64_t dev, uint64_t inode) {
        for (size_t i = 0; f && i < f->n_reasons; i++)
                if (f->reasons[i].dev == dev && f->reasons[i].inode == inode)
                        return f->reasons[i].reason;
        return NULL;
}

/* Keeps the resolver's one-line verdict for a mapping nothing matched, so
 * the report says "binary changed since it was mapped" for it. Bounded:
 * past the limit, the generic reason is shown. */
static void pinned_files_add_failure_reason(PinnedFiles *f, uint64_t dev, uint64_t inode, const char *reason) {
        if (!reason || !reason[0] || f->n_reasons >= PINNED_FILES_MAX_FAILURE_REASONS ||
            pinned_files_get_failure_reason(f, dev, inode))
                return;
        PinFailure *a = reallocarray(f->reasons, f->n_reasons + 1, sizeof(PinFailure));
        if (!a)
                return;
        f->reasons = a;
        char *copy = strdup(reason);
        if (!copy)
                return;
        f->reasons[f->n_reasons++] = (PinFailure) { .dev = dev, .inode = inode, .reason = copy };
}

static int pinned_files_insert(PinnedFiles *f, PinnedFile *p) {
        if (f->n_files == f->allocated) {
                size_t n = f->allocated ? f->allocated * 2 : 64;
                PinnedFile **a = reallocarray(f->files, n, sizeof(PinnedFile *));
                if (!a)
                        return -ENOMEM;
                f->files = a;
                f->allocated = n;
        }
        size_t i = pinned_files_bsearch(f, p->dev, p->inode);
        memmove(f->files + i + 1, f->files + i, (f->n_files - i) * sizeof(PinnedFile *));
        f->files[i] = p;
        f->n_files++;
        return 0;
}

static int pinned_files_open(pid_t pid, uint64_t start, uint64_t end, const char *path, uint64_t dev,
                             uint64_t inode, CallerOpener *as_caller, struct stat *st, PinnedFileHow *how,
                             bool *checked) {
        char buf[PATH_MAX + 64];
        bool known = dev != 0 || inode != 0;
        int fd;

        snprintf(buf, sizeof(buf), "/proc/%d/map_files/%llx-%llx", (int) pid, (unsigned long long) start,
                 (unsigned long long) end);
        fd = open_regular(buf, st);
        if (fd >= 0) {
                if (known && !identity_matches(fd, pid, st, dev, inode)) {
                        safe_close(fd);
                        return -ESTALE; /* the mapping was replaced since the record */
                }
                *how = PINNED_VIA_MAP_FILES;
                *checked = true;
                return fd;
        }
        /* A path that was deleted or replaced cannot be opened by name. */
        if (strstr(path, " (deleted)"))
                return -ENOENT;
        if (as_caller) {
                /* A caller other than root: by path only what it may open
                 * itself, in the process's root while it lives, else in
                 * ours, no symbolic links; then the identity, when known.
                 * Never a file of the service's namespace as root. */
                *how = PINNED_VIA_PATH;
                _cleanup_close_ int cfd = caller_opener_open_file(as_caller, pid, path, false);
                if (cfd < 0)
                        return cfd;
                if (fstat(cfd, st) < 0)
                        return -errno;
                if (known && !identity_matches(cfd, pid, st, dev, inode))
                        return -ESTALE;
                *checked = known;
                return TAKE_FD(cfd);
        }
        if (snprintf(buf, sizeof(buf), "/proc/%d/root%s", (int) pid, path) >= (int) sizeof(buf))
                return -ENAMETOOLONG;
        *how = PINNED_VIA_PROC_ROOT;
        fd = open_regular(buf, st);
        if (fd < 0) {
                *how = PINNED_VIA_PATH;
                fd = open_regular(path, st);
        }
        if (fd < 0)
                return fd;
        if (known && !identity_matches(fd, pid, st, dev, inode)) {
                safe_close(fd);
                return -ESTALE;
        }
        *checked = known;
        return fd;
}

int pinned_files_pin_mapping(PinnedFiles *f, pid_t pid, uint64_t start, uint64_t end, const char *path,
                             uint64_t dev, uint64_t inode, PinnedFile **ret) {
        if (!path || path[0] != '/')
                return -ENOENT;
        if (dev != 0 || inode != 0) {
                PinnedFile *p = pinned_files_lookup(f, dev, inode);
                if (p) {
                        *ret = p;
                        return 0;
                }
        }
        if (f->n_files >= f->max_files) {
                f->failures++;
                return -EMFILE;
        }

        /* MMAP2 records with a build-id carry no device/inode: take the
         * kernel's from /proc/PID/maps while the mapping is live, so every
         * candidate below is checked against it. */
        unsigned maj, min;
        uint64_t ino;
        if (dev == 0 && inode == 0 && resolver_identity_from_maps(pid, start, &maj, &min, &ino) >= 0) {
                dev = makedev(maj, min);
                inode = ino;
                PinnedFile *p = pinned_files_lookup(f, dev, inode);
                if (p) {
                        *ret = p;
                        return 0;
                }
        }

        struct stat st;
        PinnedFileHow how;
        bool checked = false;
        _cleanup_free_ char *provenance = NULL;
        CallerOpener *as_caller = f->resolver ? resolver_get_caller_opener(f->resolver) : NULL;
        _cleanup_close_ int fd = pinned_files_open(pid, start, end, path, dev, inode, as_caller, &st, &how, &checked);
        if (fd < 0 && f->resolver && (dev != 0 || inode != 0)) {
                /* Containers, sandboxes, other namespaces: identity-checked. */
                MappingIdentity id = { .dev_major = major(dev), .dev_minor = minor(dev), .inode = inode,
                                       .start = start, .end = end };
                ResolverProvenance prov;
                int rfd = -1;
                int rr = resolver_open_mapping(f->resolver, pid, &id, path, &rfd, &prov);
                if (rr >= 0 && fstat(rfd, &st) >= 0) {
                        fd = rfd;
                        how = PINNED_VIA_RESOLVER;
                        checked = true;
                        if (asprintf(&provenance, "%s: %s", resolver_method_to_string(prov.method), prov.host_path) < 0)
                                provenance = NULL;
                } else {
                        safe_close(rfd);
                        /* "changed since it was mapped" says that some other
                         * file lies at the path, which the resolver looked
                         * at as root: a caller other than root gets the
                         * reason a missing file gets (docs/security.md). */
                        if (rr == -ESTALE && !as_caller)
                                pinned_files_add_failure_reason(f, dev, inode, prov.message);
                }
        }
        if (fd < 0) {
                f->failures++;
                return fd;
        }
        if (dev == 0 && inode == 0) {
                dev = (uint64_t) st.st_dev;
                inode = (uint64_t) st.st_ino;
                PinnedFile *p = pinned_files_lookup(f, dev, inode);
                if (p) {
                        *ret = p;
                        return 0;
                }
        }

        PinnedFile *p = calloc(1, sizeof(PinnedFile));
        if (!p)
                return -ENOMEM;
        p->path = strdup(path);
        if (!p->path) {
                free(p);
                return -ENOMEM;
        }
        p->dev = dev;
        p->inode = inode;
        p->how = how;
        p->identity_checked = checked;
        p->provenance = TAKE_PTR(provenance);
        p->fd = TAKE_FD(fd);
        int r = pinned_files_insert(f, p);
        if (r < 0) {
                pinned_file_free(p);
                return r;
        }
        *ret = p;
        return 0;
}

int pinned_files_pin_vdso(PinnedFiles *f, pid_t pid, uint64_t start, uint64_t end, PinnedFile **ret) {
        _cleanup_free_ uint8_t *image = NULL;
        size_t size = 0;
        int r = vdso_image_read(pid, f->owner, start, end, VDSO_IMAGE_MAX, &image, &size);
        if (r < 0)
                return r;
        for (size_t i = 0; i < f->n_vdsos; i++)
                if (f->vdsos[i].size == size && memcmp(f->vdsos[i].image, image, size) == 0) {
                        *ret = f->vdsos[i].pin;
                        return 0;
                }
        if (f->n_vdsos >= PINNED_FILES_MAX_VDSOS || f->n_files >= f->max_files) {
                f->failures++;
                return -EMFILE;
        }
        VdsoPin *v = reallocarray(f->vdsos, f->n_vdsos + 1, sizeof(VdsoPin));
        if (!v)
                return -ENOMEM;
        f->vdsos = v;
        _cleanup_close_ int fd = vdso_image_memfd(image, size);
        if (fd < 0)
                return fd;
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        PinnedFile *p = calloc(1, sizeof(PinnedFile));
        if (!p)
                return -ENOMEM;
        p->path = strdup("[vdso]");
        if (!p->path) {
                free(p);
                return -ENOMEM;
        }
        p->dev = (uint64_t) st.st_dev;
        p->inode = (uint64_t) st.st_ino;
        p->how = PINNED_VIA_PROCESS_MEMORY;
        p->fd = TAKE_FD(fd);
        r = pinned_files_insert(f, p);
        if (r < 0) {
                pinned_file_free(p);
                return r;
        }
        f->vdsos[f->n_vdsos++] = (VdsoPin) { .image = TAKE_PTR(image), .size = size, .pin = p };
        *ret = p;
        return 0;
}

void pinned_files_set_resolver(PinnedFiles *f, Resolver *res) {
        f->resolver = res;
}

Resolver *pinned_files_get_resolver(const PinnedFiles *f) {
        return f->resolver;
}

size_t pinned_files_get_n(const PinnedFiles *f) {
        return f->n_files;
}

PinnedFile *pinned_files_get(const PinnedFiles *f, size_t i) {
        return i < f->n_files ? f->files[i] : NULL;
}

void pinned_files_forget_failures(PinnedFiles *f, uint64_t n) {
        f->failures -= n < f->failures ? n : f->failures;
}

uint64_t pinned_files_get_failures(const PinnedFiles *f) {
        return f->failures;
}

const char *pinned_file_how_to_string(PinnedFileHow how) {
        switch (how) {
        case PINNED_VIA_MAP_FILES:
                return "map_files";
        case PINNED_VIA_PROC_ROOT:
                return "proc-root";
        case PINNED_VIA_PATH:
                return "path";
        case PINNED_VIA_RESOLVER:
                return "resolver";
        case PINNED_VIA_PROCESS_MEMORY:
                return "process-memory";
        }
        return "unknown";
}
