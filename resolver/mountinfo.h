/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mountinfo.h: parsed /proc/PID/mountinfo, the view of one mount namespace:
 * which filesystem (device, root inside it) is mounted where. Used to
 * translate a path seen in a process's namespace into a host path. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "basic.h"

typedef struct MountEntry {
        int mount_id, parent_id;
        unsigned dev_major, dev_minor;
        char *root;            /* path inside the filesystem ("/@home/sub") */
        char *mount_point;     /* where it is mounted, in that namespace */
        char *fstype;          /* "ext4", "overlay", "fuse.fuse-overlayfs", "btrfs" */
        char *source;
        char *super_options;   /* "rw,subvolid=256,subvol=/@home" */
} MountEntry;

typedef struct MountTable {
        MountEntry *entries;
        size_t n_entries;
} MountTable;

/* Parses mountinfo text (octal escapes decoded); -EBADMSG on malformed lines. */
int mount_table_parse(const char *text, MountTable **ret);

/* Reads /proc/PID/mountinfo (pid 0: our own). */
int mount_table_load(pid_t pid, MountTable **ret);

MountTable *mount_table_free(MountTable *t);

/* The mount that contains path (longest mount-point prefix, last mounted
 * wins), with *ret_rest pointing into path after the mount point ("" or
 * "rel/path" without leading '/'). NULL if none. */
const MountEntry *mount_table_find_by_path(const MountTable *t, const char *path, const char **ret_rest);

/* The mount with this mount id, or NULL. */
const MountEntry *mount_table_find_by_id(const MountTable *t, int mount_id);

/* Value of option name in a comma-separated option string, copied to buf. */
int mount_option_get(const char *options, const char *name, char *buf, size_t size);

DEFINE_TRIVIAL_CLEANUP_FUNC(MountTable *, mount_table_free);
#define _cleanup_mount_table_ __attribute__((cleanup(mount_table_freep)))
