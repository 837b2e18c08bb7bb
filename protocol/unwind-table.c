/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind-table.c: validation and lookup of compiled unwind tables. */
#include "unwind-table.h"

#include <errno.h>
#include <string.h>

const char *unwind_arch_to_string(UnwindArch arch) {
        switch (arch) {
        case UNWIND_ARCH_X86_64:
                return "x86_64";
        case UNWIND_ARCH_AARCH64:
                return "aarch64";
        }
        return NULL;
}

static bool offset_sane(int64_t off) {
        return off > -UNWIND_OFFSET_MAX && off < UNWIND_OFFSET_MAX;
}

/* A base register usable for address computations on this arch. */
static bool address_reg_ok(unsigned reg) {
        return reg == UNWIND_REG_SP || reg == UNWIND_REG_FP;
}

/* Checks one saved-register rule; is_ra says it describes the return address. */
static const char *check_saved(UnwindArch arch, uint8_t packed, int16_t offset, bool is_ra) {
        unsigned kind = unwind_rule_kind(packed), reg = unwind_rule_reg(packed);

        switch (kind) {
        case UNWIND_SAVED_UNDEFINED:
        case UNWIND_SAVED_SAME:
                if (kind == UNWIND_SAVED_SAME && is_ra) {
                        /* x86-64 always pushes the return address: "same" cannot
                         * describe it. aarch64 leaves it in LR. */
                        if (arch != UNWIND_ARCH_AARCH64 || reg != UNWIND_REG_LR)
                                return "return address rule 'same' is only valid for aarch64 LR";
                } else if (reg != UNWIND_REG_NONE)
                        return "register set on a rule that takes none";
                if (offset != 0)
                        return "offset set on a rule that takes none";
                return NULL;
        case UNWIND_SAVED_AT_CFA:
                if (reg != UNWIND_REG_NONE)
                        return "register set on a CFA-relative rule";
                break;
        case UNWIND_SAVED_AT_REG:
                if (!address_reg_ok(reg))
                        return "saved-register rule names an unknown base register";
                break;
        default:
                return "unknown saved-register rule";
        }
        if (offset % 8 != 0)
                return "saved-register offset is not a multiple of 8";
        return NULL;
}

static const char *check_row(UnwindArch arch, const UnwindRow *row) {
        unsigned cfa = unwind_rule_kind(row->cfa), cfa_reg = unwind_rule_reg(row->cfa);
        const char *r;

        if ((row->flags & 0x0f & ~UNWIND_ROW_FLAGS_KNOWN) != 0)
                return "unknown row flags";
        switch (cfa) {
        case UNWIND_CFA_NONE:
        case UNWIND_CFA_UNSUPPORTED:
                if (row->cfa != cfa || row->ra != 0 || row->fp != 0 || row->flags != 0 ||
                    row->cfa_offset != 0 || row->ra_offset != 0 || row->fp_offset != 0)
                        return "row without CFA rule carries other rules";
                return NULL;
        case UNWIND_CFA_REG_OFFSET:
        case UNWIND_CFA_DEREF:
                if (!address_reg_ok(cfa_reg))
                        return "CFA rule names an unknown base register";
                if ((row->flags & 0xf0) != 0)
                        return "parameter set on a non-PLT CFA rule";
                break;
        case UNWIND_CFA_PLT:
                if (arch != UNWIND_ARCH_X86_64)
                        return "PLT CFA rule on a non-x86-64 table";
                if (cfa_reg != UNWIND_REG_SP)
                        return "PLT CFA rule not based on SP";
                if ((row->flags >> 4) == 0)
                        return "PLT CFA rule without its threshold";
                break;
        default:
                return "unknown CFA rule";
        }
        if (!offset_sane(row->cfa_offset))
                return "CFA offset out of range";
        if (cfa == UNWIND_CFA_REG_OFFSET && cfa_reg == UNWIND_REG_SP && row->cfa_offset < 0)
                return "SP-based CFA does not lie above SP";
        /* An aarch64 leaf allocates nothing: its CFA may be its SP, as long
         * as its return address is still in LR (used once by the executor)
         * or it is the outermost frame (_start). */
        if (cfa == UNWIND_CFA_REG_OFFSET && cfa_reg == UNWIND_REG_SP && row->cfa_offset == 0 &&
            !(arch == UNWIND_ARCH_AARCH64 &&
              (unwind_rule_kind(row->ra) == UNWIND_SAVED_SAME || unwind_rule_kind(row->ra) == UNWIND_SAVED_UNDEFINED)))
                return "SP-based CFA does not lie above SP";
        r = check_saved(arch, row->ra, row->ra_offset, true);
        if (r)
                return r;
        return check_saved(arch, row->fp, row->fp_offset, false);
}

