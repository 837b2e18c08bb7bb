/* debug-files.c: separate debug file lookup: build-id path, .gnu_debuglink
 * (same dir, .debug/, debug root + dir) with CRC check, debuginfod. */
#include "debug-files.h"

#include <elfutils/debuginfod.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"

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

static void add_note(DebugFile *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_note(DebugFile *f, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        char *msg = NULL;
        if (vasprintf(&msg, fmt, ap) < 0)
                msg = NULL;
        va_end(ap);
        if (!msg)
                return;
        char *joined = NULL;
        if (f->notes) {
                if (asprintf(&joined, "%s; %s", f->notes, msg) < 0)
                        joined = NULL;
                free(msg);
        } else
                joined = msg;
        if (joined) {
                free(f->notes);
                f->notes = joined;
        }
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

static bool same_build_id(const HelperIdentity *a, const HelperIdentity *b) {
        return a->build_id_size > 0 && a->build_id_size == b->build_id_size &&
               memcmp(a->build_id, b->build_id, a->build_id_size) == 0;
}

static void hex(char *out, const uint8_t *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                sprintf(out + 2 * i, "%02x", p[i]);
        out[2 * n] = '\0';
}

static int accept_file(DebugFile *ret, int *fd, DebugFileKind kind, const char *path) {
        ret->path = strdup(path);
        if (!ret->path)
                return -ENOMEM;
        ret->fd = TAKE_FD(*fd);
        ret->kind = kind;
        return 1;
}

/* Candidate must carry the same build-id. 1 accepted, 0 refused, <0 helper failed. */
static int try_build_id_candidate(HelperClient *c, const char *cand, int cfd_in, DebugFileKind kind,
                                  const HelperIdentity *id, DebugFile *ret) {
        _cleanup_close_ int cfd = cfd_in;
        HelperIdentity cid;
        _cleanup_free_ char *why = NULL;
        int r = helper_client_identify(c, cfd, 0, &cid, &why);
        if (r == HELPER_CLIENT_FAILED) {
                add_note(ret, "%s: %s", cand, why ? why : "helper failed");
                return r;
        }
        if (r < 0) {
                add_note(ret, "%s: not an ELF file (%s), not used", cand, why ? why : strerror(-r));
                return 0;
        }
        if (!same_build_id(&cid, id)) {
                char want[2 * HELPER_MAX_BUILD_ID + 1], got[2 * HELPER_MAX_BUILD_ID + 1];
                hex(want, id->build_id, id->build_id_size);
                hex(got, cid.build_id, cid.build_id_size);
                add_note(ret, "%s: build-id mismatch (file %s, expected %s), not used", cand, got[0] ? got : "none", want);
                return 0;
        }
        return accept_file(ret, &cfd, kind, cand);
}

static int find_by_build_id(HelperClient *c, const char *root, const HelperIdentity *id, DebugFile *ret) {
        if (id->build_id_size < 2)
                return 0;
        char h[2 * HELPER_MAX_BUILD_ID + 1];
        hex(h, id->build_id, id->build_id_size);
        _cleanup_free_ char *cand = NULL;
        if (asprintf(&cand, "%s/.build-id/%.2s/%s.debug", root, h, h + 2) < 0)
                return -ENOMEM;
        int cfd = open_candidate(cand, NULL);
        if (cfd < 0)
                return 0;
        return try_build_id_candidate(c, cand, cfd, DEBUG_FILE_BUILD_ID, id, ret);
}

static int find_by_debuglink(HelperClient *c, const char *root, int fd, const char *path,
                             const HelperIdentity *id, DebugFile *ret) {
        if (!(id->contents & HELPER_HAS_DEBUGLINK) || !path || path[0] != '/')
                return 0;
        struct stat self;
        if (fstat(fd, &self) < 0)
                return -errno;
        _cleanup_free_ char *dir = strdup(path);
        if (!dir)
                return -ENOMEM;
        *strrchr(dir, '/') = '\0'; /* "" for files in / */
        const char *fmts[] = { "%2$s/%3$s", "%2$s/.debug/%3$s", "%1$s%2$s/%3$s" };
        for (size_t i = 0; i < ELEMENTSOF(fmts); i++) {
                _cleanup_free_ char *cand = NULL;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
                if (asprintf(&cand, fmts[i], root, dir, id->debuglink) < 0)
                        return -ENOMEM;
#pragma GCC diagnostic pop
                _cleanup_close_ int cfd = open_candidate(cand, &self);
                if (cfd < 0)
                        continue;
                HelperIdentity cid;
                _cleanup_free_ char *why = NULL;
                int r = helper_client_identify(c, cfd, HELPER_IDENTIFY_WANT_FILE_CRC, &cid, &why);
                if (r == HELPER_CLIENT_FAILED) {
                        add_note(ret, "%s: %s", cand, why ? why : "helper failed");
                        return r;
                }
                if (r < 0) {
                        add_note(ret, "%s: not an ELF file (%s), not used", cand, why ? why : strerror(-r));
                        continue;
                }
                if (cid.file_crc != id->debuglink_crc) {
                        add_note(ret, "%s: .gnu_debuglink CRC mismatch (file 0x%08x, expected 0x%08x), not used",
                                 cand, cid.file_crc, id->debuglink_crc);
                        continue;
                }
                if (id->build_id_size > 0 && cid.build_id_size > 0 && !same_build_id(&cid, id)) {
                        add_note(ret, "%s: CRC matches but build-id differs, not used", cand);
                        continue;
                }
                return accept_file(ret, &cfd, DEBUG_FILE_DEBUGLINK, cand);
        }
        return 0;
}

typedef struct DebuginfodDeadline {
        time_t deadline;
} DebuginfodDeadline;

/* Aborts downloads past the deadline (libdebuginfod's own default is 90 s). */
static int debuginfod_progress(debuginfod_client *client, long a, long b) {
        DebuginfodDeadline *d = debuginfod_get_user_data(client);
        return d && time(NULL) > d->deadline ? 1 : 0;
}

static int find_by_debuginfod(HelperClient *c, const DebugFileOptions *o, const HelperIdentity *id, DebugFile *ret) {
        if (id->build_id_size == 0)
                return 0;
        const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);
        if (!urls || !*urls) {
                add_note(ret, "debuginfod: $DEBUGINFOD_URLS is not set, not asked");
                return 0;
        }
        debuginfod_client *dc = debuginfod_begin();
        if (!dc) {
                add_note(ret, "debuginfod: cannot start a client");
                return 0;
        }
        DebuginfodDeadline d = { time(NULL) + (o->debuginfod_timeout_s ? o->debuginfod_timeout_s : 30) };
        debuginfod_set_user_data(dc, &d);
        debuginfod_set_progressfn(dc, debuginfod_progress);
        char *cache_path = NULL;
        int dfd = debuginfod_find_debuginfo(dc, id->build_id, (int) id->build_id_size, &cache_path);
        debuginfod_end(dc);
        _cleanup_free_ char *cp = cache_path;
        if (dfd < 0) {
                add_note(ret, "debuginfod (%s): %s", urls, strerror(-dfd));
                return 0;
        }
        return try_build_id_candidate(c, cp ? cp : "debuginfod", dfd, DEBUG_FILE_DEBUGINFOD, id, ret);
}

int debug_file_find(HelperClient *c, const DebugFileOptions *o, int fd, const char *path,
                    const HelperIdentity *id, DebugFile *ret) {
        DebugFileOptions defaults = {};
        if (!o)
                o = &defaults;
        const char *root = o->debug_root ? o->debug_root : "/usr/lib/debug";
        *ret = (DebugFile) { .fd = -1 };
        int r = find_by_build_id(c, root, id, ret);
        if (r == 0)
                r = find_by_debuglink(c, root, fd, path, id, ret);
        if (r == 0 && o->debuginfod)
                r = find_by_debuginfod(c, o, id, ret);
        return r < 0 ? r : 0;
}
