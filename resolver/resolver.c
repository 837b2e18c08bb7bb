/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* resolver.c: mapping → identity-checked host file (see resolver.h). */
#include "resolver.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "basic.h"
#include "mountinfo.h"
#include "podman-storage.h"

#define MAPS_MAX_BYTES (64u * 1024 * 1024)
#define DELETED_SUFFIX " (deleted)"

typedef struct Pin {
        unsigned dev_major, dev_minor;
        uint64_t inode;
        int fd;
} Pin;

typedef struct RememberedProcess {
        pid_t pid;
        MountTable *mounts;            /* NULL when unreadable */
        ContainerInfo info;
        PodmanContainer *podman;       /* NULL unless a Podman container with readable storage */
        PodmanStorage *storage;        /* borrowed from Resolver.storages */
        bool described;                /* resolver_first_description() was true once */
} RememberedProcess;

typedef struct StorageEntry {
        uid_t uid;
        PodmanStorage *storage;        /* NULL: none / rejected (cached negative) */
} StorageEntry;

/* A container found in a store: its layers do not change, so every later
 * process of it is described without asking the helper again (each ask is
 * three round trips while the event loop waits). Not found is not kept:
 * the container may be created later. */
typedef struct KnownContainer {
        uid_t uid;
        PodmanContainer container;
} KnownContainer;

struct Resolver {
        Pin *pins;
        size_t n_pins;
        RememberedProcess **procs;
        size_t n_procs;
        StorageEntry *storages;
        size_t n_storages;
        KnownContainer *known;
        size_t n_known;
        MountTable *host_mounts;
        unsigned methods;
        ResolverBuildIdFunc build_id_func;
        void *build_id_userdata;
        ResolverPinLookupFunc pin_lookup;
        void *pin_userdata;
        ResolverLogFunc log_func;
        void *log_userdata;
        void (*yield_func)(void *userdata);
        void *yield_userdata;
        UserFileParser parser;        /* the helper for users' files, started on first use */
        bool helper_tried;
        bool helper_borrowed;         /* parser.helper is the owner's (resolver_set_user_file_helper) */
        CallerOpener *as_caller;      /* borrowed; NULL: the caller is root */
};

static const char *const method_names[_RESOLVER_METHOD_MAX] = {
        [RESOLVER_METHOD_NONE] = "none",
        [RESOLVER_METHOD_PINNED] = "pinned",
        [RESOLVER_METHOD_MAP_FILES] = "map-files",
        [RESOLVER_METHOD_PROC_ROOT] = "proc-root",
        [RESOLVER_METHOD_MOUNT] = "mount",
        [RESOLVER_METHOD_PODMAN] = "podman",
        [RESOLVER_METHOD_FLATPAK] = "flatpak",
};

const char *resolver_method_to_string(ResolverMethod m) {
        return m >= 0 && m < _RESOLVER_METHOD_MAX ? method_names[m] : "unknown";
}

const char *resolver_verdict_to_string(ResolverVerdict v) {
        switch (v) {
        case RESOLVER_VERDICT_MATCH:
                return "match";
        case RESOLVER_VERDICT_MATCH_ALIAS:
                return "match-alias";
        case RESOLVER_VERDICT_CHANGED:
                return "changed";
        default:
                return "not-found";
        }
}

int resolver_methods_from_string(const char *s, unsigned *ret_mask) {
        unsigned mask = 0;
        const char *p = s;
        while (*p) {
                const char *e = strchr(p, ',');
                size_t len = e ? (size_t) (e - p) : strlen(p);
                bool found = false;
                for (int m = RESOLVER_METHOD_PINNED; m < _RESOLVER_METHOD_MAX; m++)
                        if (strlen(method_names[m]) == len && strncmp(method_names[m], p, len) == 0) {
                                mask |= 1u << m;
                                found = true;
                        }
                if (!found)
                        return -EINVAL;
                p = e ? e + 1 : p + len;
        }
        *ret_mask = mask;
        return 0;
}

static void no_log(void *userdata, const char *message) {
}

static void parser_warn(void *userdata, const char *message) {
        Resolver *res = userdata;
        res->log_func(res->log_userdata, message);
}

/* The helper's timeout for users' files: small files, parsed while the
 * daemon's event loop waits. */
#define USER_FILE_TIMEOUT_MS 5000

void resolver_set_user_file_helper(Resolver *res, HelperClient *helper) {
        if (!res->helper_borrowed)
                helper_client_free(res->parser.helper);
        res->parser.helper = helper;
        res->helper_borrowed = helper != NULL;
        res->helper_tried = helper != NULL;
}

const UserFileParser *resolver_user_file_parser(Resolver *res) {
        if (!res->helper_tried) {
                res->helper_tried = true;
                int r = helper_client_new(&(HelperClientConfig){ .timeout_ms = USER_FILE_TIMEOUT_MS },
                                          &res->parser.helper);
                if (r < 0) {
                        char message[256];
                        res->parser.helper = NULL;
                        snprintf(message, sizeof(message),
                                 "cannot find the sandboxed helper for Podman storage and /.flatpak-info: %s",
                                 strerror(-r));
                        res->log_func(res->log_userdata, message);
                }
        }
        return &res->parser;
}

