/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helper-protocol.h: wire format between the service (resolver/helper-client)
 * and the sandboxed ELF/DWARF parser (sandbox-helper/periscope-helper).
 *
 * Transport: one AF_UNIX SOCK_SEQPACKET socketpair; every message is exactly
 * one datagram: a HelperMessageHeader followed by the payload. Files travel
 * as fds in SCM_RIGHTS ancillary data of the request datagram. A payload
 * larger than HELPER_MAX_INLINE_PAYLOAD is not sent inline: the sender puts
 * it into a sealed memfd (F_SEAL_WRITE|F_SEAL_SHRINK|F_SEAL_GROW), sets
 * HELPER_FLAG_PAYLOAD_MEMFD and passes that memfd as the only fd; the header's
 * payload_size then gives the memfd's exact size.
 *
 * Payload encoding: little-endian fixed-width integers, strings as u32 byte
 * length followed by that many bytes (no NUL; NUL bytes inside are invalid).
 * Every count and string length has an explicit limit below; a receiver
 * rejects a message that exceeds one, or that has bytes left over.
 *
 * Requests carry a request id chosen by the client; a reply repeats it. One
 * request is in flight at a time. Any request may be answered with
 * HELPER_MSG_ERROR (i32 negative errno + string message). See
 * docs/sandbox-helper.md for the full description. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HELPER_PROTOCOL_MAGIC 0x31485350u /* "PSH1" little-endian */

/* Limits: every field a peer sends is bounded by one of these. */
#define HELPER_MAX_INLINE_PAYLOAD   (32u * 1024u)          /* larger payloads go through a memfd */
#define HELPER_MAX_PAYLOAD          (64u * 1024u * 1024u)  /* any one message, memfd included */
#define HELPER_MAX_REQUEST_FDS      2u                     /* file + optional debug file */
#define HELPER_MAX_BATCH            1024u                  /* addresses per SYMBOLIZE */
#define HELPER_MAX_FRAMES           32u                    /* inline chain length per address */
#define HELPER_MAX_NAME             4096u                  /* function name bytes */
#define HELPER_MAX_PATH             4096u                  /* source file name bytes */
#define HELPER_MAX_BUILD_ID         64u                    /* build-id note bytes */
#define HELPER_MAX_DEBUGLINK        255u                   /* .gnu_debuglink file name bytes */
#define HELPER_MAX_ERROR_MESSAGE    1024u                  /* HELPER_MSG_ERROR text */

