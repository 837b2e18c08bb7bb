/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helper-tool: drives resolver/helper-client (and so the real bwrap-sandboxed
 * periscope-helper) from test scripts.
 *   helper-tool [--timeout MS] identify FILE...
 *   helper-tool [--timeout MS] symbolize FILE [--debug DEBUGFILE] OFFSET...
 *   helper-tool [--debug-root DIR] [--debuginfod] resolve FILE OFFSET...
 *       (finds the debug file like the service does, then symbolizes)
 *   helper-tool batch FILE OFF[,OFF...] [FILE OFF[,OFF...]]...
 *       (one client for all files: a failure for one must not hurt the next)
 *   helper-tool probe [HELPER-PROBE-ARGS...]
 *   helper-tool jit perf-map|jitdump FILE ADDRESS...   (hex, ascending)
 *       (JIT_NAMES: "entries N refused M", then per address
 *        "ADDR START SIZE NAME[ @ FILE:LINE]" or "ADDR -")
 * FILE "-" repeats the previous file; "+" in an identify list restarts nothing
 * but shows the helper start count. Output is line-oriented text. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic.h"
#include "debug-files.h"
#include "helper-client.h"

static void print_identity(const char *path, const HelperIdentity *id) {
        printf("file %s\n", path);
        printf("class %u data %u type %u machine %u\n", id->elf_class, id->elf_data, id->elf_type, id->elf_machine);
        printf("build-id ");
        for (uint32_t i = 0; i < id->build_id_size; i++)
                printf("%02x", id->build_id[i]);
        printf("\n");
        printf("debuglink %s crc %08x\n", id->debuglink[0] ? id->debuglink : "-", id->debuglink_crc);
        printf("file-crc %08x\n", id->file_crc);
        printf("contents%s%s%s%s%s%s%s\n",
               id->contents & HELPER_HAS_SYMTAB ? " symtab" : "",
               id->contents & HELPER_HAS_DYNSYM ? " dynsym" : "",
               id->contents & HELPER_HAS_DWARF ? " dwarf" : "",
               id->contents & HELPER_HAS_GNU_DEBUGDATA ? " gnu_debugdata" : "",
               id->contents & HELPER_HAS_DEBUGLINK ? " debuglink" : "",
               id->contents & HELPER_HAS_EH_FRAME ? " eh_frame" : "",
               id->contents & HELPER_HAS_DEBUG_FRAME ? " debug_frame" : "");
}

static const char *source_name(uint8_t s) {
        switch (s) {
        case HELPER_SOURCE_SYMTAB: return "symtab";
        case HELPER_SOURCE_DWARF: return "dwarf";
        case HELPER_SOURCE_DEBUG_FILE: return "debug-file";
        case HELPER_SOURCE_MINIDEBUGINFO: return "minidebuginfo";
        default: return "?";
        }
}

/* The file a command names, or -1 after saying why not. */
static int open_file_arg(const char *path) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                fprintf(stderr, "open %s: %m\n", path);
        return fd;
}

