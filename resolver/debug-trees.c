/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* debug-trees.c: where a container's or app's debug files may live, and
 * confined opens inside those trees (see debug-trees.h). */
#include "debug-trees.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic.h"
#include "tree-open.h"

#define FLATPAK_SYSTEM_INSTALLATION "/var/lib/flatpak"
#define FLATPAK_USER_INSTALLATION ".local/share/flatpak"
#define FLATPAK_NAME_MAX 255

/* ---- Flatpak installations ------------------------------------------- */

static bool valid_ref_part(const char *s, size_t n) {
        if (n == 0 || n > FLATPAK_NAME_MAX || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '_' || c == '-'))
                        return false;
        }
        return true;
}

int flatpak_ref_split(const char *ref, char id[256], char arch[256], char branch[256]) {
        if (!ref)
                return -EINVAL;
        if (strncmp(ref, "runtime/", 8) == 0)
                ref += 8;
        else if (strncmp(ref, "app/", 4) == 0)
                ref += 4;
        char *parts[3] = { id, arch, branch };
        for (size_t i = 0; i < 3; i++) {
                const char *e = strchrnul(ref, '/');
                size_t n = (size_t) (e - ref);
                if (!valid_ref_part(ref, n) || (i < 2 && *e != '/') || (i == 2 && *e != 0))
                        return -EINVAL;
                memcpy(parts[i], ref, n);
                parts[i][n] = 0;
                ref = *e ? e + 1 : e;
        }
        return 0;
}

/* The extension's files dir beneath one installation directory. */
static int extension_in_installation(int inst, const char *inst_path, const char *id, const char *arch,
                                     const char *branch, char *shown, size_t shown_size) {
        char rel[3 * (FLATPAK_NAME_MAX + 1) + 16], target[FLATPAK_NAME_MAX + 2];
        snprintf(rel, sizeof(rel), "runtime/%s/%s/%s", id, arch, branch);
        _cleanup_close_ int dir = safe_open_beneath(inst, rel, O_PATH | O_DIRECTORY, false);
        if (dir < 0)
                return dir;
        /* "active" is a symlink to the deployed commit's directory beside it. */
        ssize_t n = readlinkat(dir, "active", target, sizeof(target) - 1);
        if (n < 0)
                return -errno;
        target[n] = 0;
        if (!valid_ref_part(target, (size_t) n))
                return -EXDEV;
        char files[FLATPAK_NAME_MAX + 16];
        snprintf(files, sizeof(files), "%s/files", target);
        int fd = safe_open_beneath(dir, files, O_PATH | O_DIRECTORY, true);
        if (fd >= 0)
                snprintf(shown, shown_size, "%s/%s/%s", inst_path, rel, files);
        return fd;
}

