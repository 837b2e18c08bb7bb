/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-client.c: libFuzzer target over the service side's validation of
 * helper answers (IDENTIFY, SYMBOLIZE and JIT_NAMES reply decoding): whatever a
 * compromised helper sends must be refused or decoded within the limits. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "helper-client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 2)
                return 0;
        const uint8_t *payload = data + 2;
        size_t n = size - 2;
        if (data[0] & 1) {
                HelperIdentity id;
                if (helper_identify_reply_decode(payload, n, data[0] & 2 ? HELPER_IDENTIFY_WANT_FILE_CRC : 0, &id)) {
                        if (id.build_id_size > HELPER_MAX_BUILD_ID || strlen(id.debuglink) > HELPER_MAX_DEBUGLINK ||
                            strchr(id.debuglink, '/'))
                                abort();
                }
                return 0;
        }
        size_t count = (size_t) (data[1] % 16) + 1;
        if (data[0] & 4) {
                uint64_t addrs[16];
                HelperJitName names[16];
                uint32_t entries = 0, refused = 0;
                for (size_t i = 0; i < count; i++)
                        addrs[i] = 0x1000 + 0x100 * i;
                if (helper_jit_names_reply_decode(payload, n, addrs, count, names, &entries, &refused) < 0)
                        return 0;
                for (size_t i = 0; i < count; i++) {
                        const HelperJitName *j = &names[i];
                        if ((j->status == HELPER_JIT_NAMED) != (j->name != NULL))
                                abort();
                        if (j->name && (addrs[i] < j->start || addrs[i] - j->start >= j->size || !*j->name ||
                                        strlen(j->name) > HELPER_MAX_NAME ||
                                        !helper_utf8_valid(j->name, strlen(j->name))))
                                abort();
                        if (j->file && (strlen(j->file) > HELPER_MAX_PATH || j->line == 0))
                                abort();
                        free(j->name);
                        free(j->file);
                }
                return 0;
        }
        HelperSymbols *s = NULL;
        if (helper_symbolize_reply_decode(payload, n, count, &s) == 0) {
                if (s->n_addresses != count)
                        abort();
                for (size_t i = 0; i < count; i++) {
                        const HelperAddressSymbols *a = &s->addresses[i];
                        if (a->n_frames > HELPER_MAX_FRAMES || (a->status == HELPER_ADDRESS_OK) != (a->n_frames > 0))
                                abort();
                        for (size_t k = 0; k < a->n_frames; k++) {
                                const HelperFrame *f = &a->frames[k];
                                size_t l = strlen(f->name);
                                if (l == 0 || l > HELPER_MAX_NAME || !helper_utf8_valid(f->name, l))
                                        abort();
                                if (f->file && (strlen(f->file) > HELPER_MAX_PATH || f->line == 0))
                                        abort();
                        }
                }
                helper_symbols_free(s);
        }
        return 0;
}
