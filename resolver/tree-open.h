/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tree-open.h: opening a file by path inside a foreign filesystem tree (a
 * container's root, a Podman layer chain, a Flatpak app/runtime or .Debug
 * extension) the way a process in it would see it, following symbolic links
 * only inside the tree: each link is read and resolved by us, absolute
 * targets against the tree's root, and a target that climbs above the root
 * is refused (not clamped) and reported. The tree itself is reached through
 * a "no symlinks at all" opener (safe-open.h), so no kernel path walk ever
 * leaves it. */
#pragma once

#include <stddef.h>

#define TREE_OPEN_MAX_LINKS 8

/* Opens path (absolute, normalized, as seen in the tree) with flags (O_PATH,
 * O_PATH|O_NOFOLLOW or O_RDONLY), no symlinks anywhere in the path;
 * O_PATH|O_NOFOLLOW must return a trailing symlink itself; O_RDONLY must not
 * block (O_NONBLOCK). It decides with whose rights files are opened. Returns an fd or a negative errno (-ELOOP: a symlink is in
 * the way). Fills shown (may be NULL) with the host path for messages. */
typedef int (*TreeOpenFunc)(void *userdata, const char *path, int flags, char *shown, size_t shown_size);

/* Opens the regular file at path inside the tree read-only, following at most
 * TREE_OPEN_MAX_LINKS symlinks within it. Looks with O_PATH first, so FIFOs
 * and devices are never opened (an overlay whiteout, a 0:0 character
 * device, counts as absent). Returns an fd, or a negative errno:
 * -EXDEV when a link leads out of the tree (ret_why says which), -ELOOP for too
 * many links, -EBADF for a non-regular file. *ret_why (may be NULL) gets the
 * links followed or the reason for a refusal, malloc'd (NULL when none). */
int tree_open_following(TreeOpenFunc open_func, void *userdata, const char *path, char *shown, size_t shown_size,
                        char **ret_why);

/* Lexically normalizes an absolute path ("//", ".", ".." removed) into out.
 * -EXDEV when ".." climbs above "/", -ENAMETOOLONG, -EINVAL if not absolute. */
int tree_path_normalize(const char *path, char *out, size_t out_size);
