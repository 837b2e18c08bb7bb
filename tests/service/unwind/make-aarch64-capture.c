/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* make-aarch64-capture: writes the capture an arm64 periscoped would have
 * written for the programs of aarch64/, on any machine: each vector of
 * BUILD (leaf, signal) unwound by the aarch64 unwinder into SAMPLE frames
 * (COUNT each), the process and its mappings as qemu-aarch64 placed them,
 * `periscope.machine` arch=aarch64, and symbol tables as a recording whose
 * helper found no debug information leaves them: one mapping record per file
 * (the program's verified, with its build-id) and every address unresolved,
 * so `periscope symbolize` can name them later.
 * Usage: make-aarch64-capture DIR BUILD OUT [COUNT] */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aarch64-vectors.h"
#include "basic.h"
#include "capture.h"
#include "test-check.h"

#define PID 4242

/* Where a file of the vectors lived on the arm64 machine. */
static const char *recorded_path(const char *file) {
        static char buf[128];
        if (strncmp(file, "chain-", 6) == 0)
                snprintf(buf, sizeof(buf), "/usr/bin/%s", file);
        else
                snprintf(buf, sizeof(buf), "/usr/lib/aarch64-linux-gnu/%s", file);
        return buf;
}

/* The program's GNU build-id as lowercase hex. */
static int read_build_id(Elf *elf, char *buf, size_t size) {
        Elf_Scn *scn = NULL;

        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
                Elf_Data *d;
                GElf_Nhdr nh;
                size_t off = 0, name_off, desc_off;

                if (!sh || sh->sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
                        continue;
                while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
                        if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
                            memcmp((const char *) d->d_buf + name_off, "GNU", 4) != 0 || nh.n_descsz * 2 >= size)
                                continue;
                        for (size_t i = 0; i < nh.n_descsz; i++)
                                sprintf(buf + 2 * i, "%02x", ((const uint8_t *) d->d_buf)[desc_off + i]);
                        return 0;
                }
        }
        return -ENODATA;
}

int main(int argc, char **argv) {
        SymbolTableBuilder *b = NULL;
        CaptureWriter *w = NULL;
        Vector vs[2];
        Program p;
        char file[64], build_id[128];
        const char *wheres[2] = { "leaf", "signal" };
        int64_t t0 = 1000000000, t;
        unsigned count = argc > 4 ? (unsigned) atoi(argv[4]) : 50;
        int fd;

        if (argc < 4 || count == 0) {
                fprintf(stderr, "usage: %s DIR BUILD OUT [COUNT]\n", argv[0]);
                return 2;
        }
        snprintf(file, sizeof(file), "chain-%s", argv[2]);
        MUST(program_load(argv[1], file, &p));
        MUST(read_build_id(p.elf, build_id, sizeof(build_id)));
        for (size_t i = 0; i < 2; i++) {
                char path[512];
                snprintf(path, sizeof(path), "%s/%s-%s.vec", argv[1], argv[2], wheres[i]);
                MUST(vector_load(path, &vs[i]));
        }

        fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
                perror(argv[3]);
                return 1;
        }
        MUST(capture_writer_new_fd(fd, t0, &w));
        MUST(capture_writer_add_metadata(w, t0, -1, -1, CAPTURE_MACHINE_ID, "arch=aarch64\n", 13));
        char cmdline[128];
        snprintf(cmdline, sizeof(cmdline), "%s", recorded_path(file));
        MUST(capture_writer_add_process(w, t0, -1, PID, cmdline));
        MUST(symbol_table_builder_new(&b));

        /* one MAP per file: from its lowest mapped offset's page to its end */
        const Vector *v0 = &vs[0];
        for (size_t i = 0; i < v0->n_maps; i++) {
                bool first = true;
                uint64_t start = UINT64_MAX, end = 0;
                for (size_t j = 0; j < v0->n_maps; j++) {
                        if (strcmp(v0->maps[j].file, v0->maps[i].file) != 0)
                                continue;
                        first = first && j >= i;
                        uint64_t base = v0->maps[j].start - v0->maps[j].pgoff;
                        start = base < start ? base : start;
                        uint64_t e = (v0->maps[j].end + 0xfff) & ~0xfffull;
                        end = e > end ? e : end;
                }
                if (!first)
                        continue;
                const char *path = recorded_path(v0->maps[i].file);
                bool program = strcmp(v0->maps[i].file, file) == 0;
                MUST(capture_writer_add_map(w, t0, -1, PID, start, end, 0, 1000 + i, path));
                SymbolMapping m = { .pid = PID,
                                    .start = start,
                                    .end = end,
                                    .path = path,
                                    .method = "pinned",
                                    .verdict = program ? "inode+build-id match" : "no build-id",
                                    .build_id = program ? build_id : NULL,
                                    .flags = program ? SYMBOL_MAPPING_VERIFIED : 0 };
                MUST(symbol_table_builder_add_mapping(b, &m));
        }

        /* the samples, unwound here by the aarch64 unwinder */
        t = t0;
        uint64_t seen[128];
        size_t n_seen = 0;
        for (size_t i = 0; i < 2; i++) {
                const Vector *v = &vs[i];
                UnwindRegs regs = vector_regs(v);
                UnwindStack stack = { .base = v->stack_base, .data = v->stack, .size = v->stack_size };
                Finder finder = { v, &p };
                uint64_t addrs[65];
                UnwindResult res;

                unwinder_unwind(&regs, &stack, finder_find, &finder, addrs + 1, ELEMENTSOF(addrs) - 1, &res);
                if (res.n_frames < 5) {
                        fprintf(stderr, "%s: only %zu frames (%s)\n", wheres[i], res.n_frames,
                                unwind_stop_to_string(res.stop));
                        return 1;
                }
                addrs[0] = CAPTURE_CONTEXT_USER;
                for (unsigned k = 0; k < count; k++)
                        MUST(capture_writer_add_sample(w, t += 1000000, 0, PID, PID, addrs, res.n_frames + 1));
                for (size_t k = 1; k <= res.n_frames; k++) {
                        bool dup = false;
                        for (size_t j = 0; j < n_seen; j++)
                                dup = dup || seen[j] == addrs[k];
                        if (!dup && n_seen < ELEMENTSOF(seen))
                                seen[n_seen++] = addrs[k];
                }
        }
        for (size_t j = 0; j < n_seen; j++)
                MUST(symbol_table_builder_add_unresolved(b, PID, seen[j], seen[j] + 1,
                                                         "no symbol covers this address"));
        /* other METADATA after the machine frame, as a recording has them */
        MUST(capture_writer_add_metadata(w, t, -1, -1, "periscope.stats", "lost_samples=0\n", 15));
        MUST(symbol_table_builder_write(b, w, t + 1000000));
        MUST(capture_writer_flush(w));
        capture_writer_free(w);
        close(fd);
        for (size_t i = 0; i < 2; i++)
                free(vs[i].stack);
        symbol_table_builder_free(b);
        program_done(&p);
        return 0;
}
