/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind-table.h: the compact unwind table the sandbox helper compiles from a
 * file's .eh_frame/.debug_frame and the service executes. A table is one
 * byte blob: a header followed by rows sorted by file offset; each row says,
 * from its start offset up to the next row's, how to find the caller's frame.
 * The layout is host-endian (helper and service run on the same machine) and
 * described in docs/unwinding.md. The service never trusts a blob: it calls
 * unwind_table_validate() once and only then uses the rows. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UNWIND_TABLE_MAGIC 0x31545550u   /* "PUT1" read as little-endian u32 */
#define UNWIND_TABLE_VERSION 1
#define UNWIND_TABLE_MAX_ROWS (1u << 24) /* 256 MiB of rows: more is garbage */
#define UNWIND_OFFSET_MAX (1 << 24)      /* |any offset| in a row is below this */

typedef enum UnwindArch {
        UNWIND_ARCH_X86_64 = 1,
        UNWIND_ARCH_AARCH64 = 2,
} UnwindArch;

/* Registers a row can name (4 bits). Architecture-neutral: SP and FP are
 * rsp/rbp on x86-64 and sp/x29 on aarch64; LR (x30) exists only on aarch64. */
typedef enum UnwindReg {
        UNWIND_REG_NONE = 0,
        UNWIND_REG_SP = 1,
        UNWIND_REG_FP = 2,
        UNWIND_REG_LR = 3,
        _UNWIND_REG_MAX,
} UnwindReg;

/* How to compute the canonical frame address (CFA; the caller's SP). */
typedef enum UnwindCfaRule {
        UNWIND_CFA_NONE = 0,          /* no CFI covers this address: try the frame pointer */
        UNWIND_CFA_UNSUPPORTED = 1,   /* CFI exists but is not expressible: try the frame pointer */
        UNWIND_CFA_REG_OFFSET = 2,    /* CFA = reg + cfa_offset */
        UNWIND_CFA_DEREF = 3,         /* CFA = *(reg + cfa_offset) (stack realignment, signal frames) */
        UNWIND_CFA_PLT = 4,           /* CFA = reg + cfa_offset + ((ip & 15) >= param ? 8 : 0) (x86-64 PLT) */
        _UNWIND_CFA_MAX,
} UnwindCfaRule;

/* Where the caller's value of a register (return address, frame pointer) is. */
typedef enum UnwindSavedRule {
        UNWIND_SAVED_UNDEFINED = 0,   /* not recoverable; for the return address: outermost frame */
        UNWIND_SAVED_SAME = 1,        /* unchanged by this frame (aarch64 leaf: return address still in LR) */
        UNWIND_SAVED_AT_CFA = 2,      /* saved at memory CFA + offset */
        UNWIND_SAVED_AT_REG = 3,      /* saved at memory reg + offset (reg of this frame, before unwinding) */
        _UNWIND_SAVED_MAX,
} UnwindSavedRule;

/* Row flags. */
/* A signal trampoline: the caller's IP is exact, not a return address;
 * aarch64: the caller's LR lies 16 bytes below its PC (sigcontext regs[30], sp, pc). */
#define UNWIND_ROW_SIGNAL_FRAME 0x01u
#define UNWIND_ROW_FLAGS_KNOWN  0x01u

/* One row: 16 bytes. The rule bytes hold the rule in the low nibble and the
 * register (UnwindReg) in the high nibble. For the return address the
 * "register" is the program counter itself: the rule says where the caller's
 * PC is (x86-64: AT_CFA -8; aarch64 leaf: SAME, i.e. in LR). */
typedef struct UnwindRow {
        uint32_t start;               /* file offset where this row begins */
        uint8_t cfa;                  /* UnwindCfaRule | UnwindReg << 4 */
        uint8_t ra;                   /* UnwindSavedRule | UnwindReg << 4 */
        uint8_t fp;                   /* UnwindSavedRule | UnwindReg << 4 */
        uint8_t flags;                /* UNWIND_ROW_*; for UNWIND_CFA_PLT the high nibble is param */
        int32_t cfa_offset;
        int16_t ra_offset;
        int16_t fp_offset;
} UnwindRow;

typedef struct UnwindTableHeader {
        uint32_t magic;               /* UNWIND_TABLE_MAGIC */
        uint16_t version;             /* UNWIND_TABLE_VERSION */
        uint16_t arch;                /* UnwindArch */
        uint32_t row_size;            /* sizeof(UnwindRow) */
        uint32_t n_rows;              /* rows that follow the header */
        uint32_t flags;               /* reserved, 0 */
        uint32_t reserved;            /* 0 */
} UnwindTableHeader;

_Static_assert(sizeof(UnwindRow) == 16, "UnwindRow is 16 bytes");
_Static_assert(sizeof(UnwindTableHeader) == 24, "UnwindTableHeader is 24 bytes");

/* Packs a rule and its register into one rule byte (a constant expression). */
#define UNWIND_RULE(rule, reg) ((uint8_t) (((rule) & 0xfu) | ((reg) & 0xfu) << 4))
static inline uint8_t unwind_rule_pack(unsigned rule, unsigned reg) {
        return UNWIND_RULE(rule, reg);
}
static inline unsigned unwind_rule_kind(uint8_t packed) {
        return packed & 0xf;
}
static inline unsigned unwind_rule_reg(uint8_t packed) {
        return packed >> 4;
}

/* A validated table: a view into the blob it came from (not owned). */
typedef struct UnwindTable {
        UnwindArch arch;
        uint32_t n_rows;
        const UnwindRow *rows;
} UnwindTable;

/* Checks every field of a blob once (magic, version, arch, sizes, sorted
 * rows, known rules and registers for the arch, sane offsets, terminating
 * row) and fills *ret with a view of it. Returns 0 or -EBADMSG/-EINVAL with
 * *reason set to a static description of the first problem found.
 * The blob must stay alive and unchanged while *ret is used and be aligned
 * to 4 bytes. */
int unwind_table_validate(const void *blob, size_t size, UnwindTable *ret, const char **reason);

/* Rows checked between two calls of unwind_table_validate_sliced()'s yield. */
#define UNWIND_TABLE_VALIDATE_SLICE (64u * 1024u)

/* unwind_table_validate() that calls yield(userdata) (may be NULL) after
 * every UNWIND_TABLE_VALIDATE_SLICE rows, so that a single-threaded caller
 * lets its event loop run during a large table. */
int unwind_table_validate_sliced(const void *blob, size_t size, UnwindTable *ret, const char **reason,
                                 void (*yield)(void *userdata), void *userdata);

/* The row covering file offset `offset`, or NULL when the offset lies before
 * the first row. Binary search; the table must be validated. */
const UnwindRow *unwind_table_lookup(const UnwindTable *table, uint64_t offset);

/* Name of an architecture ("x86_64", "aarch64") or NULL. */
const char *unwind_arch_to_string(UnwindArch arch);
