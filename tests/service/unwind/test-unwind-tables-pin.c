/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-unwind-tables-pin.c: an unwind table is compiled only from a file
 * that is the one the kernel mapped. A pin whose device/inode could not be
 * checked (an MMAP2 with only a build-id, its process gone, the file opened
 * by path after an upgrade) must carry the mapping's build-id: from the
 * right file the daemon's UnwindTables compile a table through the real
 * sandboxed helper; from a file with another build-id they refuse, decide
 * it for good (peek says "known, no table", so samples do not queue
 * forever) and leave the right file's table alone.
 *
 *   test-unwind-tables-pin MAPPED-BINARY OTHER-BINARY [CASE...] */
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

/* A pin as pinned_files_pin_mapping() leaves it when it fell back to the
 * path with nothing to check the file against. */
static PinnedFile unchecked_pin(const char *path, int fd) {
        struct stat st = {};
        (void) fstat(fd, &st);
        return (PinnedFile) { .dev = st.st_dev, .inode = st.st_ino, .fd = fd, .path = (char *) path,
                              .how = PINNED_VIA_PATH, .identity_checked = false };
}

/* Without an event loop a request compiles before it returns: the table,
 * or NULL when the file has none. */
static const UnwindTable *table_now(UnwindTables *tables, const ProcessMapping *m) {
        bool known = false;
        if (unwind_tables_request(tables, 0, 1, m, true) != 1)
                return NULL;
        const UnwindTable *t = unwind_tables_peek(tables, m, &known);
        return known ? t : NULL;
}

static ProcessMapping mapping_of(PinnedFile *pin, const uint8_t *build_id, size_t build_id_size) {
        ProcessMapping m = { .start = 0x400000, .end = 0x800000, .pgoff = 0,
                             .dev_major = major(pin->dev), .dev_minor = minor(pin->dev), .inode = pin->inode,
                             .build_id_size = (uint8_t) build_id_size, .filename = pin->path, .pinned = pin };
        memcpy(m.build_id, build_id, build_id_size);
        return m;
}

/* The two binaries of the command line. */
static const char *mapped_path, *other_path;

/* What every case starts from: both binaries open, the build-id the kernel
 * would report for the mapped one (from the helper), the mapped one as an
 * unchecked pin mapped under that build-id ("right"), tables without a loop. */
typedef struct Fixture {
        int mapped_fd, other_fd;
        HelperIdentity id;
        PinnedFile right;
        ProcessMapping m_right;
        UnwindTables *tables;
} Fixture;

static bool fixture_init(Fixture *fx) {
        *fx = (Fixture) {};
        fx->mapped_fd = open(mapped_path, O_RDONLY | O_CLOEXEC);
        fx->other_fd = open(other_path, O_RDONLY | O_CLOEXEC);
        if (fx->mapped_fd < 0 || fx->other_fd < 0) {
                fail("cannot open %s or %s", mapped_path, other_path);
                return false;
        }
        _cleanup_(helper_client_freep) HelperClient *helper = NULL;
        _cleanup_free_ char *why = NULL;
        if (helper_client_new(NULL, &helper) < 0 ||
            helper_client_identify(helper, fx->mapped_fd, 0, &fx->id, &why) < 0 || fx->id.build_id_size == 0 ||
            fx->id.build_id_size > 20) {
                fail("the helper cannot identify %s (%s); is PERISCOPE_HELPER set?", mapped_path,
                     why ? why : "no build-id");
                return false;
        }
        fx->right = unchecked_pin(mapped_path, fx->mapped_fd);
        fx->m_right = mapping_of(&fx->right, fx->id.build_id, fx->id.build_id_size);
        CHECK(unwind_tables_new(NULL, NULL, &fx->tables) >= 0);
        return fx->tables != NULL;
}

static void fixture_done(Fixture *fx) {
        fx->tables = unwind_tables_free(fx->tables);
        fx->mapped_fd = safe_close(fx->mapped_fd);
        fx->other_fd = safe_close(fx->other_fd);
}

/* The right file's table, compiled now. */
static const UnwindTable *right_table(Fixture *fx) {
        const UnwindTable *t = table_now(fx->tables, &fx->m_right);
        CHECK(t != NULL);
        return t;
}

/* Whether the right file's table is known and is t. */
static bool right_table_is(Fixture *fx, const UnwindTable *t) {
        bool known = false;
        return unwind_tables_peek(fx->tables, &fx->m_right, &known) == t && known;
}

/* The right file: a table, and the check is remembered. */
TEST(right_file_gives_table) {
        Fixture fx;
        if (fixture_init(&fx)) {
                bool known = true;
                CHECK(unwind_tables_peek(fx.tables, &fx.m_right, &known) == NULL && !known);
                const UnwindTable *t_right = right_table(&fx);
                CHECK(right_table_is(&fx, t_right));
        }
        fixture_done(&fx);
}

/* Another file under the mapped file's build-id: refused for good, and the
 * right file's table is untouched. */
TEST(other_file_refused_for_good) {
        Fixture fx;
        if (fixture_init(&fx)) {
                const UnwindTable *t_right = right_table(&fx);

                PinnedFile wrong = unchecked_pin(other_path, fx.other_fd);
                ProcessMapping m_wrong = mapping_of(&wrong, fx.id.build_id, fx.id.build_id_size);
                uint64_t failed_before = unwind_tables_get_stats(fx.tables).failed;
                CHECK(table_now(fx.tables, &m_wrong) == NULL);
                CHECK(wrong.build_id_check == PINNED_BUILD_ID_DIFFERS);
                CHECK(unwind_tables_get_stats(fx.tables).failed == failed_before + 1);
                bool known = false;
                CHECK(unwind_tables_peek(fx.tables, &m_wrong, &known) == NULL && known);
                CHECK(table_now(fx.tables, &m_wrong) == NULL);
                CHECK(unwind_tables_get_stats(fx.tables).failed == failed_before + 1); /* asked the helper once */

                CHECK(right_table_is(&fx, t_right));
        }
        fixture_done(&fx);
}

/* A pin whose identity was checked by device/inode needs no build-id; the
 * right file's table is untouched. */
TEST(checked_identity_needs_no_build_id) {
        Fixture fx;
        if (fixture_init(&fx)) {
                const UnwindTable *t_right = right_table(&fx);

                PinnedFile checked = unchecked_pin(other_path, fx.other_fd);
                checked.identity_checked = true;
                ProcessMapping m_checked = mapping_of(&checked, (const uint8_t *) "\1\2\3\4", 4);
                m_checked.start = 0x1000000;
                m_checked.end = 0x1400000;
                CHECK(table_now(fx.tables, &m_checked) != NULL);
                CHECK(checked.build_id_check == PINNED_BUILD_ID_UNCHECKED);
                CHECK(right_table_is(&fx, t_right));
        }
        fixture_done(&fx);
}

int main(int argc, char **argv) {
        if (argc < 3) {
                fprintf(stderr, "usage: %s MAPPED-BINARY OTHER-BINARY [CASE...]\n", argv[0]);
                return 2;
        }
        mapped_path = argv[1], other_path = argv[2];
        return test_main(argc - 2, argv + 2);
}
