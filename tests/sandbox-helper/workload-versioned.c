/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload-versioned: a shared library stripped as distributions ship them:
 * only .dynsym, with version nodes (ABS OBJECT symbols such as
 * "PERISCOPE_TEST_1.0") and an exported data object that lies in .text.
 * hidden_work is static: no dynamic symbol covers it, so it must come out
 * unresolved, never named after the version node; the object's bytes never
 * come out named after the object. */

static volatile long sink;

__attribute__((noinline)) static long hidden_work(long n) {
        long s = 0;
        for (long i = 0; i < n; i++)
                s += i * i;
        return s;
}

/* a data object inside .text: 64 bytes of code (nops) that only an OBJECT
 * symbol covers */
__asm__(".pushsection .text\n"
        ".globl code_alias_object\n"
        ".type code_alias_object, @object\n"
        ".size code_alias_object, 64\n"
        "code_alias_object:\n"
        ".skip 64, 0x90\n"
        ".popsection\n");

long exported_entry(long n) {
        sink = hidden_work(n);
        return sink;
}