/* clang-format off */
typedef enum HelperMessageType {
        HELPER_MSG_IDENTIFY          = 1,  /* fds: [file]; payload: u32 flags (HelperIdentifyRequestFlags) */
        HELPER_MSG_SYMBOLIZE         = 2,  /* fds: [file, debug file?]; payload: see below */
        HELPER_MSG_COMPILE_UNWIND    = 3,  /* compile a file's unwind table (unwind-table.h) */
        HELPER_MSG_JIT_NAMES         = 4,  /* fds: [perf map or jitdump]; names of JIT code addresses */
        /* to periscope-debuginfod-fetch, not to the helper: see below */
        HELPER_MSG_DEBUGINFOD_FETCH  = 16,
        /* files users write, parsed for the daemon (see below) */
        HELPER_MSG_PODMAN_CONTAINER  = 17, /* fds: [containers.json]; payload: string query */
        HELPER_MSG_PODMAN_LAYERS     = 18, /* fds: [layers.json]; payload: string layer id */
        HELPER_MSG_PODMAN_IMAGE      = 19, /* fds: [images.json]; payload: string image id */
        HELPER_MSG_FLATPAK_INFO      = 20, /* fds: [/.flatpak-info]; no payload */
        HELPER_MSG_ELF_SYMBOLS       = 21, /* fds: [ELF file]; an interpreter's symbols (see below) */

        HELPER_MSG_REPLY             = 0x8000, /* reply type = request type | HELPER_MSG_REPLY */
        HELPER_MSG_IDENTIFY_REPLY    = HELPER_MSG_REPLY | HELPER_MSG_IDENTIFY,
        HELPER_MSG_SYMBOLIZE_REPLY   = HELPER_MSG_REPLY | HELPER_MSG_SYMBOLIZE,
        HELPER_MSG_COMPILE_UNWIND_REPLY = HELPER_MSG_REPLY | HELPER_MSG_COMPILE_UNWIND,
        HELPER_MSG_JIT_NAMES_REPLY   = HELPER_MSG_REPLY | HELPER_MSG_JIT_NAMES,
        HELPER_MSG_DEBUGINFOD_FETCH_REPLY = HELPER_MSG_REPLY | HELPER_MSG_DEBUGINFOD_FETCH,
        HELPER_MSG_PODMAN_CONTAINER_REPLY = HELPER_MSG_REPLY | HELPER_MSG_PODMAN_CONTAINER,
        HELPER_MSG_PODMAN_LAYERS_REPLY = HELPER_MSG_REPLY | HELPER_MSG_PODMAN_LAYERS,
        HELPER_MSG_PODMAN_IMAGE_REPLY = HELPER_MSG_REPLY | HELPER_MSG_PODMAN_IMAGE,
        HELPER_MSG_FLATPAK_INFO_REPLY = HELPER_MSG_REPLY | HELPER_MSG_FLATPAK_INFO,
        HELPER_MSG_ELF_SYMBOLS_REPLY = HELPER_MSG_REPLY | HELPER_MSG_ELF_SYMBOLS,
        HELPER_MSG_ERROR             = 0xffff, /* payload: i32 -errno, string message */
} HelperMessageType;
/* clang-format on */

typedef enum HelperMessageFlags {
        HELPER_FLAG_PAYLOAD_MEMFD = 1u << 0, /* payload is in the single passed sealed memfd */
} HelperMessageFlags;

/* 16 bytes, little-endian, first bytes of every datagram. */
typedef struct HelperMessageHeader {
        uint32_t magic;         /* HELPER_PROTOCOL_MAGIC */
        uint16_t type;          /* HelperMessageType */
        uint16_t flags;         /* HelperMessageFlags */
        uint32_t request_id;    /* chosen by the client, echoed by the reply */
        uint32_t payload_size;  /* bytes after the header (or in the memfd) */
} HelperMessageHeader;
#define HELPER_HEADER_SIZE 16u

/* ---- IDENTIFY ----
 * request payload: u32 flags
 * reply payload:
 *   u8 elf_class (ELFCLASS32/64), u8 elf_data (ELFDATA2LSB/MSB),
 *   u16 elf_type (ET_*), u16 elf_machine (EM_*), u16 reserved (0),
 *   u32 contents (HelperContents bits),
 *   u32 debuglink_crc (valid when HELPER_HAS_DEBUGLINK),
 *   u32 file_crc (gnu_debuglink CRC32 of the whole file; valid when requested),
 *   u32 build_id_size (<= HELPER_MAX_BUILD_ID), build_id bytes,
 *   string debuglink name (<= HELPER_MAX_DEBUGLINK, a plain file name: no '/') */
typedef enum HelperIdentifyRequestFlags {
        HELPER_IDENTIFY_WANT_FILE_CRC = 1u << 0, /* compute file_crc (for .gnu_debuglink checks) */
} HelperIdentifyRequestFlags;

