/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-string-util.c: the reason a function below the bus gives with its
 * errno (basic/string-util.h: why_set, why_setf, why_appendf). */
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

TEST(why_set_takes_the_text_over) {
        _cleanup_free_ char *why = strdup("first");
        why_set(&why, strdup("second"));
        CHECK(why && strcmp(why, "second") == 0);
        why_set(NULL, strdup("freed, not leaked"));
        why_set(&why, NULL);
        CHECK(why == NULL);
}

TEST(why_appendf_joins_reasons_with_a_semicolon) {
        _cleanup_free_ char *why = NULL;
        why_appendf(&why, "%s -> %s", "/a", "b");
        CHECK(why && strcmp(why, "/a -> b") == 0);
        why_appendf(&why, "too many symbolic links");
        CHECK(why && strcmp(why, "/a -> b; too many symbolic links") == 0);
        why_appendf(NULL, "nobody reads %s", "this");
}

int main(int argc, char **argv) {
        return test_main(argc, argv);
}
