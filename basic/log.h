/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* log.h: the one way Periscope's programs log. A line goes to stderr as
 * "PROGRAM: message"; for a recording "PROGRAM: recording ID: message", for
 * a caller (and no recording) "PROGRAM: uid UID: message". A program that
 * links libsystemd may set a sink instead (periscoped's journal sink,
 * service/bus/journal-log.c), which gets the level and the fields apart.
 * Libraries do not log: they return a negative errno, and a message where
 * the caller needs one; the program that handles the error logs it, once. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <sys/types.h>
#include <syslog.h>

/* What a message is about, beside its text. */
typedef struct LogFields {
        unsigned recording_id;  /* 0: none */
        bool has_uid;           /* it concerns a caller: */
        uid_t uid;              /* that caller's uid */
        const char *message_id; /* 32 hex digits (a journal MESSAGE_ID), or NULL */
        int error;              /* the errno it reports (positive), or 0 */
        const char *identifier; /* who speaks, if not this program (a helper's stderr): its name */
} LogFields;

/* Takes every message instead of stderr: level (LOG_ERR ... LOG_DEBUG),
 * the fields, and the text with its "recording ID: " / "uid UID: " prefix
 * but without the program's name. */
typedef void (*LogSink)(int level, const LogFields *fields, const char *message, void *userdata);

/* Sends every message to sink from now on (NULL: back to stderr). A
 * program's main() sets it once, before anything logs: the one piece of
 * process-wide state here, as stderr itself is. */
void log_set_sink(LogSink sink, void *userdata);

/* Writes message as a plain line to stderr (what happens without a sink);
 * for a sink that cannot deliver. */
void log_write_stderr(const LogFields *fields, const char *message);

/* Logs at level (LOG_ERR ... LOG_DEBUG, as syslog.h) with fields. Returns
 * -abs(fields->error), so that an error path can `return
 * log_error_errno(r, ...)`; 0 when there is no error. */
int log_fieldsv(int level, const LogFields *fields, const char *format, va_list ap)
        __attribute__((format(printf, 3, 0)));
int log_fields(int level, const LogFields *fields, const char *format, ...) __attribute__((format(printf, 3, 4)));

/* The same with the common fields as arguments. */
int log_internal(int level, unsigned recording_id, int error, const char *format, ...)
        __attribute__((format(printf, 4, 5)));

/* Messages of level above this are dropped (default LOG_INFO; LOG_DEBUG
 * when $PERISCOPE_DEBUG is set). */
int log_get_max_level(void);

#define log_error(...) log_internal(LOG_ERR, 0, 0, __VA_ARGS__)
#define log_warning(...) log_internal(LOG_WARNING, 0, 0, __VA_ARGS__)
#define log_notice(...) log_internal(LOG_NOTICE, 0, 0, __VA_ARGS__)
#define log_info(...) log_internal(LOG_INFO, 0, 0, __VA_ARGS__)
#define log_debug(...) log_internal(LOG_DEBUG, 0, 0, __VA_ARGS__)
#define log_error_errno(error, ...) log_internal(LOG_ERR, 0, (error), __VA_ARGS__)
#define log_warning_errno(error, ...) log_internal(LOG_WARNING, 0, (error), __VA_ARGS__)
#define log_notice_errno(error, ...) log_internal(LOG_NOTICE, 0, (error), __VA_ARGS__)
#define log_info_errno(error, ...) log_internal(LOG_INFO, 0, (error), __VA_ARGS__)
#define log_debug_errno(error, ...) log_internal(LOG_DEBUG, 0, (error), __VA_ARGS__)

/* The same for one recording: "recording ID: " comes first. */
#define log_recording(level, id, ...) log_internal((level), (id), 0, __VA_ARGS__)
#define log_recording_errno(level, id, error, ...) log_internal((level), (id), (error), __VA_ARGS__)
#define log_recording_notice(id, ...) log_internal(LOG_NOTICE, (id), 0, __VA_ARGS__)

/* For one caller (uid): "uid UID: " comes first, and the journal gets UID=. */
#define log_uid(level, uid_, ...) log_fields((level), &(const LogFields) { .has_uid = true, .uid = (uid_) }, __VA_ARGS__)
#define log_uid_notice(uid_, ...) log_uid(LOG_NOTICE, (uid_), __VA_ARGS__)
