/* test-check.h: the checks of the C tests. A test file counts its own
 * failures (one `failures` per file) and exits non-zero when there were
 * any. */
#pragma once

#include <stdarg.h>
#include <stdio.h>

static int failures;

/* Counts a failure and says what failed (printf-style). */
__attribute__((format(printf, 1, 2), unused)) static void fail(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "FAIL: ");
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
        failures++;
}

/* Fails with the condition's own text when cond is false. */
#define CHECK(cond)                                                             \
        do {                                                                    \
                if (!(cond))                                                    \
                        fail("%s:%d: %s", __FILE__, __LINE__, #cond);           \
        } while (0)

/* Fails with a message of its own (printf-style) when cond is false. */
#define CHECK_MSG(cond, ...)                                                    \
        do {                                                                    \
                if (!(cond)) {                                                  \
                        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);         \
                        fail(__VA_ARGS__);                                      \
                }                                                               \
        } while (0)
