/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pinned-files.h: every file a recording saw mapped, opened once at first
 * sight and kept open until the recording is freed, so that later stages
 * (symbolization, unwind tables) read exactly the inode that was mapped, even
 * after the process exited or the package was upgraded. Keyed by the
 * identity the kernel reported for the mapping (device, inode). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum PinnedFileHow {
        PINNED_VIA_MAP_FILES,      /* /proc/PID/map_files/START-END: the mapped inode itself */
        PINNED_VIA_PROC_ROOT,      /* /proc/PID/root/PATH, identity checked */
        PINNED_VIA_PATH,           /* PATH in the service's namespace, identity checked (a caller
                                    * other than root: with its rights, in the process's root while it
                                    * lives, else ours; build-id checked where that is all there is) */
        PINNED_VIA_RESOLVER,       /* resolver/: mount translation, Podman store, Flatpak; identity checked */
        PINNED_VIA_PROCESS_MEMORY, /* the vdso: its image read from the process into a sealed memfd */
} PinnedFileHow;

typedef struct Resolver Resolver; /* resolver/resolver.h */

/* For a pin whose dev/inode could not be checked: whether the file carries
 * the build-id the kernel reported for the mapping (asked of the helper
 * before an unwind table is compiled from it). */
typedef enum PinnedBuildIdCheck {
        PINNED_BUILD_ID_UNCHECKED,
        PINNED_BUILD_ID_MATCHES,
        PINNED_BUILD_ID_DIFFERS,   /* or could not be read: the file is not used for unwinding */
} PinnedBuildIdCheck;

typedef struct PinnedFile {
        uint64_t dev;              /* makedev() of the mapping's device as the kernel reported it */
        uint64_t inode;
        int fd;                    /* O_RDONLY|O_CLOEXEC, a regular file */
        char *path;                /* the path the mapping names (may end in " (deleted)") */
        PinnedFileHow how;
        bool identity_checked;     /* fstat() matched dev/inode (always for map_files) */
        char *provenance;          /* PINNED_VIA_RESOLVER: method, host path and why; else NULL */
        PinnedBuildIdCheck build_id_check;
        bool identity_written;      /* its periscope.file frame is in the capture (mapping-identity.h) */
        bool identity_has_build_id; /* … with the kernel's build-id */
} PinnedFile;

typedef struct PinFailure {
        uint64_t dev, inode;
        char *reason;              /* e.g. "PATH: binary changed since it was mapped (inode N, …)" */
} PinFailure;

#define PINNED_FILES_MAX_FAILURE_REASONS 1024

typedef struct PinnedFiles PinnedFiles;

/* max_files bounds the fds held (the rest are counted as failures). */
int pinned_files_new(size_t max_files, PinnedFiles **ret);

/* Closes every fd. NULL is a no-op. */
PinnedFiles *pinned_files_free(PinnedFiles *f);

/* Pins the file mapped at [start, end) in pid under path. dev/inode are the
 * mapping's identity from the kernel, or 0/0 when unknown (MMAP2 records that
 * carry a build-id instead); then the identity comes from the opened file.
 * Returns 0 with *ret set (an existing pin or a new one), or negative errno
 * (-ENOENT: no file backs this mapping; -ESTALE: the path names another file). */
int pinned_files_pin_mapping(PinnedFiles *f, pid_t pid, uint64_t start, uint64_t end, const char *path,
                             uint64_t dev, uint64_t inode, PinnedFile **ret);

/* A caller who is not root records: a vdso is read only out of a process
 * that is still owner_uid's once its memory is open (vdso_image_read()). */
void pinned_files_set_owner(PinnedFiles *f, uid_t owner_uid);

/* Pins the vdso mapped at [start, end) in pid: its image, read out of the
 * process into a sealed memfd, so it is symbolized like a file. One pin
 * per distinct image (every process of an ABI shares it). */
int pinned_files_pin_vdso(PinnedFiles *f, pid_t pid, uint64_t start, uint64_t end, PinnedFile **ret);

/* The pin for a (dev, inode), or NULL. */
PinnedFile *pinned_files_lookup(const PinnedFiles *f, uint64_t dev, uint64_t inode);

/* Iteration in (dev, inode) order. */
size_t pinned_files_get_n(const PinnedFiles *f);
PinnedFile *pinned_files_get(const PinnedFiles *f, size_t i);

/* Lets pins fall back to the resolver (containers, sandboxes, other mount
 * namespaces) when /proc/PID/map_files and /proc/PID/root fail; and fills a
 * missing identity (MMAP2 with a build-id) from /proc/PID/maps. Borrowed. */
void pinned_files_set_resolver(PinnedFiles *f, Resolver *r);

/* The resolver set above, or NULL. */
Resolver *pinned_files_get_resolver(const PinnedFiles *f);

/* Why the mapping (dev, inode) could not be pinned when the resolver found
 * another file at its path ("binary changed since it was mapped …"), so the
 * report names that instead of a generic reason; NULL if nothing is known. */
const char *pinned_files_get_failure_reason(const PinnedFiles *f, uint64_t dev, uint64_t inode);

/* Mappings that could not be pinned. */
uint64_t pinned_files_get_failures(const PinnedFiles *f);
/* Takes back n failures counted before for mappings tried again (a retry's
 * verdict replaces the first one's). */
void pinned_files_forget_failures(PinnedFiles *f, uint64_t n);

/* Human-readable name of a PinnedFileHow. */
const char *pinned_file_how_to_string(PinnedFileHow how);
