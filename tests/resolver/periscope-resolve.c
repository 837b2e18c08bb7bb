/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* periscope-resolve: test tool for the resolver. Snapshots a running pid
 * (maps, mount table, container/app), optionally pins every mapped file the
 * way periscoped does, optionally waits until a file appears (so a test can
 * upgrade or kill the program in between), then resolves every file mapping
 * and prints one line per file: path, method, verdict, host path, message.
 *
 *   periscope-resolve [--methods=LIST] [--pin] [--wait-file=F] [--copy-to=DIR] [--debug-path=PATH…] PID
 *     --debug-path: also opens PATH in each debug-file tree of the process
 *     (resolver/debug-trees.h) and prints "debug PATH tree= result= host= why="
 *     --as-caller=UID: the debug-path lookups for a caller UID other than
 *     root (its caller opener), after a snapshot taken as root
 *   periscope-resolve --list                 containers/apps and their pids
 *   periscope-resolve --container=NAME|ID    pids of one container/app
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "basic.h"
#include "container-list.h"
#include "debug-trees.h"
#include "resolver.h"

typedef struct Mapping {
        MappingIdentity id;
        char path[RESOLVER_PATH_MAX];
} Mapping;

static int load_mappings(pid_t pid, Mapping **ret, size_t *ret_n) {
        char path[64];
        _cleanup_free_ char *maps = NULL;
        snprintf(path, sizeof(path), "/proc/%d/maps", (int) pid);
        int r = read_file_bounded(AT_FDCWD, path, 64u << 20, true, &maps, NULL);
        if (r < 0)
                return r;
        Mapping *m = NULL;
        size_t n = 0;
        char *save = NULL;
        for (char *line = strtok_r(maps, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                uint64_t s, e, ino;
                unsigned maj, min;
                int off = 0;
                if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %*x %x:%x %" SCNu64 " %n", &s, &e, &maj, &min, &ino, &off) != 5 ||
                    ino == 0 || off == 0 || line[off] != '/')
                        continue;
                bool dup = false;
                for (size_t i = 0; i < n; i++)
                        if (m[i].id.inode == ino && m[i].id.dev_major == maj && m[i].id.dev_minor == min)
                                dup = true;
                if (dup)
                        continue;
                Mapping *nm = realloc(m, (n + 1) * sizeof(*nm));
                if (!nm) {
                        free(m);
                        return -ENOMEM;
                }
                m = nm;
                memset(&m[n], 0, sizeof(m[n]));
                m[n].id = (MappingIdentity) { .dev_major = maj, .dev_minor = min, .inode = ino, .start = s, .end = e };
                snprintf(m[n].path, sizeof(m[n].path), "%s", line + off);
                n++;
        }
        *ret = m;
        *ret_n = n;
        return 0;
}

static void wait_for_file(const char *f) {
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        for (int i = 0; i < 60 * 50 && access(f, F_OK) < 0; i++)
                nanosleep(&ts, NULL);
}

static int copy_out(int fd, const char *dir, const char *path) {
        const char *base = strrchr(path, '/');
        char out[RESOLVER_PATH_MAX];
        struct stat st;
        if (snprintf(out, sizeof(out), "%s/%s", dir, base ? base + 1 : path) >= (int) sizeof(out))
                return -ENAMETOOLONG;
        char *sp = strstr(out, " (deleted)");
        if (sp)
                *sp = 0;
        _cleanup_close_ int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (o < 0 || fstat(fd, &st) < 0)
                return -errno;
        off_t off = 0;
        while (off < st.st_size) {
                ssize_t n = sendfile(o, fd, &off, (size_t) (st.st_size - off));
                if (n <= 0)
                        return n < 0 ? -errno : -EIO;
        }
        return 0;
}

/* The resolver's log function here: what it rejects, on stderr. */
static void log_to_stderr(void *userdata, const char *message) {
        fprintf(stderr, "periscope-resolve: resolver: %s\n", message);
}

