/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind-tables.c: unwind tables compiled by the helper on a fiber, off the
 * event loop, from a queue of requests. */
#include "unwind-tables.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "basic.h"
#include "fiber.h"
#include "unwind-table-cache.h"
#include "process.h"

/* The vdso has no file: its key is this device with the image size as
 * "inode" (one vdso image per kernel and ABI). */
#define VDSO_KEY_DEV UINT64_MAX

/* A compile slower than this is worth a line in the log. */
#define SLOW_COMPILE_MS 100

/* One file to compile: copies of everything it needs, so it outlives the
 * recording, process and pin it came from. */
typedef struct CompileRequest {
        UnwindFileKey key;          /* where its table goes */
        bool check_build_id;        /* the pin's identity was never checked */
        UnwindFileKey pin_key;      /* then: the pin's file and the mapped build-id */
        bool needed;                /* a sample waits for it */
        uint32_t owner;             /* whose sample asked first (turns among owners) */
        int fd;                     /* a dup of the pinned fd; -1 for the vdso */
        uint8_t *image;             /* the vdso's bytes, read when asked */
        size_t image_size;
        char *filename;             /* for the log */
} CompileRequest;

/* When an owner's needed compile was last served (turns among owners). */
typedef struct OwnerTurn {
        uint32_t owner;
        uint64_t served;            /* UnwindTables.turns when served; 0: never */
} OwnerTurn;

/* An owner's own helper: one user's files never reach a helper that
 * parsed another user's. */
typedef struct OwnerHelper {
        uint32_t owner;
        HelperClient *helper;
        uint64_t last_used; /* CLOCK_MONOTONIC usec of its last compile */
} OwnerHelper;

/* A helper whose owner asked for nothing this long is stopped. */
#define HELPER_IDLE_USEC (30 * 1000000ULL)

typedef struct Listener {
        UnwindTablesNotify notify;
        void *userdata;
} Listener;

struct UnwindTables {
        sd_event *event;              /* NULL: compiles happen in unwind_tables_request() */
        HelperClientConfig helper_config;
        OwnerHelper *helpers; /* by owner, started on first use */
        size_t n_helpers, allocated_helpers;
        HelperClient *helper;        /* the current request's owner's (in helpers) */
        sd_event_source *idle_timer; /* stops idle owners' helpers */
        UnwindTableCache cache;
        /* Pins that are not the mapped file (by pin_key): decided, no table. */
        UnwindTableCache mismatched;
        UnwindTablesStats stats;
        bool helper_broken;           /* helper could not be created: stop trying */

        CompileRequest **queue;       /* needed requests first, then ahead ones, each in order */
        size_t n_queue, allocated_queue, n_needed;
        CompileRequest *current;      /* on the fiber now */
        OwnerTurn *owner_turns;       /* owners whose needed compiles were served */
        size_t n_owner_turns, allocated_owner_turns;
        uint64_t turns;               /* needed compiles served */
        Fiber *fiber;
        bool freeing;

        sd_event_source *notify_source;
        Listener *listeners;
        size_t n_listeners, allocated_listeners;
        size_t notify_next;           /* while notifying: the next listener's index */
};

