/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* journal-log.c: see journal-log.h. */
#include "journal-log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "basic.h"

bool journal_stream_is_fd(int fd) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        int end = 0;
        if (!e || sscanf(e, "%llu:%llu%n", &dev, &ino, &end) != 2 || e[end] != '\0')
                return false;
        struct stat st;
        if (fstat(fd, &st) < 0)
                return false;
        return st.st_dev == (dev_t) dev && st.st_ino == (ino_t) ino;
}

static void journal_sink(int level, const LogFields *fields, const char *message, void *userdata) {
        char priority[32], identifier[64], recording[40], uid[32], message_id[64], error[32];
        _cleanup_free_ char *text = NULL;
        struct iovec iov[7];
        size_t n = 0;
        if (asprintf(&text, "MESSAGE=%s", message) < 0) {
                text = NULL;
                log_write_stderr(fields, message);
                return;
        }
        iov[n++] = (struct iovec) { text, strlen(text) };
        snprintf(priority, sizeof(priority), "PRIORITY=%d", level);
        iov[n++] = (struct iovec) { priority, strlen(priority) };
        snprintf(identifier, sizeof(identifier), "SYSLOG_IDENTIFIER=%s",
                 fields->identifier ? fields->identifier : program_invocation_short_name);
        iov[n++] = (struct iovec) { identifier, strlen(identifier) };
        if (fields->recording_id > 0) {
                snprintf(recording, sizeof(recording), "RECORDING=%u", fields->recording_id);
                iov[n++] = (struct iovec) { recording, strlen(recording) };
        }
        if (fields->has_uid) {
                snprintf(uid, sizeof(uid), "UID=%u", (unsigned) fields->uid);
                iov[n++] = (struct iovec) { uid, strlen(uid) };
        }
        if (fields->message_id) {
                snprintf(message_id, sizeof(message_id), "MESSAGE_ID=%s", fields->message_id);
                iov[n++] = (struct iovec) { message_id, strlen(message_id) };
        }
        if (fields->error > 0) {
                snprintf(error, sizeof(error), "ERRNO=%d", fields->error);
                iov[n++] = (struct iovec) { error, strlen(error) };
        }
        /* The journal gone (stopped, not yet up): the stream may still be there. */
        if (sd_journal_sendv(iov, (int) n) < 0)
                log_write_stderr(fields, message);
}

bool journal_log_setup(void) {
        if (!journal_stream_is_fd(STDERR_FILENO))
                return false;
        log_set_sink(journal_sink, NULL);
        return true;
}