static int list_instances(const char *query) {
        _cleanup_resolver_ Resolver *r = NULL;
        ContainerInstance *inst = NULL;
        size_t n = 0;
        int k = resolver_new(&r);
        if (k >= 0)
                resolver_set_log_func(r, log_to_stderr, NULL);
        if (k >= 0)
                k = container_list_instances(r, &inst, &n);
        if (k < 0) {
                fprintf(stderr, "periscope-resolve: cannot list containers: %s\n", strerror(-k));
                return 1;
        }
        bool found = false;
        for (size_t i = 0; i < n; i++) {
                const ContainerInfo *ci = &inst[i].info;
                if (query && !container_instance_matches(ci, query))
                        continue;
                found = true;
                printf("instance\tengine=%s\tid=%s\tname=%s\timage=%s\towner=%u\tpids=", container_engine_to_string(ci->engine),
                       ci->id, ci->name, ci->image, (unsigned) ci->owner_uid);
                for (size_t j = 0; j < inst[i].n_pids; j++)
                        printf("%s%d", j ? "," : "", (int) inst[i].pids[j]);
                printf("\n");
        }
        container_instances_free(inst, n);
        if (query && !found) {
                fprintf(stderr, "periscope-resolve: no running container or Flatpak app matches '%s'\n", query);
                return 1;
        }
        return 0;
}

