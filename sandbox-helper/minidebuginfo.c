/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* minidebuginfo.c: Fedora-style MiniDebugInfo: an xz-compressed ELF with a
 * .symtab in the .gnu_debugdata section of a stripped binary. Decompressed
 * here with liblzma under explicit memory and output limits. */
#include "minidebuginfo.h"

#include <errno.h>
#include <gelf.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"

static Elf_Scn *find_section(Elf *elf, const char *wanted) {
        size_t shstrndx;
        if (elf_getshdrstrndx(elf, &shstrndx) < 0)
                return NULL;
        for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
                GElf_Shdr shdr;
                if (!gelf_getshdr(scn, &shdr))
                        return NULL;
                const char *name = elf_strptr(elf, shstrndx, shdr.sh_name);
                if (name && strcmp(name, wanted) == 0)
                        return scn;
        }
        return NULL;
}

int minidebuginfo_decompress(Elf *elf, uint8_t **ret, size_t *ret_size) {
        Elf_Scn *scn = find_section(elf, ".gnu_debugdata");
        if (!scn)
                return 0;
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
                return -EBADMSG;
        Elf_Data *data = elf_rawdata(scn, NULL);
        if (!data || !data->d_buf || data->d_size == 0)
                return -EBADMSG;

        lzma_stream strm = LZMA_STREAM_INIT;
        if (lzma_stream_decoder(&strm, MINIDEBUGINFO_MEMLIMIT, 0) != LZMA_OK)
                return -ENOMEM;
        size_t allocated = 64 * 1024, size = 0;
        _cleanup_free_ uint8_t *out = malloc(allocated);
        if (!out) {
                lzma_end(&strm);
                return -ENOMEM;
        }
        strm.next_in = data->d_buf;
        strm.avail_in = data->d_size;
        int r = 0;
        for (;;) {
                if (size == allocated) {
                        if (allocated >= MINIDEBUGINFO_MAX_OUTPUT) {
                                r = -EFBIG;
                                break;
                        }
                        allocated *= 2;
                        uint8_t *n = realloc(out, allocated);
                        if (!n) {
                                r = -ENOMEM;
                                break;
                        }
                        out = n;
                }
                strm.next_out = out + size;
                strm.avail_out = allocated - size;
                lzma_ret lr = lzma_code(&strm, LZMA_FINISH);
                size = allocated - strm.avail_out;
                if (lr == LZMA_STREAM_END)
                        break;
                if (lr == LZMA_OK && (strm.avail_out == 0 || strm.avail_in > 0))
                        continue;
                r = lr == LZMA_MEM_ERROR || lr == LZMA_MEMLIMIT_ERROR ? -ENOMEM : -EBADMSG;
                break;
        }
        lzma_end(&strm);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(out);
        *ret_size = size;
        return 1;
}