int resolver_new(Resolver **ret) {
        Resolver *res = calloc(1, sizeof(*res));
        if (!res)
                return -ENOMEM;
        res->methods = ~0u;
        res->log_func = no_log;
        res->parser = (UserFileParser){ .warn = parser_warn, .userdata = res };
        *ret = res;
        return 0;
}

static void remembered_process_free(RememberedProcess *p) {
        if (!p)
                return;
        mount_table_free(p->mounts);
        container_info_clear(&p->info);
        free(p->podman);
        free(p);
}

static void remembered_process_freep(RememberedProcess **p) {
        remembered_process_free(*p);
}

Resolver *resolver_free(Resolver *res) {
        if (!res)
                return NULL;
        for (size_t i = 0; i < res->n_pins; i++)
                safe_close(res->pins[i].fd);
        free(res->pins);
        for (size_t i = 0; i < res->n_procs; i++)
                remembered_process_free(res->procs[i]);
        free(res->procs);
        for (size_t i = 0; i < res->n_storages; i++)
                podman_storage_free(res->storages[i].storage);
        free(res->storages);
        free(res->known);
        mount_table_free(res->host_mounts);
        if (!res->helper_borrowed)
                helper_client_free(res->parser.helper);
        free(res);
        return NULL;
}

void resolver_set_build_id_func(Resolver *res, ResolverBuildIdFunc f, void *userdata) {
        res->build_id_func = f;
        res->build_id_userdata = userdata;
}

void resolver_set_pin_lookup(Resolver *res, ResolverPinLookupFunc f, void *userdata) {
        res->pin_lookup = f;
        res->pin_userdata = userdata;
}

void resolver_set_log_func(Resolver *res, ResolverLogFunc f, void *userdata) {
        res->log_func = f ? f : no_log;
        res->log_userdata = userdata;
}

static RememberedProcess *find_remembered(Resolver *res, pid_t pid);

void resolver_set_defer_user_files(Resolver *res, bool defer) {
        res->parser.defer_flatpak = defer;
}

size_t resolver_count_pending(Resolver *res) {
        size_t n = 0;
        for (size_t i = 0; i < res->n_procs; i++)
                n += container_info_pending(&res->procs[i]->info);
        return n;
}

int resolver_next_pending(Resolver *res, pid_t *ret) {
        for (size_t i = 0; i < res->n_procs; i++)
                if (container_info_pending(&res->procs[i]->info)) {
                        *ret = res->procs[i]->pid;
                        return 1;
                }
        return 0;
}

static int parse_pending_podman(Resolver *res, RememberedProcess *p, HelperClient *helper);

int resolver_parse_pending(Resolver *res, pid_t pid, HelperClient *helper) {
        RememberedProcess *p = find_remembered(res, pid);
        if (p && p->info.podman_pending)
                return parse_pending_podman(res, p, helper);
        if (!p || !p->info.flatpak_pending)
                return -ENOENT;
        /* a copy: the process may be forgotten while the helper parses */
        size_t len = p->info.flatpak_info_len;
        _cleanup_free_ char *text = malloc(len + 1);
        if (!text)
                return -ENOMEM;
        memcpy(text, p->info.flatpak_info, len);
        text[len] = 0;
        const UserFileParser *parser = resolver_user_file_parser(res);
        ContainerInfo parsed;
        int r = container_info_parse_flatpak(pid, text, len, helper ? helper : parser->helper, parser, &parsed);
        p = find_remembered(res, pid);
        /* gone, or forgotten and its pid reused meanwhile: not this file */
        if (!p || !p->info.flatpak_pending || p->info.flatpak_info_len != len ||
            memcmp(p->info.flatpak_info, text, len) != 0)
                return -ENOENT;
        if (r == HELPER_CLIENT_FAILED)
                return r; /* no verdict on the file: still waiting */
        p->info.flatpak_pending = false;
        if (r < 0) {
                container_info_clear(&p->info); /* rejected: no Flatpak, nothing of it copied */
                return 0;
        }
        parsed.owner_uid = p->info.owner_uid;
        parsed.rootless = p->info.rootless;
        parsed.flatpak_info = p->info.flatpak_info;
        parsed.flatpak_info_len = p->info.flatpak_info_len;
        parsed.containerenv = p->info.containerenv;
        parsed.containerenv_len = p->info.containerenv_len;
        p->info = parsed;
        return 0;
}

void resolver_drop_pending(Resolver *res, pid_t pid) {
        RememberedProcess *p = find_remembered(res, pid);
        if (p)
                p->info.podman_pending = false; /* as a store that could not be read */
        if (p && p->info.flatpak_pending) {
                p->info.flatpak_pending = false;
                container_info_clear(&p->info);
        }
}

void resolver_set_yield_func(Resolver *res, void (*f)(void *userdata), void *userdata) {
        res->yield_func = f;
        res->yield_userdata = userdata;
}

void resolver_yield(Resolver *res) {
        if (res->yield_func)
                res->yield_func(res->yield_userdata);
}

void resolver_set_caller_opener(Resolver *res, CallerOpener *o) {
        res->as_caller = o;
}

CallerOpener *resolver_get_caller_opener(const Resolver *res) {
        return res->as_caller;
}

void resolver_set_methods(Resolver *res, unsigned mask) {
        res->methods = mask;
}

