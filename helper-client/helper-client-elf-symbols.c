/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helper-client-elf-symbols.c: the ELF_SYMBOLS request and the validation
 * of its answer: the segment must hold the mapping's offset, every symbol
 * must land in user space. */
#include "helper-client-elf-symbols.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "basic.h"
#include "helper-client-internal.h"

/* Above it no user address lies on x86_64 or arm64 (47/48-bit user halves). */
#define USER_ADDRESS_END (1ull << 48)

int helper_elf_symbols_reply_decode(const uint8_t *payload, size_t size, uint64_t start, uint64_t pgoff, size_t n,
                                    HelperElfSymbol *ret) {
        HelperReader rd;
        helper_reader_init(&rd, payload, size);
        uint64_t p_vaddr = helper_get_u64(&rd), p_offset = helper_get_u64(&rd);
        HelperElfSymbol out[HELPER_MAX_ELF_SYMBOLS] = {};
        uint64_t value[HELPER_MAX_ELF_SYMBOLS];
        if (n == 0 || n > HELPER_MAX_ELF_SYMBOLS)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                uint8_t found = helper_get_u8(&rd);
                value[i] = helper_get_u64(&rd);
                out[i].size = helper_get_u64(&rd);
                if (found > 1 || (!found && (value[i] || out[i].size)))
                        return -EBADMSG;
                out[i].found = found;
        }
        if (rd.failed || !helper_reader_finished(&rd))
                return -EBADMSG;
        /* the mapping starts at the page of the segment's first byte, or later in it */
        if (pgoff < (p_offset & ~(uint64_t) 4095) || start >= USER_ADDRESS_END || pgoff >= USER_ADDRESS_END)
                return -EBADMSG;
        /* address = st_value - p_vaddr + p_offset - pgoff + start, in u64 arithmetic */
        uint64_t bias = start - pgoff + p_offset - p_vaddr;
        for (size_t i = 0; i < n; i++) {
                if (!out[i].found)
                        continue;
                uint64_t a = value[i] + bias;
                if (a >= USER_ADDRESS_END || out[i].size > USER_ADDRESS_END - a)
                        return -ERANGE;
                out[i].address = a;
        }
        memcpy(ret, out, n * sizeof *out);
        return 0;
}

int helper_client_elf_symbols(HelperClient *c, int fd, uint64_t start, uint64_t pgoff, const char *const *names,
                              size_t n, HelperElfSymbol *ret, char **ret_why) {
        struct stat st;
        if (n == 0 || n > HELPER_MAX_ELF_SYMBOLS)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (!names[i] || !*names[i] || strlen(names[i]) > HELPER_MAX_FIELD)
                        return -EINVAL;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                why_set(ret_why, strdup("not a regular file"));
                return -EBADF;
        }
        HelperWriter w;
        helper_writer_init(&w, HELPER_MAX_INLINE_PAYLOAD);
        helper_put_u64(&w, pgoff);
        helper_put_u32(&w, (uint32_t) n);
        for (size_t i = 0; i < n; i++)
                helper_put_string(&w, names[i], HELPER_MAX_FIELD);
        HelperMessage m = {};
        int r = helper_client_request(c, HELPER_MSG_ELF_SYMBOLS, &w, &fd, 1, &m, ret_why);
        if (r < 0)
                return r;
        r = helper_elf_symbols_reply_decode(m.payload, m.payload_size, start, pgoff, n, ret);
        helper_message_clear(&m);
        if (r == -EBADMSG)
                return helper_client_fail(c, ret_why, strdup("invalid answer to ELF_SYMBOLS"));
        if (r == -ERANGE)
                why_set(ret_why, strdup("a symbol lies outside the process's address space"));
        return r;
}
