/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kallsyms.h: kernel function names from /proc/kallsyms, for the kernel part
 * of sampled stacks (only when the caller may see kernel addresses). */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct Kallsyms Kallsyms;

/* Loads text symbols (types t/T/w/W) from `path` (NULL: /proc/kallsyms),
 * sorted by address. -EPERM when every address reads as 0 (kptr_restrict
 * hides them from this process). */
int kallsyms_load(const char *path, Kallsyms **ret);

/* As kallsyms_load(), calling yield(userdata) every few thousand lines
 * (the kernel writes the file as it is read: hundreds of milliseconds on
 * a loaded machine), so a caller on an event loop lets other work run. */
int kallsyms_load_in_slices(const char *path, void (*yield)(void *userdata), void *userdata, Kallsyms **ret);

/* Frees the table; NULL is a no-op. */
Kallsyms *kallsyms_free(Kallsyms *k);

/* The symbol containing addr: name ("func" or "func [module]"), and its
 * range [*start, *end) up to the next symbol. NULL when none. */
const char *kallsyms_lookup(const Kallsyms *k, uint64_t addr, uint64_t *start, uint64_t *end);
