/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* aarch64-vectors.h: the aarch64 register/stack vectors of aarch64/ (made
 * by make-vectors.sh under qemu-aarch64-static and gdb-multiarch) and the
 * programs they were taken from, for the tests that unwind them on any
 * machine: test-unwinder-aarch64 and make-aarch64-capture. */
#pragma once

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol.h"
#include "unwinder.h"

#define MAX_MAPS 32
#define MAX_EXPECT 64

typedef struct Map {
        uint64_t start, end, pgoff;
        char file[64];
} Map;

/* One vector: the registers perf would sample, the copied stack, the code
 * mappings and gdb's backtrace (frame pcs, innermost first, no inline frames). */
typedef struct Vector {
        uint64_t pc, sp, x29, x30;
        Map maps[MAX_MAPS];
        size_t n_maps;
        uint64_t stack_base;
        uint8_t *stack;
        size_t stack_size;
        uint64_t expect[MAX_EXPECT];
        size_t n_expect;
} Vector;

/* A program of aarch64/ with its compiled, validated table. */
typedef struct Program {
        char file[64];
        void *blob;
        UnwindTable table;
        Elf *elf;
        int fd;
} Program;

typedef struct Finder {
        const Vector *v;
        const Program *p;
} Finder;

/* Reads a .vec file; free v->stack after. */
int vector_load(const char *path, Vector *v);

/* Opens DIR/FILE and compiles its table. */
int program_load(const char *dir, const char *file, Program *p);
void program_done(Program *p);

/* The .symtab function holding file offset off, or "??". */
const char *program_name(const Program *p, uint64_t off);

/* The vector's mapping holding ip, or NULL. */
const Map *find_map(const Vector *v, uint64_t ip);

/* UnwindFindFunc over a Finder: the program's table, none for other files. */
bool finder_find(void *userdata, uint64_t ip, const UnwindTable **table, uint64_t *offset, bool *jit);

/* The registers of a vector, as periscoped on aarch64 hands them over. */
UnwindRegs vector_regs(const Vector *v);