int resolver_add_pin(Resolver *res, unsigned dev_major, unsigned dev_minor, uint64_t inode, int fd) {
        for (size_t i = 0; i < res->n_pins; i++)
                if (res->pins[i].dev_major == dev_major && res->pins[i].dev_minor == dev_minor &&
                    res->pins[i].inode == inode)
                        return 0;
        Pin *np = realloc(res->pins, (res->n_pins + 1) * sizeof(*np));
        if (!np)
                return -ENOMEM;
        res->pins = np;
        int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (copy < 0)
                return -errno;
        res->pins[res->n_pins++] = (Pin){ dev_major, dev_minor, inode, copy };
        return 0;
}

/* ---- remembered processes------------------------------------------------------ */

static PodmanStorage *storage_for_uid(Resolver *res, uid_t uid) {
        for (size_t i = 0; i < res->n_storages; i++)
                if (res->storages[i].uid == uid)
                        return res->storages[i].storage;
        StorageEntry *ns = realloc(res->storages, (res->n_storages + 1) * sizeof(*ns));
        if (!ns)
                return NULL;
        res->storages = ns;
        PodmanStorage *s = NULL;
        if (podman_storage_open(uid, resolver_user_file_parser(res), &s) < 0)
                s = NULL;
        res->storages[res->n_storages++] = (StorageEntry){ uid, s };
        return s;
}

/* podman_storage_find_container() for id in uid's store s, answered from
 * the containers found before when it is one of them. */
static const PodmanContainer *known_container(Resolver *res, uid_t uid, const char *id) {
        for (size_t i = 0; i < res->n_known; i++)
                if (res->known[i].uid == uid && strcmp(res->known[i].container.id, id) == 0)
                        return &res->known[i].container;
        return NULL;
}

/* helper: who parses (NULL: the parser's). */
static int find_container(Resolver *res, PodmanStorage *s, HelperClient *helper, uid_t uid, const char *id,
                          PodmanContainer *ret) {
        const PodmanContainer *known = known_container(res, uid, id);
        if (known) {
                *ret = *known;
                return 0;
        }
        int r = podman_storage_find_container(s, helper, id, ret);
        if (r != 0 || strcmp(ret->id, id) != 0)
                return r; /* not kept: an image name without verdict, or a prefix's match */
        KnownContainer *nk = reallocarray(res->known, res->n_known + 1, sizeof(*nk));
        if (nk) {
                res->known = nk;
                res->known[res->n_known++] = (KnownContainer){ uid, *ret };
        }
        return 0;
}

static RememberedProcess *find_remembered(Resolver *res, pid_t pid) {
        for (size_t i = 0; i < res->n_procs; i++)
                if (res->procs[i]->pid == pid)
                        return res->procs[i];
        return NULL;
}

/* Reads p's container from its owner's store (helper: who parses, NULL:
 * the parser's): its layers, name and image. 0 also when it is not found
 * (p->podman stays NULL), or -ENOMEM. */
static int describe_podman(Resolver *res, RememberedProcess *p, HelperClient *helper) {
        p->storage = storage_for_uid(res, p->info.owner_uid);
        if (!p->storage)
                return 0;
        _cleanup_free_ PodmanContainer *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        if (find_container(res, p->storage, helper, p->info.owner_uid, p->info.id, c) < 0)
                return 0;
        snprintf(p->info.name, sizeof(p->info.name), "%s", c->name);
        snprintf(p->info.image, sizeof(p->info.image), "%s", c->image_name[0] ? c->image_name : c->image_id);
        free(p->podman);
        p->podman = TAKE_PTR(c);
        return 0;
}

/* Parses the store of p's container with helper, whose wait may run the
 * event loop: what it found is kept for every process of that container
 * still waiting (looked up again after the wait). */
static int parse_pending_podman(Resolver *res, RememberedProcess *p, HelperClient *helper) {
        uid_t uid = p->info.owner_uid;
        char id[CONTAINER_FIELD_MAX];
        pid_t pid = p->pid;
        snprintf(id, sizeof(id), "%s", p->info.id);
        PodmanStorage *s = storage_for_uid(res, uid);
        _cleanup_free_ PodmanContainer *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        int r = s ? find_container(res, s, helper, uid, id, c) : -ENOENT;
        bool found = r >= 0;
        p = find_remembered(res, pid);
        if (!p || !p->info.podman_pending || p->info.owner_uid != uid || strcmp(p->info.id, id) != 0)
                return -ENOENT; /* forgotten meanwhile */
        if (r == HELPER_CLIENT_FAILED)
                return r; /* no verdict on the store: still waiting */
        if (found) {
                p->storage = s;
                snprintf(p->info.name, sizeof(p->info.name), "%s", c->name);
                snprintf(p->info.image, sizeof(p->info.image), "%s", c->image_name[0] ? c->image_name : c->image_id);
                free(p->podman);
                p->podman = TAKE_PTR(c);
        }
        if (r == 1)
                /* no verdict on the image's name: still waiting, what was
                 * found kept for resolver_drop_pending() */
                return HELPER_CLIENT_FAILED;
        p->info.podman_pending = false;
        return 0; /* rejected or absent (said through the log function): no name, no layers */
}

