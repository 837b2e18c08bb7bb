/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-corpus.h: the corpus of hand-broken captures. Each case is the
 * bytes of a capture with one defect and the exact error message (offset
 * included) the reader must give for it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct CorpusCase {
        const char *name;
        uint8_t *data;    /* malloc'ed; exactly len bytes are meaningful */
        size_t len;
        char *expected;   /* message from capture_reader_error() or the open error */
} CorpusCase;

size_t corpus_n_cases(void);

/* Builds case i; false past the last one. Free with corpus_case_clear(). */
bool corpus_get_case(size_t i, CorpusCase *ret);

void corpus_case_clear(CorpusCase *c);
