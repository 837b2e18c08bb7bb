/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-rows.h: the rows of a report table, gathered from the hash table
 * that counted them, for sorting and printing. */
#pragma once

#include <glib.h>

/* The values of t in a new array (it does not own them); t keeps them. */
static inline GPtrArray *report_rows_from_table(GHashTable *t) {
        GPtrArray *rows = g_ptr_array_sized_new(g_hash_table_size(t));
        GHashTableIter it;
        gpointer v;
        g_hash_table_iter_init(&it, t);
        while (g_hash_table_iter_next(&it, NULL, &v))
                g_ptr_array_add(rows, v);
        return rows;
}
