/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-types.h: the Sysprof capture format, version 1 (as Sysprof 3.46
 * reads it), described as constants and as the decoded, host-endian view of a
 * frame that the reader hands out. The on-disk byte layout is documented in
 * docs/capture-format.md; only capture-reader.c and capture-writer.c touch it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CAPTURE_MAGIC 0xFDCA975Eu        /* always stored little-endian */
#define CAPTURE_VERSION 1
#define CAPTURE_FILE_HEADER_SIZE 256
#define CAPTURE_FRAME_HEADER_SIZE 24
#define CAPTURE_ALIGN 8
#define CAPTURE_FRAME_MAX 65528          /* largest 8-aligned value of the u16 length */

/* Fixed sizes of frames with their fixed fields, before variable data. */
#define CAPTURE_SAMPLE_SIZE 32
#define CAPTURE_MAP_SIZE 56
#define CAPTURE_FORK_SIZE 28
#define CAPTURE_JITMAP_SIZE 28
#define CAPTURE_CTRDEF_SIZE 32
#define CAPTURE_COUNTER_SIZE 128
#define CAPTURE_CTRSET_SIZE 32
#define CAPTURE_CTRSET_GROUP_SIZE 96
#define CAPTURE_MARK_SIZE 96
#define CAPTURE_METADATA_SIZE 64
#define CAPTURE_LOG_SIZE 64
#define CAPTURE_FILE_CHUNK_SIZE 284
#define CAPTURE_ALLOCATION_SIZE 48
#define CAPTURE_OVERLAY_SIZE 32

/* Largest payloads that fit one frame. */
#define CAPTURE_SAMPLE_MAX_ADDRS ((CAPTURE_FRAME_MAX - CAPTURE_SAMPLE_SIZE) / 8)
#define CAPTURE_ALLOCATION_MAX_ADDRS ((CAPTURE_FRAME_MAX - CAPTURE_ALLOCATION_SIZE) / 8)
#define CAPTURE_FILE_CHUNK_MAX_DATA (CAPTURE_FRAME_MAX - CAPTURE_FILE_CHUNK_SIZE)
#define CAPTURE_CTRDEF_MAX_COUNTERS ((CAPTURE_FRAME_MAX - CAPTURE_CTRDEF_SIZE) / CAPTURE_COUNTER_SIZE)
#define CAPTURE_CTRSET_MAX_GROUPS ((CAPTURE_FRAME_MAX - CAPTURE_CTRSET_SIZE) / CAPTURE_CTRSET_GROUP_SIZE)

/* Fixed string field sizes (bytes on disk, terminator included if it fits). */
#define CAPTURE_MARK_GROUP_LEN 24
#define CAPTURE_MARK_NAME_LEN 40
#define CAPTURE_METADATA_ID_LEN 40
#define CAPTURE_LOG_DOMAIN_LEN 32
#define CAPTURE_FILE_PATH_LEN 256
#define CAPTURE_COUNTER_CATEGORY_LEN 32
#define CAPTURE_COUNTER_NAME_LEN 32
#define CAPTURE_COUNTER_DESCRIPTION_LEN 52

/* Context markers inside SAMPLE addresses: the values perf uses
 * (PERF_CONTEXT_*), which Sysprof stores unchanged. */
#define CAPTURE_CONTEXT_HYPERVISOR ((uint64_t) -32)
#define CAPTURE_CONTEXT_KERNEL ((uint64_t) -128)
#define CAPTURE_CONTEXT_USER ((uint64_t) -512)
#define CAPTURE_CONTEXT_GUEST ((uint64_t) -2048)
#define CAPTURE_CONTEXT_GUEST_KERNEL ((uint64_t) -2176)
#define CAPTURE_CONTEXT_GUEST_USER ((uint64_t) -2560)
#define CAPTURE_CONTEXT_MAX ((uint64_t) -4095)

/* Addresses of JIT-ed functions carry this mark (see JITMAP frames). */
#define CAPTURE_JITMAP_MARK 0xE000000000000000ull

#define CAPTURE_COUNTER_INT64 0
#define CAPTURE_COUNTER_DOUBLE 1

