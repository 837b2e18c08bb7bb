/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* id-args.c: see id-args.h. */
#include "id-args.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "basic.h"

gboolean cli_parse_ids(const char *command, const char *option, char **args, guint64 min_id, GArray *out) {
        for (char **a = args; a && *a; a++) {
                g_auto(GStrv) parts = g_strsplit(*a, ",", -1);
                for (char **p = parts; *p; p++) {
                        uint64_t v;
                        if (parse_bounded_u64(*p, min_id, INT32_MAX, &v) < 0) {
                                fprintf(stderr, "periscope %s: %s: '%s' is not a %s id\n", command, option, *p,
                                        strcmp(option, "--tid") == 0 ? "thread" : "process");
                                return FALSE;
                        }
                        int32_t id = (int32_t) v;
                        g_array_append_val(out, id);
                }
        }
        return TRUE;
}
