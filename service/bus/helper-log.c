/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helper-log.c: see helper-log.h. */
#include "helper-log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "basic.h"

typedef struct HelperLog {
        char *identifier;
        pid_t pid;
        uid_t owner;
        char line[HELPER_LOG_LINE_MAX + 1];
        size_t length;         /* of line */
        bool cut;              /* the line went past its room: the rest until '\n' is dropped */
        uint64_t window_start; /* CLOCK_MONOTONIC usec of this interval's first line */
        unsigned in_window;    /* lines logged in it */
        uint64_t suppressed;   /* lines dropped by the rate limit, not yet reported */
} HelperLog;

static uint64_t now_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000;
}

static void helper_log_say(HelperLog *h, int level, const char *format, ...) __attribute__((format(printf, 3, 4)));
static void helper_log_say(HelperLog *h, int level, const char *format, ...) {
        const LogFields fields = { .identifier = h->identifier, .has_uid = true, .uid = h->owner };
        char text[HELPER_LOG_LINE_MAX + 64];
        va_list ap;
        va_start(ap, format);
        vsnprintf(text, sizeof text, format, ap);
        va_end(ap);
        (void) log_fields(level, &fields, "helper pid %d: %s", (int) h->pid, text);
}

static void report_suppressed(HelperLog *h) {
        if (h->suppressed == 0)
                return;
        helper_log_say(h, LOG_WARNING, "%" PRIu64 " more line(s) not logged (at most %u per %llu s)", h->suppressed,
                       HELPER_LOG_BURST, HELPER_LOG_INTERVAL_USEC / 1000000ULL);
        h->suppressed = 0;
}

/* The line collected so far, if it may be logged now. */
static void flush_line(HelperLog *h) {
        if (h->length == 0 && !h->cut)
                return;
        uint64_t now = now_usec();
        if (h->window_start == 0 || now - h->window_start >= HELPER_LOG_INTERVAL_USEC) {
                report_suppressed(h);
                h->window_start = now;
                h->in_window = 0;
        }
        if (h->in_window < HELPER_LOG_BURST) {
                h->in_window++;
                h->line[h->length] = '\0';
                helper_log_say(h, LOG_WARNING, "%s%s", h->line, h->cut ? "…" : "");
        } else
                h->suppressed++;
        h->length = 0;
        h->cut = false;
}

/* Bytes as they come: lines split at '\n', control characters (and
 * bytes above ASCII: no partial UTF-8 reaches the journal) as '?'. */
static void take_bytes(HelperLog *h, const char *buf, size_t n) {
        for (size_t i = 0; i < n; i++) {
                unsigned char ch = (unsigned char) buf[i];
                if (ch == '\n') {
                        flush_line(h);
                        continue;
                }
                if (h->length >= HELPER_LOG_LINE_MAX) {
                        h->cut = true;
                        continue;
                }
                h->line[h->length++] = ch >= 0x20 && ch < 0x7f ? (char) ch : '?';
        }
}

static int on_readable(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        HelperLog *h = userdata;
        char buf[4096];
        /* a bounded amount per wakeup: a chatty helper does not hold the loop */
        for (int round = 0; round < 16; round++) {
                ssize_t n = read(fd, buf, sizeof buf);
                if (n > 0) {
                        take_bytes(h, buf, (size_t) n);
                        continue;
                }
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return 0;
                /* its end (or a broken pipe): what is left, then done */
                flush_line(h);
                report_suppressed(h);
                sd_event_source_disable_unref(s); /* the loop's (floating) reference: frees it and h */
                return 0;
        }
        return 0;
}

static void helper_log_free(void *userdata) {
        HelperLog *h = userdata;
        free(h->identifier);
        free(h);
}

int helper_log_adopt(sd_event *e, int fd, pid_t pid, uid_t owner, const char *identifier) {
        HelperLog *h = calloc(1, sizeof *h);
        if (!h || !(h->identifier = strdup(identifier))) {
                free(h);
                safe_close(fd);
                return -ENOMEM;
        }
        h->pid = pid;
        h->owner = owner;
        sd_event_source *s = NULL;
        int r = sd_event_add_io(e, &s, fd, EPOLLIN, on_readable, h);
        if (r < 0) {
                helper_log_free(h);
                safe_close(fd);
                return r;
        }
        (void) sd_event_source_set_io_fd_own(s, true);
        (void) sd_event_source_set_destroy_callback(s, helper_log_free);
        (void) sd_event_source_set_description(s, "helper stderr");
        /* owned by the loop from now on, until the helper's end */
        r = sd_event_source_set_floating(s, true);
        sd_event_source_unref(s);
        return r;
}
