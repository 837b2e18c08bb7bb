/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind-dump: compiles a file's unwind table (as the helper would) and
 * prints its rows; a debugging and test tool. Usage: unwind-dump FILE [OFFSET] */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "protocol.h"
#include "unwind-compile.h"

static const char *cfa_names[] = { "none", "unsupported", "reg+off", "*(reg+off)", "plt" };
static const char *saved_names[] = { "undef", "same", "cfa+", "reg+" };
static const char *reg_names[] = { "-", "sp", "fp", "lr" };

static void print_row(const UnwindRow *r) {
        printf("%08" PRIx32 " cfa=%s(%s)%+d ra=%s(%s)%+d fp=%s(%s)%+d flags=%#x\n", r->start,
               cfa_names[unwind_rule_kind(r->cfa)], reg_names[unwind_rule_reg(r->cfa)], r->cfa_offset,
               saved_names[unwind_rule_kind(r->ra)], reg_names[unwind_rule_reg(r->ra)], r->ra_offset,
               saved_names[unwind_rule_kind(r->fp)], reg_names[unwind_rule_reg(r->fp)], r->fp_offset, r->flags);
}

int main(int argc, char **argv) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ void *blob = NULL;
        UnwindCompileStats st;
        UnwindTable t;
        const char *reason;
        size_t size;
        int r;

        if (argc < 2) {
                fprintf(stderr, "usage: %s FILE [OFFSET]\n", argv[0]);
                return 2;
        }
        fd = open(argv[1], O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "open %s: %m\n", argv[1]);
                return 1;
        }
        r = unwind_compile_fd(fd, &blob, &size, &st);
        if (r < 0) {
                fprintf(stderr, "compile %s: %s\n", argv[1], strerror(-r));
                return 1;
        }
        r = unwind_table_validate(blob, size, &t, &reason);
        if (r < 0) {
                fprintf(stderr, "validate %s: %s\n", argv[1], reason);
                return 1;
        }
        printf("fdes eh_frame=%u debug_frame=%u rows=%u unsupported=%u plt=%u signal=%u bytes=%zu\n",
               st.fdes_eh_frame, st.fdes_debug_frame, st.rows, st.rows_unsupported, st.rows_plt,
               st.rows_signal, size);
        if (argc > 2) {
                const UnwindRow *row = unwind_table_lookup(&t, strtoull(argv[2], NULL, 0));
                if (row)
                        print_row(row);
                else
                        printf("no row\n");
                return 0;
        }
        for (uint32_t i = 0; i < t.n_rows; i++)
                print_row(&t.rows[i]);
        return 0;
}
