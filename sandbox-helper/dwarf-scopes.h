/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* dwarf-scopes.h: the chain of function DIEs containing an address, found by
 * walking a CU's DIE tree, through namespaces and types too. libdw's
 * dwarf_getscopes prunes every DIE without an address range, so it never
 * enters the DW_TAG_namespace DIEs in which rustc (and clang for C++) nest
 * their functions. */
#pragma once

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>

/* Limits on hostile DWARF: nesting depth followed, DIEs visited per walk. */
#define DWARF_SCOPES_MAX_DEPTH 256u
#define DWARF_SCOPES_MAX_VISITS (1u << 20)

/* Fills path[0..max) with the DW_TAG_subprogram and DW_TAG_inlined_subroutine
 * DIEs that contain pc (a CU-relative address, as dwarf_haspc takes it),
 * outermost first, descending from root (a unit, or a function: then root
 * itself is not in path) through namespaces, types and lexical blocks.
 * Returns how many were found (0: none), or -E2BIG when a limit above cut
 * the walk short before anything was found. */
int dwarf_scopes_find_functions(Dwarf_Die *root, Dwarf_Addr pc, Dwarf_Die *path, size_t max);

/* DIEs without an address range that may own functions (namespaces, types). */
bool dwarf_scopes_owns_functions(int tag);

/* DIEs with an address range that may contain pc (functions, blocks). */
bool dwarf_scopes_is_code_scope(int tag);
