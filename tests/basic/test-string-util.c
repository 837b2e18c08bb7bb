/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-string-util.c: the reason a function below the bus gives with its
 * errno (basic/string-util.h, why_setf). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "test-check.h"

TEST(why_setf_returns_the_errno_and_sets_the_text) {
        _cleanup_free_ char *why = NULL;
        CHECK(why_setf(&why, -EINVAL, "option '%s' is %d", "freq", 0) == -EINVAL);
        CHECK(why && strcmp(why, "option 'freq' is 0") == 0);
}

TEST(why_setf_replaces_an_earlier_reason) {
        _cleanup_free_ char *why = strdup("first");
        CHECK(why_setf(&why, -EXDEV, "second") == -EXDEV);
        CHECK(why && strcmp(why, "second") == 0);
}

TEST(why_setf_without_a_place_still_returns_the_errno) {
        CHECK(why_setf(NULL, -ELOOP, "nobody reads %s", "this") == -ELOOP);
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
