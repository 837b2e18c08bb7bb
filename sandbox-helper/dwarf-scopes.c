/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* dwarf-scopes.c: see dwarf-scopes.h. Runs inside the sandbox only. */
#include "dwarf-scopes.h"

#include <dwarf.h>
#include <errno.h>
#include <stdbool.h>

typedef struct Walk {
        Dwarf_Addr pc;
        Dwarf_Die *path;
        size_t max, n;
        unsigned visits;
        bool cut;
} Walk;

bool dwarf_scopes_owns_functions(int tag) {
        return tag == DW_TAG_namespace || tag == DW_TAG_module || tag == DW_TAG_class_type ||
               tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_interface_type ||
               tag == DW_TAG_enumeration_type || tag == DW_TAG_variant_part || tag == DW_TAG_variant;
}

bool dwarf_scopes_is_code_scope(int tag) {
        return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block ||
               tag == DW_TAG_try_block || tag == DW_TAG_catch_block || tag == DW_TAG_with_stmt ||
               tag == DW_TAG_entry_point;
}

/* True when the scope containing pc was found under parent. */
static bool walk_children(Walk *w, Dwarf_Die *parent, unsigned depth) {
        Dwarf_Die child;
        if (depth >= DWARF_SCOPES_MAX_DEPTH) {
                w->cut = true;
                return false;
        }
        if (dwarf_child(parent, &child) != 0)
                return false;
        do {
                if (++w->visits > DWARF_SCOPES_MAX_VISITS) {
                        w->cut = true;
                        return false;
                }
                int tag = dwarf_tag(&child);
                if (dwarf_scopes_owns_functions(tag)) {
                        if (walk_children(w, &child, depth + 1))
                                return true;
                } else if (dwarf_scopes_is_code_scope(tag) && dwarf_haspc(&child, w->pc) > 0) {
                        if ((tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) && w->n < w->max)
                                w->path[w->n++] = child;
                        walk_children(w, &child, depth + 1);
                        return true;
                }
        } while (dwarf_siblingof(&child, &child) == 0);
        return false;
}

int dwarf_scopes_find_functions(Dwarf_Die *root, Dwarf_Addr pc, Dwarf_Die *path, size_t max) {
        Walk w = { .pc = pc, .path = path, .max = max };
        walk_children(&w, root, 0);
        if (w.n == 0 && w.cut)
                return -E2BIG;
        return (int) w.n;
}
