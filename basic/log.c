/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* log.c: see log.h. */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* Set once by main() (log_set_sink); NULL: plain lines on stderr. */
static LogSink log_sink;
static void *log_sink_userdata;

void log_set_sink(LogSink sink, void *userdata) {
        log_sink = sink;
        log_sink_userdata = userdata;
}

int log_get_max_level(void) {
        const char *e = getenv("PERISCOPE_DEBUG");
        return e && *e ? LOG_DEBUG : LOG_INFO;
}

void log_write_stderr(const LogFields *fields, const char *message) {
        /* One fprintf per line of our own, so lines of concurrent writers
         * (a tool's helper writes to the same stderr) do not interleave. */
        fprintf(stderr, "%s: %s\n", fields->identifier ? fields->identifier : program_invocation_short_name, message);
}

int log_fieldsv(int level, const LogFields *fields, const char *format, va_list ap) {
        int error = fields->error < 0 ? -fields->error : fields->error;
        if (level > log_get_max_level())
                return -error;
        char text[2048], message[2100];
        int saved = errno;
        errno = error; /* for %m */
        vsnprintf(text, sizeof(text), format, ap);
        errno = saved;
        if (fields->recording_id > 0)
                snprintf(message, sizeof(message), "recording %u: %s", fields->recording_id, text);
        else if (fields->has_uid)
                snprintf(message, sizeof(message), "uid %u: %s", (unsigned) fields->uid, text);
        else
                snprintf(message, sizeof(message), "%s", text);
        LogFields f = *fields;
        f.error = error;
        if (log_sink)
                log_sink(level, &f, message, log_sink_userdata);
        else
                log_write_stderr(&f, message);
        return -error;
}

int log_fields(int level, const LogFields *fields, const char *format, ...) {
        va_list ap;
        va_start(ap, format);
        int r = log_fieldsv(level, fields, format, ap);
        va_end(ap);
        return r;
}

int log_internal(int level, unsigned recording_id, int error, const char *format, ...) {
        LogFields fields = { .recording_id = recording_id, .error = error };
        va_list ap;
        va_start(ap, format);
        int r = log_fieldsv(level, &fields, format, ap);
        va_end(ap);
        return r;
}