typedef enum HelperContents {
        HELPER_HAS_SYMTAB       = 1u << 0,  /* .symtab */
        HELPER_HAS_DYNSYM       = 1u << 1,  /* .dynsym */
        HELPER_HAS_DWARF        = 1u << 2,  /* .debug_info */
        HELPER_HAS_GNU_DEBUGDATA= 1u << 3,  /* .gnu_debugdata (MiniDebugInfo) */
        HELPER_HAS_DEBUGLINK    = 1u << 4,  /* .gnu_debuglink */
        HELPER_HAS_EH_FRAME     = 1u << 5,  /* .eh_frame */
        HELPER_HAS_DEBUG_FRAME  = 1u << 6,  /* .debug_frame */
        HELPER_HAS_FILE_CRC     = 1u << 7,  /* file_crc was computed */
        HELPER_HAS_BUILD_ID     = 1u << 8,  /* build_id_size > 0 */
} HelperContents;

typedef struct HelperIdentity {
        uint8_t elf_class;
        uint8_t elf_data;
        uint16_t elf_type;
        uint16_t elf_machine;
        uint32_t contents;
        uint32_t debuglink_crc;
        uint32_t file_crc;
        uint32_t build_id_size;
        uint8_t build_id[HELPER_MAX_BUILD_ID];
        char debuglink[HELPER_MAX_DEBUGLINK + 1];
} HelperIdentity;

/* ---- SYMBOLIZE ----
 * request payload: u32 flags (HelperSymbolizeRequestFlags), u32 count
 *   (1..HELPER_MAX_BATCH), count * u64 file offsets: the sampled address minus
 *   the mapping start plus the mapping's file offset (pgoff). The helper turns
 *   them into ELF virtual addresses with the PT_LOAD headers.
 *   fds: the file; plus the separate debug file when HELPER_SYMBOLIZE_DEBUG_FD.
 * reply payload: u32 sources (HelperSymbolSource bits actually used),
 *   u32 count (== request count), then per address in request order:
 *     u8 status (HelperAddressStatus), u8 frame_count (<= HELPER_MAX_FRAMES),
 *     u16 reserved (0), then frame_count frames, innermost first:
 *       u8 frame_flags (HelperFrameFlags), u8 source (one HelperSymbolSource bit),
 *       u16 reserved (0), u32 line (0 = unknown), u32 column (0 = unknown),
 *       u64 offset (address minus the function's start; 0 for inlined frames
 *       whose start is unknown), string name (1..HELPER_MAX_NAME, valid
 *       UTF-8, demangled), string source file (0..HELPER_MAX_PATH) */
typedef enum HelperSymbolizeRequestFlags {
        HELPER_SYMBOLIZE_DEBUG_FD = 1u << 0, /* second fd is a separate debug file */
        /* offsets count from the start of the file's executable PT_LOAD,
         * rounded down to 4 KiB (address - mapping start): for a debug file
         * alone, whose program headers keep no file offsets */
        HELPER_SYMBOLIZE_SEGMENT_OFFSETS = 1u << 1,
} HelperSymbolizeRequestFlags;

typedef enum HelperSymbolSource {
        HELPER_SOURCE_SYMTAB        = 1u << 0, /* the file's own .symtab/.dynsym */
        HELPER_SOURCE_DWARF         = 1u << 1, /* DWARF of the file itself */
        HELPER_SOURCE_DEBUG_FILE    = 1u << 2, /* the passed separate debug file */
        HELPER_SOURCE_MINIDEBUGINFO = 1u << 3, /* .gnu_debugdata */
} HelperSymbolSource;

typedef enum HelperAddressStatus {
        HELPER_ADDRESS_OK          = 0, /* frames are valid (frame_count >= 1) */
        HELPER_ADDRESS_NO_SYMBOL   = 1, /* inside the file, but no symbol covers it */
        HELPER_ADDRESS_OUT_OF_FILE = 2, /* the offset is in no PT_LOAD segment */
        _HELPER_ADDRESS_STATUS_MAX,
} HelperAddressStatus;

typedef enum HelperFrameFlags {
        HELPER_FRAME_INLINED = 1u << 0, /* inlined into the next (outer) frame */
        HELPER_FRAME_HAS_SOURCE = 1u << 1, /* file/line are set */
        _HELPER_FRAME_FLAGS_ALL = HELPER_FRAME_INLINED | HELPER_FRAME_HAS_SOURCE,
} HelperFrameFlags;

