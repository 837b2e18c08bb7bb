/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* frame-copy.h: copies frames that a profiled program wrote (control-fd
 * rings, trace fds), already decoded and checked by the capture reader,
 * into the recording's capture: only MARK, LOG, CTRDEF, CTRSET, SAMPLE,
 * ALLOCATION and JITMAP, with the program's counter ids remapped per (pid, id) into the
 * recording's id space so they cannot clash with the service's own or with
 * another program's. Shared by control-ring.c and trace-fd.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "basic.h"
#include "capture.h"
#include "counters.h"

/* Called with the code addresses of each SAMPLE and ALLOCATION frame copied
 * (innermost first, context markers included), e.g. to symbolize them. */
typedef void (*ControlAddressFunc)(int32_t pid, const uint64_t *addrs, size_t n, void *userdata);

typedef struct FrameCopier FrameCopier;

/* A copier into writer, allocating capture counter ids from ids (both must
 * outlive it) for at most max_counters (pid, id) pairs. */
int frame_copier_new(CaptureWriter *writer, CounterIdAllocator *ids, size_t max_counters, FrameCopier **ret);
FrameCopier *frame_copier_free(FrameCopier *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(FrameCopier *, frame_copier_free);

void frame_copier_set_address_func(FrameCopier *c, ControlAddressFunc func, void *userdata);

/* A reader over a capture header alone (header[] must outlive it), to
 * decode frames held elsewhere (ring, trace fd copy) in one byte order with
 * capture_reader_decode_frame(). */
int frame_decoder_new(bool little_endian, uint8_t header[CAPTURE_FILE_HEADER_SIZE], CaptureReader **ret);

/* Counter ids of the frames copied from now on belong to space (0 at
 * first): one space per writer (a trace fd's capture, a second capture on
 * the same fd), so two writers of one process that both number their
 * counters from 1 get different capture ids. */
void frame_copier_set_id_space(FrameCopier *c, uint8_t space);

/* Whether frames of this type are ever copied (the others are skipped). */
bool frame_copier_copies_type(int type);

/* Copies f. Returns 1 when copied, 0 for a type that is not copied,
 * negative errno from the writer. */
int frame_copier_copy(FrameCopier *c, const CaptureFrame *f);