static int cmd_symbolize(HelperClient *c, int argc, char **argv) {
        if (argc < 1)
                return 2;
        _cleanup_close_ int fd = open_file_arg(argv[0]);
        if (fd < 0)
                return 1;
        _cleanup_close_ int debug_fd = -1;
        int i = 1;
        if (i + 1 < argc && strcmp(argv[i], "--debug") == 0) {
                debug_fd = open(argv[i + 1], O_RDONLY | O_CLOEXEC);
                if (debug_fd < 0) {
                        fprintf(stderr, "open %s: %m\n", argv[i + 1]);
                        return 1;
                }
                i += 2;
        }
        size_t n = (size_t) (argc - i);
        _cleanup_free_ uint64_t *offsets = calloc(n ? n : 1, sizeof(uint64_t));
        for (size_t k = 0; k < n; k++)
                offsets[k] = strtoull(argv[i + (int) k], NULL, 0);
        _cleanup_(helper_symbols_freep) HelperSymbols *s = NULL;
        _cleanup_free_ char *why = NULL;
        int r = helper_client_symbolize(c, fd, debug_fd, offsets, n, &s, &why);
        if (r < 0) {
                for (size_t k = 0; k < n; k++)
                        printf("0x%" PRIx64 " [unresolved: %s]\n", offsets[k], why ? why : strerror(-r));
                return 0;
        }
        for (size_t k = 0; k < n; k++) {
                HelperAddressSymbols *a = &s->addresses[k];
                printf("0x%" PRIx64 " status %u\n", offsets[k], a->status);
                for (size_t f = 0; f < a->n_frames; f++) {
                        HelperFrame *fr = &a->frames[f];
                        printf("  %s%s +0x%" PRIx64 " at %s:%u (%s)\n", fr->name,
                               fr->flags & HELPER_FRAME_INLINED ? " [inlined]" : "", fr->offset,
                               fr->file ? fr->file : "?", fr->line, source_name(fr->source));
                }
        }
        return 0;
}

static int cmd_identify(HelperClient *c, int argc, char **argv) {
        for (int i = 0; i < argc; i++) {
                _cleanup_close_ int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
                if (fd < 0) {
                        fprintf(stderr, "open %s: %m\n", argv[i]);
                        return 1;
                }
                HelperIdentity id;
                _cleanup_free_ char *why = NULL;
                int r = helper_client_identify(c, fd, HELPER_IDENTIFY_WANT_FILE_CRC, &id, &why);
                if (r < 0)
                        printf("file %s\nerror %s\n", argv[i], why ? why : strerror(-r));
                else
                        print_identity(argv[i], &id);
                printf("starts %u\n", helper_client_get_starts(c));
        }
        return 0;
}

static int cmd_resolve(HelperClient *c, const DebugFileOptions *o, int argc, char **argv) {
        if (argc < 1)
                return 2;
        _cleanup_close_ int fd = open_file_arg(argv[0]);
        if (fd < 0)
                return 1;
        HelperIdentity id;
        _cleanup_free_ char *why = NULL;
        int r = helper_client_identify(c, fd, 0, &id, &why);
        if (r < 0) {
                printf("error %s\n", why ? why : strerror(-r));
                return 0;
        }
        _cleanup_free_ char *abs = realpath(argv[0], NULL);
        DebugFile df;
        r = debug_file_find(c, o, fd, abs, &id, &df);
        printf("debug-file %s %s\n", debug_file_kind_to_string(df.kind), df.path ? df.path : "-");
        if (df.notes)
                printf("notes %s\n", df.notes);
        if (r < 0)
                printf("lookup-error %s\n", strerror(-r));
        char fdarg[32] = "";
        if (df.fd >= 0)
                snprintf(fdarg, sizeof fdarg, "/proc/self/fd/%d", df.fd);
        char **args = calloc((size_t) argc + 3, sizeof(char *));
        int k = 0;
        args[k++] = argv[0];
        if (df.fd >= 0) {
                args[k++] = "--debug";
                args[k++] = fdarg;
        }
        for (int i = 1; i < argc; i++)
                args[k++] = argv[i];
        r = cmd_symbolize(c, k, args);
        free(args);
        debug_file_clear(&df);
        return r;
}

static int cmd_batch(HelperClient *c, int argc, char **argv) {
        for (int i = 0; i + 1 < argc; i += 2) {
                printf("== %s\n", argv[i]);
                char *list = strdup(argv[i + 1]);
                char *args[HELPER_MAX_BATCH + 2];
                int k = 0;
                args[k++] = argv[i];
                for (char *save = NULL, *t = strtok_r(list, ",", &save); t && k < (int) HELPER_MAX_BATCH;
                     t = strtok_r(NULL, ",", &save))
                        args[k++] = t;
                int r = cmd_symbolize(c, k, args);
                free(list);
                if (r != 0)
                        return r;
                printf("starts %u\n", helper_client_get_starts(c));
                fflush(stdout);
        }
        return 0;
}