/* ---- COMPILE_UNWIND ---- (docs/unwinding.md)
 * request payload: u32 flags (HelperUnwindRequestFlags), u32 image_size,
 *   image_size bytes.
 *   Without HELPER_UNWIND_IMAGE: fds: [file], image_size == 0.
 *   With HELPER_UNWIND_IMAGE: no fds; the bytes are an ELF image copied out of
 *   a process (the vdso), 1..HELPER_MAX_UNWIND_IMAGE bytes.
 * reply payload: u32 fdes_eh_frame, u32 fdes_debug_frame, u32 rows_unsupported,
 *   u32 table_size (<= HELPER_MAX_UNWIND_TABLE), table_size bytes: an unwind
 *   table blob (capture/unwind-table.h) that the client validates before use.
 * An ELF file without any call frame information is answered with
 * HELPER_MSG_ERROR -ENODATA. */
#define HELPER_MAX_UNWIND_IMAGE     (1u * 1024u * 1024u)
#define HELPER_MAX_UNWIND_TABLE     (HELPER_MAX_PAYLOAD - 64u)

typedef enum HelperUnwindRequestFlags {
        HELPER_UNWIND_IMAGE = 1u << 0, /* the ELF image travels in the payload (vdso) */
} HelperUnwindRequestFlags;

/* ---- JIT_NAMES ---- (docs/jit.md)
 * Names of addresses in JIT code, from a file the profiled program wrote:
 * a perf map (/tmp/perf-PID.map: "START SIZE name" lines, hex) or a jitdump
 * (jit-PID.dump, perf's tools/perf/Documentation/jitdump-specification.txt).
 * Where several entries cover an address, the last one in the file wins
 * (the newest code placed there).
 * request payload: u32 format (HelperJitFormat), u32 count
 *   (1..HELPER_MAX_JIT_BATCH), count * u64 addresses, strictly ascending.
 *   fds: [the file].
 * reply payload: u32 entries (code entries read), u32 refused (malformed
 *   entries skipped), u32 count (== request count), then per address in
 *   request order:
 *     u8 status (HelperJitStatus), u8 flags (HelperJitFlags), u16 reserved (0),
 *     u64 code start, u64 code size (named: start <= address < start + size,
 *     no overflow; else both 0), u32 line (0 unless HELPER_JIT_HAS_SOURCE),
 *     string name (named: 1..HELPER_MAX_NAME bytes of valid UTF-8; else empty),
 *     string source file (0..HELPER_MAX_PATH, UTF-8; non-empty exactly when
 *     HELPER_JIT_HAS_SOURCE, which needs a line too) */
#define HELPER_MAX_JIT_BATCH        2048u  /* the request stays inline (an fd rides along) */
#define HELPER_JIT_MAX_FILE_BYTES   (1ull << 30)  /* bytes of a JIT file looked at */
#define HELPER_JIT_MAX_ENTRIES      (4u << 20)    /* code entries kept per file */
#define HELPER_JIT_MAX_LINE         8192u         /* a perf map line; longer ones are refused */
#define HELPER_JIT_MAX_DEBUG_ENTRIES 65536u       /* line entries of one jitdump DEBUG_INFO record */

typedef enum HelperJitFormat {
        HELPER_JIT_PERF_MAP = 1,
        HELPER_JIT_DUMP     = 2,
} HelperJitFormat;

typedef enum HelperJitStatus {
        HELPER_JIT_NAMED       = 0, /* start, size and name are set */
        HELPER_JIT_NOT_COVERED = 1, /* no entry of the file covers the address */
        _HELPER_JIT_STATUS_MAX,
} HelperJitStatus;

