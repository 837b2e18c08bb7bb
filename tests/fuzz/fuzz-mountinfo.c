/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-mountinfo.c: libFuzzer target for the mountinfo parser (a process's
 * /proc/PID/mountinfo shows mount points its user chose, octal escapes and
 * all), and the lookups the resolver makes on the table. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mountinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = 0;
        MountTable *t = NULL;
        if (mount_table_parse(text, &t) == 0) {
                volatile size_t sink = 0;
                for (size_t i = 0; i < t->n_entries; i++) {
                        const MountEntry *e = &t->entries[i];
                        sink += strlen(e->root) + strlen(e->mount_point) + strlen(e->fstype) + strlen(e->source) +
                                strlen(e->super_options);
                        char buf[256];
                        if (mount_option_get(e->super_options, "subvol", buf, sizeof(buf)) >= 0)
                                sink += strlen(buf);
                        if (mount_table_find_by_id(t, e->parent_id))
                                sink++;
                        const char *rest = NULL;
                        const MountEntry *m = mount_table_find_by_path(t, e->mount_point, &rest);
                        if (m && rest)
                                sink += strlen(rest);
                }
                static const char *const paths[] = { "/", "/usr/lib/libc.so.6", "/home/user/.local/bin/x", "" };
                for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
                        const char *rest = NULL;
                        if (mount_table_find_by_path(t, paths[i], &rest) && rest)
                                sink += strlen(rest);
                }
                (void) sink;
                mount_table_free(t);
        }
        free(text);
        return 0;
}