static CompileRequest *compile_request_free(CompileRequest *q) {
        if (!q)
                return NULL;
        safe_close(q->fd);
        free(q->image);
        free(q->filename);
        free(q);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(CompileRequest *, compile_request_free);

static int on_notify(sd_event_source *s, void *userdata);
static int tables_wait_readable(int fd, unsigned timeout_ms, void *userdata);
static void tables_yield(void *userdata);

int unwind_tables_new(sd_event *e, const HelperClientConfig *helper, UnwindTables **ret) {
        UnwindTables *t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        if (helper)
                t->helper_config = *helper;
        if (e) {
                /* the helper's answers are awaited on the fiber, from the loop */
                t->helper_config.wait_readable = tables_wait_readable;
                t->helper_config.wait_readable_userdata = t;
                t->helper_config.yield = tables_yield;
                int r = sd_event_add_defer(e, &t->notify_source, on_notify, t);
                if (r >= 0)
                        r = sd_event_source_set_enabled(t->notify_source, SD_EVENT_OFF);
                if (r < 0) {
                        sd_event_source_disable_unref(t->notify_source);
                        free(t);
                        return r;
                }
                t->event = sd_event_ref(e);
        }
        *ret = t;
        return 0;
}

UnwindTables *unwind_tables_free(UnwindTables *t) {
        if (!t)
                return NULL;
        t->freeing = true;
        if (t->fiber)
                fiber_cancel(t->fiber); /* its body ends inside; the done callback clears t->fiber */
        for (size_t i = 0; i < t->n_queue; i++)
                compile_request_free(t->queue[i]);
        free(t->owner_turns);
        free(t->queue);
        for (size_t i = 0; i < t->n_helpers; i++)
                helper_client_free(t->helpers[i].helper);
        free(t->helpers);
        sd_event_source_disable_unref(t->idle_timer);
        unwind_table_cache_clear(&t->cache);
        unwind_table_cache_clear(&t->mismatched);
        sd_event_source_disable_unref(t->notify_source);
        free(t->listeners);
        sd_event_unref(t->event);
        free(t);
        return NULL;
}

UnwindTablesStats unwind_tables_get_stats(const UnwindTables *t) {
        UnwindTablesStats s = t->stats;
        s.bytes = t->cache.bytes;
        s.queued = t->n_queue + (t->current ? 1 : 0);
        return s;
}

static bool is_vdso(const ProcessMapping *m) {
        return vdso_is_mapping(m->filename);
}

static uint64_t now_usec(void) {
        return (uint64_t) now_monotonic_ms() * 1000;
}

static void stop_helper_at(UnwindTables *t, size_t i) {
        if (t->helper == t->helpers[i].helper)
                t->helper = NULL;
        helper_client_free(t->helpers[i].helper);
        t->helpers[i] = t->helpers[--t->n_helpers];
}

/* Stops the helpers of owners that asked for nothing for HELPER_IDLE_USEC
 * (never the one compiling now); re-armed while any is left. */
static int on_idle_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        UnwindTables *t = userdata;
        uint64_t now = now_usec();
        for (size_t i = t->n_helpers; i > 0; i--)
                if (t->helpers[i - 1].helper != t->helper && now - t->helpers[i - 1].last_used >= HELPER_IDLE_USEC)
                        stop_helper_at(t, i - 1);
        if (t->n_helpers > 0)
                (void) sd_event_source_set_time_relative(s, HELPER_IDLE_USEC);
        (void) sd_event_source_set_enabled(s, t->n_helpers > 0 ? SD_EVENT_ONESHOT : SD_EVENT_OFF);
        return 0;
}

static void arm_idle_timer(UnwindTables *t) {
        if (!t->event)
                return;
        if (!t->idle_timer && sd_event_add_time_relative(t->event, &t->idle_timer, CLOCK_MONOTONIC, HELPER_IDLE_USEC, 0,
                                                         on_idle_timer, t) < 0) {
                t->idle_timer = NULL; /* then helpers stop with their owners' recordings only */
                return;
        }
        if (sd_event_source_get_enabled(t->idle_timer, NULL) == 0) {
                (void) sd_event_source_set_time_relative(t->idle_timer, HELPER_IDLE_USEC);
                (void) sd_event_source_set_enabled(t->idle_timer, SD_EVENT_ONESHOT);
        }
}

/* The helper of owner (started by the client on its first request). */
static int ensure_helper(UnwindTables *t, uint32_t owner) {
        t->helper = NULL;
        for (size_t i = 0; i < t->n_helpers; i++)
                if (t->helpers[i].owner == owner) {
                        t->helpers[i].last_used = now_usec();
                        t->helper = t->helpers[i].helper;
                        return 0;
                }
        if (t->helper_broken)
                return -ENOTCONN;
        if (GROW_ARRAY(t->helpers, t->allocated_helpers, t->n_helpers + 1, 4) < 0)
                return -ENOMEM;
        HelperClientConfig c = t->helper_config;
        c.owner = owner;
        HelperClient *h;
        int r = helper_client_new(&c, &h);
        if (r < 0) {
                t->helper_broken = true;
                return r;
        }
        t->helpers[t->n_helpers++] = (OwnerHelper) { .owner = owner, .helper = h, .last_used = now_usec() };
        t->helper = h;
        arm_idle_timer(t);
        return 0;
}

