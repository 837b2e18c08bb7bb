/* log.h: the one way Periscope's programs log. A line goes to stderr (the
 * journal, under systemd) as "PROGRAM: message" or, for a recording,
 * "PROGRAM: recording ID: message". Libraries do not log: they return a
 * negative errno, and a message where the caller needs one; the program
 * that handles the error logs it, once. */
#pragma once

#include <stdarg.h>
#include <syslog.h>

/* Logs at level (LOG_ERR ... LOG_DEBUG, as syslog.h), for the recording
 * recording_id (0: none). Returns -abs(error), so that an error path can
 * `return log_error_errno(r, ...)`; 0 when error is 0. */
int log_internal(int level, unsigned recording_id, int error, const char *format, ...)
        __attribute__((format(printf, 4, 5)));
int log_internalv(int level, unsigned recording_id, int error, const char *format, va_list ap)
        __attribute__((format(printf, 4, 0)));

/* Messages of level above this are dropped (default LOG_INFO; LOG_DEBUG
 * when $PERISCOPE_DEBUG is set). */
int log_get_max_level(void);

#define log_error(...) log_internal(LOG_ERR, 0, 0, __VA_ARGS__)
#define log_warning(...) log_internal(LOG_WARNING, 0, 0, __VA_ARGS__)
#define log_info(...) log_internal(LOG_INFO, 0, 0, __VA_ARGS__)
#define log_debug(...) log_internal(LOG_DEBUG, 0, 0, __VA_ARGS__)
#define log_error_errno(error, ...) log_internal(LOG_ERR, 0, (error), __VA_ARGS__)

/* The same for one recording: "recording ID: " comes first. */
#define log_recording(level, id, ...) log_internal((level), (id), 0, __VA_ARGS__)
#define log_recording_errno(level, id, error, ...) log_internal((level), (id), (error), __VA_ARGS__)
