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
 *   test-unwind-tables-async BINARY OTHER-BINARY [CASE...] */
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

/* The two binaries of the command line. */
static const char *binary_path, *other_path;

/* What every case starts from: both binaries open, tables on an event loop
 * with a listener (w) and a 5 ms timer that counts the loop's turns. */
typedef struct Fixture {
        int fd, other_fd;
        sd_event *e;
        sd_event_source *tick;
        UnwindTables *tables;
        Watch w, w2;
} Fixture;

static bool fixture_init(Fixture *fx) {
        *fx = (Fixture) {};
        fx->fd = open(binary_path, O_RDONLY | O_CLOEXEC);
        fx->other_fd = open(other_path, O_RDONLY | O_CLOEXEC);
        if (fx->fd < 0 || fx->other_fd < 0) {
                fail("cannot open %s or %s", binary_path, other_path);
                return false;
        }
        MUST(sd_event_new(&fx->e));
        MUST(unwind_tables_new(fx->e, NULL, &fx->tables));
        fx->w.tables = fx->w2.tables = fx->tables;
        CHECK(unwind_tables_add_listener(fx->tables, on_decided, &fx->w) >= 0);
        CHECK(sd_event_add_time_relative(fx->e, &fx->tick, CLOCK_MONOTONIC, 5000, 1, on_tick, &fx->w) >= 0);
        return true;
}

static void fixture_done(Fixture *fx) {
        fx->tables = unwind_tables_free(fx->tables);
        fx->tick = sd_event_source_disable_unref(fx->tick);
        fx->e = sd_event_unref(fx->e);
        fx->fd = safe_close(fx->fd);
        fx->other_fd = safe_close(fx->other_fd);
}

/* A file ahead of need, then a sample needs it: one compile, off the loop;
 * the table of m, or NULL. */
static const UnwindTable *compile_ahead(Fixture *fx, const ProcessMapping *m) {
        bool known = true;
        CHECK(unwind_tables_request(fx->tables, 0, 1, m, false) == 0);
        CHECK(unwind_tables_request(fx->tables, 0, 1, m, true) == 0);
        CHECK(unwind_tables_peek(fx->tables, m, &known) == NULL && !known);
        CHECK(unwind_tables_get_stats(fx->tables).queued == 1);
        CHECK(run_until_notified(fx->e, &fx->w, 1));
        const UnwindTable *t = unwind_tables_peek(fx->tables, m, &known);
        CHECK(known && t != NULL);
        return t;
}

TEST(compiled_off_the_loop) {
        Fixture fx;
        if (fixture_init(&fx)) {
                PinnedFile pin = pin_of(binary_path, fx.fd, true);
                ProcessMapping m = mapping_of(&pin, (const uint8_t *) "\1\2\3\4", 4);
                (void) compile_ahead(&fx, &m);
                CHECK(unwind_tables_get_stats(fx.tables).compiled == 1);
                CHECK(unwind_tables_get_stats(fx.tables).queued == 0);
                printf("table compiled while the loop ran: %u ticks of 5 ms\n", fx.w.ticks);
                /* the loop ran while the helper compiled (how often depends on the
                 * machine's load: no timing is asserted) */
                CHECK(fx.w.ticks >= 1);
                CHECK(unwind_tables_request(fx.tables, 0, 1, &m, true) == 1); /* decided: nothing queued */
        }
        fixture_done(&fx);
}

/* Another file under the first one's build-id, its pin unchecked: decided
 * "no table" off the loop; the first table is untouched. A second listener,
 * which the first removes (and itself) while told, is not told. */
TEST(other_file_decided_no_table) {
        Fixture fx;
        if (fixture_init(&fx)) {
                PinnedFile pin = pin_of(binary_path, fx.fd, true);
                ProcessMapping m = mapping_of(&pin, (const uint8_t *) "\1\2\3\4", 4);
                const UnwindTable *t = compile_ahead(&fx, &m);

                PinnedFile wrong = pin_of(other_path, fx.other_fd, false);
                HelperIdentity id;
                _cleanup_(helper_client_freep) HelperClient *helper = NULL;
                _cleanup_free_ char *why = NULL;
                CHECK(helper_client_new(NULL, &helper) >= 0 &&
                      helper_client_identify(helper, fx.fd, 0, &id, &why) >= 0);
                ProcessMapping m_wrong = mapping_of(&wrong, id.build_id, id.build_id_size);
                fx.w.remove_other = true;
                fx.w.other = &fx.w2;
                CHECK(unwind_tables_add_listener(fx.tables, on_decided, &fx.w2) >= 0);
                unsigned before = fx.w.notified;
                bool known = false;
                CHECK(unwind_tables_request(fx.tables, 0, 1, &m_wrong, true) == 0);
                CHECK(run_until_notified(fx.e, &fx.w, before + 1));
                CHECK(unwind_tables_peek(fx.tables, &m_wrong, &known) == NULL && known);
                CHECK(wrong.build_id_check == PINNED_BUILD_ID_DIFFERS);
                CHECK(fx.w2.notified == 0);
                CHECK(unwind_tables_peek(fx.tables, &m, &known) == t && known);
        }
        fixture_done(&fx);
}

/* Turns among owners: uid 1000's three files are asked for, then uid 1001's
 * one; 1001's comes second, not after all of 1000's. */
TEST(turns_among_owners) {
        Fixture fx;
        if (fixture_init(&fx)) {
                PinnedFile pin = pin_of(binary_path, fx.fd, true);
                bool known = false;
                ProcessMapping heavy[3], light = mapping_of(&pin, (const uint8_t *) "\x20", 1);
                for (unsigned i = 0; i < 3; i++) {
                        const uint8_t id_byte = (uint8_t) (0x10 + i);
                        heavy[i] = mapping_of(&pin, &id_byte, 1);
                        CHECK(unwind_tables_request(fx.tables, 1000, 1, &heavy[i], true) == 0);
                }
                CHECK(unwind_tables_request(fx.tables, 1001, 1, &light, true) == 0);
                unsigned compiled = unwind_tables_get_stats(fx.tables).compiled;
                while (unwind_tables_get_stats(fx.tables).compiled < compiled + 2)
                        CHECK(sd_event_run(fx.e, 10 * 1000 * 1000) >= 0);
                CHECK(unwind_tables_peek(fx.tables, &heavy[0], &known) != NULL && known);
                CHECK(unwind_tables_peek(fx.tables, &light, &known) != NULL && known);
                CHECK(unwind_tables_peek(fx.tables, &heavy[2], &known) == NULL && !known);
                printf("turns: uid 1001's table came second, before uid 1000's second and third\n");
        }
        fixture_done(&fx);
}

/* Freed with a compile queued: cancelled, nothing left behind (the
 * sanitizer build checks what is left). */
TEST(freed_with_compile_queued) {
        Fixture fx;
        if (fixture_init(&fx)) {
                PinnedFile third = pin_of(other_path, fx.other_fd, true);
                ProcessMapping m_third = mapping_of(&third, (const uint8_t *) "\5\6", 2);
                CHECK(unwind_tables_request(fx.tables, 0, 1, &m_third, true) == 0);
                (void) sd_event_run(fx.e, 0); /* the fiber starts and waits for the helper */
        }
        fixture_done(&fx);
}

int main(int argc, char **argv) {
        if (argc < 3) {
                fprintf(stderr, "usage: %s BINARY OTHER-BINARY [CASE...]\n", argv[0]);
                return 2;
        }
        binary_path = argv[1], other_path = argv[2];
        return test_main(argc - 2, argv + 2);
}