void unwind_tables_release_owner(UnwindTables *t, uint32_t owner) {
        if (!t)
                return;
        for (size_t i = 0; i < t->n_helpers; i++)
                if (t->helpers[i].owner == owner && t->helpers[i].helper != t->helper) {
                        stop_helper_at(t, i);
                        return;
                }
}

int unwind_tables_get_helper_pid(const UnwindTables *t, uint32_t owner) {
        for (size_t i = 0; i < t->n_helpers; i++)
                if (t->helpers[i].owner == owner)
                        return helper_client_get_pid(t->helpers[i].helper);
        return 0;
}

/* The cache key of the file behind m; false for code without a file. */
static bool mapping_key(const ProcessMapping *m, UnwindFileKey *key) {
        *key = (UnwindFileKey) {};
        if (is_vdso(m)) {
                key->dev = VDSO_KEY_DEV;
                key->ino = m->end - m->start;
                return true;
        }
        if (!m->pinned)
                return false; /* anonymous or JIT code, or a file that could not be pinned */
        key->dev = makedev(m->dev_major, m->dev_minor);
        key->ino = m->inode;
        key->build_id_len = m->build_id_size <= sizeof(m->build_id) ? m->build_id_size : 0;
        memcpy(key->build_id, m->build_id, key->build_id_len);
        return true;
}

/* A pin whose dev/inode was never checked (an MMAP2 with only a build-id,
 * of a process gone before its file was opened by path) may be a newer file
 * than the one mapped: a table compiled from it would unwind the old code
 * wrongly, so the file must carry the mapping's build-id. */
static bool pin_needs_build_id_check(const ProcessMapping *m) {
        return m->pinned && !m->pinned->identity_checked && m->build_id_size > 0;
}

/* Where the verdict on such a pin is remembered: the file it holds and the
 * build-id it must carry. */
static UnwindFileKey pin_key_of(const ProcessMapping *m, const UnwindFileKey *key) {
        UnwindFileKey k = *key;
        k.dev = m->pinned->dev;
        k.ino = m->pinned->inode;
        return k;
}

static bool key_equal(const UnwindFileKey *a, const UnwindFileKey *b) {
        return a->dev == b->dev && a->ino == b->ino && a->build_id_len == b->build_id_len &&
               memcmp(a->build_id, b->build_id, a->build_id_len) == 0;
}

/* Whether the pin of m was found not to be the mapped file. */
static bool pin_mismatched(UnwindTables *t, const ProcessMapping *m, const UnwindFileKey *key) {
        if (!pin_needs_build_id_check(m))
                return false;
        if (m->pinned->build_id_check == PINNED_BUILD_ID_DIFFERS)
                return true;
        const UnwindTable *none;
        UnwindFileKey pk = pin_key_of(m, key);
        if (!unwind_table_cache_get(&t->mismatched, &pk, &none))
                return false;
        m->pinned->build_id_check = PINNED_BUILD_ID_DIFFERS; /* the next look is cheaper */
        return true;
}

const UnwindTable *unwind_tables_peek(UnwindTables *t, const ProcessMapping *m, bool *known) {
        UnwindFileKey key;
        const UnwindTable *table = NULL;

        if (!mapping_key(m, &key)) {
                *known = true;
                return NULL;
        }
        /* A table under the mapping's key is right whichever file it came
         * from: the key holds the mapped build-id. */
        if (unwind_table_cache_get(&t->cache, &key, &table)) {
                *known = true;
                return table;
        }
        *known = pin_mismatched(t, m, &key); /* decided: no table from that file */
        return NULL;
}

/* Whether the request's pin carries the mapped build-id (IDENTIFY in the
 * helper); a mismatch is remembered under the pin's key. */
