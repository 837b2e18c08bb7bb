/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cleanup.h: systemd-style scope cleanup helpers shared by every Periscope
 * component (plain C; GLib code uses g_autoptr/g_autofree instead). */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

/* Defines `name##p(type *p)` that calls func(*p) when *p is set. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)                 \
        static inline void func##p(type *p) {                   \
                if (*p)                                         \
                        func(*p);                               \
        }

static inline void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}

static inline void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}
#define _cleanup_closedir_ _cleanup_(closedirp)

/* Closes an fd and keeps errno intact, so error paths can still report it. */
static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                close(fd);
                errno = saved;
        }
        return -1;
}

static inline void closep(int *fd) {
        safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

/* Takes ownership out of a cleanup variable: returns it and leaves NULL/-1. */
#define TAKE_PTR(p) ({ __typeof__(p) _tp = (p); (p) = NULL; _tp; })
#define TAKE_FD(fd) ({ int _tfd = (fd); (fd) = -1; _tfd; })

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define ALIGN_TO(x, a) (((x) + ((a) - 1)) & ~((__typeof__(x)) (a) - 1))

/* qsort() that accepts an empty (possibly NULL) array, which plain qsort()
 * declares undefined. */
static inline void qsort_safe(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
        if (n > 1)
                qsort(base, n, size, cmp);
}
