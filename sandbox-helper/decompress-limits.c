/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* decompress-limits.c: the declared decompressed sizes of an ELF file's
 * compressed sections, checked before libelf/libdw decompress anything. */
#include "decompress-limits.h"

#include <errno.h>
#include <gelf.h>
#include <string.h>

/* A GNU .zdebug_* section: "ZLIB" and the decompressed size, 8 bytes big-endian. */
static int gnu_zdebug_size(Elf_Scn *scn, uint64_t *ret) {
        Elf_Data *d = elf_rawdata(scn, NULL);
        if (!d || !d->d_buf || d->d_size < 12 || memcmp(d->d_buf, "ZLIB", 4) != 0)
                return -EBADMSG;
        const uint8_t *p = (const uint8_t *) d->d_buf + 4;
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
                v = v << 8 | p[i];
        *ret = v;
        return 0;
}

int decompress_limits_check(Elf *elf, const char **why) {
        static const char too_large[] = "refused: its compressed sections decompress to more than "
                                        HELPER_MAX_DECOMPRESSED_SECTIONS_TEXT;
        size_t shstrndx;
        if (elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx) < 0)
                return 0; /* not for this check to judge: the parser says what it thinks */
        uint64_t total = 0;
        for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
                GElf_Shdr shdr;
                if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
                        continue;
                uint64_t size = 0;
                if (shdr.sh_flags & SHF_COMPRESSED) {
                        GElf_Chdr chdr;
                        if (!gelf_getchdr(scn, &chdr))
                                continue; /* libelf will not decompress what it cannot read */
                        size = chdr.ch_size;
                } else {
                        const char *name = elf_strptr(elf, shstrndx, shdr.sh_name);
                        if (!name || strncmp(name, ".zdebug", 7) != 0 || gnu_zdebug_size(scn, &size) < 0)
                                continue;
                }
                if (size > HELPER_MAX_DECOMPRESSED_SECTIONS - total) {
                        *why = too_large;
                        return -EFBIG;
                }
                total += size;
        }
        return 0;
}
