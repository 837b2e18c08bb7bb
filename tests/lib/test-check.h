/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-check.h: the checks of the C tests (CHECK, CHECK_MSG, fail, MUST)
 * and their registry (TEST, test_main). A test file counts its own
 * failures (one `failures` per file) and exits non-zero when there were
 * any. See tests/README.md. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Stops the test when a step the later checks need fails: expr returns 0
 * or positive, or a negative errno (said with its text). */
#define MUST(expr)                                                                                                     \
        do {                                                                                                           \
                long _must_r = (long) (expr);                                                                          \
                if (_must_r < 0) {                                                                                     \
                        fprintf(stderr, "FAIL: %s:%d: %s: %s\n", __FILE__, __LINE__, #expr, strerror((int) -_must_r)); \
                        exit(1);                                                                                       \
                }                                                                                                      \
        } while (0)

/* ---- the test registry ----
 * TEST(name) { ... } defines a test; test_main() runs them in the order of
 * the file (or only those named on the command line: `test-foo name…`),
 * prints "ok: name" or "FAIL: name (N checks)" (or, when a step the case
 * needs exits, "FAIL: name (stopped: …)"), and returns the exit status:
 *
 *     TEST(round_trip) { CHECK(decode(encode(x)) == x); }
 *     int main(int argc, char **argv) { return test_main(argc, argv); }
 */
typedef struct TestCase {
        const char *name;
        void (*func)(void);
} TestCase;

#define TEST_MAX 256
static TestCase test_cases[TEST_MAX];
static size_t test_n_cases;

__attribute__((unused)) static void test_register(const char *name, void (*func)(void)) {
        if (test_n_cases >= TEST_MAX) {
                fprintf(stderr, "FAIL: more than %d tests in one file\n", TEST_MAX);
                exit(1);
        }
        test_cases[test_n_cases++] = (TestCase) { name, func };
}

#define TEST(name)                                                                                                     \
        static void test_##name(void);                                                                                 \
        __attribute__((constructor)) static void test_register_##name(void) {                                          \
                test_register(#name, test_##name);                                                                     \
        }                                                                                                              \
        static void test_##name(void)

/* The case running now: a step it needs that exits (MUST, a helper's
 * fatal check) still names it. */
__attribute__((unused)) static const char *test_running;
__attribute__((unused)) static pid_t test_main_pid;

__attribute__((unused)) static void test_exit_hook(void) {
        /* not in a child a case forked: its exit() is the case's business */
        if (test_running && getpid() == test_main_pid)
                fprintf(stderr, "FAIL: %s (stopped: a step it needs failed)\n", test_running);
}

__attribute__((unused)) static int test_main(int argc, char **argv) {
        size_t ran = 0;
        /* the case's lines beside its checks' (stderr) */
        setvbuf(stdout, NULL, _IOLBF, 0);
        test_main_pid = getpid();
        atexit(test_exit_hook);
        for (size_t i = 0; i < test_n_cases; i++) {
                bool wanted = argc < 2;
                for (int a = 1; a < argc && !wanted; a++)
                        wanted = strcmp(argv[a], test_cases[i].name) == 0;
                if (!wanted)
                        continue;
                int before = failures;
                test_running = test_cases[i].name;
                test_cases[i].func();
                test_running = NULL;
                ran++;
                if (failures > before)
                        printf("FAIL: %s (%d checks)\n", test_cases[i].name, failures - before);
                else
                        printf("ok: %s\n", test_cases[i].name);
        }
        if (ran == 0) {
                fprintf(stderr, "FAIL: no test matches the names given\n");
                return 1;
        }
        if (failures) {
                fprintf(stderr, "%d check(s) failed\n", failures);
                return 1;
        }
        return 0;
}
