/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symbols.h: the symbol tables a capture carries, so it can be reported on
 * a machine that has none of the profiled binaries.
 *
 * Two tables are written side by side (docs/capture-format.md, "Periscope
 * extensions"):
 *   - "__symbols__": exactly the layout Sysprof 3.46 reads
 *     (sysprof-symbol-map.c), one name per address range, so the Sysprof GUI
 *     shows our names;
 *     (Sysprof 45 and later write the same entries gzip'ed as
 *     "__symbols__.gz", their ends exclusive; read, never written);
 *   - "__periscope/symbols": Periscope's own versioned table with the whole
 *     inline chain of every range (innermost first), source file and line,
 *     and for each mapping which file was used, how it was found and how its
 *     identity was verified.
 *
 * Writer side: the service's symbolize stage fills a SymbolTableBuilder and calls
 * symbol_table_builder_write(). Reader side: symbol_table_load() prefers the
 * Periscope table and falls back to "__symbols__" and "__symbols__.gz"
 * (captures from Sysprof).
 * Every length, count and offset read from a capture is checked; a malformed
 * table is refused with -EBADMSG and a message, never half-used.
 *
 * Plain C (no GLib): the daemon links it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture-reader.h"
#include "capture-writer.h"

/* Embedded file names of the two tables. */
#define SYMBOLS_SYSPROF_PATH "__symbols__"
#define SYMBOLS_PERISCOPE_PATH "__periscope/symbols"
/* Sysprof 45 and later: the same entries gzip'ed, with exclusive ends. */
#define SYMBOLS_SYSPROF_GZ_PATH "__symbols__.gz"

/* pid of ranges valid in every process: kernel symbols. */
#define SYMBOLS_PID_ANY ((int32_t) -1)

/* Largest embedded table symbol_table_load() accepts. */
#define SYMBOLS_MAX_TABLE_BYTES (1024ull << 20)

/* Largest table a "__symbols__.gz" may inflate to (more is refused as a
 * compression bomb). */
#define SYMBOLS_MAX_INFLATED_BYTES (256ull << 20)

/* SymbolFrame.flags */
#define SYMBOL_FRAME_INLINED 0x1u    /* inlined into the next (outer) frame */
#define SYMBOL_FRAME_UNRESOLVED 0x2u /* function is "[unresolved: why]", not a name */
#define SYMBOL_FRAME_KERNEL 0x4u     /* a kernel function (from kallsyms) */
#define SYMBOL_FRAME_JIT 0x8u        /* JIT code, named by the process's perf map or jitdump */

/* One frame of a range's chain. Chains are innermost first: frames[0] is
 * the innermost inlined function, the last frame the real (outermost)
 * function that contains the address. */
typedef struct SymbolFrame {
        const char *function; /* demangled name, never NULL or empty */
        const char *file;     /* source file, or NULL */
        uint32_t line;        /* 0 when unknown */
        uint32_t flags;       /* SYMBOL_FRAME_* */
        uint64_t offset;      /* address minus the function's start; 0 when unknown */
} SymbolFrame;

/* SymbolMapping.flags */
#define SYMBOL_MAPPING_VERIFIED 0x1u /* the file used is the one that was mapped */
#define SYMBOL_MAPPING_HELPER_FAILED 0x2u /* the sandboxed helper failed on the file: its addresses are unresolved */

/* Where the symbols of one mapping came from. */
typedef struct SymbolMapping {
        int32_t pid;
        uint64_t start, end;  /* [start, end) in the process */
        const char *path;     /* the file that was read, as the service named it */
        const char *method;   /* how it was found: "pinned", "map_files", "podman-layer", "debug-build-id", … */
        const char *verdict;  /* identity verdict: "inode+build-id match", "binary changed since it was mapped", … */
        const char *build_id; /* lowercase hex, or NULL */
        uint32_t flags;       /* SYMBOL_MAPPING_* */
} SymbolMapping;

/* An address range [begin, end) of one process and its chain. */
typedef struct SymbolRange {
        int32_t pid; /* or SYMBOLS_PID_ANY */
        uint64_t begin, end;
        uint32_t n_frames; /* >= 1 */
        const SymbolFrame *frames;
        const char *module; /* the mapped file, when the table says (Sysprof's tag), or NULL */
} SymbolRange;

/* ---- writer side ------------------------------------------------------- */

typedef struct SymbolTableBuilder SymbolTableBuilder;

/* Creates an empty builder. */
int symbol_table_builder_new(SymbolTableBuilder **ret);

/* Frees a builder and every string it copied; NULL is a no-op. */
SymbolTableBuilder *symbol_table_builder_free(SymbolTableBuilder *b);

/* Adds [begin, end) of pid with its chain (innermost first, 1..65535
 * frames; strings are copied). Ranges that overlap an earlier range of the
 * same pid are clipped to the part not yet covered when written. -EINVAL for
 * an empty range, no frames or a frame without a function name. */
int symbol_table_builder_add_range(SymbolTableBuilder *b, int32_t pid, uint64_t begin, uint64_t end,
                                   const SymbolFrame *frames, size_t n_frames);

/* The name the service gives an address inside a mapped file that no
 * symbol covers (reports show it as module+0xOFFSET). */
#define SYMBOL_NO_SYMBOL_NAME "[unresolved: no symbol covers this address]"

/* Marks [begin, end) of pid as unresolved: reports show "[unresolved: why]"
 * (why is e.g. "helper failed", "binary changed since it was mapped"). */
int symbol_table_builder_add_unresolved(SymbolTableBuilder *b, int32_t pid, uint64_t begin, uint64_t end,
                                        const char *why);

/* Records where a mapping's symbols came from (strings are copied). */
int symbol_table_builder_add_mapping(SymbolTableBuilder *b, const SymbolMapping *mapping);

/* Declares a process that sampled kernel addresses, so SYMBOLS_PID_ANY
 * ranges are repeated for it in "__symbols__" (Sysprof looks names up per
 * pid). Every pid that has ranges or mappings is included anyway. */
int symbol_table_builder_add_pid(SymbolTableBuilder *b, int32_t pid);

/* Has the serializers call yield(userdata) between slices of their work
 * (sorting and encoding hundreds of thousands of ranges), so a caller on an
 * event loop can let other work run; NULL: none. */
void symbol_table_builder_set_yield(SymbolTableBuilder *b, void (*yield)(void *userdata), void *userdata);

/* Number of ranges added so far. */
size_t symbol_table_builder_get_n_ranges(const SymbolTableBuilder *b);

/* Encodes the Sysprof 3.46 "__symbols__" table (little-endian, as our
 * captures are): one entry per range named after its outermost frame. The
 * result is malloc'ed. -E2BIG if it would not fit the 32-bit offsets. */
int symbol_table_builder_serialize_sysprof(SymbolTableBuilder *b, uint8_t **ret_data, size_t *ret_len);

/* Encodes the "__periscope/symbols" table; malloc'ed result. */
int symbol_table_builder_serialize_periscope(SymbolTableBuilder *b, uint8_t **ret_data, size_t *ret_len);

/* Embeds both tables in the capture as FILE_CHUNKs stamped with time. */
int symbol_table_builder_write(SymbolTableBuilder *b, CaptureWriter *w, int64_t time);

/* ---- reader side ------------------------------------------------------- */

typedef enum SymbolTableKind {
        SYMBOL_TABLE_PERISCOPE,
        SYMBOL_TABLE_SYSPROF,    /* "__symbols__" */
        SYMBOL_TABLE_SYSPROF_GZ, /* "__symbols__.gz" (Sysprof 45+) */
} SymbolTableKind;

typedef struct SymbolTable SymbolTable;

/* Decodes a "__periscope/symbols" blob. On failure *error (if non-NULL)
 * receives a malloc'ed message saying what is wrong and where. */
int symbol_table_parse_periscope(const uint8_t *data, size_t len, SymbolTable **ret, char **error);

/* Decodes a "__symbols__" blob written in the given byte order (the
 * capture's), reading it the way Sysprof 3.46 does: entries up to the first
 * all-zero one, names at offsets from the start of the blob. */
int symbol_table_parse_sysprof(const uint8_t *data, size_t len, bool little_endian, SymbolTable **ret,
                               char **error);

/* Decodes a "__symbols__.gz" blob as Sysprof 45+ writes it: one gzip member
 * that inflates (to at most SYMBOLS_MAX_INFLATED_BYTES) to the entries of
 * "__symbols__" with exclusive ends, the all-zero entry inside the array and
 * the strings after it. */
int symbol_table_parse_sysprof_gz(const uint8_t *data, size_t len, bool little_endian, SymbolTable **ret, char **error);

/* Loads the capture's symbols: the Periscope table if present and valid,
 * else "__symbols__" and "__symbols__.gz". -ENOENT when the capture has neither; when a table is
 * malformed and no other is usable, that table's error. The reader's
 * position is unchanged. */
int symbol_table_load(CaptureReader *r, SymbolTable **ret, char **error);

/* The symbol tables' chunks gathered while a capture is read once, frame
 * by frame, for symbol_table_load()'s answer without a pass of its own. */
typedef struct SymbolChunks SymbolChunks;

/* A collector with nothing gathered, for a capture of that byte order;
 * NULL when out of memory. */
SymbolChunks *symbol_chunks_new(bool little_endian);

/* Frees a collector; NULL is a no-op. Returns NULL. */
SymbolChunks *symbol_chunks_free(SymbolChunks *c);

/* Keeps f if it is a chunk of one of the two tables, and parses a table
 * once its last chunk is read; -ENOMEM. */
int symbol_chunks_add(SymbolChunks *c, const CaptureFrame *f);

/* The capture ended in damage (the reader's error and its message): a
 * table cut short by it is unreadable, as symbol_table_load() says. */
int symbol_chunks_set_read_error(SymbolChunks *c, int error, const char *why);

/* What symbol_table_load() answers for the capture whose frames c saw. */
int symbol_chunks_load(SymbolChunks *c, SymbolTable **ret, char **error);

/* Frees a table; NULL is a no-op. */
SymbolTable *symbol_table_free(SymbolTable *t);

/* Which table was decoded. */
SymbolTableKind symbol_table_get_kind(const SymbolTable *t);

/* The range of pid containing addr (ranges of SYMBOLS_PID_ANY match any
 * pid when pid has none), or NULL. Valid as long as the table. */
const SymbolRange *symbol_table_lookup(const SymbolTable *t, int32_t pid, uint64_t addr);

/* All ranges, sorted by pid (as unsigned) then begin. */
size_t symbol_table_get_n_ranges(const SymbolTable *t);
const SymbolRange *symbol_table_get_range(const SymbolTable *t, size_t i);

/* Mapping provenance records (empty for Sysprof tables). */
size_t symbol_table_get_n_mappings(const SymbolTable *t);
const SymbolMapping *symbol_table_get_mapping(const SymbolTable *t, size_t i);

/* The provenance record of the mapping of pid containing addr, or NULL. */
const SymbolMapping *symbol_table_lookup_mapping(const SymbolTable *t, int32_t pid, uint64_t addr);