static bool request_build_id_matches(UnwindTables *t, const CompileRequest *q) {
        HelperIdentity id;
        _cleanup_free_ char *why = NULL;
        int r = helper_client_identify(t->helper, q->fd, 0, &id, &why);
        if (r >= 0 && id.build_id_size == q->key.build_id_len &&
            memcmp(id.build_id, q->key.build_id, q->key.build_id_len) == 0)
                return true;
        if (t->freeing)
                return false; /* cancelled: the daemon is leaving, nothing decided */
        if (r == HELPER_CLIENT_FAILED)
                t->stats.helper_failures++;
        const char *name = q->filename ? q->filename : "?";
        if (r >= 0)
                log_warning("no unwind table for %s: binary changed since it was mapped (build-id differs)", name);
        else if (why)
                log_warning("no unwind table for %s: %s", name, why);
        else
                log_warning_errno(r, "no unwind table for %s: %m", name);
        t->stats.failed++;
        const UnwindTable *none;
        (void) unwind_table_cache_put(&t->mismatched, &q->pin_key, NULL, 0, &none, NULL);
        return false;
}

/* Compiles one request and stores the outcome (a table, or "none"). On
 * the fiber when there is an event loop. */
static void compile_request(UnwindTables *t, const CompileRequest *q) {
        _cleanup_free_ char *why = NULL;
        void *blob = NULL;
        size_t size = 0;
        const char *reason = NULL;
        const UnwindTable *table = NULL;
        int64_t t0 = now_monotonic_ms();

        int r = ensure_helper(t, q->owner);
        bool no_helper = r < 0; /* it cannot start: this file gets no table either */
        if (r >= 0 && q->check_build_id && !request_build_id_matches(t, q))
                return; /* not cached under the key: it may be right for another file */
        if (r >= 0)
                r = helper_client_compile_unwind(t->helper, q->fd, q->image, q->image_size, &blob, &size, &why);
        if (t->freeing) {
                free(blob); /* a table that came as the daemon left: cached by nobody */
                return;     /* cancelled: nothing decided */
        }
        if (r == HELPER_CLIENT_FAILED || no_helper)
                t->stats.helper_failures++;
        const char *name = q->filename ? q->filename : "?", *prefix = no_helper ? "the helper cannot start: " : "";
        /* No call frame information, or no ELF file at all (a jitdump,
         * which a JIT maps executable as perf's marker; a Wine PE image):
         * nothing to unwind with, and nothing wrong. */
        bool nothing_to_compile = !no_helper && (r == -ENODATA || r == -ENOEXEC);
        if (nothing_to_compile)
                log_debug("no unwind table for %s: %s", name,
                          r == -ENODATA ? "no call frame information" : "no ELF file");
        else if (r < 0 && why)
                log_warning("no unwind table for %s: %s%s", name, prefix, why);
        else if (r < 0)
                log_warning_errno(r, "no unwind table for %s: %s%m", name, prefix);
        /* The client validated the blob already; the cache validates again
         * because it keeps a view of exactly the bytes it owns. */
        r = unwind_table_cache_put_sliced(&t->cache, &q->key, r >= 0 ? blob : NULL, size, &table, &reason,
                                          t->fiber ? tables_yield : NULL, t);
        if (r < 0 && reason)
                log_warning("unwind table of %s rejected: %s", q->filename ? q->filename : "?", reason);
        int64_t ms = now_monotonic_ms() - t0;
        if (ms >= SLOW_COMPILE_MS)
                log_info("unwind table of %s compiled in %lld ms%s", q->filename ? q->filename : "?", (long long) ms,
                         t->event ? " (in the helper, off the event loop)" : "");
        if (table)
                t->stats.compiled++;
        else
                t->stats.failed++;
}

/* ---- the queue and its fiber ---- */

static int tables_wait_readable(int fd, unsigned timeout_ms, void *userdata) {
        UnwindTables *t = userdata;
        if (!t->fiber) { /* never: every request is served on the fiber */
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int k = poll(&p, 1, (int) timeout_ms);
                return k < 0 ? (errno == EINTR ? 0 : -errno) : k > 0;
        }
        return fiber_wait_readable(fd, timeout_ms, t->fiber);
}

