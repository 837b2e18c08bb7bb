/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* debug-files.c: separate debug file lookup: build-id path, .gnu_debuglink
 * (same dir, .debug/, debug root + dir) with CRC check, debuginfod. */
#include "debug-files.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "basic.h"
#include "debuginfod-fetch.h"

const char *debug_file_kind_to_string(DebugFileKind k) {
        switch (k) {
        case DEBUG_FILE_BUILD_ID: return "build-id";
        case DEBUG_FILE_DEBUGLINK: return "debuglink";
        case DEBUG_FILE_DEBUGINFOD: return "debuginfod";
        default: return "none";
        }
}

void debug_file_clear(DebugFile *f) {
        safe_close(f->fd);
        free(f->path);
        free(f->notes);
        *f = (DebugFile) { .fd = -1 };
}

/* Appends a note ("; "-separated); without memory the note is lost. */
static void add_note(DebugFile *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_note(DebugFile *f, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        why_vappendf(&f->notes, fmt, ap);
        va_end(ap);
}

/* Opens a candidate: a regular file, not the binary itself. */
static int open_candidate(const char *path, const struct stat *self) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADF;
        if (self && st.st_dev == self->st_dev && st.st_ino == self->st_ino)
                return -ELOOP;
        return TAKE_FD(fd);
}

/* As open_candidate(), for a caller other than root: the caller's rights,
 * inside pid's root (0: ours), symbolic links resolved inside it; every
 * failure is -ENOENT. */
static int open_candidate_as_caller(const DebugFileOptions *o, pid_t pid, const char *path, const struct stat *self) {
        _cleanup_close_ int fd = caller_opener_open_file(o->as_caller, pid, path, true);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return -ENOENT;
        if (self && st.st_dev == self->st_dev && st.st_ino == self->st_ino)
                return -ELOOP;
        return TAKE_FD(fd);
}

/* Opens a candidate under the host's debug root (cand is the whole path):
 * as root for root callers; for any other caller with the caller's rights
 * in the service's "/", symbolic links followed as the caller would follow
 * them. Root owning the debug root says nothing of who may read the files
 * in it: a 0600 debug file there, or one in a 0700 directory below it,
 * names root's programs only. */
static int open_under_debug_root(const DebugFileOptions *o, const char *cand, const struct stat *self) {
        if (!o->as_caller)
                return open_candidate(cand, self);
        return open_candidate_as_caller(o, 0, cand, self);
}

static bool same_build_id(const HelperIdentity *a, const HelperIdentity *b) {
        return a->build_id_size > 0 && a->build_id_size == b->build_id_size &&
               memcmp(a->build_id, b->build_id, a->build_id_size) == 0;
}

static void hex(char *out, const uint8_t *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                sprintf(out + 2 * i, "%02x", p[i]);
        out[2 * n] = '\0';
}

/* One lookup: what every candidate is checked against, and where a refusal
 * goes (notes always; the log for candidates from a container's/app's tree). */
typedef struct Lookup {
        HelperClient *c;
        const DebugFileOptions *o;
        const HelperIdentity *id;
        DebugFile *ret;
        const char *source;     /* of the candidates being tried */
        bool log_refusals;
} Lookup;

