/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-parse-util.c: the bounded number parsers every numeric option of
 * periscoped and `periscope record` goes through (basic/parse-util.h). */
#include <errno.h>
#include <locale.h>
#include <stdint.h>
#include <string.h>

#include "basic.h"
#include "test-check.h"

/* What parse_bounded_u64(s, min, max) returns, and the value on success
 * (a sentinel that an error must leave alone otherwise). */
static int u64(const char *s, uint64_t min, uint64_t max, uint64_t *v) {
        *v = 4242;
        return parse_bounded_u64(s, min, max, v);
}

static int secs(const char *s, uint64_t min, uint64_t max, uint64_t *v) {
        *v = 4242;
        return parse_bounded_seconds(s, min, max, v);
}

TEST(u64_accepts_decimal_within_bounds) {
        uint64_t v;
        CHECK(u64("0", 0, 10, &v) == 0 && v == 0);
        CHECK(u64("10", 0, 10, &v) == 0 && v == 10);
        CHECK(u64("007", 0, 10, &v) == 0 && v == 7);
        CHECK(u64("18446744073709551615", 0, UINT64_MAX, &v) == 0 && v == UINT64_MAX);
}

TEST(u64_refuses_what_is_not_a_number) {
        uint64_t v;
        const char *bad[] = { "", " ", " 5", "5 ", "+5", "-0", "-1", "5x", "0x10", "1e3", "1.0", "1,000", "٣" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                int r = u64(bad[i], 0, UINT64_MAX, &v);
                CHECK_MSG(r == -EINVAL && v == 4242, "'%s' gave %d, value %llu", bad[i], r, (unsigned long long) v);
        }
        CHECK(parse_bounded_u64(NULL, 0, 1, &v) == -EINVAL);
}

TEST(u64_range_limits_and_overflow) {
        uint64_t v;
        CHECK(u64("11", 0, 10, &v) == -ERANGE && v == 4242);
        CHECK(u64("0", 1, 10, &v) == -ERANGE && v == 4242);
        CHECK(u64("1", 1, 1, &v) == 0 && v == 1);
        CHECK(u64("18446744073709551616", 0, UINT64_MAX, &v) == -ERANGE && v == 4242);
        CHECK(u64("99999999999999999999999999", 0, UINT64_MAX, &v) == -ERANGE);
        CHECK(u64("65536", 0, 65535, &v) == -ERANGE);
}

TEST(seconds_whole_and_fractions) {
        uint64_t v;
        CHECK(secs("2", 0, UINT64_MAX, &v) == 0 && v == 2000000);
        CHECK(secs("0.5", 0, UINT64_MAX, &v) == 0 && v == 500000);
        CHECK(secs(".5", 0, UINT64_MAX, &v) == 0 && v == 500000);
        CHECK(secs("5.", 0, UINT64_MAX, &v) == 0 && v == 5000000);
        CHECK(secs("1.250", 0, UINT64_MAX, &v) == 0 && v == 1250000);
        CHECK(secs("0.000001", 0, UINT64_MAX, &v) == 0 && v == 1);
        /* past the microsecond: dropped */
        CHECK(secs("0.0000019", 0, UINT64_MAX, &v) == 0 && v == 1);
        CHECK(secs("0.001", 1000, 86400000000, &v) == 0 && v == 1000);
        CHECK(secs("86400", 1000, 86400000000, &v) == 0 && v == 86400000000);
}

TEST(seconds_refuses_what_is_not_a_number) {
        uint64_t v;
        const char *bad[] = {
                "", ".", " 1", "1 ", "+1", "-1", "-0.5", "1s", "0x1", "1e3", "1,5", "1.5.2", "inf", "nan"
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                int r = secs(bad[i], 0, UINT64_MAX, &v);
                CHECK_MSG(r == -EINVAL && v == 4242, "'%s' gave %d", bad[i], r);
        }
}

TEST(seconds_range_limits_and_overflow) {
        uint64_t v;
        CHECK(secs("0.0009", 1000, 86400000000, &v) == -ERANGE && v == 4242);
        CHECK(secs("86400.000001", 1000, 86400000000, &v) == -ERANGE);
        CHECK(secs("600.5", 0, 600000000, &v) == -ERANGE);
        CHECK(secs("18446744073709.551616", 0, UINT64_MAX, &v) == -ERANGE);
        CHECK(secs("18446744073709.551615", 0, UINT64_MAX, &v) == 0 && v == UINT64_MAX);
        CHECK(secs("99999999999999999999", 0, UINT64_MAX, &v) == -ERANGE);
}

static int duration(const char *s, uint64_t min, uint64_t max, uint64_t *v) {
        *v = 4242;
        return parse_bounded_duration(s, min, max, v);
}

TEST(duration_plain_seconds_and_units) {
        uint64_t v;
        CHECK(duration("2", 0, UINT64_MAX, &v) == 0 && v == 2000000);
        CHECK(duration("0.5", 0, UINT64_MAX, &v) == 0 && v == 500000);
        CHECK(duration("1s", 0, UINT64_MAX, &v) == 0 && v == 1000000);
        CHECK(duration("1.5s", 0, UINT64_MAX, &v) == 0 && v == 1500000);
        CHECK(duration("500ms", 0, UINT64_MAX, &v) == 0 && v == 500000);
        CHECK(duration("1.5ms", 0, UINT64_MAX, &v) == 0 && v == 1500);
        CHECK(duration("2m", 0, UINT64_MAX, &v) == 0 && v == 120000000);
        CHECK(duration("2min", 0, UINT64_MAX, &v) == 0 && v == 120000000);
        CHECK(duration("0.5m", 0, UINT64_MAX, &v) == 0 && v == 30000000);
        CHECK(duration("24h", 0, UINT64_MAX, &v) == 0 && v == 86400000000);
}

TEST(duration_refuses_junk_and_bounds) {
        uint64_t v;
        const char *bad[] = { "",     "s",   "ms", "m",   "h",   " 1s",   "1 s", "1S",
                              "1sec", "1us", "1d", "-1s", "1ss", "1e3ms", "1,5s" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                int r = duration(bad[i], 0, UINT64_MAX, &v);
                CHECK_MSG(r == -EINVAL && v == 4242, "'%s' gave %d", bad[i], r);
        }
        CHECK(duration("0.5ms", 1000, 86400000000, &v) == -ERANGE && v == 4242);
        CHECK(duration("1ms", 1000, 86400000000, &v) == 0 && v == 1000);
        CHECK(duration("24.001h", 1000, 86400000000, &v) == -ERANGE);
        CHECK(duration("1440m", 1000, 86400000000, &v) == 0 && v == 86400000000);
        CHECK(duration("18446744073709h", 0, UINT64_MAX, &v) == -ERANGE);
        char longer[200];
        memset(longer, '1', sizeof(longer) - 2);
        longer[sizeof(longer) - 2] = 's';
        longer[sizeof(longer) - 1] = '\0';
        CHECK(duration(longer, 0, UINT64_MAX, &v) == -ERANGE && v == 4242);
}

/* `periscope record` runs under the user's locale: a decimal comma there
 * changes nothing. */
TEST(seconds_ignore_the_locale) {
        uint64_t v;
        if (setlocale(LC_NUMERIC, "de_DE.UTF-8") || setlocale(LC_NUMERIC, "C.UTF-8")) {
                CHECK(secs("0.5", 0, UINT64_MAX, &v) == 0 && v == 500000);
                CHECK(secs("0,5", 0, UINT64_MAX, &v) == -EINVAL);
        }
        setlocale(LC_NUMERIC, "C");
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