int main(int argc, char **argv) {
        static const struct option opts[] = { { "methods", required_argument, NULL, 'm' },
                                              { "pin", no_argument, NULL, 'p' },
                                              { "wait-file", required_argument, NULL, 'w' },
                                              { "copy-to", required_argument, NULL, 'c' },
                                              { "list", no_argument, NULL, 'l' },
                                              { "container", required_argument, NULL, 'C' },
                                              { "debug-path", required_argument, NULL, 'D' },
                                              { "as-caller", required_argument, NULL, 'U' },
                                              { "help", no_argument, NULL, 'h' },
                                              {} };
        const char *wait_file = NULL, *copy_to = NULL, *container = NULL;
        const char *debug_paths[8];
        size_t n_debug_paths = 0;
        bool list = false;
        unsigned methods = ~0u;
        bool pin = false;
        long as_caller = -1;
        int c;
        while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0) {
                switch (c) {
                case 'm':
                        if (resolver_methods_from_string(optarg, &methods) < 0) {
                                fprintf(stderr, "periscope-resolve: unknown method in '%s' (pinned,map-files,proc-root,mount,podman,flatpak)\n", optarg);
                                return 2;
                        }
                        break;
                case 'p':
                        pin = true;
                        break;
                case 'w':
                        wait_file = optarg;
                        break;
                case 'c':
                        copy_to = optarg;
                        break;
                case 'l':
                        list = true;
                        break;
                case 'C':
                        container = optarg;
                        break;
                case 'D':
                        if (n_debug_paths == ELEMENTSOF(debug_paths)) {
                                fprintf(stderr, "periscope-resolve: at most %zu --debug-path\n", ELEMENTSOF(debug_paths));
                                return 2;
                        }
                        debug_paths[n_debug_paths++] = optarg;
                        break;
                case 'U':
                        as_caller = strtol(optarg, NULL, 10);
                        if (as_caller <= 0) {
                                fprintf(stderr, "periscope-resolve: --as-caller needs a uid other than root\n");
                                return 2;
                        }
                        break;
                case 'h':
                        printf("Usage: periscope-resolve [--methods=LIST] [--pin] [--wait-file=F] [--copy-to=DIR] [--debug-path=PATH…] PID\n");
                        return 0;
                default:
                        return 2;
                }
        }
        if (list || container)
                return list_instances(container);
        if (optind != argc - 1) {
                fprintf(stderr, "periscope-resolve: expected one PID\n");
                return 2;
        }
        pid_t pid = (pid_t) atoi(argv[optind]);
        _cleanup_resolver_ Resolver *r = NULL;
        _cleanup_free_ Mapping *maps = NULL;
        size_t n = 0;
        int k = resolver_new(&r);
        if (k >= 0)
                resolver_set_log_func(r, log_to_stderr, NULL);
        if (k < 0)
                return 1;
        k = load_mappings(pid, &maps, &n);
        if (k < 0) {
                fprintf(stderr, "periscope-resolve: cannot read mappings of %d: %s\n", (int) pid, strerror(-k));
                return 1;
        }
        k = resolver_remember_process(r, pid);
        if (k < 0) {
                fprintf(stderr, "periscope-resolve: cannot snapshot %d: %s\n", (int) pid, strerror(-k));
                return 1;
        }
        if (pin)
                for (size_t i = 0; i < n; i++) {
                        char p[96];
                        snprintf(p, sizeof(p), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int) pid, maps[i].id.start, maps[i].id.end);
                        _cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC);
                        if (fd >= 0)
                                resolver_add_pin(r, maps[i].id.dev_major, maps[i].id.dev_minor, maps[i].id.inode, fd);
                        else
                                fprintf(stderr, "periscope-resolve: cannot pin %s: %s\n", maps[i].path, strerror(errno));
                }
        const ContainerInfo *ci = resolver_get_container(r, pid);
        if (ci)
                printf("container\tengine=%s\tid=%s\tname=%s\timage=%s\towner=%u\n", container_engine_to_string(ci->engine),
                       ci->id, ci->name, ci->image, (unsigned) ci->owner_uid);
        char (*layers)[RESOLVER_PATH_MAX] = NULL;
        size_t n_layers = 0;
        if (resolver_get_layers(r, pid, &layers, &n_layers) >= 0)
                for (size_t i = 0; i < n_layers; i++)
                        printf("layer\t%zu\t%s\n", i, layers[i]);
        free(layers);
        fflush(stdout);
        if (wait_file) {
                fprintf(stderr, "periscope-resolve: snapshot of %d taken, waiting for %s\n", (int) pid, wait_file);
                wait_for_file(wait_file);
        }
        resolver_set_methods(r, methods);
        for (size_t i = 0; i < n; i++) {
                ResolverProvenance prov;
                _cleanup_close_ int fd = -1;
                k = resolver_open_mapping(r, pid, &maps[i].id, maps[i].path, &fd, &prov);
                printf("map\t%s\tinode=%" PRIu64 "\tmethod=%s\tverdict=%s\thost=%s\tmessage=%s\tdetail=%s\n", maps[i].path,
                       maps[i].id.inode, resolver_method_to_string(prov.method), resolver_verdict_to_string(prov.verdict),
                       prov.host_path, prov.message, prov.detail);
                if (k >= 0 && copy_to && copy_out(fd, copy_to, maps[i].path) < 0)
                        fprintf(stderr, "periscope-resolve: cannot copy %s\n", maps[i].path);
        }
        _cleanup_(caller_opener_freep) CallerOpener *opener = NULL;
        if (as_caller > 0) {
                k = caller_opener_new((uid_t) as_caller, &opener);
                if (k < 0) {
                        fprintf(stderr, "periscope-resolve: no caller opener for uid %ld: %s\n", as_caller,
                                strerror(-k));
                        return 1;
                }
                resolver_set_caller_opener(r, opener);
        }
        /* Debug-file trees: PATH opened in each tree of the container/app. */
        for (size_t i = 0; i < n_debug_paths; i++) {
                DebugTree trees[_DEBUG_TREE_MAX];
                size_t nt = debug_trees_list(r, pid, trees, ELEMENTSOF(trees));
                if (nt == 0)
                        printf("debug\t%s\ttree=none\n", debug_paths[i]);
                for (size_t t = 0; t < nt; t++) {
                        char shown[RESOLVER_PATH_MAX];
                        _cleanup_free_ char *why = NULL;
                        _cleanup_close_ int fd =
                                debug_trees_open(r, pid, trees[t], debug_paths[i], shown, sizeof(shown), &why);
                        printf("debug\t%s\ttree=%s\tresult=%s\thost=%s\twhy=%s\n", debug_paths[i],
                               debug_tree_to_string(r, pid, trees[t]), fd >= 0 ? "ok" : strerrorname_np(-fd), shown,
                               why ? why : "");
                        if (fd >= 0 && copy_to && copy_out(fd, copy_to, debug_paths[i]) < 0)
                                fprintf(stderr, "periscope-resolve: cannot copy %s\n", debug_paths[i]);
                }
        }
        return 0;
}
