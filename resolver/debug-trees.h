/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* debug-trees.h: the filesystem trees of a process in a container or app
 * where its separate debug files may live, besides the host's own
 * /usr/lib/debug:
 *  - its root as it sees it: /proc/PID/root while it lives and root may enter
 *    it, else the Podman layer chain from its owner's store, else the Flatpak
 *    app-path (/app) and runtime-path (/usr);
 *  - the installed .Debug extensions of its Flatpak app (APPID.Debug, which is
 *    /app/lib/debug) and runtime (ID.Debug, which is /usr/lib/debug), from the
 *    system installation (/var/lib/flatpak) or the owner's per-user one
 *    (~/.local/share/flatpak).
 * Everything in these trees belongs to the container's or app's (possibly
 * unprivileged) owner: files are opened with tree_open_following() (symlinks
 * followed only inside the tree, never through the kernel), and a debug file
 * found there is used only when its build-id (or .gnu_debuglink CRC) matches,
 * which the sandboxed helper checks (debug-files.h). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "resolver.h"

typedef enum DebugTree {
        DEBUG_TREE_ROOT,                  /* the container's or app's root as the process sees it */
        DEBUG_TREE_FLATPAK_APP_DEBUG,     /* the app's APPID.Debug extension: /app/lib/debug */
        DEBUG_TREE_FLATPAK_RUNTIME_DEBUG, /* the runtime's ID.Debug extension: /usr/lib/debug */
        _DEBUG_TREE_MAX,
} DebugTree;

/* Which trees pid has (ROOT for Podman and Flatpak processes; the .Debug
 * extensions when installed), into ret (up to max). Returns the count; 0 for
 * host processes and unknown pids. */
size_t debug_trees_list(Resolver *r, pid_t pid, DebugTree *ret, size_t max);

/* Provenance word of a tree: "container" (Podman root), "flatpak" (the app's
 * sandbox), "flatpak-app-debug", "flatpak-runtime-debug". */
const char *debug_tree_to_string(Resolver *r, pid_t pid, DebugTree t);

/* Where debug files live in the tree (absolute, in the tree): for ROOT
 * "/usr/lib/debug" (and, i = 1, "/app/lib/debug" for Flatpak), for the
 * extensions "/" (their files are the debug directory). NULL past the last. */
const char *debug_tree_debug_dir(Resolver *r, pid_t pid, DebugTree t, size_t i);

/* Opens the regular file at path inside tree t of pid, following symlinks
 * only inside it. Returns an fd or a negative errno; shown gets the host path
 * used, *ret_why (may be NULL) the links followed or why a candidate was
 * refused, malloc'd or NULL (a link out of the tree: -EXDEV; the caller
 * reports it). */
int debug_trees_open(Resolver *r, pid_t pid, DebugTree t, const char *path, char *shown, size_t shown_size,
                     char **ret_why);

/* Splits a Flatpak ref "runtime/ID/ARCH/BRANCH" or "app/ID/ARCH/BRANCH" (the
 * kind may be missing) into validated parts (each [A-Za-z0-9._-], not "."
 * or ".."). -EINVAL when malformed. */
int flatpak_ref_split(const char *ref, char id[256], char arch[256], char branch[256]);

/* Opens (O_PATH) the files directory of the installed Flatpak extension
 * `id` for arch/branch: /var/lib/flatpak/runtime/ID/ARCH/BRANCH/active/files,
 * else the same under uid's ~/.local/share/flatpak (owned by uid). The
 * `active` link is read and must name one entry beside it. shown gets the
 * host path. -ENOENT when not installed. */
int flatpak_extension_open(const char *id, const char *arch, const char *branch, uid_t uid, char *shown, size_t shown_size);
