/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* parse-util.h: numbers typed on a command line, within bounds. Decimal
 * only, whatever the locale: no sign, no spaces, no hex, nothing after the
 * number. Each program words its own message from the bounds it passed. */
#pragma once

#include <stdint.h>

/* Parses s as a whole number in [min, max]. Returns 0 with *ret; -EINVAL
 * when s is not a number (empty, a sign, a space, junk after the digits);
 * -ERANGE when it lies outside [min, max] (overflow included). *ret is left
 * alone on error. */
int parse_bounded_u64(const char *s, uint64_t min, uint64_t max, uint64_t *ret);

/* Parses s as seconds ("2", "0.5", "1.250", ".5") into microseconds in
 * [min_usec, max_usec]: the decimal point is always '.', digits past the
 * microsecond are dropped. Errors as parse_bounded_u64(). */
int parse_bounded_seconds(const char *s, uint64_t min_usec, uint64_t max_usec, uint64_t *ret_usec);

/* Parses s as a duration: seconds as parse_bounded_seconds() reads them,
 * optionally followed by a unit, "ms", "s", "m"/"min" or "h" ("1.5s",
 * "500ms", "2m"), into microseconds in [min_usec, max_usec]. Errors as
 * parse_bounded_u64(). */
int parse_bounded_duration(const char *s, uint64_t min_usec, uint64_t max_usec, uint64_t *ret_usec);