int unwind_table_validate(const void *blob, size_t size, UnwindTable *ret, const char **reason) {
        return unwind_table_validate_sliced(blob, size, ret, reason, NULL, NULL);
}

int unwind_table_validate_sliced(const void *blob, size_t size, UnwindTable *ret, const char **reason,
                                 void (*yield)(void *userdata), void *userdata) {
        UnwindTableHeader h;
        const UnwindRow *rows;
        const char *dummy;

        if (!reason)
                reason = &dummy;
        *reason = NULL;
        if (!blob || size < sizeof(h)) {
                *reason = "shorter than the table header";
                return -EBADMSG;
        }
        if (((uintptr_t) blob & 3) != 0) {
                *reason = "table blob is not 4-byte aligned";
                return -EINVAL;
        }
        memcpy(&h, blob, sizeof(h));
        if (h.magic != UNWIND_TABLE_MAGIC) {
                *reason = "bad magic";
                return -EBADMSG;
        }
        if (h.version != UNWIND_TABLE_VERSION) {
                *reason = "unsupported version";
                return -EBADMSG;
        }
        if (!unwind_arch_to_string(h.arch)) {
                *reason = "unknown architecture";
                return -EBADMSG;
        }
        if (h.row_size != sizeof(UnwindRow)) {
                *reason = "unexpected row size";
                return -EBADMSG;
        }
        if (h.flags != 0 || h.reserved != 0) {
                *reason = "reserved header fields are set";
                return -EBADMSG;
        }
        if (h.n_rows == 0 || h.n_rows > UNWIND_TABLE_MAX_ROWS) {
                *reason = "row count out of range";
                return -EBADMSG;
        }
        if ((size - sizeof(h)) / sizeof(UnwindRow) != h.n_rows ||
            (size - sizeof(h)) % sizeof(UnwindRow) != 0) {
                *reason = "row count does not match the blob size";
                return -EBADMSG;
        }

        rows = (const UnwindRow *) ((const uint8_t *) blob + sizeof(h));
        for (uint32_t i = 0; i < h.n_rows; i++) {
                const char *r;

                if (yield && i > 0 && i % UNWIND_TABLE_VALIDATE_SLICE == 0)
                        yield(userdata);
                if (i > 0 && rows[i].start <= rows[i - 1].start) {
                        *reason = "rows are not strictly sorted by start offset";
                        return -EBADMSG;
                }
                r = check_row(h.arch, &rows[i]);
                if (r) {
                        *reason = r;
                        return -EBADMSG;
                }
        }
        if (unwind_rule_kind(rows[h.n_rows - 1].cfa) != UNWIND_CFA_NONE) {
                *reason = "last row does not end the covered range";
                return -EBADMSG;
        }

        if (ret)
                *ret = (UnwindTable) {
                        .arch = h.arch,
                        .n_rows = h.n_rows,
                        .rows = rows,
                };
        return 0;
}

const UnwindRow *unwind_table_lookup(const UnwindTable *table, uint64_t offset) {
        uint32_t lo = 0, hi = table->n_rows;

        if (table->n_rows == 0 || offset < table->rows[0].start)
                return NULL;
        /* Invariant: rows[lo].start <= offset, and every row at or after hi starts after it. */
        while (hi - lo > 1) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (table->rows[mid].start <= offset)
                        lo = mid;
                else
                        hi = mid;
        }
        return &table->rows[lo];
}