/* Between slices of checking a large table: the loop runs (on the fiber). */
static void tables_yield(void *userdata) {
        UnwindTables *t = userdata;
        if (t->fiber)
                (void) fiber_yield(t->fiber);
}

/* Listeners hear of decided files from the loop, once per iteration. */
static void schedule_notify(UnwindTables *t) {
        if (t->notify_source)
                (void) sd_event_source_set_enabled(t->notify_source, SD_EVENT_ONESHOT);
}

static int on_notify(sd_event_source *s, void *userdata) {
        UnwindTables *t = userdata;
        /* notify_next moves back when a listener before it is removed */
        for (t->notify_next = 0; t->notify_next < t->n_listeners;) {
                Listener l = t->listeners[t->notify_next++];
                l.notify(l.userdata);
        }
        t->notify_next = 0;
        return 0;
}

static OwnerTurn *owner_turn(UnwindTables *t, uint32_t owner) {
        for (size_t i = 0; i < t->n_owner_turns; i++)
                if (t->owner_turns[i].owner == owner)
                        return &t->owner_turns[i];
        return NULL;
}

/* The next request to compile: of the needed ones, the first of the owner
 * served longest ago (never: first of all); else the first ahead of need. */
static size_t next_request(UnwindTables *t) {
        size_t best = 0;
        uint64_t best_served = UINT64_MAX;
        for (size_t i = 0; i < t->n_needed && best_served > 0; i++) {
                const OwnerTurn *o = owner_turn(t, t->queue[i]->owner);
                uint64_t served = o ? o->served : 0;
                if (served < best_served) {
                        best = i;
                        best_served = served;
                }
        }
        return best;
}

static void owner_served(UnwindTables *t, uint32_t owner) {
        OwnerTurn *o = owner_turn(t, owner);
        if (!o) {
                if (GROW_ARRAY(t->owner_turns, t->allocated_owner_turns, t->n_owner_turns + 1, 8) < 0)
                        return; /* out of memory: this owner keeps its place, nothing worse */
                o = &t->owner_turns[t->n_owner_turns++];
                o->owner = owner;
        }
        o->served = ++t->turns;
}

static int compile_body(Fiber *f, void *userdata) {
        UnwindTables *t = userdata;
        while (t->n_queue > 0 && !t->freeing) {
                size_t i = next_request(t);
                CompileRequest *q = t->queue[i];
                memmove(t->queue + i, t->queue + i + 1, (t->n_queue - i - 1) * sizeof(*t->queue));
                t->n_queue--;
                if (q->needed) {
                        t->n_needed--;
                        owner_served(t, q->owner);
                }
                t->current = q;
                compile_request(t, q);
                t->helper = NULL; /* its owner's helper may be stopped from now on */
                t->current = compile_request_free(q);
                schedule_notify(t);
                /* the listeners run first: the samples they flush may ask
                 * for tables that go before the next ahead-of-need one */
                (void) fiber_give_way(f);
        }
        return 0;
}

static int start_fiber(UnwindTables *t);

static void compile_done(int result, void *userdata) {
        UnwindTables *t = userdata;
        t->fiber = NULL;
        if (t->n_queue > 0 && !t->freeing && start_fiber(t) < 0)
                log_warning("cannot start compiling unwind tables: out of memory");
}

static int start_fiber(UnwindTables *t) {
        if (t->fiber)
                return 0;
        return fiber_start(t->event, "compiling unwind tables", compile_body, compile_done, t, &t->fiber);
}

/* The queued (or compiling) request of key, or NULL; *index its place. */
static CompileRequest *find_request(UnwindTables *t, const UnwindFileKey *key, size_t *index) {
        if (t->current && key_equal(&t->current->key, key)) {
                *index = SIZE_MAX;
                return t->current;
        }
        for (size_t i = 0; i < t->n_queue; i++)
                if (key_equal(&t->queue[i]->key, key)) {
                        *index = i;
                        return t->queue[i];
                }
        return NULL;
}