int resolver_remember_process(Resolver *res, pid_t pid) {
        if (find_remembered(res, pid))
                return 0;
        _cleanup_(remembered_process_freep) RememberedProcess *p = NULL;
        RememberedProcess *tmp = calloc(1, sizeof(*tmp));
        if (!tmp)
                return -ENOMEM;
        p = tmp;
        p->pid = pid;
        int r = container_info_classify_as(pid, resolver_user_file_parser(res), res->as_caller, &p->info);
        if (r < 0)
                return r;
        if (mount_table_load(pid, &p->mounts) < 0)
                p->mounts = NULL;
        if (p->info.engine == CONTAINER_ENGINE_PODMAN && p->info.id[0]) {
                /* a container found before costs no parse; else deferred, as /.flatpak-info */
                if (res->parser.defer_flatpak && !known_container(res, p->info.owner_uid, p->info.id))
                        p->info.podman_pending = true;
                else {
                        r = describe_podman(res, p, NULL);
                        if (r < 0)
                                return r;
                }
        }
        RememberedProcess **np = realloc(res->procs, (res->n_procs + 1) * sizeof(*np));
        if (!np)
                return -ENOMEM;
        res->procs = np;
        res->procs[res->n_procs++] = TAKE_PTR(p);
        return 0;
}

int resolver_describe_container(Resolver *res, ContainerInfo *info) {
        if (info->engine != CONTAINER_ENGINE_PODMAN || !info->id[0])
                return info->engine == CONTAINER_ENGINE_FLATPAK ? 0 : -ENOENT;
        PodmanStorage *s = storage_for_uid(res, info->owner_uid);
        _cleanup_free_ PodmanContainer *c = calloc(1, sizeof(*c));
        if (!s || !c)
                return s ? -ENOMEM : -ENOENT;
        int r = find_container(res, s, NULL, info->owner_uid, info->id, c);
        if (r < 0)
                return r;
        snprintf(info->name, sizeof(info->name), "%s", c->name);
        snprintf(info->image, sizeof(info->image), "%s", c->image_name[0] ? c->image_name : c->image_id);
        return 0;
}

bool resolver_first_description(Resolver *res, pid_t pid) {
        if (resolver_remember_process(res, pid) < 0)
                return false;
        RememberedProcess *p = find_remembered(res, pid);
        if (p->described)
                return false;
        p->described = true;
        return true;
}

const ContainerInfo *resolver_get_container(Resolver *res, pid_t pid) {
        if (resolver_remember_process(res, pid) < 0)
                return NULL;
        return &find_remembered(res, pid)->info;
}

int resolver_get_podman(Resolver *res, pid_t pid, PodmanStorage **ret_storage, const PodmanContainer **ret_container) {
        int r = resolver_remember_process(res, pid);
        if (r < 0)
                return r;
        RememberedProcess *p = find_remembered(res, pid);
        if (!p->podman || !p->storage)
                return -ENOENT;
        *ret_storage = p->storage;
        *ret_container = p->podman;
        return 0;
}

void resolver_log(Resolver *res, const char *message) {
        res->log_func(res->log_userdata, message);
}

int resolver_get_layers(Resolver *res, pid_t pid, char (**ret_paths)[RESOLVER_PATH_MAX], size_t *ret_n) {
        int r = resolver_remember_process(res, pid);
        *ret_paths = NULL;
        *ret_n = 0;
        if (r < 0)
                return r;
        RememberedProcess *p = find_remembered(res, pid);
        if (!p->podman)
                return 0;
        char (*paths)[RESOLVER_PATH_MAX] = calloc(p->podman->n_layers, RESOLVER_PATH_MAX);
        if (!paths)
                return -ENOMEM;
        for (size_t i = 0; i < p->podman->n_layers; i++)
                podman_storage_layer_diff_path(p->storage, p->podman->layers[i], paths[i], RESOLVER_PATH_MAX);
        *ret_paths = paths;
        *ret_n = p->podman->n_layers;
        return 0;
}

/* ---- identity -------------------------------------------------------- */

typedef struct DevAlias {
        dev_t from;   /* the device the kernel reported (overlay / fuse) */
        dev_t to;     /* the device the candidate lives on (the store) */
} DevAlias;

typedef struct Attempt {
        Resolver *r;
        const MountTable *theirs;   /* the process's mount table, if known */
        const MappingIdentity *id;
        ResolverProvenance *prov;
        bool saw_other_file;
} Attempt;

