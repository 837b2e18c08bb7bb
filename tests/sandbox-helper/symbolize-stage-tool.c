/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symbolize-stage-tool: runs the service's symbolization stage
 * (service/symbolize-addresses.c) on a live process, the way periscoped does after a
 * recording, and reads the resulting capture's symbol tables back.
 *   symbolize-stage-tool record PID CAPTURE [--no-kernel] [--hurry WHY | --cut-now WHY]
 *                        [--kernel-build-id HEX] ADDR[k][r]...
 *       pins every file mapping of PID through /proc/PID/map_files, symbolizes
 *       the addresses (suffix k: kernel address; r: a caller's return
 *       address, as in a stack's outer frames), writes CAPTURE with
 *       __symbols__ and __periscope/symbols, prints stats and progress;
 *       --hurry and --cut-now cut the work short as the service's stop does
 *       (SymbolizeCut), --kernel-build-id gives every mapping the build-id
 *       the kernel would have reported (MMAP2)
 *   symbolize-stage-tool read CAPTURE PID ADDR...
 *       prints, for each address, the chain from the Periscope table and the
 *       name from the Sysprof 3.46 __symbols__ table */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "basic.h"
#include "capture.h"
#include "symbolize-addresses.h"

static void progress(uint64_t done, uint64_t total, void *userdata) {
        printf("progress %" PRIu64 "/%" PRIu64 "\n", done, total);
}

static int cmd_record(int argc, char **argv) {
        if (argc < 2)
                return 2;
        int32_t pid = atoi(argv[0]);
        const char *out = argv[1];
        bool kernel = true;
        SymbolizeCut cut = {};
        uint8_t kernel_bid[64];
        size_t kernel_bid_size = 0;
        int i = 2;
        for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
                if (strcmp(argv[i], "--no-kernel") == 0)
                        kernel = false;
                else if (i + 1 < argc && strcmp(argv[i], "--hurry") == 0)
                        cut.why = argv[++i];
                else if (i + 1 < argc && strcmp(argv[i], "--cut-now") == 0) {
                        cut.why = argv[++i];
                        cut.now = true;
                } else if (i + 1 < argc && strcmp(argv[i], "--kernel-build-id") == 0) {
                        const char *h = argv[++i];
                        for (; h[0] && h[1] && kernel_bid_size < sizeof kernel_bid; h += 2) {
                                unsigned v;
                                if (sscanf(h, "%2x", &v) != 1)
                                        return 2;
                                kernel_bid[kernel_bid_size++] = (uint8_t) v;
                        }
                } else
                        return 2;
        }
        char p[64];
        snprintf(p, sizeof p, "/proc/%d/maps", pid);
        FILE *f = fopen(p, "re");
        if (!f) {
                perror(p);
                return 1;
        }
        SymbolizeMapping maps[512];
        char *paths[512];
        size_t n_maps = 0;
        char line[4096];
        while (n_maps < 512 && fgets(line, sizeof line, f)) {
                unsigned long start, end, pgoff;
                char perms[8], path[4096] = "";
                if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095[^\n]", &start, &end, perms, &pgoff, path) < 4)
                        continue;
                if (path[0] != '/')
                        continue;
                char mf[128];
                snprintf(mf, sizeof mf, "/proc/%d/map_files/%lx-%lx", pid, start, end);
                int fd = open(mf, O_RDONLY | O_CLOEXEC);
                paths[n_maps] = strdup(path);
                maps[n_maps] = (SymbolizeMapping) {
                        .pid = pid,
                        .start = start,
                        .end = end,
                        .pgoff = pgoff,
                        .fd = fd,
                        .path = paths[n_maps],
                        .method = "pinned via map_files",
                        .verdict = "inode match",
                        .verified = fd >= 0,
                        .why_unavailable = "could not pin the file",
                        .build_id = kernel_bid_size ? kernel_bid : NULL,
                        .build_id_size = kernel_bid_size,
                };
                n_maps++;
        }
        fclose(f);
        size_t n = (size_t) (argc - i);
        SymbolizeAddress *addrs = calloc(n ? n : 1, sizeof *addrs);
        for (size_t k = 0; k < n; k++) {
                char *end;
                addrs[k].pid = pid;
                addrs[k].address = strtoull(argv[i + (int) k], &end, 0);
                addrs[k].kernel = strchr(end, 'k') != NULL;
                addrs[k].return_address = strchr(end, 'r') != NULL;
        }
        SymbolizeOptions o = { .kernel_symbols = kernel, .progress = progress, .cut = cut.why ? &cut : NULL };
        SymbolTableBuilder *b = NULL;
        if (symbol_table_builder_new(&b) < 0)
                return 1;
        SymbolizeStats st;
        int r = symbolize_addresses(&o, maps, n_maps, addrs, n, b, &st);
        if (r < 0) {
                fprintf(stderr, "symbolize: %s\n", strerror(-r));
                return 1;
        }
        printf("stats addresses %" PRIu64 " resolved %" PRIu64 " unresolved %" PRIu64 " files %" PRIu64
               " helper-failures %" PRIu64 " cut-short %" PRIu64 "\n",
               st.addresses, st.resolved, st.unresolved, st.files, st.helper_failures, st.cut_short);
        _cleanup_close_ int cfd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        CaptureWriter *w = NULL;
        int64_t now = now_monotonic_ns();
        if (cfd < 0 || capture_writer_new_fd(cfd, now, &w) < 0)
                return 1;
        if ((r = symbol_table_builder_write(b, w, now)) < 0 || (r = capture_writer_flush(w)) < 0) {
                fprintf(stderr, "write: %s\n", strerror(-r));
                return 1;
        }
        capture_writer_free(w);
        symbol_table_builder_free(b);
        for (size_t k = 0; k < n_maps; k++) {
                safe_close(maps[k].fd);
                free(paths[k]);
        }
        free(addrs);
        return 0;
}