typedef enum CaptureFrameType {
        CAPTURE_FRAME_TIMESTAMP = 1,
        CAPTURE_FRAME_SAMPLE = 2,
        CAPTURE_FRAME_MAP = 3,
        CAPTURE_FRAME_PROCESS = 4,
        CAPTURE_FRAME_FORK = 5,
        CAPTURE_FRAME_EXIT = 6,
        CAPTURE_FRAME_JITMAP = 7,
        CAPTURE_FRAME_CTRDEF = 8,
        CAPTURE_FRAME_CTRSET = 9,
        CAPTURE_FRAME_MARK = 10,
        CAPTURE_FRAME_METADATA = 11,
        CAPTURE_FRAME_LOG = 12,
        CAPTURE_FRAME_FILE_CHUNK = 13,
        CAPTURE_FRAME_ALLOCATION = 14,
        CAPTURE_FRAME_OVERLAY = 15,
        _CAPTURE_FRAME_TYPE_MAX,
} CaptureFrameType;

/* True for a SAMPLE address that is a context marker, not a code address. */
static inline bool capture_address_is_context(uint64_t addr) {
        return addr >= CAPTURE_CONTEXT_MAX;
}

/* True for a code address in user space's half (top bit clear; the
 * kernel's are in the other half on x86-64 and arm64). One after a kernel
 * context marker is a user frame all the same: Sysprof 48's live unwinder
 * writes the user frames it unwinds over the CAPTURE_CONTEXT_USER that
 * followed the kernel's (sysprof-live-unwinder.c), so a sample taken in
 * the kernel reads KERNEL k… u… with no marker between. Readers end the
 * kernel context there, as if the marker were present. */
static inline bool capture_address_is_user_half(uint64_t addr) {
        return !(addr >> 63);
}

/* The frame type's name as Sysprof spells it ("SAMPLE"), or NULL. */
const char *capture_frame_type_to_string(int type);

typedef union CaptureCounterValue {
        int64_t v64;
        double vdbl;
} CaptureCounterValue;

typedef struct CaptureCounterDef {
        char category[CAPTURE_COUNTER_CATEGORY_LEN + 1];
        char name[CAPTURE_COUNTER_NAME_LEN + 1];
        char description[CAPTURE_COUNTER_DESCRIPTION_LEN + 1];
        uint32_t id;                      /* 24 bits on disk */
        uint8_t type;                     /* CAPTURE_COUNTER_INT64 or _DOUBLE */
        CaptureCounterValue value;        /* initial value */
} CaptureCounterDef;

typedef struct CaptureCounterSetValue {
        uint32_t id;
        CaptureCounterValue value;
} CaptureCounterSetValue;

typedef struct CaptureJitmapEntry {
        uint64_t address;
        const char *name;
} CaptureJitmapEntry;

/* One decoded frame. Pointers stay valid until the next call on the reader
 * that produced it; every string is NUL-terminated and every array holds
 * exactly the advertised number of host-endian elements (and is non-NULL,
 * even when empty). */
typedef struct CaptureFrame {
        uint64_t offset;                  /* where the frame starts in the file */
        uint16_t len;
        uint8_t type;
        int16_t cpu;
        int32_t pid;
        int64_t time;
        union {
                struct {
                        int32_t tid;
                        uint16_t n_addrs;
                        const uint64_t *addrs;
                } sample;
                struct {
                        uint64_t start, end, offset, inode;
                        const char *filename;
                } map;
                struct {
                        const char *cmdline;
                } process;
                struct {
                        int32_t child_pid;
                } fork;
                struct {
                        uint32_t n_entries;
                        const CaptureJitmapEntry *entries;
                } jitmap;
                struct {
                        uint16_t n_counters;
                        const CaptureCounterDef *counters;
                } ctrdef;
                struct {
                        uint16_t n_groups;          /* on-disk groups of 8 */
                        uint32_t n_values;          /* slots with a non-zero id */
                        const CaptureCounterSetValue *values;
                } ctrset;
                struct {
                        int64_t duration;
                        char group[CAPTURE_MARK_GROUP_LEN + 1];
                        char name[CAPTURE_MARK_NAME_LEN + 1];
                        const char *message;
                } mark;
                struct {
                        char id[CAPTURE_METADATA_ID_LEN + 1];
                        const char *metadata;
                } metadata;
                struct {
                        uint16_t severity;
                        char domain[CAPTURE_LOG_DOMAIN_LEN + 1];
                        const char *message;
                } log;
                struct {
                        bool is_last;
                        uint16_t len;
                        char path[CAPTURE_FILE_PATH_LEN + 1];
                        const uint8_t *data;
                } file_chunk;
                struct {
                        uint64_t alloc_addr;
                        int64_t alloc_size;
                        int32_t tid;
                        uint16_t n_addrs;
                        const uint64_t *addrs;
                } allocation;
                struct {
                        uint8_t layer;
                        const char *src;
                        const char *dst;
                } overlay;
        };
} CaptureFrame;
