/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helper-client-jit.c: the JIT_NAMES request and the validation of its
 * answers: every name must sit in code that covers its address. */
#include "helper-client-jit.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "basic.h"
#include "helper-client-internal.h"

static void jit_name_clear(HelperJitName *n) {
        free(n->name);
        free(n->file);
        *n = (HelperJitName) {};
}

HelperJitNames *helper_jit_names_free(HelperJitNames *j) {
        if (!j)
                return NULL;
        for (size_t i = 0; i < j->n; i++)
                jit_name_clear(&j->names[i]);
        free(j->names);
        free(j);
        return NULL;
}

static bool decode_one(HelperReader *rd, uint64_t address, HelperJitName *out) {
        uint8_t status = helper_get_u8(rd), flags = helper_get_u8(rd);
        uint16_t reserved = helper_get_u16(rd);
        uint64_t start = helper_get_u64(rd), size = helper_get_u64(rd);
        uint32_t line = helper_get_u32(rd);
        _cleanup_free_ char *name = helper_get_string(rd, HELPER_MAX_NAME, true);
        _cleanup_free_ char *file = name ? helper_get_string(rd, HELPER_MAX_PATH, true) : NULL;
        if (rd->failed || !name || !file || reserved != 0 || status >= _HELPER_JIT_STATUS_MAX ||
            (flags & ~(uint8_t) HELPER_JIT_HAS_SOURCE))
                return false;
        bool named = status == HELPER_JIT_NAMED, source = flags & HELPER_JIT_HAS_SOURCE;
        if (named ? !*name || address < start || address - start >= size || start + size < start
                  : *name || start || size || flags)
                return false;
        if (source != (*file != '\0') || source != (line != 0))
                return false;
        *out = (HelperJitName) {
                .status = status,
                .start = start,
                .size = size,
                .name = named ? TAKE_PTR(name) : NULL,
                .file = source ? TAKE_PTR(file) : NULL,
                .line = line,
        };
        return true;
}

int helper_jit_names_reply_decode(const uint8_t *payload, size_t size, const uint64_t *addresses, size_t count,
                                  HelperJitName *out, uint32_t *entries, uint32_t *refused) {
        HelperReader rd;
        helper_reader_init(&rd, payload, size);
        uint32_t e = helper_get_u32(&rd), x = helper_get_u32(&rd), n = helper_get_u32(&rd);
        bool ok = !rd.failed && n == count && x <= e;
        size_t decoded = 0; /* out[0..decoded) hold allocations */
        while (ok && decoded < count && decode_one(&rd, addresses[decoded], &out[decoded]))
                decoded++;
        if (!ok || decoded < count || !helper_reader_finished(&rd)) {
                for (size_t k = 0; k < decoded; k++)
                        jit_name_clear(&out[k]);
                return -EBADMSG;
        }
        /* every batch reads the whole file: keep the largest counts */
        if (e > *entries)
                *entries = e;
        if (x > *refused)
                *refused = x;
        return 0;
}

int helper_client_jit_names(HelperClient *c, int fd, HelperJitFormat format, const uint64_t *addresses, size_t n,
                            HelperJitNames **ret, char **ret_why) {
        struct stat st;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                why_set(ret_why, strdup("not a regular file"));
                return -EBADF;
        }
        for (size_t i = 1; i < n; i++)
                if (addresses[i] <= addresses[i - 1])
                        return -EINVAL;
        _cleanup_(helper_jit_names_freep) HelperJitNames *j = calloc(1, sizeof *j);
        if (!j || !(j->names = calloc(n ? n : 1, sizeof *j->names)))
                return -ENOMEM;
        j->n = n;
        for (size_t first = 0; first < n; first += HELPER_MAX_JIT_BATCH) {
                size_t count = n - first < HELPER_MAX_JIT_BATCH ? n - first : HELPER_MAX_JIT_BATCH;
                HelperWriter w;
                helper_writer_init(&w, HELPER_MAX_PAYLOAD);
                helper_put_u32(&w, format);
                helper_put_u32(&w, (uint32_t) count);
                for (size_t i = 0; i < count; i++)
                        helper_put_u64(&w, addresses[first + i]);
                HelperMessage m = {};
                int r = helper_client_request(c, HELPER_MSG_JIT_NAMES, &w, &fd, 1, &m, ret_why);
                if (r < 0)
                        return r;
                r = helper_jit_names_reply_decode(m.payload, m.payload_size, addresses + first, count,
                                                  j->names + first, &j->entries, &j->refused);
                helper_message_clear(&m);
                if (r < 0)
                        return helper_client_fail(c, ret_why, strdup("invalid answer to JIT_NAMES"));
        }
        *ret = TAKE_PTR(j);
        return 0;
}