static void trail(Attempt *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void trail(Attempt *a, const char *fmt, ...) {
        size_t used = strlen(a->prov->detail);
        va_list ap;
        if (used + 3 >= sizeof(a->prov->detail))
                return;
        if (used > 0) {
                memcpy(a->prov->detail + used, "; ", 3);
                used += 2;
        }
        va_start(ap, fmt);
        vsnprintf(a->prov->detail + used, sizeof(a->prov->detail) - used, fmt, ap);
        va_end(ap);
}

/* The superblock device of the mount fd lives on, from fdinfo's mnt_id. */
static int fd_mount_dev(Resolver *res, const MountTable *theirs, int fd, unsigned *ret_major, unsigned *ret_minor) {
        char path[64];
        _cleanup_free_ char *text = NULL;
        int mnt_id;
        snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
        int r = read_file_bounded(AT_FDCWD, path, 64 * 1024, true, &text, NULL);
        if (r < 0)
                return r;
        const char *m = strstr(text, "mnt_id:");
        if (!m || sscanf(m + 7, "%d", &mnt_id) != 1)
                return -ENOENT;
        /* Mount ids are global: an fd from /proc/P/... lives on one of P's mounts. */
        const MountEntry *t = mount_table_find_by_id(theirs, mnt_id);
        if (t) {
                *ret_major = t->dev_major;
                *ret_minor = t->dev_minor;
                return 0;
        }
        for (int attempt = 0; attempt < 2; attempt++) {
                if (!res->host_mounts || attempt == 1) {
                        mount_table_free(res->host_mounts);
                        res->host_mounts = NULL;
                        r = mount_table_load(0, &res->host_mounts);
                        if (r < 0)
                                return r;
                }
                const MountEntry *e = mount_table_find_by_id(res->host_mounts, mnt_id);
                if (e) {
                        *ret_major = e->dev_major;
                        *ret_minor = e->dev_minor;
                        return 0;
                }
        }
        return -ENOENT;
}

static void hex(char *buf, size_t size, const uint8_t *b, size_t n) {
        buf[0] = 0;
        for (size_t i = 0; i < n && 2 * i + 3 <= size; i++)
                snprintf(buf + 2 * i, 3, "%02x", b[i]);
}

/* Checks a candidate. Takes ownership of fd. Returns 1 (accepted: fd stored
 * in *ret_fd), 0 (rejected: not the mapped file). */
static int consider(Attempt *a, ResolverMethod method, int fd, const char *host_path, const DevAlias *alias, int *ret_fd) {
        _cleanup_close_ int cfd = fd;
        const MappingIdentity *id = a->id;
        struct stat st;
        ResolverVerdict verdict;
        char why[160] = "";

        if (fstat(cfd, &st) < 0 || !S_ISREG(st.st_mode)) {
                trail(a, "%s: %s is not a regular file", resolver_method_to_string(method), host_path);
                return 0;
        }
        a->prov->found_dev_major = major(st.st_dev);
        a->prov->found_dev_minor = minor(st.st_dev);
        a->prov->found_inode = st.st_ino;
        if (st.st_ino != id->inode) {
                a->saw_other_file = true;
                trail(a, "%s: %s is another file (inode %ju, mapped inode %" PRIu64 ")", resolver_method_to_string(method),
                      host_path, (uintmax_t) st.st_ino, id->inode);
                return 0;
        }
        dev_t want = makedev(id->dev_major, id->dev_minor);
        unsigned mmaj, mmin;
        if (st.st_dev == want)
                verdict = RESOLVER_VERDICT_MATCH;
        else if (fd_mount_dev(a->r, a->theirs, cfd, &mmaj, &mmin) >= 0 && mmaj == id->dev_major && mmin == id->dev_minor) {
                verdict = RESOLVER_VERDICT_MATCH_ALIAS;
                snprintf(why, sizeof(why), " (device %u:%u is the superblock of its mount, e.g. a btrfs subvolume %u:%u)",
                         mmaj, mmin, major(st.st_dev), minor(st.st_dev));
        } else if (alias && alias->from == want && alias->to == st.st_dev) {
                verdict = RESOLVER_VERDICT_MATCH_ALIAS;
                snprintf(why, sizeof(why), " (overlay device %u:%u over store device %u:%u)", major(alias->from),
                         minor(alias->from), major(alias->to), minor(alias->to));
        } else {
                a->saw_other_file = true;
                trail(a, "%s: %s has the inode but device %u:%u, mapped %u:%u", resolver_method_to_string(method), host_path,
                      major(st.st_dev), minor(st.st_dev), id->dev_major, id->dev_minor);
                return 0;
        }
        if (id->build_id_size > 0 && a->r->build_id_func) {
                uint8_t bid[RESOLVER_BUILD_ID_MAX];
                int n = a->r->build_id_func(a->r->build_id_userdata, cfd, bid);
                if (n >= 0 && ((size_t) n != id->build_id_size || memcmp(bid, id->build_id, id->build_id_size) != 0)) {
                        a->saw_other_file = true;
                        trail(a, "%s: %s has the inode but another build-id", resolver_method_to_string(method), host_path);
                        return 0;
                }
        }
        trail(a, "%s: %s %s%s", resolver_method_to_string(method), host_path, resolver_verdict_to_string(verdict), why);
        a->prov->method = method;
        a->prov->verdict = verdict;
        snprintf(a->prov->host_path, sizeof(a->prov->host_path), "%s", host_path);
        *ret_fd = TAKE_FD(cfd);
        return 1;
}

/* ---- methods --------------------------------------------------------- */

static int try_pinned(Attempt *a, pid_t pid, int *ret_fd) {
        const MappingIdentity *id = a->id;
        if (a->r->pin_lookup) {
                int fd = a->r->pin_lookup(a->r->pin_userdata, pid, id);
                if (fd >= 0)
                        return consider(a, RESOLVER_METHOD_PINNED, fd, "(pinned fd)", NULL, ret_fd);
        }
        for (size_t i = 0; i < a->r->n_pins; i++) {
                Pin *p = &a->r->pins[i];
                if (p->dev_major == id->dev_major && p->dev_minor == id->dev_minor && p->inode == id->inode) {
                        char path[64];
                        /* Reopen for an independent file offset. */
                        snprintf(path, sizeof(path), "/proc/self/fd/%d", p->fd);
                        int fd = open(path, O_RDONLY | O_CLOEXEC);
                        if (fd < 0)
                                fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 3);
                        if (fd >= 0)
                                return consider(a, RESOLVER_METHOD_PINNED, fd, "(pinned fd)", NULL, ret_fd);
                }
        }
        return 0;
}