typedef enum HelperJitFlags {
        HELPER_JIT_HAS_SOURCE = 1u << 0, /* source file and line are set (jitdump DEBUG_INFO) */
} HelperJitFlags;
/* ---- DEBUGINFOD_FETCH ---- (periscope-debuginfod-fetch, one request per run)
 * request payload: u32 timeout in seconds (1..HELPER_MAX_FETCH_TIMEOUT),
 *   u32 build_id_size (1..HELPER_MAX_BUILD_ID), build_id bytes. No fds.
 * reply payload: empty; fds: [the debug file, as the fetcher's cache holds
 *   it]. The daemon checks that it is a regular file and that its build-id
 *   is the one asked for (IDENTIFY in the helper) before using it.
 * Failures are HELPER_MSG_ERROR replies (-ENOENT: no server has it). */
#define HELPER_MAX_FETCH_TIMEOUT 600u

/* ---- PODMAN_CONTAINER, PODMAN_LAYERS, PODMAN_IMAGE, FLATPAK_INFO ----
 * Podman's storage JSON and /.flatpak-info are written by users; the daemon
 * opens them (beneath their directory, no symlinks, regular files) and the
 * helper parses them (json-glib, GKeyFile) and answers only these fields:
 * PODMAN_CONTAINER: the entry of containers.json whose id or one of whose
 *   names equals the query, or else the only one whose id starts with it
 *   (>= 12 digits). reply: u8 found (0/1); when found: string id (64 hex),
 *   string name (<= HELPER_MAX_FIELD), string image id ("" or 64 hex),
 *   string layer id (64 hex).
 * PODMAN_LAYERS: the chain from a layer through its "parent"s in
 *   layers.json. reply: u32 count (1..HELPER_MAX_LAYERS), count strings
 *   (64 hex, distinct, the first the one asked for).
 * PODMAN_IMAGE: the first name of an image in images.json. reply: string
 *   name (<= HELPER_MAX_FIELD, "" when it has none or is not listed).
 * FLATPAK_INFO: reply: strings name (non-empty), runtime, instance-id,
 *   app-path, runtime-path (each <= HELPER_MAX_FIELD).
 * A file that is no valid JSON / keyfile, too large or too deep, or whose top
 * level is not an array, is answered with ERROR -EBADMSG/-EFBIG and a reason
 * about the file ("it is nested deeper than 64 levels"); an entry or chain
 * that is wrong (an id that is not 64 hex digits, a cycle, a missing layer)
 * with ERROR -EINVAL and a reason about it. */
#define HELPER_MAX_FIELD            255u
#define HELPER_MAX_LAYERS           128u
#define HELPER_MAX_PODMAN_JSON      (16u * 1024u * 1024u) /* bytes per storage file */
#define HELPER_MAX_JSON_DEPTH       64u
#define HELPER_MAX_FLATPAK_INFO     (64u * 1024u)

/* ---- ELF_SYMBOLS ----
 * Where a few named symbols of an ELF file are (an interpreter's
 * _PyRuntime, _PyEval_EvalFrameDefault), for the daemon to read a process's
 * memory at them (docs/python.md).
 * request: u64 pgoff (the file offset of the executable mapping seen),
 *   u32 count (1..HELPER_MAX_ELF_SYMBOLS), count strings (1..HELPER_MAX_FIELD
 *   bytes, no NUL).
 * reply: u64 p_vaddr, u64 p_offset of the executable PT_LOAD holding pgoff
 *   (ERROR -ENOENT when none does), then per name: u8 found (0/1), u64
 *   st_value, u64 st_size of the first defined symbol of that name, in
 *   .dynsym then .symtab (0, 0 when not found). */
#define HELPER_MAX_ELF_SYMBOLS 8u

/* ---- Encoding helpers shared by both ends (bounds-checked) ---- */

/* Growable output buffer; `failed` latches the first allocation/limit error. */
typedef struct HelperWriter {
        uint8_t *data;
        size_t size;
        size_t allocated;
        size_t limit;
        bool failed;
} HelperWriter;

