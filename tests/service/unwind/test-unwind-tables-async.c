/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-unwind-tables-async.c: the daemon's unwind tables compile off the
 * event loop, through the real sandboxed helper. A request returns at once
 * (the table is not known yet), the loop keeps running while the helper
 * compiles (a 5 ms timer goes on firing), listeners hear from the loop when
 * the table is decided; a request made ahead of need is served once when a
 * sample needs it too; a pin that is not the mapped file is decided "no
 * table" the same way; a listener may remove itself and others while it is
 * told; freeing the tables with a compile under way cancels it.
 *
 *   test-unwind-tables-async BINARY OTHER-BINARY */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "basic.h"
#include "helper-client.h"
#include "test-check.h"
#include "unwind-tables.h"

typedef struct Watch {
        UnwindTables *tables;
        unsigned notified, ticks;
        bool remove_other;
        struct Watch *other;
} Watch;

static void on_decided(void *userdata) {
        Watch *w = userdata;
        w->notified++;
        if (w->remove_other && w->other) {
                unwind_tables_remove_listener(w->tables, on_decided, w->other);
                unwind_tables_remove_listener(w->tables, on_decided, w);
        }
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        Watch *w = userdata;
        w->ticks++;
        (void) sd_event_source_set_time_relative(s, 5000);
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

/* Runs the loop until w was told `count` times (at most 30 s). */
static bool run_until_notified(sd_event *e, Watch *w, unsigned count) {
        int64_t deadline = now_monotonic_ms() + 30000;
        while (w->notified < count && now_monotonic_ms() < deadline)
                if (sd_event_run(e, 100 * 1000) < 0)
                        return false;
        return w->notified >= count;
}

static PinnedFile pin_of(const char *path, int fd, bool checked) {
        struct stat st = {};
        (void) fstat(fd, &st);
        return (PinnedFile) { .dev = st.st_dev, .inode = st.st_ino, .fd = fd, .path = (char *) path,
                              .how = PINNED_VIA_PATH, .identity_checked = checked };
}

static ProcessMapping mapping_of(PinnedFile *pin, const uint8_t *build_id, size_t build_id_size) {
        ProcessMapping m = { .start = 0x400000, .end = 0x800000, .dev_major = major(pin->dev),
                             .dev_minor = minor(pin->dev), .inode = pin->inode,
                             .build_id_size = (uint8_t) build_id_size, .filename = pin->path, .pinned = pin };
        memcpy(m.build_id, build_id, build_id_size);
        return m;
}

int main(int argc, char **argv) {
        if (argc != 3) {
                fprintf(stderr, "usage: %s BINARY OTHER-BINARY\n", argv[0]);
                return 2;
        }
        _cleanup_close_ int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int other_fd = open(argv[2], O_RDONLY | O_CLOEXEC);
        if (fd < 0 || other_fd < 0) {
                fprintf(stderr, "FAIL: cannot open %s or %s\n", argv[1], argv[2]);
                return 1;
        }
        sd_event *e = NULL;
        CHECK(sd_event_new(&e) >= 0);
        UnwindTables *tables = NULL;
        CHECK(unwind_tables_new(e, NULL, &tables) >= 0);
        if (!e || !tables)
                return 1;
        Watch w = { .tables = tables }, w2 = { .tables = tables };
        CHECK(unwind_tables_add_listener(tables, on_decided, &w) >= 0);
        sd_event_source *tick = NULL;
        CHECK(sd_event_add_time_relative(e, &tick, CLOCK_MONOTONIC, 5000, 1, on_tick, &w) >= 0);

        /* A file ahead of need, then a sample needs it: one compile, off the loop. */
        PinnedFile pin = pin_of(argv[1], fd, true);
        ProcessMapping m = mapping_of(&pin, (const uint8_t *) "\1\2\3\4", 4);
        bool known = true;
        CHECK(unwind_tables_request(tables, 0, 1, &m, false) == 0);
        CHECK(unwind_tables_request(tables, 0, 1, &m, true) == 0);
        CHECK(unwind_tables_peek(tables, &m, &known) == NULL && !known);
        CHECK(unwind_tables_get_stats(tables).queued == 1);
        CHECK(run_until_notified(e, &w, 1));
        const UnwindTable *t = unwind_tables_peek(tables, &m, &known);
        CHECK(known && t != NULL);
        CHECK(unwind_tables_get_stats(tables).compiled == 1);
        CHECK(unwind_tables_get_stats(tables).queued == 0);
        printf("table compiled while the loop ran: %u ticks of 5 ms\n", w.ticks);
        /* the loop ran while the helper compiled (how often depends on the
         * machine's load: no timing is asserted) */
        CHECK(w.ticks >= 1);
        CHECK(unwind_tables_request(tables, 0, 1, &m, true) == 1); /* decided: nothing queued */

        /* Another file under the first one's build-id, its pin unchecked:
         * decided "no table" off the loop; the first table is untouched. */
        PinnedFile wrong = pin_of(argv[2], other_fd, false);
        HelperIdentity id;
        _cleanup_(helper_client_freep) HelperClient *helper = NULL;
        _cleanup_free_ char *why = NULL;
        CHECK(helper_client_new(NULL, &helper) >= 0 && helper_client_identify(helper, fd, 0, &id, &why) >= 0);
        ProcessMapping m_wrong = mapping_of(&wrong, id.build_id, id.build_id_size);
        /* a second listener, which the first removes (and itself) while told */
        w.remove_other = true;
        w.other = &w2;
        CHECK(unwind_tables_add_listener(tables, on_decided, &w2) >= 0);
        unsigned before = w.notified;
        CHECK(unwind_tables_request(tables, 0, 1, &m_wrong, true) == 0);
        CHECK(run_until_notified(e, &w, before + 1));
        CHECK(unwind_tables_peek(tables, &m_wrong, &known) == NULL && known);
        CHECK(wrong.build_id_check == PINNED_BUILD_ID_DIFFERS);
        CHECK(w2.notified == 0);
        CHECK(unwind_tables_peek(tables, &m, &known) == t && known);

        /* Turns among owners: uid 1000's three files are asked for, then
         * uid 1001's one; 1001's comes second, not after all of 1000's. */
        ProcessMapping heavy[3], light = mapping_of(&pin, (const uint8_t *) "\x20", 1);
        for (unsigned i = 0; i < 3; i++) {
                const uint8_t id_byte = (uint8_t) (0x10 + i);
                heavy[i] = mapping_of(&pin, &id_byte, 1);
                CHECK(unwind_tables_request(tables, 1000, 1, &heavy[i], true) == 0);
        }
        CHECK(unwind_tables_request(tables, 1001, 1, &light, true) == 0);
        unsigned compiled = unwind_tables_get_stats(tables).compiled;
        while (unwind_tables_get_stats(tables).compiled < compiled + 2)
                CHECK(sd_event_run(e, 10 * 1000 * 1000) >= 0);
        CHECK(unwind_tables_peek(tables, &heavy[0], &known) != NULL && known);
        CHECK(unwind_tables_peek(tables, &light, &known) != NULL && known);
        CHECK(unwind_tables_peek(tables, &heavy[2], &known) == NULL && !known);
        printf("turns: uid 1001's table came second, before uid 1000's second and third\n");

        /* Freed with a compile queued: cancelled, nothing left behind. */
        PinnedFile third = pin_of(argv[2], other_fd, true);
        ProcessMapping m_third = mapping_of(&third, (const uint8_t *) "\5\6", 2);
        CHECK(unwind_tables_request(tables, 0, 1, &m_third, true) == 0);
        (void) sd_event_run(e, 0); /* the fiber starts and waits for the helper */
        unwind_tables_free(tables);
        sd_event_source_disable_unref(tick);
        sd_event_unref(e);
        if (failures)
                return 1;
        printf("ok: unwind tables compile off the event loop and tell their listeners\n");
        return 0;
}