static int cmd_read(int argc, char **argv) {
        if (argc < 2)
                return 2;
        CaptureReader *r = NULL;
        char *error = NULL;
        if (capture_reader_open_path(argv[0], &r, &error) < 0) {
                fprintf(stderr, "open: %s\n", error);
                return 1;
        }
        int32_t pid = atoi(argv[1]);
        SymbolTable *t = NULL;
        if (symbol_table_load(r, &t, &error) < 0 || symbol_table_get_kind(t) != SYMBOL_TABLE_PERISCOPE) {
                fprintf(stderr, "no Periscope table: %s\n", error ? error : "");
                return 1;
        }
        uint8_t *data = NULL;
        size_t len = 0;
        SymbolTable *sys = NULL;
        if (capture_reader_read_file(r, SYMBOLS_SYSPROF_PATH, SYMBOLS_MAX_TABLE_BYTES, &data, &len) < 0 ||
            symbol_table_parse_sysprof(data, len, capture_reader_get_header(r)->little_endian, &sys, &error) < 0) {
                fprintf(stderr, "no __symbols__ table: %s\n", error ? error : "");
                return 1;
        }
        for (int i = 2; i < argc; i++) {
                uint64_t a = strtoull(argv[i], NULL, 0);
                const SymbolRange *pr = symbol_table_lookup(t, pid, a);
                const SymbolRange *sr = symbol_table_lookup(sys, pid, a);
                printf("periscope 0x%" PRIx64 ":", a);
                for (uint32_t k = 0; pr && k < pr->n_frames; k++)
                        printf(" %s%s%s |", pr->frames[k].function,
                               pr->frames[k].flags & SYMBOL_FRAME_INLINED ? " [inlined]" : "",
                               pr->frames[k].flags & SYMBOL_FRAME_UNRESOLVED ? " [unresolved]" : "");
                printf("\nsysprof 0x%" PRIx64 ": %s\n", a, sr ? sr->frames[sr->n_frames - 1].function : "-");
                const SymbolMapping *m = symbol_table_lookup_mapping(t, pid, a);
                if (m)
                        printf("mapping 0x%" PRIx64 ": %s | %s | %s | %s\n", a, m->path, m->method, m->verdict,
                               m->build_id ? m->build_id : "-");
        }
        free(data);
        symbol_table_free(sys);
        symbol_table_free(t);
        capture_reader_free(r);
        return 0;
}

int main(int argc, char **argv) {
        if (argc >= 2 && strcmp(argv[1], "record") == 0)
                return cmd_record(argc - 2, argv + 2);
        if (argc >= 2 && strcmp(argv[1], "read") == 0)
                return cmd_read(argc - 2, argv + 2);
        fprintf(stderr, "usage: symbolize-stage-tool record|read ...\n");
        return 2;
}
