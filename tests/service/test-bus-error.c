/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-bus-error.c: the one way a D-Bus method builds its error reply
 * (service/bus/bus-error.h): the name asked for or the errno's, %m as the
 * errno's text, an error already set kept, a reason from below the bus. */
#include <errno.h>
#include <string.h>

#include "bus.h"
#include "protocol.h"
#include "test-check.h"

TEST(names_the_error_and_says_the_errno) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        int r = bus_error_set_errnof(&e, PERISCOPE_ERROR_FAILED, -ENOSPC, "writing the mark failed: %m");
        CHECK(r < 0);
        CHECK(sd_bus_error_has_name(&e, PERISCOPE_ERROR_FAILED));
        CHECK_MSG(strcmp(e.message, "writing the mark failed: No space left on device") == 0, "%s", e.message);
}

TEST(without_a_name_the_errno_names_it) {
        static const struct {
                int r;
                const char *name;
        } cases[] = {
                { -ESRCH, PERISCOPE_ERROR_NO_SUCH_PROCESS }, { -EACCES, PERISCOPE_ERROR_NOT_AUTHORIZED },
                { -EINVAL, PERISCOPE_ERROR_INVALID_OPTION }, { -EIO, PERISCOPE_ERROR_FAILED },
                { ESRCH, PERISCOPE_ERROR_NO_SUCH_PROCESS },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
                bus_error_set_errnof(&e, NULL, cases[i].r, "/proc/%d/%s: %m", 7, "maps");
                CHECK_MSG(sd_bus_error_has_name(&e, cases[i].name), "%d: %s", cases[i].r, e.name);
                char want[128];
                snprintf(want, sizeof(want), "/proc/7/maps: %s", strerror(cases[i].r < 0 ? -cases[i].r : cases[i].r));
                CHECK_MSG(strcmp(e.message, want) == 0, "%s", e.message);
        }
}

TEST(an_error_already_set_is_kept) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_error_set(&e, PERISCOPE_ERROR_LIMIT_EXCEEDED, "first");
        CHECK(bus_error_set_errnof(&e, PERISCOPE_ERROR_FAILED, -EIO, "second: %m") < 0);
        CHECK(sd_bus_error_has_name(&e, PERISCOPE_ERROR_LIMIT_EXCEEDED));
        CHECK(strcmp(e.message, "first") == 0);
}

TEST(no_error_object_still_returns_an_errno) {
        CHECK(bus_error_set_errnof(NULL, PERISCOPE_ERROR_FAILED, -EIO, "nobody reads this: %m") < 0);
}

TEST(a_reason_from_below_is_the_message_or_the_errno_is) {
        _cleanup_(sd_bus_error_free) sd_bus_error with = SD_BUS_ERROR_NULL, without = SD_BUS_ERROR_NULL;
        bus_error_set_why(&with, PERISCOPE_ERROR_INVALID_OPTION, -EINVAL, "pid -1 (the whole system) needs a cpu");
        CHECK(sd_bus_error_has_name(&with, PERISCOPE_ERROR_INVALID_OPTION));
        CHECK(strcmp(with.message, "pid -1 (the whole system) needs a cpu") == 0);
        bus_error_set_why(&without, PERISCOPE_ERROR_INVALID_OPTION, -ENOMEM, NULL);
        CHECK_MSG(strcmp(without.message, strerror(ENOMEM)) == 0, "%s", without.message);
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