static void refuse(Lookup *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void refuse(Lookup *l, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        _cleanup_free_ char *msg = strdup_vprintf(fmt, ap);
        va_end(ap);
        if (!msg)
                return;
        add_note(l->ret, "%s%s%s", l->log_refusals ? l->source : "", l->log_refusals ? " " : "", msg);
        _cleanup_free_ char *line = l->log_refusals && l->o->log ? strdup_printf("debug file refused: %s %s", l->source, msg) : NULL;
        if (line)
                l->o->log(l->o->log_userdata, line);
}

static int accept_file(Lookup *l, int *fd, DebugFileKind kind, const char *path) {
        l->ret->path = strdup(path);
        if (!l->ret->path)
                return -ENOMEM;
        l->ret->fd = TAKE_FD(*fd);
        l->ret->kind = kind;
        l->ret->source = l->source;
        return 1;
}

/* Candidate must carry the same build-id. 1 accepted, 0 refused, <0 helper failed. */
/* Identifies a candidate through the helper: 1 with *ret filled, 0 when it
 * is not an ELF file (refused), HELPER_CLIENT_FAILED when the helper failed
 * (noted). */
static int identify_candidate(Lookup *l, const char *cand, int fd, uint32_t flags, HelperIdentity *ret) {
        _cleanup_free_ char *why = NULL;
        int r = helper_client_identify(l->c, fd, flags, ret, &why);
        if (r == HELPER_CLIENT_FAILED) {
                add_note(l->ret, "%s: %s", cand, why ? why : "helper failed");
                return r;
        }
        if (r < 0) {
                refuse(l, "%s: not an ELF file (%s), not used", cand, why ? why : strerror(-r));
                return 0;
        }
        return 1;
}

static int try_build_id_candidate(Lookup *l, const char *cand, int cfd_in, DebugFileKind kind) {
        _cleanup_close_ int cfd = cfd_in;
        HelperIdentity cid;
        int r = identify_candidate(l, cand, cfd, 0, &cid);
        if (r <= 0)
                return r;
        if (!same_build_id(&cid, l->id)) {
                char want[2 * HELPER_MAX_BUILD_ID + 1], got[2 * HELPER_MAX_BUILD_ID + 1];
                hex(want, l->id->build_id, l->id->build_id_size);
                hex(got, cid.build_id, cid.build_id_size);
                refuse(l, "%s: build-id mismatch (file %s, expected %s), not used", cand, got[0] ? got : "none", want);
                return 0;
        }
        return accept_file(l, &cfd, kind, cand);
}

/* Candidate named by .gnu_debuglink: its CRC32 must be the link's (and its
 * build-id, when both have one, the binary's). Same returns. */
static int try_debuglink_candidate(Lookup *l, const char *cand, int cfd_in) {
        _cleanup_close_ int cfd = cfd_in;
        HelperIdentity cid;
        int r = identify_candidate(l, cand, cfd, HELPER_IDENTIFY_WANT_FILE_CRC, &cid);
        if (r <= 0)
                return r;
        if (cid.file_crc != l->id->debuglink_crc) {
                refuse(l, "%s: .gnu_debuglink CRC mismatch (file 0x%08x, expected 0x%08x), not used", cand, cid.file_crc,
                       l->id->debuglink_crc);
                return 0;
        }
        if (l->id->build_id_size > 0 && cid.build_id_size > 0 && !same_build_id(&cid, l->id)) {
                refuse(l, "%s: CRC matches but build-id differs, not used", cand);
                return 0;
        }
        return accept_file(l, &cfd, DEBUG_FILE_DEBUGLINK, cand);
}

static int find_by_build_id(Lookup *l, const char *root) {
        const HelperIdentity *id = l->id;
        if (id->build_id_size < 2)
                return 0;
        char h[2 * HELPER_MAX_BUILD_ID + 1];
        hex(h, id->build_id, id->build_id_size);
        _cleanup_free_ char *cand = NULL;
        if (asprintf(&cand, "%s/.build-id/%.2s/%s.debug", root, h, h + 2) < 0)
                return -ENOMEM;
        int cfd = open_under_debug_root(l->o, cand, NULL);
        if (cfd < 0)
                return 0;
        return try_build_id_candidate(l, cand, cfd, DEBUG_FILE_BUILD_ID);
}

/* The directory part of an absolute path ("" for files in /), into a new string. */
static char *dir_of(const char *path) {
        char *dir = strdup(path);
        if (dir)
                *strrchr(dir, '/') = '\0';
        return dir;
}

static int find_by_debuglink(Lookup *l, const char *root, int fd, const char *path) {
        const HelperIdentity *id = l->id;
        if (!(id->contents & HELPER_HAS_DEBUGLINK) || !path || path[0] != '/')
                return 0;
        struct stat self;
        if (fstat(fd, &self) < 0)
                return -errno;
        _cleanup_free_ char *dir = dir_of(path);
        if (!dir)
                return -ENOMEM;
        /* DIR/LINK, DIR/.debug/LINK, ROOT/DIR/LINK: literal formats, as
         * glibc's _FORTIFY_SOURCE (Debian's package build) aborts on a
         * positional format that leaves an argument out. */
        for (size_t i = 0; i < 3; i++) {
                _cleanup_free_ char *cand = NULL;
                int k = i == 0   ? asprintf(&cand, "%s/%s", dir, id->debuglink)
                        : i == 1 ? asprintf(&cand, "%s/.debug/%s", dir, id->debuglink)
                                 : asprintf(&cand, "%s%s/%s", root, dir, id->debuglink);
                if (k < 0)
                        return -ENOMEM;
                /* beside the binary: where its owner writes; under the debug root */
                int cfd = i == 2            ? open_under_debug_root(l->o, cand, &self)
                          : l->o->as_caller ? open_candidate_as_caller(l->o, l->o->pid, cand, &self)
                                            : open_candidate(cand, &self);
                if (cfd < 0)
                        continue;
                int r = try_debuglink_candidate(l, cand, cfd);
                if (r != 0)
                        return r;
        }
        return 0;
}

/* ---- trees of containers and apps ------------------------------------- */

/* Opens one candidate path in a tree: refusals (a link out of the tree, a
 * non-regular or oversized file) are reported; absence is not. The binary
 * itself is never its own debug file. */
static int open_in_tree(Lookup *l, const DebugFileTree *t, const char *path, const struct stat *self, char *shown,
                        size_t shown_size) {
        _cleanup_free_ char *why = NULL;
        int cfd = t->open(t->userdata, path, shown, shown_size, &why);
        /* absent; ENXIO/ENODEV: an overlay whiteout (a 0:0 character device
         * in an upper layer) says the file was deleted */
        if (cfd == -ENOENT || cfd == -ENOTDIR || cfd == -ESRCH || cfd == -ENXIO || cfd == -ENODEV)
                return -ENOENT;
        if (cfd < 0) {
                refuse(l, "%s: %s, not used", shown, why ? why : strerror(-cfd));
                return cfd;
        }
        struct stat st;
        if (fstat(cfd, &st) < 0 || !S_ISREG(st.st_mode)) {
                refuse(l, "%s: not a regular file, not used", shown);
                close(cfd);
                return -EBADF;
        }
        if ((uint64_t) st.st_size > DEBUG_FILE_TREE_MAX_BYTES) {
                refuse(l, "%s: %ju bytes, more than the %llu accepted from a container, not used", shown,
                       (uintmax_t) st.st_size, (unsigned long long) DEBUG_FILE_TREE_MAX_BYTES);
                close(cfd);
                return -EFBIG;
        }
        if (self && st.st_dev == self->st_dev && st.st_ino == self->st_ino) {
                close(cfd);
                return -ELOOP;
        }
        return cfd;
}

static int find_in_tree(Lookup *l, const DebugFileTree *t, int fd, const char *binary_path) {
        const HelperIdentity *id = l->id;
        struct stat self;
        if (fstat(fd, &self) < 0)
                return -errno;
        char h[2 * HELPER_MAX_BUILD_ID + 1], shown[4096];
        hex(h, id->build_id, id->build_id_size);
        l->source = t->source;
        l->log_refusals = true;
        for (size_t i = 0; id->build_id_size >= 2 && i < DEBUG_FILE_TREE_MAX_DIRS && t->debug_dirs[i]; i++) {
                _cleanup_free_ char *cand = NULL;
                const char *d = t->debug_dirs[i];
                if (asprintf(&cand, "%s/.build-id/%.2s/%s.debug", strcmp(d, "/") ? d : "", h, h + 2) < 0)
                        return -ENOMEM;
                int cfd = open_in_tree(l, t, cand, &self, shown, sizeof(shown));
                if (cfd < 0)
                        continue;
                int r = try_build_id_candidate(l, shown, cfd, DEBUG_FILE_BUILD_ID);
                if (r != 0)
                        return r;
        }
        if (!(id->contents & HELPER_HAS_DEBUGLINK) || !binary_path || binary_path[0] != '/')
                return 0;
        _cleanup_free_ char *dir = dir_of(binary_path);
        if (!dir)
                return -ENOMEM;
        for (size_t i = 0; i < 2 + DEBUG_FILE_TREE_MAX_DIRS; i++) {
                _cleanup_free_ char *cand = NULL;
                int k;
                if (i < 2 && !t->holds_binary)
                        continue;
                if (i >= 2 && !t->debug_dirs[i - 2])
                        break;
                if (i == 0)
                        k = asprintf(&cand, "%s/%s", dir, id->debuglink);
                else if (i == 1)
                        k = asprintf(&cand, "%s/.debug/%s", dir, id->debuglink);
                else
                        k = asprintf(&cand, "%s%s/%s", strcmp(t->debug_dirs[i - 2], "/") ? t->debug_dirs[i - 2] : "", dir,
                                     id->debuglink);
                if (k < 0)
                        return -ENOMEM;
                int cfd = open_in_tree(l, t, cand, &self, shown, sizeof(shown));
                if (cfd < 0)
                        continue;
                int r = try_debuglink_candidate(l, shown, cfd);
                if (r != 0)
                        return r;
        }
        return 0;
}

static int find_by_debuginfod(Lookup *l) {
        const DebugFileOptions *o = l->o;
        const HelperIdentity *id = l->id;
        DebugFile *ret = l->ret;
        if (id->build_id_size == 0)
                return 0;
        const char *urls = getenv("DEBUGINFOD_URLS");
        if (!urls || !*urls) {
                add_note(ret, "debuginfod: $DEBUGINFOD_URLS is not set, not asked");
                return 0;
        }
        _cleanup_free_ char *why = NULL;
        const HelperClientConfig *hc = helper_client_get_config(l->c);
        DebuginfodWait wait = {
                .wait_readable = o->wait_readable,
                .userdata = o->wait_readable_userdata,
                /* the fetcher's stderr goes where the helper's goes */
                .stderr_sink = hc->stderr_sink,
                .stderr_sink_userdata = hc->stderr_sink_userdata,
                .owner = hc->owner,
        };
        int dfd = debuginfod_fetch(urls, id->build_id, id->build_id_size,
                                   o->debuginfod_timeout_s ? o->debuginfod_timeout_s : 30, &wait, &why);
        if (dfd < 0) {
                add_note(ret, "debuginfod (%s): %s", urls, why ? why : strerror(-dfd));
                return 0;
        }
        l->source = "debuginfod";
        l->log_refusals = false;
        return try_build_id_candidate(l, "debuginfod", dfd, DEBUG_FILE_DEBUGINFOD);
}

int debug_file_find_in_trees(HelperClient *c, const DebugFileOptions *o, int fd, const char *path,
                             const HelperIdentity *id, const DebugFileTree *trees, size_t n_trees,
                             const char *binary_path, DebugFile *ret) {
        DebugFileOptions defaults = {};
        if (!o)
                o = &defaults;
        const char *root = o->debug_root ? o->debug_root : "/usr/lib/debug";
        *ret = (DebugFile) { .fd = -1 };
        Lookup l = { .c = c, .o = o, .id = id, .ret = ret };
        int r = 0;
        for (size_t i = 0; i < n_trees && r == 0; i++)
                r = find_in_tree(&l, &trees[i], fd, binary_path);
        l.source = "host";
        l.log_refusals = false;
        if (r == 0)
                r = find_by_build_id(&l, root);
        if (r == 0)
                r = find_by_debuglink(&l, root, fd, path);
        if (r == 0 && o->debuginfod)
                r = find_by_debuginfod(&l);
        return r < 0 ? r : 0;
}

int debug_file_find(HelperClient *c, const DebugFileOptions *o, int fd, const char *path,
                    const HelperIdentity *id, DebugFile *ret) {
        return debug_file_find_in_trees(c, o, fd, path, id, NULL, 0, NULL, ret);
}
