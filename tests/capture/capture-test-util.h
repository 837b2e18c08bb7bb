/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-test-util.h: shared helpers of the capture tests: a tiny check
 * macro, the reference capture holding every frame type with known contents,
 * a canonical text form of a decoded frame (for comparing readers), and a
 * little-endian → big-endian converter that knows the on-disk layout. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "capture.h"

/* The fatal checks of the helpers here (and of the programs that use them);
 * a TEST() file includes test-check.h first and counts its own CHECKs. */
#ifndef CHECK
#define CHECK(cond)                                                                         \
        do {                                                                                \
                if (!(cond)) {                                                              \
                        fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
                        exit(1);                                                            \
                }                                                                           \
        } while (0)
#endif

#define CHECK_OK(expr)                                                                      \
        do {                                                                                \
                long _r = (long) (expr);                                                    \
                if (_r < 0) {                                                               \
                        fprintf(stderr, "%s:%d: %s failed: %ld\n", __FILE__, __LINE__, #expr, _r); \
                        exit(1);                                                            \
                }                                                                           \
        } while (0)

#define CHECK_STR(a, b)                                                                     \
        do {                                                                                \
                const char *_a = (a), *_b = (b);                                            \
                if (!_a || !_b || strcmp(_a, _b) != 0) {                                    \
                        fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, \
                                _a ? _a : "(null)", _b ? _b : "(null)");                     \
                        exit(1);                                                            \
                }                                                                           \
        } while (0)

/* Start time of the reference capture; frame n (1..15) has time T0 + n. */
#define TEST_T0 1000000000ll

/* Address lists of the reference SAMPLE and ALLOCATION frames. */
#define TEST_N_SAMPLE_ADDRS 6
#define TEST_N_ALLOC_ADDRS 3
extern const uint64_t test_sample_addrs[TEST_N_SAMPLE_ADDRS];
extern const uint64_t test_alloc_addrs[TEST_N_ALLOC_ADDRS];

/* Writes the reference capture: one frame of every type 1–15, in type order,
 * with the contents test_check_all_types() expects. */
void test_write_all_types(CaptureWriter *w);

/* Reads the 15 reference frames from r and checks every field of each
 * (the caller checks what follows). */
void test_check_all_types(CaptureReader *r);

/* Same; with TEST_FROM_SYSPROF_WRITER the header start time and the JITMAP
 * frame's time/cpu/pid (which Sysprof's writer chooses itself) are not checked. */
#define TEST_FROM_SYSPROF_WRITER 1u
void test_check_all_types_full(CaptureReader *r, unsigned flags);

/* A canonical, complete text form of a frame (every field, data as hex). */
char *test_describe_frame(const CaptureFrame *f);

/* All frames of a reader, described and joined by newlines. */
char *test_describe_all(CaptureReader *r);

/* Reads a whole fd from offset 0. */
uint8_t *test_read_all(int fd, size_t *ret_len);

/* Rewrites a little-endian capture in place as the big-endian host that
 * Sysprof's bitfield structs would produce. Aborts on a malformed input. */
void test_swap_to_big_endian(uint8_t *buf, size_t size);

/* An anonymous temporary file (memfd). */
int test_memfd(const char *name);

/* A METADATA frame with id and text, as a reader would give it. */
CaptureFrame test_metadata_frame(const char *id, const char *text);

/* How many of the n METADATA texts (of id) parse() does not refuse with
 * -EBADMSG; says each on stderr. */
size_t test_count_accepted(int (*parse)(const char *id, const char *text), const char *id, const char *const *texts,
                           size_t n);

/* The file at path in r holds exactly the len bytes of want. */
void test_check_file(CaptureReader *r, const char *path, const uint8_t *want, size_t len);

/* The bytes of a capture (starting at TEST_T0) that add() writes frames
 * into; big-endian as Sysprof's structs on such a host when asked. */
uint8_t *test_capture_bytes(void (*add)(CaptureWriter *w), bool big_endian, size_t *ret_len);
