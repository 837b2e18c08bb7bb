/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* string-util.h: formatted strings in new memory. */
#pragma once

#include <stdarg.h>
#include <stdio.h>

/* vasprintf() that returns the string, NULL without memory. */
static inline char *strdup_vprintf(const char *format, va_list ap) __attribute__((format(printf, 1, 0)));
static inline char *strdup_vprintf(const char *format, va_list ap) {
        char *s = NULL;
        return vasprintf(&s, format, ap) < 0 ? NULL : s;
}

/* asprintf() that returns the string, NULL without memory. */
static inline char *strdup_printf(const char *format, ...) __attribute__((format(printf, 1, 2)));
static inline char *strdup_printf(const char *format, ...) {
        va_list ap;
        va_start(ap, format);
        char *s = strdup_vprintf(format, ap);
        va_end(ap);
        return s;
}
