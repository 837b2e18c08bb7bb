/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mountinfo.c: /proc/PID/mountinfo parser (see mountinfo.h). */
#include "mountinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"

#define MOUNTINFO_MAX_BYTES (16u * 1024 * 1024)

/* Copies one space-separated field, decoding \NNN octal escapes. */
static char *take_field(char **cursor) {
        char *s = *cursor, *e;
        while (*s == ' ')
                s++;
        if (*s == 0)
                return NULL;
        e = s;
        while (*e && *e != ' ')
                e++;
        size_t len = (size_t) (e - s);
        char *out = malloc(len + 1), *o = out;
        if (!out)
                return NULL;
        for (size_t i = 0; i < len; i++) {
                if (s[i] == '\\' && i + 3 < len &&
                    s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' &&
                    s[i + 3] >= '0' && s[i + 3] <= '7') {
                        *o++ = (char) (((s[i + 1] - '0') << 6) | ((s[i + 2] - '0') << 3) | (s[i + 3] - '0'));
                        i += 3;
                } else
                        *o++ = s[i];
        }
        *o = 0;
        *cursor = e;
        return out;
}

static void entry_clear(MountEntry *m) {
        free(m->root);
        free(m->mount_point);
        free(m->fstype);
        free(m->source);
        free(m->super_options);
}

MountTable *mount_table_free(MountTable *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_entries; i++)
                entry_clear(&t->entries[i]);
        free(t->entries);
        free(t);
        return NULL;
}

static int parse_line(char *line, MountEntry *m) {
        int n = 0;
        if (sscanf(line, "%d %d %u:%u %n", &m->mount_id, &m->parent_id, &m->dev_major, &m->dev_minor, &n) != 4 || n == 0)
                return -EBADMSG;
        char *c = line + n;
        _cleanup_free_ char *opts = NULL;
        if (!(m->root = take_field(&c)) || !(m->mount_point = take_field(&c)) || !(opts = take_field(&c)))
                return -EBADMSG;
        /* Optional fields up to the "-" separator. */
        for (;;) {
                _cleanup_free_ char *f = take_field(&c);
                if (!f)
                        return -EBADMSG;
                if (strcmp(f, "-") == 0)
                        break;
        }
        if (!(m->fstype = take_field(&c)) || !(m->source = take_field(&c)))
                return -EBADMSG;
        m->super_options = take_field(&c);
        if (!m->super_options && !(m->super_options = strdup("")))
                return -ENOMEM;
        if (m->root[0] != '/' || m->mount_point[0] != '/')
                return -EBADMSG;
        return 0;
}

int mount_table_parse(const char *text, MountTable **ret) {
        _cleanup_free_ char *copy = strdup(text);
        MountTable *t = calloc(1, sizeof(*t));
        size_t cap = 0;
        int r = 0;
        if (!copy || !t) {
                free(t);
                return -ENOMEM;
        }
        char *save = NULL;
        for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                if (t->n_entries == cap) {
                        size_t ncap = cap ? cap * 2 : 32;
                        MountEntry *ne = realloc(t->entries, ncap * sizeof(*ne));
                        if (!ne) {
                                r = -ENOMEM;
                                break;
                        }
                        t->entries = ne;
                        cap = ncap;
                }
                MountEntry *m = &t->entries[t->n_entries];
                memset(m, 0, sizeof(*m));
                r = parse_line(line, m);
                if (r < 0) {
                        entry_clear(m);
                        break;
                }
                t->n_entries++;
        }
        if (r < 0) {
                mount_table_free(t);
                return r;
        }
        *ret = t;
        return 0;
}

int mount_table_load(pid_t pid, MountTable **ret) {
        char path[64];
        _cleanup_free_ char *text = NULL;
        if (pid > 0)
                snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int) pid);
        else
                snprintf(path, sizeof(path), "/proc/self/mountinfo");
        int r = read_file_bounded(AT_FDCWD, path, MOUNTINFO_MAX_BYTES, true, &text, NULL);
        if (r < 0)
                return r;
        return mount_table_parse(text, ret);
}

/* Length of the mount point as a path prefix of path, or 0 if not a prefix
 * ("/" matches everything with length 1). */
static size_t prefix_len(const char *mount_point, const char *path) {
        size_t l = strlen(mount_point);
        if (strcmp(mount_point, "/") == 0)
                return path[0] == '/' ? 1 : 0;
        if (strncmp(mount_point, path, l) != 0)
                return 0;
        if (path[l] != 0 && path[l] != '/')
                return 0;
        return l;
}

const MountEntry *mount_table_find_by_path(const MountTable *t, const char *path, const char **ret_rest) {
        const MountEntry *best = NULL;
        size_t best_len = 0;
        for (size_t i = 0; t && i < t->n_entries; i++) {
                size_t l = prefix_len(t->entries[i].mount_point, path);
                if (l > 0 && l >= best_len) {
                        best = &t->entries[i];
                        best_len = l;
                }
        }
        if (best && ret_rest) {
                const char *rest = path + best_len;
                while (*rest == '/')
                        rest++;
                *ret_rest = rest;
        }
        return best;
}

const MountEntry *mount_table_find_by_id(const MountTable *t, int mount_id) {
        for (size_t i = 0; t && i < t->n_entries; i++)
                if (t->entries[i].mount_id == mount_id)
                        return &t->entries[i];
        return NULL;
}

int mount_option_get(const char *options, const char *name, char *buf, size_t size) {
        size_t nl = strlen(name);
        const char *p = options;
        while (p && *p) {
                const char *e = strchr(p, ',');
                size_t len = e ? (size_t) (e - p) : strlen(p);
                if (len > nl && strncmp(p, name, nl) == 0 && p[nl] == '=') {
                        size_t vl = len - nl - 1;
                        if (vl + 1 > size)
                                return -ENAMETOOLONG;
                        memcpy(buf, p + nl + 1, vl);
                        buf[vl] = 0;
                        return 0;
                }
                p = e ? e + 1 : NULL;
        }
        return -ENOENT;
}
