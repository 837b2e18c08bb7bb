/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* resolver.h: from a mapping seen in some process to a host file whose
 * identity matches what the kernel reported for that mapping.
 *
 * Order (docs/containers.md): pinned fd → /proc/P/map_files → /proc/P/root/PATH
 * → mount translation (mountinfo root field, btrfs subvolumes, OSTree deploy
 * roots) → Podman storage layers → Flatpak app-path/runtime-path. A candidate
 * is accepted only when its identity matches (inode, plus device directly or
 * through a known alias: btrfs subvolume ↔ superblock, overlay ↔ the store's
 * filesystem; plus build-id when the caller knows one and can check it). When
 * nothing matches, the provenance says so ("binary changed since it was
 * mapped (inode N, build-id …)"), so no names from a wrong file are shown.
 *
 * The resolver never parses ELF: build-ids are checked through an optional
 * callback (the service wires it to the sandboxed helper's IDENTIFY). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "basic.h"
#include "container-info.h"
#include "podman-storage.h"

#define RESOLVER_BUILD_ID_MAX 20
#define RESOLVER_PATH_MAX 4096
#define RESOLVER_MESSAGE_MAX 1024

/* What the kernel told us about one file mapping (MMAP2 or /proc/P/maps). */
typedef struct MappingIdentity {
        unsigned dev_major, dev_minor;
        uint64_t inode;
        uint64_t start, end;                  /* for /proc/P/map_files; 0 = unknown */
        uint8_t build_id[RESOLVER_BUILD_ID_MAX];
        uint8_t build_id_size;                /* 0 = unknown */
} MappingIdentity;

typedef enum ResolverMethod {
        RESOLVER_METHOD_NONE,
        RESOLVER_METHOD_PINNED,
        RESOLVER_METHOD_MAP_FILES,
        RESOLVER_METHOD_PROC_ROOT,
        RESOLVER_METHOD_MOUNT,             /* mount translation: bind, btrfs subvol, OSTree */
        RESOLVER_METHOD_PODMAN,
        RESOLVER_METHOD_FLATPAK,
        _RESOLVER_METHOD_MAX,
} ResolverMethod;

typedef enum ResolverVerdict {
        RESOLVER_VERDICT_MATCH,            /* same device and inode (and build-id if known) */
        RESOLVER_VERDICT_MATCH_ALIAS,      /* same inode on an aliased device (btrfs, overlay) */
        RESOLVER_VERDICT_MATCH_BUILD_ID,   /* another inode with the same build-id */
        RESOLVER_VERDICT_CHANGED,          /* a file exists at the path, but another one */
        RESOLVER_VERDICT_NOT_FOUND,        /* nothing reachable */
} ResolverVerdict;

typedef struct ResolverProvenance {
        ResolverMethod method;             /* of the accepted candidate, else NONE */
        ResolverVerdict verdict;
        char host_path[RESOLVER_PATH_MAX]; /* path opened on the host, "" if none */
        char detail[RESOLVER_MESSAGE_MAX]; /* why: the trail of methods tried, aliases used */
        char message[RESOLVER_MESSAGE_MAX];/* one line for reports when nothing matched */
        unsigned found_dev_major, found_dev_minor;
        uint64_t found_inode;              /* of the last candidate examined */
        unsigned mapped_dev_major, mapped_dev_minor; /* identity checked against (from the */
        uint64_t mapped_inode;             /* caller, or from /proc/P/maps when it had none) */
} ResolverProvenance;

typedef struct Resolver Resolver;

/* Build-id of the file behind fd, into buf (size RESOLVER_BUILD_ID_MAX);
 * returns the length, 0 when it has none, or a negative errno. */
typedef int (*ResolverBuildIdFunc)(void *userdata, int fd, uint8_t *buf);

/* A pinned fd for the identity in pid (a dup the resolver owns), or -ENOENT. */
typedef int (*ResolverPinLookupFunc)(void *userdata, pid_t pid, const MappingIdentity *id);

/* Warnings about rejected hostile input (container storage, flatpak-info). */
typedef void (*ResolverLogFunc)(void *userdata, const char *message);

int resolver_new(Resolver **ret);
Resolver *resolver_free(Resolver *r);

void resolver_set_build_id_func(Resolver *r, ResolverBuildIdFunc f, void *userdata);
void resolver_set_pin_lookup(Resolver *r, ResolverPinLookupFunc f, void *userdata);
/* Where the resolver's warnings (what it rejected and why) go; by default
 * nowhere: the program decides. */
void resolver_set_log_func(Resolver *r, ResolverLogFunc f, void *userdata);

/* Called between the processes of a long walk (container_list_instances),
 * so an owner running it on a fiber lets its event loop run; NULL: none. */
void resolver_set_yield_func(Resolver *r, void (*f)(void *userdata), void *userdata);
/* Calls the yield function, if any. */
void resolver_yield(Resolver *r);

/* Who parses the files users write for this resolver (the sandboxed helper,
 * started on first use; warnings through the log function). */
const UserFileParser *resolver_user_file_parser(Resolver *r);

/* Keeps processes' /.flatpak-info unparsed when they are first seen (engine
 * NONE, flatpak_pending), and the storage JSON of Podman containers not
 * found before (engine PODMAN with its id, podman_pending: no name, image,
 * layers), for resolver_parse_pending(): the parse then runs where its
 * owner chooses (the daemon: on a fiber). */
void resolver_set_defer_user_files(Resolver *r, bool defer);
/* A remembered process whose /.flatpak-info or Podman store waits for its
 * parse: 1 (in *ret), or 0. */
int resolver_next_pending(Resolver *r, pid_t *ret);
/* How many wait. */
size_t resolver_count_pending(Resolver *r);
/* Parses pid's waiting /.flatpak-info with helper (NULL: the resolver's),
 * whose wait may run the event loop: pid is looked up again after it. Then
 * it is a Flatpak process, or (rejected: said through the log function)
 * none. 0, -ENOENT when pid waits no more, or HELPER_CLIENT_FAILED when the
 * helper gave no verdict (it still waits: resolver_drop_pending() ends it).
 * A waiting Podman store: its container's name, image and layers are read
 * (a rejected or absent one: none, as without deferral); 0 or -ENOENT. */
int resolver_parse_pending(Resolver *r, pid_t pid, HelperClient *helper);
/* pid's waiting /.flatpak-info is taken as rejected: no Flatpak process;
 * its waiting Podman store as unreadable: no name, image, layers. */
void resolver_drop_pending(Resolver *r, pid_t pid);

/* Lends the resolver a helper for users' files (the daemon's, kept running,
 * so no lookup waits for a sandbox to start); it must outlive the resolver.
 * NULL: the resolver starts its own on first use. */
void resolver_set_user_file_helper(Resolver *r, HelperClient *helper);

/* For a caller other than root: debug files in containers' and apps' trees
 * are looked up with its rights, and only in trees it may read
 * (debug-trees.h). Borrowed; NULL (the default): the caller is root. */
void resolver_set_caller_opener(Resolver *r, CallerOpener *o);
CallerOpener *resolver_get_caller_opener(const Resolver *r);

/* Restricts the methods tried (bit (1 << ResolverMethod)); for tests and
 * for callers that already tried some. Default: all. */
void resolver_set_methods(Resolver *r, unsigned mask);

/* Keeps fd (dup'ed) as the pinned file for dev:inode; later lookups of that
 * identity in any process use it first. */
int resolver_add_pin(Resolver *r, unsigned dev_major, unsigned dev_minor, uint64_t inode, int fd);

/* Remembers what is needed to resolve pid's mappings after it has
 * exited: its mount table, container/app classification, storage chain.
 * Called automatically on first use; call it early (at MMAP/FORK time). */
int resolver_remember_process(Resolver *r, pid_t pid);

/* True the first time it is called for pid (and it is remembered): lets
 * the service describe each process's container once per recording. */
bool resolver_first_description(Resolver *r, pid_t pid);

/* Container or app of pid (as remembered), or NULL for unknown pids. */
const ContainerInfo *resolver_get_container(Resolver *r, pid_t pid);

/* Fills name and image of a Podman container from its owner's store
 * (classification alone only knows the id). 0, or -ENOENT when unknown. */
int resolver_describe_container(Resolver *r, ContainerInfo *info);

/* Host paths of the Podman layers of pid's container (container layer
 * first) for OVERLAY frames; *ret_n = 0 when not in Podman. */
int resolver_get_layers(Resolver *r, pid_t pid, char (**ret_paths)[RESOLVER_PATH_MAX], size_t *ret_n);

/* The Podman store and container (with its layer chain) of pid, borrowed
 * as remembered; -ENOENT when pid is not in a Podman container whose
 * store could be read. */
int resolver_get_podman(Resolver *r, pid_t pid, PodmanStorage **ret_storage, const PodmanContainer **ret_container);

/* Logs a warning through the log function (resolver_set_log_func). */
void resolver_log(Resolver *r, const char *message);

/* Finds a host file for a mapping of pid at path (as in /proc/P/maps, " (deleted)"
 * suffix allowed). A zero device and inode are filled in from
 * /proc/P/maps (resolver_identity_from_maps). On success *ret_fd is a read-only fd whose identity
 * matched, *ret says how. When nothing matches returns -ENOENT (nothing found)
 * or -ESTALE (a different file found), *ret_fd = -1 and *ret has the reason. */
int resolver_open_mapping(Resolver *r, pid_t pid, const MappingIdentity *id, const char *path,
                          int *ret_fd, ResolverProvenance *ret);

/* Opens a file by path as pid sees it (/proc/PID/root, else the Podman
 * layers; no identity, no symlinks). Debug files inside containers and apps
 * are looked up with debug-trees.h instead (symlinks followed inside the
 * tree, Flatpak .Debug extensions). */
int resolver_open_path(Resolver *r, pid_t pid, const char *path, int *ret_fd, ResolverProvenance *ret);

/* The kernel's identity of pid's file mapping that starts at start, from
 * /proc/PID/maps (for MMAP2 records that carry a build-id instead of
 * device and inode). 0, or -ENOENT when no such mapping is live. */
int resolver_identity_from_maps(pid_t pid, uint64_t start, unsigned *ret_major, unsigned *ret_minor, uint64_t *ret_inode);

const char *resolver_method_to_string(ResolverMethod m);
const char *resolver_verdict_to_string(ResolverVerdict v);

/* Parses "pinned,map-files,…" into a method mask; -EINVAL on unknown names. */
int resolver_methods_from_string(const char *s, unsigned *ret_mask);

DEFINE_TRIVIAL_CLEANUP_FUNC(Resolver *, resolver_free);
#define _cleanup_resolver_ __attribute__((cleanup(resolver_freep)))

/* The rest of this folder's public interface: other folders include this header only. */
#include "container-list.h"
#include "debug-trees.h"
#include "mountinfo.h"
