/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf-map.c: the perf map text format, line by line through a bounded
 * buffer; nothing of a line is trusted: numbers are hex of at most 16
 * digits, ranges must not wrap, names must be non-empty and free of NULs. */
#include "perf-map.h"

#include <errno.h>
#include <string.h>

#define PERF_MAP_BUFFER (64u * 1024u)

/* Parses up to 16 hex digits (after an optional 0x) at *p; advances *p. */
static bool parse_hex(const char **p, const char *end, uint64_t *ret) {
        const char *s = *p;
        if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
                s += 2;
        uint64_t v = 0;
        size_t digits = 0;
        for (; s < end; s++, digits++) {
                unsigned d;
                if (*s >= '0' && *s <= '9')
                        d = (unsigned) (*s - '0');
                else if (*s >= 'a' && *s <= 'f')
                        d = (unsigned) (*s - 'a' + 10);
                else if (*s >= 'A' && *s <= 'F')
                        d = (unsigned) (*s - 'A' + 10);
                else
                        break;
                if (digits == 16)
                        return false;
                v = v << 4 | d;
        }
        if (digits == 0)
                return false;
        *p = s;
        *ret = v;
        return true;
}

static const char *skip_blanks(const char *p, const char *end) {
        while (p < end && (*p == ' ' || *p == '\t'))
                p++;
        return p;
}

/* One line (without its newline) that starts at file offset `offset`:
 * 1 kept, 0 empty, -EBADMSG refused, -E2BIG/-ENOMEM. */
static int parse_line(const char *line, size_t len, uint64_t offset, JitEntries *out) {
        const char *end = line + len, *p = line;
        if (len > 0 && end[-1] == '\r')
                end--;
        if (skip_blanks(p, end) == end)
                return 0;
        uint64_t start, size;
        if (!parse_hex(&p, end, &start) || p == end || (*p != ' ' && *p != '\t'))
                return -EBADMSG;
        p = skip_blanks(p, end);
        if (!parse_hex(&p, end, &size) || p == end || (*p != ' ' && *p != '\t'))
                return -EBADMSG;
        p = skip_blanks(p, end);
        if (p == end || size == 0 || start + size < start || memchr(p, '\0', (size_t) (end - p)))
                return -EBADMSG;
        size_t name = (size_t) (end - p);
        JitEntry e = {
                .start = start,
                .size = size,
                .name_offset = offset + (uint64_t) (p - line),
                .name_size = (uint32_t) (name > HELPER_MAX_NAME ? HELPER_MAX_NAME : name),
        };
        int r = jit_entries_add(out, &e);
        return r < 0 ? r : 1;
}

/* Counts and parses one line; refusals are counted, not errors. */
static int take_line(const char *line, size_t len, uint64_t offset, bool too_long, JitEntries *out) {
        int r = too_long ? -EBADMSG : parse_line(line, len, offset, out);
        if (r == 0)
                return 0;
        out->read++;
        if (r == -EBADMSG) {
                out->refused++;
                return 0;
        }
        return r < 0 ? r : 0;
}

int perf_map_read(int fd, JitEntries *out) {
        _cleanup_free_ char *buf = malloc(PERF_MAP_BUFFER);
        if (!buf)
                return -ENOMEM;
        uint64_t base = 0; /* file offset of buf[0] */
        size_t have = 0;
        bool too_long = false; /* inside a line longer than HELPER_JIT_MAX_LINE */
        for (;;) {
                size_t want = PERF_MAP_BUFFER - have;
                if (base + have + want > HELPER_JIT_MAX_FILE_BYTES)
                        want = (size_t) (HELPER_JIT_MAX_FILE_BYTES - base - have);
                ssize_t k = want ? read_full(fd, buf + have, want, (off_t) (base + have)) : 0;
                if (k < 0)
                        return (int) k;
                have += (size_t) k;
                bool eof = (size_t) k < want || want == 0;
                size_t pos = 0;
                for (char *nl; (nl = memchr(buf + pos, '\n', have - pos)); pos = (size_t) (nl - buf) + 1) {
                        int r = take_line(buf + pos, (size_t) (nl - buf) - pos, base + pos, too_long, out);
                        too_long = false;
                        if (r < 0)
                                return r == -E2BIG ? 0 : r; /* enough entries: keep what we have */
                }
                if (eof) {
                        int r = have > pos || too_long ? take_line(buf + pos, have - pos, base + pos, too_long, out) : 0;
                        return r == -E2BIG ? 0 : r;
                }
                if (have - pos > HELPER_JIT_MAX_LINE) {
                        too_long = true; /* refused at its newline */
                        pos = have;
                }
                memmove(buf, buf + pos, have - pos);
                base += pos;
                have -= pos;
        }
}