/* Puts q at the end of its part of the queue (needed ones first). */
static int enqueue(UnwindTables *t, CompileRequest *q) {
        if (GROW_ARRAY(t->queue, t->allocated_queue, t->n_queue + 1, 16) < 0)
                return -ENOMEM;
        size_t at = q->needed ? t->n_needed : t->n_queue;
        memmove(t->queue + at + 1, t->queue + at, (t->n_queue - at) * sizeof(*t->queue));
        t->queue[at] = q;
        t->n_queue++;
        if (q->needed)
                t->n_needed++;
        return 0;
}

/* A request made ahead of need that a sample now waits for: to the front part. */
static void promote(UnwindTables *t, size_t index) {
        CompileRequest *q = t->queue[index];
        if (q->needed)
                return;
        memmove(t->queue + t->n_needed + 1, t->queue + t->n_needed, (index - t->n_needed) * sizeof(*t->queue));
        t->queue[t->n_needed++] = q;
        q->needed = true;
}

static int request_new(uint32_t owner, const ProcessMapping *m, const UnwindFileKey *key, bool needed,
                       CompileRequest **ret) {
        _cleanup_(compile_request_freep) CompileRequest *q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        *q = (CompileRequest) { .key = *key, .needed = needed, .owner = owner, .fd = -1 };
        if (m->filename && !(q->filename = strdup(m->filename)))
                return -ENOMEM;
        if (is_vdso(m)) {
                /* its bytes as pinned when the mapping was seen, under its
                 * owner's check (not the process's memory of now, which a
                 * set-id exec since may have made another's) */
                if (!m->pinned)
                        return -ESRCH; /* its process was gone (or not its owner's) then */
                int r = vdso_image_from_memfd(m->pinned->fd, HELPER_MAX_UNWIND_IMAGE, &q->image, &q->image_size);
                if (r < 0)
                        return r;
        } else {
                q->fd = fcntl(m->pinned->fd, F_DUPFD_CLOEXEC, 3);
                if (q->fd < 0)
                        return -errno;
                if (pin_needs_build_id_check(m)) {
                        q->check_build_id = true;
                        q->pin_key = pin_key_of(m, key);
                }
        }
        *ret = TAKE_PTR(q);
        return 0;
}

int unwind_tables_request(UnwindTables *t, uint32_t owner, int32_t pid, const ProcessMapping *m, bool needed) {
        UnwindFileKey key;
        bool known;

        (void) unwind_tables_peek(t, m, &known);
        if (known)
                return 1;
        (void) mapping_key(m, &key); /* peek knew every mapping without a key */
        size_t index;
        if (find_request(t, &key, &index)) {
                if (needed && index != SIZE_MAX)
                        promote(t, index);
                return 0;
        }
        if (!needed && t->n_queue - t->n_needed >= UNWIND_TABLES_MAX_AHEAD)
                return 0; /* its first sample asks again */
        CompileRequest *q = NULL;
        int r = request_new(owner, m, &key, needed, &q);
        if (r < 0)
                return r;
        if (!t->event) {
                compile_request(t, q);
                t->helper = NULL;
                compile_request_free(q);
                (void) unwind_tables_peek(t, m, &known);
                return 1;
        }
        /* a fiber with nothing queued ends at once */
        r = start_fiber(t);
        if (r >= 0)
                r = enqueue(t, q);
        if (r < 0) {
                compile_request_free(q); /* out of memory: the next sample asks again */
                return r;
        }
        return 0;
}

/* ---- listeners ---- */

int unwind_tables_add_listener(UnwindTables *t, UnwindTablesNotify notify, void *userdata) {
        if (GROW_ARRAY(t->listeners, t->allocated_listeners, t->n_listeners + 1, 4) < 0)
                return -ENOMEM;
        t->listeners[t->n_listeners++] = (Listener) { notify, userdata };
        return 0;
}

void unwind_tables_remove_listener(UnwindTables *t, UnwindTablesNotify notify, void *userdata) {
        if (!t)
                return;
        for (size_t i = 0; i < t->n_listeners; i++)
                if (t->listeners[i].notify == notify && t->listeners[i].userdata == userdata) {
                        memmove(t->listeners + i, t->listeners + i + 1, (t->n_listeners - i - 1) * sizeof(Listener));
                        t->n_listeners--;
                        if (i < t->notify_next)
                                t->notify_next--;
                        return;
                }
}