/* Read cursor over a received payload; `failed` latches the first overrun. */
typedef struct HelperReader {
        const uint8_t *data;
        size_t size;
        size_t offset;
        bool failed;
} HelperReader;

/* Starts an empty writer that refuses to grow beyond `limit` bytes. */
void helper_writer_init(HelperWriter *w, size_t limit);
/* Frees the writer's buffer. */
void helper_writer_done(HelperWriter *w);
void helper_put_u8(HelperWriter *w, uint8_t v);
void helper_put_u16(HelperWriter *w, uint16_t v);
void helper_put_u32(HelperWriter *w, uint32_t v);
void helper_put_u64(HelperWriter *w, uint64_t v);
void helper_put_bytes(HelperWriter *w, const void *p, size_t n);
/* Writes u32 length + bytes; strings longer than `max` are cut at a UTF-8
 * character boundary so the receiver's limit check never trips on us. */
void helper_put_string(HelperWriter *w, const char *s, size_t max);

/* Starts reading `size` bytes at `data`. */
void helper_reader_init(HelperReader *r, const void *data, size_t size);
uint8_t helper_get_u8(HelperReader *r);
uint16_t helper_get_u16(HelperReader *r);
uint32_t helper_get_u32(HelperReader *r);
uint64_t helper_get_u64(HelperReader *r);
/* Copies n raw bytes; marks failure on overrun. */
void helper_get_bytes(HelperReader *r, void *dst, size_t n);
/* Reads a string of at most `max` bytes into a new NUL-terminated
 * allocation; fails on overrun, NUL bytes, invalid UTF-8 (when utf8 is set)
 * or a longer length. Returns NULL on failure. */
char *helper_get_string(HelperReader *r, size_t max, bool utf8);
/* True when every byte was consumed and no read failed. */
bool helper_reader_finished(const HelperReader *r);

/* True when s[0..n) is well-formed UTF-8 (no overlongs, no surrogates). */
bool helper_utf8_valid(const char *s, size_t n);

/* Replaces every byte of the NUL-terminated s that is not part of a
 * well-formed UTF-8 character by '?', so hostile names stay printable. */
void helper_utf8_sanitize(char *s);

/* Encodes a header into 16 bytes. */
void helper_header_encode(uint8_t out[HELPER_HEADER_SIZE], const HelperMessageHeader *h);
/* Decodes and checks magic and payload size limit; -EBADMSG when invalid. */
int helper_header_decode(const uint8_t *in, size_t n, HelperMessageHeader *h);

/* Sends one message (header + payload) with optional fds; moves the payload to
 * a sealed memfd when it is larger than HELPER_MAX_INLINE_PAYLOAD. Returns 0
 * or -errno. */
int helper_send_message(int sock, uint16_t type, uint32_t request_id,
                        const void *payload, size_t payload_size,
                        const int *fds, size_t n_fds);

/* A received message: header, payload (owned), and received fds (owned). */
typedef struct HelperMessage {
        HelperMessageHeader header;
        uint8_t *payload;
        size_t payload_size;
        int fds[HELPER_MAX_REQUEST_FDS];
        size_t n_fds;
} HelperMessage;

/* Receives one message (blocking; callers poll first for a timeout). Closes
 * the fds and fails with -EBADMSG when more than max_fds (inline payload)
 * or not exactly the memfd came along, on truncated datagrams,
 * bad headers, or a memfd payload that is not sealed or has the wrong size.
 * Returns 0, -ECONNRESET at end of stream, or -errno. */
int helper_receive_message(int sock, size_t max_fds, HelperMessage *ret);
/* Frees the payload and closes the fds of a received message. */
void helper_message_clear(HelperMessage *m);

/* gnu_debuglink CRC-32 (the zlib/ISO-HDLC polynomial), continuing from crc. */
uint32_t helper_crc32(uint32_t crc, const void *buf, size_t n);