static int cmd_jit(HelperClient *c, int argc, char **argv) {
        if (argc < 3)
                return 2;
        HelperJitFormat format = strcmp(argv[0], "jitdump") == 0 ? HELPER_JIT_DUMP : HELPER_JIT_PERF_MAP;
        _cleanup_close_ int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                perror(argv[1]);
                return 1;
        }
        size_t n = (size_t) argc - 2;
        _cleanup_free_ uint64_t *addrs = calloc(n, sizeof *addrs);
        if (!addrs)
                return 1;
        for (size_t k = 0; k < n; k++)
                addrs[k] = strtoull(argv[k + 2], NULL, 16);
        _cleanup_(helper_jit_names_freep) HelperJitNames *j = NULL;
        _cleanup_free_ char *why = NULL;
        int r = helper_client_jit_names(c, fd, format, addrs, n, &j, &why);
        if (r < 0) {
                printf("error %s\n", why ? why : strerror(-r));
                return 0;
        }
        printf("entries %u refused %u\n", j->entries, j->refused);
        for (size_t k = 0; k < n; k++) {
                const HelperJitName *jn = &j->names[k];
                if (jn->status != HELPER_JIT_NAMED) {
                        printf("%" PRIx64 " -\n", addrs[k]);
                        continue;
                }
                printf("%" PRIx64 " %" PRIx64 " %" PRIx64 " %s", addrs[k], jn->start, jn->size, jn->name);
                if (jn->file)
                        printf(" @ %s:%u", jn->file, jn->line);
                printf("\n");
        }
        return 0;
}

int main(int argc, char **argv) {
        HelperClientConfig cfg = {};
        DebugFileOptions dopts = {};
        int i = 1;
        while (i + 1 < argc && argv[i][0] == '-' && argv[i][1] == '-') {
                if (strcmp(argv[i], "--debuginfod") == 0) {
                        dopts.debuginfod = true;
                        i++;
                        continue;
                }
                if (strcmp(argv[i], "--debug-root") == 0)
                        dopts.debug_root = argv[i + 1];
                else if (strcmp(argv[i], "--timeout") == 0)
                        cfg.timeout_ms = (unsigned) atoi(argv[i + 1]);
                else if (strcmp(argv[i], "--cpu") == 0)
                        cfg.cpu_seconds = (unsigned) atoi(argv[i + 1]);
                else if (strcmp(argv[i], "--memory-mb") == 0)
                        cfg.memory_limit = (uint64_t) atoi(argv[i + 1]) << 20;
                else
                        break;
                i += 2;
        }
        if (i >= argc) {
                fprintf(stderr, "usage: helper-tool [--timeout MS] identify|symbolize|probe ...\n");
                return 2;
        }
        const char *cmd = argv[i++];
        if (strcmp(cmd, "probe") == 0) {
                _cleanup_free_ char *out = NULL;
                int r = helper_client_run_probe(&cfg, argv + i, &out);
                if (r < 0) {
                        fprintf(stderr, "probe: %s\n", strerror(-r));
                        return 1;
                }
                fputs(out, stdout);
                return 0;
        }
        _cleanup_(helper_client_freep) HelperClient *c = NULL;
        int r = helper_client_new(&cfg, &c);
        if (r < 0) {
                fprintf(stderr, "helper_client_new: %s\n", strerror(-r));
                return 1;
        }
        if (strcmp(cmd, "identify") == 0)
                return cmd_identify(c, argc - i, argv + i);
        if (strcmp(cmd, "batch") == 0)
                return cmd_batch(c, argc - i, argv + i);
        if (strcmp(cmd, "resolve") == 0)
                return cmd_resolve(c, &dopts, argc - i, argv + i);
        if (strcmp(cmd, "symbolize") == 0)
                return cmd_symbolize(c, argc - i, argv + i);
        if (strcmp(cmd, "jit") == 0)
                return cmd_jit(c, argc - i, argv + i);
        fprintf(stderr, "unknown command %s\n", cmd);
        return 2;
}