/* One line of /proc/PID/maps: its range and the identity of the file. */
typedef struct MapsLine {
        uint64_t start, end, inode;
        unsigned major, minor;
} MapsLine;

/* Reads /proc/PID/maps; its lines go to maps_next(). */
static int maps_read(pid_t pid, char **ret) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/maps", (int) pid);
        return read_file_bounded(AT_FDCWD, path, MAPS_MAX_BYTES, true, ret, NULL);
}

/* The next line of maps (first call: *save NULL) that parses. */
static bool maps_next(char *maps, char **save, MapsLine *ret) {
        for (char *line = strtok_r(*save ? NULL : maps, "\n", save); line; line = strtok_r(NULL, "\n", save))
                if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %*x %x:%x %" SCNu64, &ret->start, &ret->end, &ret->major,
                           &ret->minor, &ret->inode) == 5)
                        return true;
        return false;
}

static int try_map_files(Attempt *a, pid_t pid, int *ret_fd) {
        const MappingIdentity *id = a->id;
        char path[96];
        int last_error = 0;
        if (id->start && id->end) {
                snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int) pid, id->start, id->end);
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd >= 0)
                        return consider(a, RESOLVER_METHOD_MAP_FILES, fd, path, NULL, ret_fd);
                last_error = -errno;
        }
        /* Any other mapping of the same file will do (ranges split on mprotect). */
        _cleanup_free_ char *maps = NULL;
        if (maps_read(pid, &maps) >= 0) {
                char *save = NULL;
                MapsLine m;
                while (maps_next(maps, &save, &m)) {
                        if (m.inode != id->inode || m.major != id->dev_major || m.minor != id->dev_minor)
                                continue;
                        snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int) pid, m.start,
                                 m.end);
                        int fd = open(path, O_RDONLY | O_CLOEXEC);
                        if (fd >= 0)
                                return consider(a, RESOLVER_METHOD_MAP_FILES, fd, path, NULL, ret_fd);
                        last_error = -errno;
                        break;
                }
        }
        trail(a, "map-files: %s", last_error ? strerror(-last_error) : "no live mapping");
        return 0;
}

static int try_proc_root(Attempt *a, pid_t pid, const char *path, int *ret_fd) {
        char root[64], shown[RESOLVER_PATH_MAX];
        snprintf(root, sizeof(root), "/proc/%d/root", (int) pid);
        _cleanup_close_ int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0) {
                trail(a, "proc-root: %s", strerror(errno));
                return 0;
        }
        int fd = safe_open_beneath(rootfd, path, O_RDONLY, false);
        if (fd < 0) {
                trail(a, "proc-root: %s%s: %s", root, path, strerror(-fd));
                return 0;
        }
        snprintf(shown, sizeof(shown), "%s%s", root, path);
        return consider(a, RESOLVER_METHOD_PROC_ROOT, fd, shown, NULL, ret_fd);
}

/* Host path for (mount entry of another namespace, rest): a host mount of
 * the same device whose root contains the entry's root. */
