/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* elf-identify.c: IDENTIFY: ELF header fields, build-id, .gnu_debuglink and
 * which symbol/debug sections a file has, with libelf on a passed fd. */
#include "elf-identify.h"

#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

#include "basic.h"

static const struct {
        const char *name;
        uint32_t bit;
} section_bits[] = {
        { ".symtab", HELPER_HAS_SYMTAB },
        { ".dynsym", HELPER_HAS_DYNSYM },
        { ".debug_info", HELPER_HAS_DWARF },
        { ".zdebug_info", HELPER_HAS_DWARF },
        { ".gnu_debugdata", HELPER_HAS_GNU_DEBUGDATA },
        { ".eh_frame", HELPER_HAS_EH_FRAME },
        { ".debug_frame", HELPER_HAS_DEBUG_FRAME },
};

static int file_crc32(int fd, uint32_t *ret) {
        uint8_t buf[64 * 1024];
        uint32_t crc = 0;
        off_t off = 0;
        for (;;) {
                ssize_t k = read_full(fd, buf, sizeof buf, off);
                if (k < 0)
                        return (int) k;
                if (k == 0)
                        break;
                crc = helper_crc32(crc, buf, (size_t) k);
                off += k;
        }
        *ret = crc;
        return 0;
}

int elf_identify_fd(int fd, uint32_t flags, HelperIdentity *ret) {
        HelperIdentity id = {};
        Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        if (!elf)
                return -ENOEXEC;
        int r = 0;
        GElf_Ehdr ehdr;
        if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr)) {
                r = -ENOEXEC;
                goto out;
        }
        id.elf_class = ehdr.e_ident[EI_CLASS];
        id.elf_data = ehdr.e_ident[EI_DATA];
        id.elf_type = ehdr.e_type;
        id.elf_machine = ehdr.e_machine;

        size_t shstrndx;
        if (elf_getshdrstrndx(elf, &shstrndx) == 0) {
                size_t n_sections = 0;
                for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
                        if (++n_sections > 65536)
                                break; /* hostile section counts: stop looking */
                        GElf_Shdr shdr;
                        if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
                                continue;
                        const char *name = elf_strptr(elf, shstrndx, shdr.sh_name);
                        if (!name)
                                continue;
                        for (size_t i = 0; i < sizeof section_bits / sizeof section_bits[0]; i++)
                                if (strcmp(name, section_bits[i].name) == 0)
                                        id.contents |= section_bits[i].bit;
                }
        }

        const void *bid = NULL;
        ssize_t bid_size = dwelf_elf_gnu_build_id(elf, &bid);
        if (bid_size > 0 && bid && (size_t) bid_size <= HELPER_MAX_BUILD_ID) {
                memcpy(id.build_id, bid, (size_t) bid_size);
                id.build_id_size = (uint32_t) bid_size;
                id.contents |= HELPER_HAS_BUILD_ID;
        }

        GElf_Word crc = 0;
        const char *link = dwelf_elf_gnu_debuglink(elf, &crc);
        if (link && *link && strlen(link) <= HELPER_MAX_DEBUGLINK && !strchr(link, '/') &&
            helper_utf8_valid(link, strlen(link)) && strcmp(link, ".") != 0 && strcmp(link, "..") != 0) {
                strcpy(id.debuglink, link);
                id.debuglink_crc = crc;
                id.contents |= HELPER_HAS_DEBUGLINK;
        }

        if (flags & HELPER_IDENTIFY_WANT_FILE_CRC) {
                r = file_crc32(fd, &id.file_crc);
                if (r < 0)
                        goto out;
                id.contents |= HELPER_HAS_FILE_CRC;
        }
        *ret = id;
out:
        elf_end(elf);
        return r;
}

void elf_identity_encode(HelperWriter *w, const HelperIdentity *id) {
        helper_put_u8(w, id->elf_class);
        helper_put_u8(w, id->elf_data);
        helper_put_u16(w, id->elf_type);
        helper_put_u16(w, id->elf_machine);
        helper_put_u16(w, 0);
        helper_put_u32(w, id->contents);
        helper_put_u32(w, id->debuglink_crc);
        helper_put_u32(w, id->file_crc);
        helper_put_u32(w, id->build_id_size);
        helper_put_bytes(w, id->build_id, id->build_id_size);
        helper_put_string(w, id->debuglink, HELPER_MAX_DEBUGLINK);
}
