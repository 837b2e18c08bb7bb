/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* string-util.h: formatted strings in new memory, and the reason a
 * function below the bus gives for an error (docs/ARCHITECTURE.md). */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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

/* Stores text (malloc'd, taken over; may be NULL) in *ret_why, freeing the
 * one there, or frees it when ret_why is NULL. */
static inline void why_set(char **ret_why, char *text) {
        if (ret_why) {
                free(*ret_why);
                *ret_why = text;
        } else
                free(text);
}

/* Stores the reason for error in *ret_why (freeing one already there), when
 * ret_why is not NULL: malloc'd text, or NULL without memory; %m in format
 * is error's text. Returns error, a negative errno. */
static inline int why_setf(char **ret_why, int error, const char *format, ...) __attribute__((format(printf, 3, 4)));
static inline int why_setf(char **ret_why, int error, const char *format, ...) {
        if (!ret_why)
                return error;
        va_list ap;
        errno = error < 0 ? -error : error;
        va_start(ap, format);
        char *s = strdup_vprintf(format, ap);
        va_end(ap);
        free(*ret_why);
        *ret_why = s;
        return error;
}

/* Appends the formatted text to the reasons in *why, "; "-separated (the
 * links a lookup followed, the candidates it refused); without memory
 * *why stays as it was. Nothing when why is NULL. */
static inline void why_vappendf(char **why, const char *format, va_list ap) __attribute__((format(printf, 2, 0)));
static inline void why_vappendf(char **why, const char *format, va_list ap) {
        if (!why)
                return;
        char *add = strdup_vprintf(format, ap);
        if (add && *why) {
                char *joined = strdup_printf("%s; %s", *why, add);
                free(add);
                add = joined;
        }
        if (!add)
                return;
        free(*why);
        *why = add;
}

static inline void why_appendf(char **why, const char *format, ...) __attribute__((format(printf, 2, 3)));
static inline void why_appendf(char **why, const char *format, ...) {
        va_list ap;
        va_start(ap, format);
        why_vappendf(why, format, ap);
        va_end(ap);
}