static int try_mount(Attempt *a, RememberedProcess *p, const char *path, int *ret_fd) {
        const char *rest = NULL;
        const MountEntry *e = p->mounts ? mount_table_find_by_path(p->mounts, path, &rest) : NULL;
        if (!e) {
                trail(a, "mount: no mount table for the process");
                return 0;
        }
        if (!a->r->host_mounts && mount_table_load(0, &a->r->host_mounts) < 0) {
                trail(a, "mount: cannot read our mount table");
                return 0;
        }
        int result = 0;
        bool any = false;
        for (size_t i = 0; i < a->r->host_mounts->n_entries && result == 0; i++) {
                const MountEntry *h = &a->r->host_mounts->entries[i];
                if (h->dev_major != e->dev_major || h->dev_minor != e->dev_minor)
                        continue;
                size_t hl = strlen(h->root);
                const char *sub;
                if (strcmp(h->root, "/") == 0)
                        sub = e->root;
                else if (strncmp(h->root, e->root, hl) == 0 && (e->root[hl] == 0 || e->root[hl] == '/'))
                        sub = e->root + hl;
                else
                        continue;
                any = true;
                char rel[RESOLVER_PATH_MAX], shown[RESOLVER_PATH_MAX];
                while (*sub == '/')
                        sub++;
                if ((size_t) snprintf(rel, sizeof(rel), "%s%s%s", sub, *sub && *rest ? "/" : "", rest) >= sizeof(rel))
                        continue;
                _cleanup_close_ int dir = open(h->mount_point, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (dir < 0)
                        continue;
                if (snprintf(shown, sizeof(shown), "%s%s%s", h->mount_point, strcmp(h->mount_point, "/") ? "/" : "", rel) >= (int) sizeof(shown))
                        continue;
                int fd = safe_open_beneath(dir, rel, O_RDONLY, true);
                if (fd < 0) {
                        trail(a, "mount: %s: %s", shown, strerror(-fd));
                        continue;
                }
                char subvol[256];
                if (strcmp(e->fstype, "btrfs") == 0 && mount_option_get(e->super_options, "subvol", subvol, sizeof(subvol)) >= 0)
                        trail(a, "mount: btrfs subvol=%s mounted at %s there", subvol, e->mount_point);
                else if (strncmp(e->root, "/ostree/deploy/", 15) == 0)
                        trail(a, "mount: OSTree deployment %s", e->root);
                result = consider(a, RESOLVER_METHOD_MOUNT, fd, shown, NULL, ret_fd);
        }
        if (!any)
                trail(a, "mount: device %u:%u (root %s) is not mounted here", e->dev_major, e->dev_minor, e->root);
        return result;
}

static int try_podman(Attempt *a, RememberedProcess *p, const char *path, int *ret_fd, bool need_identity) {
        if (p->info.engine != CONTAINER_ENGINE_PODMAN)
                return 0;
        if (p->info.podman_pending) {
                trail(a, "podman: the storage of uid %u is not read yet", (unsigned) p->info.owner_uid);
                return 0;
        }
        if (!p->podman) {
                trail(a, "podman: container %s not found in the storage of uid %u", p->info.id[0] ? p->info.id : "(unknown id)",
                      (unsigned) p->info.owner_uid);
                return 0;
        }
        const char *rest = NULL;
        const MountEntry *e = p->mounts ? mount_table_find_by_path(p->mounts, path, &rest) : NULL;
        if (!e || strcmp(e->mount_point, "/") != 0 ||
            (strcmp(e->fstype, "overlay") != 0 && strcmp(e->fstype, "fuse.fuse-overlayfs") != 0)) {
                trail(a, "podman: %s is not on the container's root overlay", path);
                return 0;
        }
        DevAlias alias = { makedev(e->dev_major, e->dev_minor), podman_storage_dev(p->storage) };
        for (size_t i = 0; i < p->podman->n_layers; i++) {
                char shown[RESOLVER_PATH_MAX];
                int fd = podman_storage_open_in_layer(p->storage, p->podman->layers[i], path, O_RDONLY, shown, sizeof(shown));
                if (fd == -ENOENT)
                        continue;
                if (fd < 0) {
                        trail(a, "podman: %s: %s", shown, strerror(-fd));
                        if (fd == -ELOOP || fd == -EXDEV) {
                                char msg[RESOLVER_PATH_MAX + 160];
                                snprintf(msg, sizeof(msg), "rejected %s in the Podman store of uid %u: %s", shown,
                                         (unsigned) p->info.owner_uid, fd == -ELOOP ? "symlink" : "escapes the layer");
                                a->r->log_func(a->r->log_userdata, msg);
                        }
                        continue;
                }
                if (!need_identity) {
                        a->prov->method = RESOLVER_METHOD_PODMAN;
                        snprintf(a->prov->host_path, sizeof(a->prov->host_path), "%s", shown);
                        *ret_fd = fd;
                        return 1;
                }
                if (consider(a, RESOLVER_METHOD_PODMAN, fd, shown, &alias, ret_fd) > 0)
                        return 1;
                /* The store belongs to the container's owner: a file there that is
                 * not the mapped one may be an attempt to make us read another. */
                char msg[RESOLVER_PATH_MAX + 160];
                snprintf(msg, sizeof(msg), "ignored %s in the Podman store of uid %u: not the file mapped by pid %d (inode %ju, mapped %" PRIu64 ")",
                         shown, (unsigned) p->info.owner_uid, (int) p->pid, (uintmax_t) a->prov->found_inode, a->id->inode);
                a->r->log_func(a->r->log_userdata, msg);
        }
        trail(a, "podman: no layer of %s holds a matching %s", p->podman->name, path);
        return 0;
}

static int try_flatpak(Attempt *a, RememberedProcess *p, const char *path, int *ret_fd) {
        const char *base = NULL, *rest = NULL;
        if (p->info.engine != CONTAINER_ENGINE_FLATPAK)
                return 0;
        if (strncmp(path, "/app/", 5) == 0)
                base = p->info.app_path, rest = path + 5;
        else if (strncmp(path, "/usr/", 5) == 0)
                base = p->info.runtime_path, rest = path + 5;
        if (!base || base[0] != '/') {
                trail(a, "flatpak: %s is neither under /app nor /usr", path);
                return 0;
        }
        _cleanup_close_ int rootdir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int dir = safe_open_beneath(rootdir, base, O_PATH | O_DIRECTORY, false);
        char shown[RESOLVER_PATH_MAX];
        if (snprintf(shown, sizeof(shown), "%s/%s", base, rest) >= (int) sizeof(shown))
                return 0;
        if (dir < 0) {
                trail(a, "flatpak: %s: %s", base, strerror(-dir));
                return 0;
        }
        int fd = safe_open_beneath(dir, rest, O_RDONLY, false);
        if (fd < 0) {
                trail(a, "flatpak: %s: %s", shown, strerror(-fd));
                return 0;
        }
        return consider(a, RESOLVER_METHOD_FLATPAK, fd, shown, NULL, ret_fd);
}

static bool method_on(Resolver *res, ResolverMethod m) {
        return res->methods & (1u << m);
}

/* Copies path without a trailing " (deleted)". */
static void strip_deleted(const char *path, char *buf, size_t size) {
        snprintf(buf, size, "%s", path ? path : "");
        size_t l = strlen(buf), sl = strlen(DELETED_SUFFIX);
        if (l > sl && strcmp(buf + l - sl, DELETED_SUFFIX) == 0)
                buf[l - sl] = 0;
}

int resolver_identity_from_maps(pid_t pid, uint64_t start, unsigned *ret_major, unsigned *ret_minor, uint64_t *ret_inode) {
        _cleanup_free_ char *maps = NULL;
        int r = maps_read(pid, &maps);
        if (r < 0)
                return r == -EACCES ? r : -ENOENT;
        char *save = NULL;
        MapsLine m;
        while (maps_next(maps, &save, &m))
                if (m.start == start && m.inode != 0) {
                        *ret_major = m.major;
                        *ret_minor = m.minor;
                        *ret_inode = m.inode;
                        return 0;
                }
        return -ENOENT;
}

int resolver_open_mapping(Resolver *res, pid_t pid, const MappingIdentity *given, const char *path, int *ret_fd,
                          ResolverProvenance *ret) {
        char clean[RESOLVER_PATH_MAX];
        MappingIdentity filled = *given;
        const MappingIdentity *id = &filled;
        Attempt a = { .r = res, .id = id, .prov = ret };
        int fd = -1, r = 0;

        memset(ret, 0, sizeof(*ret));
        ret->verdict = RESOLVER_VERDICT_NOT_FOUND;
        *ret_fd = -1;
        if (filled.dev_major == 0 && filled.dev_minor == 0 && filled.inode == 0 &&
            (!filled.start || resolver_identity_from_maps(pid, filled.start, &filled.dev_major, &filled.dev_minor, &filled.inode) < 0)) {
                snprintf(ret->message, sizeof(ret->message), "%s: identity unknown (no device/inode from the kernel, process gone)",
                         path ? path : "?");
                return -ENOENT;
        }
        ret->mapped_dev_major = filled.dev_major;
        ret->mapped_dev_minor = filled.dev_minor;
        ret->mapped_inode = filled.inode;
        strip_deleted(path, clean, sizeof(clean));
        (void) resolver_remember_process(res, pid);
        RememberedProcess *p = find_remembered(res, pid);
        a.theirs = p ? p->mounts : NULL;

        if (method_on(res, RESOLVER_METHOD_PINNED))
                r = try_pinned(&a, pid, &fd);
        if (r == 0 && method_on(res, RESOLVER_METHOD_MAP_FILES))
                r = try_map_files(&a, pid, &fd);
        if (clean[0] == '/') {
                if (r == 0 && method_on(res, RESOLVER_METHOD_PROC_ROOT))
                        r = try_proc_root(&a, pid, clean, &fd);
                if (r == 0 && p && method_on(res, RESOLVER_METHOD_MOUNT))
                        r = try_mount(&a, p, clean, &fd);
                if (r == 0 && p && method_on(res, RESOLVER_METHOD_PODMAN))
                        r = try_podman(&a, p, clean, &fd, true);
                if (r == 0 && p && method_on(res, RESOLVER_METHOD_FLATPAK))
                        r = try_flatpak(&a, p, clean, &fd);
        }
        if (r > 0) {
                *ret_fd = fd;
                return 0;
        }
        char bid[2 * RESOLVER_BUILD_ID_MAX + 1] = "";
        hex(bid, sizeof(bid), id->build_id, id->build_id_size);
        if (a.saw_other_file) {
                ret->verdict = RESOLVER_VERDICT_CHANGED;
                snprintf(ret->message, sizeof(ret->message),
                         "%s: binary changed since it was mapped (inode %" PRIu64 ", build-id %s)", clean, id->inode,
                         bid[0] ? bid : "unknown");
                return -ESTALE;
        }
        snprintf(ret->message, sizeof(ret->message), "%s: file not found (inode %" PRIu64 ", build-id %s)", clean,
                 id->inode, bid[0] ? bid : "unknown");
        return -ENOENT;
}

int resolver_open_path(Resolver *res, pid_t pid, const char *path, int *ret_fd, ResolverProvenance *ret) {
        MappingIdentity none = { 0 };
        Attempt a = { .r = res, .id = &none, .prov = ret };
        memset(ret, 0, sizeof(*ret));
        ret->verdict = RESOLVER_VERDICT_NOT_FOUND;
        *ret_fd = -1;
        if (!path || path[0] != '/')
                return -EINVAL;
        (void) resolver_remember_process(res, pid);
        RememberedProcess *p = find_remembered(res, pid);
        char root[64];
        snprintf(root, sizeof(root), "/proc/%d/root", (int) pid);
        _cleanup_close_ int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rootfd >= 0) {
                int fd = safe_open_beneath(rootfd, path, O_RDONLY, false);
                struct stat st;
                if (fd >= 0 && fstat(fd, &st) >= 0 && S_ISREG(st.st_mode)) {
                        ret->method = RESOLVER_METHOD_PROC_ROOT;
                        snprintf(ret->host_path, sizeof(ret->host_path), "%s%s", root, path);
                        *ret_fd = fd;
                        return 0;
                }
                safe_close(fd);
        }
        if (p && try_podman(&a, p, path, ret_fd, false) > 0)
                return 0;
        return -ENOENT;
}