int flatpak_extension_open(const char *id, const char *arch, const char *branch, uid_t uid, char *shown, size_t shown_size) {
        if (!valid_ref_part(id, strlen(id)) || !valid_ref_part(arch, strlen(arch)) || !valid_ref_part(branch, strlen(branch)))
                return -EINVAL;
        _cleanup_close_ int sys = open(FLATPAK_SYSTEM_INSTALLATION, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (sys >= 0) {
                int fd = extension_in_installation(sys, FLATPAK_SYSTEM_INSTALLATION, id, arch, branch, shown, shown_size);
                if (fd >= 0)
                        return fd;
        }
        /* The owner's per-user installation, opened beneath its home. */
        char home_path[1024];
        _cleanup_close_ int home = open_home_dir(uid, home_path, sizeof(home_path));
        if (home < 0)
                return -ENOENT;
        _cleanup_close_ int inst = safe_open_beneath(home, FLATPAK_USER_INSTALLATION, O_PATH | O_DIRECTORY, false);
        struct stat st;
        if (inst < 0 || fstat(inst, &st) < 0 || st.st_uid != uid)
                return -ENOENT;
        char inst_path[PATH_MAX];
        snprintf(inst_path, sizeof(inst_path), "%s/%s", home_path, FLATPAK_USER_INSTALLATION);
        int fd = extension_in_installation(inst, inst_path, id, arch, branch, shown, shown_size);
        return fd == -ENOTDIR || fd == -ELOOP ? -ENOENT : fd;
}

/* arch and branch of the app from its app-path ".../app/ID/ARCH/BRANCH/COMMIT/files". */
static int app_arch_branch(const ContainerInfo *info, char arch[256], char branch[256]) {
        char copy[CONTAINER_FIELD_MAX], *comp[6];
        snprintf(copy, sizeof(copy), "%s", info->app_path);
        size_t n = 0;
        for (char *s = strrchr(copy, '/'); s && n < 6; s = strrchr(copy, '/')) {
                comp[n++] = s + 1;
                *s = 0;
        }
        /* comp: files, COMMIT, BRANCH, ARCH, ID, "app" */
        if (n < 6 || strcmp(comp[0], "files") != 0 || strcmp(comp[4], info->name) != 0 || strcmp(comp[5], "app") != 0 ||
            !valid_ref_part(comp[3], strlen(comp[3])) || !valid_ref_part(comp[2], strlen(comp[2])))
                return -EINVAL;
        snprintf(arch, 256, "%s", comp[3]);
        snprintf(branch, 256, "%s", comp[2]);
        return 0;
}

/* Opens the .Debug extension of the app or the runtime of a Flatpak process. */
static int open_flatpak_debug(const ContainerInfo *info, DebugTree t, char *shown, size_t shown_size) {
        char id[256], arch[256], branch[256], ext[FLATPAK_NAME_MAX + 1];
        if (info->engine != CONTAINER_ENGINE_FLATPAK)
                return -ENOENT;
        if (t == DEBUG_TREE_FLATPAK_RUNTIME_DEBUG) {
                if (flatpak_ref_split(info->runtime, id, arch, branch) < 0)
                        return -EINVAL;
        } else {
                if (!valid_ref_part(info->name, strlen(info->name)) || app_arch_branch(info, arch, branch) < 0)
                        return -EINVAL;
                snprintf(id, sizeof(id), "%s", info->name);
        }
        if ((size_t) snprintf(ext, sizeof(ext), "%s.Debug", id) >= sizeof(ext))
                return -EINVAL;
        return flatpak_extension_open(ext, arch, branch, info->owner_uid, shown, shown_size);
}

/* ---- trees ----------------------------------------------------------- */

/* The directory root opened at host_path (dir), opened again by that path
 * from the service's "/" with the caller's rights: every directory above it
 * is then searched as the caller, not only those below it. The same
 * directory or -ENOENT. */
static int reopen_as_caller(CallerOpener *as_caller, int dir, const char *host_path) {
        _cleanup_close_ int mine =
                caller_opener_openat2(as_caller, -1, host_path, O_PATH | O_DIRECTORY, RESOLVE_NO_MAGICLINKS);
        struct stat a, b;
        if (mine < 0 || fstat(mine, &a) < 0 || fstat(dir, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
                return -ENOENT;
        return TAKE_FD(mine);
}

size_t debug_trees_list(Resolver *res, pid_t pid, DebugTree *ret, size_t max) {
        const ContainerInfo *info = resolver_get_container(res, pid);
        size_t n = 0;
        if (!info || info->engine == CONTAINER_ENGINE_NONE || max == 0)
                return 0;
        ret[n++] = DEBUG_TREE_ROOT;
        for (DebugTree t = DEBUG_TREE_FLATPAK_APP_DEBUG; t <= DEBUG_TREE_FLATPAK_RUNTIME_DEBUG && n < max; t++) {
                char shown[PATH_MAX];
                int fd = open_flatpak_debug(info, t, shown, sizeof(shown));
                if (fd >= 0)
                        ret[n++] = t;
                safe_close(fd);
        }
        return n;
}

const char *debug_tree_to_string(Resolver *res, pid_t pid, DebugTree t) {
        switch (t) {
        case DEBUG_TREE_ROOT: {
                const ContainerInfo *info = resolver_get_container(res, pid);
                return info && info->engine == CONTAINER_ENGINE_FLATPAK ? "flatpak" : "container";
        }
        case DEBUG_TREE_FLATPAK_APP_DEBUG:
                return "flatpak-app-debug";
        case DEBUG_TREE_FLATPAK_RUNTIME_DEBUG:
                return "flatpak-runtime-debug";
        default:
                return "unknown";
        }
}

const char *debug_tree_debug_dir(Resolver *res, pid_t pid, DebugTree t, size_t i) {
        if (t != DEBUG_TREE_ROOT)
                return i == 0 ? "/" : NULL;
        if (i == 0)
                return "/usr/lib/debug";
        const ContainerInfo *info = resolver_get_container(res, pid);
        return i == 1 && info && info->engine == CONTAINER_ENGINE_FLATPAK ? "/app/lib/debug" : NULL;
}

typedef enum TreeKind {
        TREE_DIR,       /* one directory is the tree's root */
        TREE_PODMAN,    /* the layer chain, top first */
        TREE_FLATPAK,   /* /app → app-path, /usr → runtime-path */
} TreeKind;

typedef struct TreeContext {
        TreeKind kind;
        int dirfd;                      /* TREE_DIR */
        const char *base;               /* TREE_DIR: host path of dirfd */
        PodmanStorage *storage;         /* TREE_PODMAN */
        const PodmanContainer *container;
        int app_fd, runtime_fd;         /* TREE_FLATPAK; -1 when unusable */
        const ContainerInfo *info;
        CallerOpener *as_caller; /* TREE_DIR, TREE_FLATPAK: open with the caller's rights; NULL: as root */
} TreeContext;

static int tree_open_nofollow(void *userdata, const char *path, int flags, char *shown, size_t shown_size) {
        TreeContext *c = userdata;
        switch (c->kind) {
        case TREE_DIR:
                if (shown)
                        snprintf(shown, shown_size, "%s%s", strcmp(c->base, "/") ? c->base : "", path);
                if (c->as_caller)
                        return caller_opener_openat2(c->as_caller, c->dirfd, path,
                                                     flags | O_NOFOLLOW | (flags & O_PATH ? 0 : O_NONBLOCK),
                                                     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
                return safe_open_beneath(c->dirfd, path, flags, false);
        case TREE_PODMAN:
                for (size_t i = 0; i < c->container->n_layers; i++) {
                        char host[PATH_MAX];
                        int fd = podman_storage_open_in_layer(c->storage, c->container->layers[i], path, flags, host, sizeof(host));
                        if (shown)
                                snprintf(shown, shown_size, "%s", host);
                        if (fd != -ENOENT)
                                return fd;
                }
                return -ENOENT;
        case TREE_FLATPAK: {
                int dir = -1;
                const char *rest = NULL, *base = NULL;
                if (strcmp(path, "/app") == 0 || strncmp(path, "/app/", 5) == 0)
                        dir = c->app_fd, base = c->info->app_path, rest = path + 4;
                else if (strcmp(path, "/usr") == 0 || strncmp(path, "/usr/", 5) == 0)
                        dir = c->runtime_fd, base = c->info->runtime_path, rest = path + 4;
                else if (strcmp(path, "/") == 0)
                        return -ENOENT;
                if (!base)
                        return -ENOENT;
                if (dir < 0)
                        return dir == -EPERM ? dir : -ENOENT;
                if (shown)
                        snprintf(shown, shown_size, "%s%s", base, rest);
                if (c->as_caller)
                        return caller_opener_openat2(c->as_caller, dir, *rest ? rest : ".",
                                                     flags | O_NOFOLLOW | (flags & O_PATH ? 0 : O_NONBLOCK),
                                                     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
                return safe_open_beneath(dir, *rest ? rest : ".", flags, false);
        }
        }
        return -EINVAL;
}

/* Opens a Flatpak app-path/runtime-path from /.flatpak-info (written inside
 * the sandbox, so a hint only) when it lies in a Flatpak installation: the
 * system one or the owner's per-user one, under KIND/ ("app", "runtime").
 * Anything else is not opened: root must not read debug files from paths a
 * sandboxed process names. */
static int open_deployment(const char *path, const char *kind, uid_t owner, CallerOpener *as_caller) {
        char norm[PATH_MAX], prefix[PATH_MAX];
        if (path[0] != '/' || tree_path_normalize(path, norm, sizeof(norm)) < 0)
                return -EPERM;
        snprintf(prefix, sizeof(prefix), "%s/%s/", FLATPAK_SYSTEM_INSTALLATION, kind);
        bool inside = strncmp(norm, prefix, strlen(prefix)) == 0;
        if (!inside) {
                struct passwd pw, *res = NULL;
                char buf[4096];
                if (getpwuid_r(owner, &pw, buf, sizeof(buf), &res) == 0 && res && pw.pw_dir && pw.pw_dir[0] == '/' &&
                    (size_t) snprintf(prefix, sizeof(prefix), "%s/%s/%s/", strcmp(pw.pw_dir, "/") ? pw.pw_dir : "",
                                      FLATPAK_USER_INSTALLATION, kind) < sizeof(prefix))
                        inside = strncmp(norm, prefix, strlen(prefix)) == 0;
        }
        if (!inside)
                return -EPERM;
        _cleanup_close_ int slash = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (slash < 0)
                return -errno;
        _cleanup_close_ int dir = safe_open_beneath(slash, norm, O_PATH | O_DIRECTORY, false);
        if (dir < 0 || !as_caller)
                return TAKE_FD(dir);
        return reopen_as_caller(as_caller, dir, norm);
}

/* /proc/PID/root while the process lives and still has the container's
 * root (a reused pid of a host process would show our own "/"); opened
 * with the caller's rights when as_caller is set. */
static int open_live_root(pid_t pid, CallerOpener *as_caller) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/root", (int) pid);
        _cleanup_close_ int fd = as_caller ? caller_opener_openat2(as_caller, -1, path, O_PATH | O_DIRECTORY, 0)
                                           : open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return as_caller ? fd : -errno;
        struct stat a, b;
        if (fstat(fd, &a) < 0 || stat("/", &b) < 0)
                return -errno;
        if (a.st_dev == b.st_dev && a.st_ino == b.st_ino)
                return -ESRCH;
        return TAKE_FD(fd);
}

static int open_in(TreeContext *c, const char *path, char *shown, size_t shown_size, char **ret_why) {
        return tree_open_following(tree_open_nofollow, c, path, shown, shown_size, ret_why);
}

int debug_trees_open(Resolver *res, pid_t pid, DebugTree t, const char *path, char *shown, size_t shown_size,
                     char **ret_why) {
        const ContainerInfo *info = resolver_get_container(res, pid);
        if (ret_why) {
                free(*ret_why);
                *ret_why = NULL;
        }
        snprintf(shown, shown_size, "%s", path);
        if (!info || info->engine == CONTAINER_ENGINE_NONE)
                return -ENOENT;
        char base[PATH_MAX];
        /* A caller other than root reads a tree as root only where root or
         * the caller owns it: the system's Flatpak installation, the
         * caller's own store or installation; the live root with its own
         * rights. */
        CallerOpener *as_caller = resolver_get_caller_opener(res);
        bool callers_own = !as_caller || caller_opener_uid(as_caller) == info->owner_uid;
        if (t != DEBUG_TREE_ROOT) {
                _cleanup_close_ int dir = open_flatpak_debug(info, t, base, sizeof(base));
                if (dir < 0)
                        return dir;
                if (!callers_own && strncmp(base, FLATPAK_SYSTEM_INSTALLATION "/", strlen(FLATPAK_SYSTEM_INSTALLATION) + 1) != 0)
                        return -ENOENT;
                /* root found it; a caller other than root reads it only as
                 * far as its own rights reach, from the host's "/" down */
                if (as_caller) {
                        int mine = reopen_as_caller(as_caller, dir, base);
                        if (mine < 0)
                                return mine;
                        safe_close(dir);
                        dir = mine;
                }
                TreeContext c = { .kind = TREE_DIR, .dirfd = dir, .base = base, .as_caller = as_caller };
                int fd = open_in(&c, path, shown, shown_size, ret_why);
                return as_caller && fd < 0 && fd != -EXDEV && fd != -ELOOP ? -ENOENT : fd;
        }
        /* The live root first: it is exactly what the process sees. */
        _cleanup_close_ int root = open_live_root(pid, as_caller);
        if (root >= 0) {
                snprintf(base, sizeof(base), "/proc/%d/root", (int) pid);
                TreeContext c = { .kind = TREE_DIR, .dirfd = root, .base = base, .as_caller = as_caller };
                int fd = open_in(&c, path, shown, shown_size, ret_why);
                if (as_caller && fd < 0 && fd != -EXDEV && fd != -ELOOP)
                        fd = -ENOENT; /* nothing said about what the caller may not see */
                if (fd != -EACCES && fd != -EPERM && (!as_caller || fd != -ENOENT))
                        return fd;
        }
        if (!callers_own)
                return -ENOENT;
        PodmanStorage *storage;
        const PodmanContainer *container;
        if (info->engine == CONTAINER_ENGINE_PODMAN && resolver_get_podman(res, pid, &storage, &container) >= 0) {
                TreeContext c = { .kind = TREE_PODMAN, .storage = storage, .container = container };
                return open_in(&c, path, shown, shown_size, ret_why);
        }
        if (info->engine == CONTAINER_ENGINE_FLATPAK) {
                _cleanup_close_ int app = open_deployment(info->app_path, "app", info->owner_uid, as_caller);
                _cleanup_close_ int runtime =
                        open_deployment(info->runtime_path, "runtime", info->owner_uid, as_caller);
                TreeContext c = {
                        .kind = TREE_FLATPAK, .app_fd = app, .runtime_fd = runtime, .info = info, .as_caller = as_caller
                };
                int fd = open_in(&c, path, shown, shown_size, ret_why);
                if (fd == -EPERM)
                        why_setf(ret_why, fd,
                                 "app-path/runtime-path of /.flatpak-info is outside the Flatpak installations, not "
                                 "opened");
                return fd;
        }
        return -ENOENT;
}
