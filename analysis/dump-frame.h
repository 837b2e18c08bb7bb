/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* dump-frame.h: one capture frame as a list of named fields, the neutral
 * form `periscope dump` writes as text or as JSON (field names in
 * docs/capture-format.md, "JSON dump"). The fields point into the frame:
 * write them before reading the next one. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "capture.h"

typedef enum DumpKind {
        DUMP_INT,     /* i */
        DUMP_HEX,     /* u: "0x1a2b" */
        DUMP_STR,     /* s: a string of the capture (any bytes): quoted and escaped in text */
        DUMP_WORD,    /* s: a keyword: bare in text */
        DUMP_BOOL,    /* b */
        DUMP_COUNTER, /* counter: a counter's value, double or int64 */
        DUMP_STACK,   /* stack: addresses with context markers (text: one per line after the frame) */
        DUMP_BYTES,   /* bytes: text shows the first DUMP_TEXT_PREVIEW, JSON all in base64 */
        DUMP_ITEMS,   /* items: n records of per fields each, which follow this one */
} DumpKind;

#define DUMP_TEXT_PREVIEW 64

typedef enum DumpFlags {
        DUMP_TEXT_ONLY = 1 << 0,
        DUMP_JSON_ONLY = 1 << 1,
        DUMP_TEXT_UNNAMED = 1 << 2,  /* text shows the value alone */
        DUMP_TEXT_DASH = 1 << 3,     /* text joins it to the field before with '-' (a range) */
        DUMP_TEXT_PAD = 1 << 4,      /* DUMP_HEX: 16 digits in text */
        DUMP_TEXT_UNSIGNED = 1 << 5, /* DUMP_INT: an unsigned 64-bit number in text */
} DumpFlags;

typedef struct DumpField {
        const char *name;      /* the JSON member */
        const char *text_name; /* the text's "NAME=", or NULL for name */
        DumpKind kind;
        DumpFlags flags;
        union {
                int64_t i;
                uint64_t u;
                const char *s;
                gboolean b;
                struct {
                        gboolean is_double;
                        CaptureCounterValue value;
                } counter;
                struct {
                        int32_t pid;
                        const uint64_t *addrs;
                        unsigned n;
                } stack;
                struct {
                        const uint8_t *data;
                        size_t len;
                } bytes;
                struct {
                        unsigned n, per;
                } items;
        };
} DumpField;

typedef struct DumpFrames DumpFrames;

/* A describer for the frames of one capture, in order (it remembers the
 * counters' types that CTRDEF frames define for the CTRSET frames). */
DumpFrames *dump_frames_new(void);
void dump_frames_free(DumpFrames *d);

/* Replaces fields' contents (DumpField) with what f holds besides the
 * fields every frame has (offset, type, time, cpu, pid, len). */
void dump_frames_describe(DumpFrames *d, const CaptureFrame *f, GArray *fields);

/* The name of a context marker address ("kernel", "user"...), or NULL. */
const char *dump_context_name(uint64_t addr);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(DumpFrames, dump_frames_free)
