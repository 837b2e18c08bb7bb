/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* parse-util.c: numbers typed on a command line, within bounds (parse-util.h). */
#include "parse-util.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "time-util.h"

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

/* Reads the digits at *p into *ret, moving *p past them. Returns how many
 * there were; *overflow is set when the value does not fit. */
static unsigned read_digits(const char **p, uint64_t *ret, bool *overflow) {
        uint64_t v = 0;
        unsigned n = 0;
        for (; is_digit(**p); (*p)++, n++) {
                unsigned d = (unsigned) (**p - '0');
                if (v > (UINT64_MAX - d) / 10)
                        *overflow = true;
                else
                        v = v * 10 + d;
        }
        *ret = v;
        return n;
}

int parse_bounded_u64(const char *s, uint64_t min, uint64_t max, uint64_t *ret) {
        const char *p = s;
        uint64_t v;
        bool overflow = false;
        if (!s || read_digits(&p, &v, &overflow) == 0 || *p)
                return -EINVAL;
        if (overflow || v < min || v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

int parse_bounded_seconds(const char *s, uint64_t min_usec, uint64_t max_usec, uint64_t *ret_usec) {
        const char *p = s;
        uint64_t whole = 0, usec = 0;
        bool overflow = false;
        if (!s)
                return -EINVAL;
        unsigned n = read_digits(&p, &whole, &overflow);
        if (*p == '.') {
                p++;
                uint64_t place = USEC_PER_SEC / 10;
                for (; is_digit(*p); p++, n++, place /= 10)
                        usec += (uint64_t) (*p - '0') * place;
        }
        if (n == 0 || *p)
                return -EINVAL;
        if (overflow || whole > (UINT64_MAX - usec) / USEC_PER_SEC)
                return -ERANGE;
        uint64_t v = whole * USEC_PER_SEC + usec;
        if (v < min_usec || v > max_usec)
                return -ERANGE;
        *ret_usec = v;
        return 0;
}

int parse_bounded_duration(const char *s, uint64_t min_usec, uint64_t max_usec, uint64_t *ret_usec) {
        static const struct {
                const char *suffix;
                uint64_t mul, div; /* microseconds of the parsed seconds: usec * mul / div */
        } units[] = {
                { "ms", 1, 1000 }, { "s", 1, 1 }, { "min", 60, 1 }, { "m", 60, 1 }, { "h", 3600, 1 },
        };
        if (!s)
                return -EINVAL;
        size_t len = strlen(s), number_len = len;
        uint64_t mul = 1, div = 1;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
                size_t n = strlen(units[i].suffix);
                if (len > n && strcmp(s + len - n, units[i].suffix) == 0) {
                        number_len = len - n;
                        mul = units[i].mul;
                        div = units[i].div;
                        break;
                }
        }
        char number[64];
        if (number_len >= sizeof(number))
                return -ERANGE; /* digits past what any bound holds */
        memcpy(number, s, number_len);
        number[number_len] = '\0';
        uint64_t usec;
        int r = parse_bounded_seconds(number, 0, UINT64_MAX, &usec);
        if (r < 0)
                return r;
        if (usec > UINT64_MAX / mul)
                return -ERANGE;
        usec = usec * mul / div;
        if (usec < min_usec || usec > max_usec)
                return -ERANGE;
        *ret_usec = usec;
        return 0;
}
