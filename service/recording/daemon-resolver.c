/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon-resolver.c: a resolver as periscoped owns one (daemon-resolver.h). */
#include "daemon-resolver.h"

#include "basic.h"

/* The resolver's log function: the daemon's log (stderr or the journal). */
static void log_resolver_warning(void *userdata, const char *message) {
        log_warning("resolver: %s", message);
}

int daemon_resolver_new(HelperClient *user_file_helper, Resolver **ret) {
        int r = resolver_new(ret);
        if (r < 0)
                return r;
        resolver_set_log_func(*ret, log_resolver_warning, NULL);
        resolver_set_user_file_helper(*ret, user_file_helper);
        return 0;
}
