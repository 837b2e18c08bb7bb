/* log.c: see log.h. */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int log_get_max_level(void) {
        const char *e = getenv("PERISCOPE_DEBUG");
        return e && *e ? LOG_DEBUG : LOG_INFO;
}

int log_internalv(int level, unsigned recording_id, int error, const char *format, va_list ap) {
        int ret = error < 0 ? error : -error;
        if (level > log_get_max_level())
                return ret;
        /* One fprintf per line of our own, so lines of concurrent writers
         * (the helper's stderr is the daemon's) do not interleave. */
        char message[2048];
        int saved = errno;
        errno = error < 0 ? -error : error; /* for %m */
        vsnprintf(message, sizeof(message), format, ap);
        errno = saved;
        if (recording_id > 0)
                fprintf(stderr, "%s: recording %u: %s\n", program_invocation_short_name, recording_id, message);
        else
                fprintf(stderr, "%s: %s\n", program_invocation_short_name, message);
        return ret;
}

int log_internal(int level, unsigned recording_id, int error, const char *format, ...) {
        va_list ap;
        va_start(ap, format);
        int r = log_internalv(level, recording_id, error, format, ap);
        va_end(ap);
        return r;
}
