/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-python-reader.c: service/interp's CPython reader on synthetic
 * process images (python-image.h): each version's layout and walk, the
 * entry-frame split, the code cache, and the hostile images: loops,
 * pointers out of the mappings or misaligned, huge lengths, strings
 * without end, lying _Py_DebugOffsets — each refused with its reason. */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "interp.h"
#include "python-image.h"
#include "test-check.h"

/* ---- one process: two threads, the main one in module → outer → middle
 * → (a C call) → leaf, the other in run → work. ---- */
typedef struct Process {
        Image im;
        PyLayout l;
        uint64_t runtime;
        uint64_t code_module, code_outer, code_middle, code_leaf, code_run, code_work;
        uint64_t f_module, f_outer, f_middle, f_leaf, f_run, f_work;
        uint64_t t_main, t_other;
} Process;

/* A shim frame (3.12+) as _PyEval_EvalFrameDefault pushes it. */
static uint64_t shim(Process *p, uint64_t previous) {
        return image_frame(&p->im, &p->l, 0, 0, previous, p->l.owner_cstack, false);
}

static void process_build(Process *p, const PyLayout *l, unsigned debug_minor) {
        Image *im = &p->im;
        bool shims = l->owner_cstack != 255;

        image_init(im, 8 << 20);
        p->l = *l;
        p->runtime = image_runtime(im, l, 0, 1024);
        if (debug_minor)
                image_debug_offsets(im, p->runtime, l, debug_minor);

        p->code_module = image_code(im, l, "<module>", "/srv/app.py", 1, 40);
        p->code_outer = image_code(im, l, "outer", "/srv/app.py", 10, 5);
        p->code_middle = image_code(im, l, "Worker.middle", "/srv/app.py", 20, 5);
        p->code_leaf = image_code(im, l, "leaf", "/srv/lib/leaf.py", 30, 5);
        p->code_run = image_code(im, l, "Thread.run", "/usr/lib/python3/threading.py", 900, 20);
        p->code_work = image_code(im, l, "work", "/srv/app.py", 50, 5);

        /* 3.14: the interpreter's own frame at the bottom of each thread,
         * and a frame of FRAME_OWNED_BY_CSTACK (4), which marks nothing. */
        uint64_t base = 0;
        if (PY_VERSION_MINOR(l->version) >= 14)
                base = image_frame(im, l, 0, 0, image_frame(im, l, 0, 0, 0, 3, false), 4, false);

        p->f_module = image_frame(im, l, p->code_module, 33, shims ? shim(p, base) : 0, 0, true);
        p->f_outer = image_frame(im, l, p->code_outer, 2, p->f_module, 0, false);
        p->f_middle = image_frame(im, l, p->code_middle, 3, p->f_outer, 0, false);
        p->f_leaf = image_frame(im, l, p->code_leaf, 4, shims ? shim(p, p->f_middle) : p->f_middle, 0, true);
        p->f_run = image_frame(im, l, p->code_run, 10, shims ? shim(p, base) : 0, 0, true);
        p->f_work = image_frame(im, l, p->code_work, 1, p->f_run, 0, false);

        p->t_other = image_tstate(im, l, 4242, p->f_work, 0);
        p->t_main = image_tstate(im, l, 4241, p->f_leaf, p->t_other);
        uint64_t interp = 0;
        memcpy(&interp, image_at(im, p->runtime + l->runtime_interpreters_head), 8);
        image_put64(im, interp + l->interp_threads_head, p->t_main);
}

static void process_done(Process *p) {
        image_done(&p->im);
}

static void check_frame(const PyFrame *f, const char *name, const char *file, int line, bool entry) {
        CHECK_MSG(strcmp(f->name, name) == 0, "name %s, not %s", f->name, name);
        CHECK_MSG(strcmp(f->filename, file) == 0, "%s: file %s, not %s", name, f->filename, file);
        CHECK_MSG(f->line == line, "%s: line %d, not %d", name, f->line, line);
        CHECK_MSG(f->entry == entry, "%s: entry %d, not %d", name, f->entry, entry);
}

/* Walks both threads of p through the layout the reader was given and
 * checks every frame. */
static void check_process(Process *p, const PyLayout *l) {
        PyReader *r = NULL;
        PyThread threads[8];
        PyFrame frames[16];
        char *why = NULL;
        size_t n;

        MUST(py_reader_new(l, image_read, &p->im, &r));
        int k = py_reader_threads(r, p->runtime, threads, 8, &why);
        CHECK_MSG(k == 2, "threads: %d (%s)", k, why ?: "");
        if (k != 2)
                goto out;
        CHECK(threads[0].tstate == p->t_main && threads[0].native_thread_id == 4241);
        CHECK(threads[0].thread_id == 4241 * 0x1000);
        CHECK(threads[0].frame == p->f_leaf);
        CHECK(threads[1].tstate == p->t_other && threads[1].native_thread_id == 4242 && threads[1].frame == p->f_work);

        k = py_reader_walk(r, threads[0].frame, frames, 16, &n, &why);
        CHECK_MSG(k == 0 && n == 4, "walk: %d, %zu frames (%s)", k, n, why ?: "");
        if (n == 4) {
                check_frame(&frames[0], "leaf", "/srv/lib/leaf.py", 34, true);
                check_frame(&frames[1], "Worker.middle", "/srv/app.py", 23, false);
                check_frame(&frames[2], "outer", "/srv/app.py", 12, false);
                check_frame(&frames[3], "<module>", "/srv/app.py", 34, true);
                CHECK(frames[0].address == p->f_leaf && frames[0].code == p->code_leaf);
        }

        uint64_t current = 0;
        MUST(py_reader_current_frame(r, threads[1].tstate, &current, &why));
        CHECK(current == p->f_work);
        k = py_reader_walk(r, current, frames, 16, &n, &why);
        CHECK_MSG(k == 0 && n == 2, "walk: %d, %zu frames (%s)", k, n, why ?: "");
        if (n == 2) {
                check_frame(&frames[0], "work", "/srv/app.py", 51, false);
                check_frame(&frames[1], "Thread.run", "/usr/lib/python3/threading.py", 910, true);
        }
out:
        free(why);
        py_reader_free(r);
}

TEST(table_layouts) {
        PyLayout l;
        char *why = NULL;

        MUST(py_layout_from_table(3, 11, EM_X86_64, &l, &why));
        CHECK(PY_VERSION_MINOR(l.version) == 11 && !l.from_debug_offsets);
        CHECK(py_layout_check(&l, NULL) == 0);
        MUST(py_layout_from_table(3, 12, EM_AARCH64, &l, &why));
        CHECK(PY_VERSION_MINOR(l.version) == 12 && py_layout_check(&l, NULL) == 0);

        CHECK(py_layout_from_table(3, 10, EM_X86_64, &l, &why) == -EPROTONOSUPPORT);
        CHECK(why && strstr(why, "3.10"));
        CHECK(py_layout_from_table(3, 13, EM_X86_64, &l, &why) == -EPROTONOSUPPORT);
        CHECK(py_layout_from_table(3, 11, EM_386, &l, &why) == -EPROTONOSUPPORT);
        CHECK(why && strstr(why, "machine 3"));

        /* A layout that lies is refused before any read. */
        MUST(py_layout_from_table(3, 11, EM_X86_64, &l, NULL));
        l.frame_previous = 5000; /* 5 KiB from the frame's other fields */
        CHECK(py_layout_check(&l, &why) == -EINVAL && why && strstr(why, "_PyInterpreterFrame's fields span"));
        l.frame_previous = 2 << 20;
        CHECK(py_layout_check(&l, &why) == -EINVAL && why && strstr(why, "previous at 2097152 is beyond"));
        PyReader *r = NULL;
        CHECK(py_reader_new(&l, image_read, NULL, &r) == -EINVAL && !r);
        MUST(py_layout_from_table(3, 11, EM_X86_64, &l, NULL));
        l.code_name = 121;
        CHECK(py_layout_check(&l, &why) == -EINVAL && why && strstr(why, "aligned"));
        free(why);
}

/* The image of Periscope's own table for 3.MINOR, walked. */
static void check_table_walk(unsigned minor) {
        Process p;
        PyLayout l;
        MUST(py_layout_from_table(3, minor, EM_X86_64, &l, NULL));
        process_build(&p, &l, 0);
        check_process(&p, &l);
        process_done(&p);
}

TEST(walk_3_11) {
        check_table_walk(11);
}

TEST(walk_3_12) {
        check_table_walk(12);
}

#define SAME(field) CHECK_MSG(got.field == want.field, "3.%u: " #field " %u, not %u", minor, got.field, want.field)

static void check_debug_offsets(unsigned minor) {
        Process p;
        PyLayout want = image_debug_layout(minor), got;
        char *why = NULL;

        process_build(&p, &want, minor);
        int k = py_layout_from_debug_offsets(image_read, &p.im, p.runtime, &got, &why);
        CHECK_MSG(k == 0, "3.%u: %s", minor, why ?: "");
        if (k == 0) {
                SAME(version);
                SAME(runtime_interpreters_head);
                SAME(interp_next);
                SAME(interp_threads_head);
                SAME(tstate_next);
                SAME(tstate_native_thread_id);
                SAME(tstate_thread_id);
                SAME(tstate_cframe);
                SAME(tstate_current_frame);
                SAME(frame_code);
                SAME(frame_previous);
                SAME(frame_instr);
                SAME(frame_owner);
                SAME(frame_is_entry);
                SAME(frame_code_tagged);
                SAME(owner_first_incomplete);
                SAME(owner_cstack);
                SAME(owner_max);
                SAME(code_filename);
                SAME(code_name);
                SAME(code_qualname);
                SAME(code_linetable);
                SAME(code_firstlineno);
                SAME(code_adaptive);
                SAME(object_type);
                SAME(bytes_size);
                SAME(bytes_data);
                SAME(unicode_length);
                SAME(unicode_state);
                SAME(unicode_ascii_data);
                SAME(unicode_compact_data);
                SAME(unicode_compact_utf8);
                SAME(unicode_compact_utf8_length);
                CHECK(got.from_debug_offsets);
                check_process(&p, &got);
        }

        /* py_layout_load() asks the debug offsets from 3.13 on, and they must
         * agree with what the caller knows. */
        k = py_layout_load(image_read, &p.im, p.runtime, PY_VERSION(3, minor), EM_X86_64, &got, &why);
        CHECK_MSG(k == 0, "3.%u: %s", minor, why ?: "");
        k = py_layout_load(image_read, &p.im, p.runtime, 0, EM_X86_64, &got, &why);
        CHECK_MSG(k == 0 && PY_VERSION_MINOR(got.version) == minor, "3.%u: %s", minor, why ?: "");
        k = py_layout_load(image_read, &p.im, p.runtime, PY_VERSION(3, minor == 13 ? 14 : 13), EM_X86_64, &got, &why);
        CHECK_MSG(k == -EBADMSG && why && strstr(why, "interpreter is"), "3.%u: %d %s", minor, k, why ?: "");
        /* Below 3.13 the table, whatever the memory holds. */
        CHECK(py_layout_load(image_read, &p.im, 0, PY_VERSION(3, 11), EM_X86_64, &got, &why) == 0);
        CHECK(!got.from_debug_offsets && PY_VERSION_MINOR(got.version) == 11);
        CHECK(py_layout_load(image_read, &p.im, 0, PY_VERSION(3, 10), EM_X86_64, &got, &why) == -EPROTONOSUPPORT);
        free(why);
        process_done(&p);
}

TEST(debug_offsets_3_13) {
        check_debug_offsets(13);
}

TEST(debug_offsets_3_14) {
        check_debug_offsets(14);
}

/* A 3.13 image whose debug offsets were changed by edit: refused with
 * error and a reason that says want. */
static void check_debug_lie(unsigned minor, void (*edit)(uint8_t *d), int error, const char *want) {
        Process p;
        PyLayout l = image_debug_layout(minor), got;
        char *why = NULL;

        process_build(&p, &l, minor);
        edit(image_at(&p.im, p.runtime));
        int k = py_layout_from_debug_offsets(image_read, &p.im, p.runtime, &got, &why);
        CHECK_MSG(k == error, "3.%u, %s: %d, not %d (%s)", minor, want, k, error, why ?: "");
        CHECK_MSG(why && strstr(why, want), "3.%u: reason \"%s\" does not say \"%s\"", minor, why ?: "", want);
        free(why);
        process_done(&p);
}

static void lie_cookie(uint8_t *d) {
        memcpy(d, "xdebugpz", 8);
}
static void lie_version_15(uint8_t *d) {
        ((DebugOffsets313 *) d)->version = PY_VERSION(3, 15);
}
static void lie_version_2(uint8_t *d) {
        ((DebugOffsets313 *) d)->version = 0x020700f0;
}
static void lie_version_high(uint8_t *d) {
        ((DebugOffsets313 *) d)->version |= UINT64_C(1) << 40;
}
static void lie_free_threaded(uint8_t *d) {
        ((DebugOffsets313 *) d)->free_threaded = 1;
}
static void lie_offset_outside(uint8_t *d) {
        ((DebugOffsets313 *) d)->interpreter_frame.previous = 80; /* its size */
}
static void lie_size_huge(uint8_t *d) {
        ((DebugOffsets313 *) d)->code_object.size = UINT64_C(1) << 40;
}
static void lie_size_zero(uint8_t *d) {
        ((DebugOffsets313 *) d)->thread_state.size = 0;
}
static void lie_offset_huge(uint8_t *d) {
        DebugOffsets313 *o = (DebugOffsets313 *) d;
        o->interpreter_state.threads_head = 300000; /* inside its 400000 bytes, beyond what is read */
}
static void lie_offset_beyond(uint8_t *d) {
        DebugOffsets313 *o = (DebugOffsets313 *) d;
        o->interpreter_state.size = 4 << 20;
        o->interpreter_state.threads_head = 2 << 20;
}
static void lie_misaligned(uint8_t *d) {
        ((DebugOffsets313 *) d)->code_object.qualname = 131;
}
static void lie_ascii_size(uint8_t *d) {
        ((DebugOffsets313 *) d)->unicode_object.asciiobject_size = 3;
}
static void lie_order(uint8_t *d) {
        DebugOffsets313 *o = (DebugOffsets313 *) d;
        o->code_object.co_code_adaptive = 16; /* before the names */
}
static void lie_314_shifted(uint8_t *d) {
        /* 3.14's frame part read with 3.13's positions would fail here: a
         * 3.14 struct that says 3.13 is refused, not misread. */
        ((DebugOffsets314 *) d)->version = PY_VERSION(3, 13);
}

TEST(hostile_debug_offsets) {
        check_debug_lie(13, lie_cookie, -EBADMSG, "cookie");
        check_debug_lie(13, lie_version_15, -EPROTONOSUPPORT, "3.15");
        check_debug_lie(13, lie_version_2, -EBADMSG, "not a Python 3");
        check_debug_lie(13, lie_version_high, -EBADMSG, "not a Python 3");
        check_debug_lie(13, lie_free_threaded, -EPROTONOSUPPORT, "free-threaded");
        check_debug_lie(13, lie_offset_outside, -EBADMSG, "previous at 80 is outside");
        check_debug_lie(13, lie_size_huge, -EBADMSG, "size");
        check_debug_lie(13, lie_size_zero, -EBADMSG, "size 0");
        check_debug_lie(13, lie_offset_huge, -EBADMSG, "PyInterpreterState's fields span");
        check_debug_lie(13, lie_offset_beyond, -EBADMSG, "threads_head at 2097152");
        check_debug_lie(13, lie_misaligned, -EBADMSG, "aligned");
        check_debug_lie(13, lie_ascii_size, -EBADMSG, "PyASCIIObject");
        check_debug_lie(13, lie_order, -EBADMSG, "co_code_adaptive");
        check_debug_lie(14, lie_314_shifted, -EBADMSG, "_Py_DebugOffsets");

        /* _PyRuntime where nothing is mapped, or not an object's address. */
        Image im;
        PyLayout l;
        char *why = NULL;
        image_init(&im, 4096);
        CHECK(py_layout_from_debug_offsets(image_read, &im, UINT64_C(0x1000), &l, &why) == -EFAULT);
        CHECK(why && strstr(why, "_Py_DebugOffsets"));
        CHECK(py_layout_from_debug_offsets(image_read, &im, 0, &l, &why) == -EFAULT);
        CHECK(py_layout_from_debug_offsets(image_read, &im, IMAGE_BASE + 4, &l, &why) == -EFAULT);
        /* The cookie at the end of the image, the rest beyond it. */
        memcpy(image_at(&im, IMAGE_BASE + 4096 - 24), "xdebugpy", 8);
        uint64_t v = PY_VERSION(3, 13);
        memcpy(image_at(&im, IMAGE_BASE + 4096 - 16), &v, 8);
        CHECK(py_layout_from_debug_offsets(image_read, &im, IMAGE_BASE + 4096 - 24, &l, &why) == -EFAULT);
        free(why);
        image_done(&im);
}

/* Walks from frame in p with layout l: the error, the frames in *ret_n and
 * the reason in *why (freed by the caller). */
static int walk(Process *p, uint64_t frame, PyFrame *frames, size_t n_max, size_t *ret_n, char **why) {
        PyReader *r = NULL;
        MUST(py_reader_new(&p->l, image_read, &p->im, &r));
        int k = py_reader_walk(r, frame, frames, n_max, ret_n, why);
        /* The names are the reader's: checked before it goes. */
        for (size_t i = 0; i < *ret_n; i++)
                CHECK(frames[i].name && frames[i].filename && strlen(frames[i].name) <= 4 * PY_STRING_MAX);
        py_reader_free(r);
        return k;
}

static void build_3_11(Process *p) {
        PyLayout l;
        MUST(py_layout_from_table(3, 11, EM_X86_64, &l, NULL));
        process_build(p, &l, 0);
}

TEST(hostile_frame_chains) {
        PyFrame frames[PY_FRAMES_MAX + 8];
        char *why = NULL;
        size_t n;
        Process p;
        int k;

        for (unsigned minor = 11; minor <= 12; minor++) {
                PyLayout l;
                MUST(py_layout_from_table(3, minor, EM_X86_64, &l, NULL));
                process_build(&p, &l, 0);
                /* outer's caller is leaf again: a loop. */
                image_put64(&p.im, p.f_outer + l.frame_previous, p.f_leaf);
                k = walk(&p, p.f_leaf, frames, 64, &n, &why);
                CHECK_MSG(k == -ELOOP && n == 3, "3.%u: %d, %zu frames", minor, k, n);
                CHECK(why && strstr(why, "comes back"));
                /* a frame that is its own caller */
                image_put64(&p.im, p.f_outer + l.frame_previous, p.f_outer);
                CHECK(walk(&p, p.f_outer, frames, 64, &n, &why) == -ELOOP && n == 1);
                process_done(&p);
        }

        /* A caller outside the mappings, misaligned, beyond user space. */
        build_3_11(&p);
        image_put64(&p.im, p.f_outer + p.l.frame_previous, UINT64_C(0x5000));
        k = walk(&p, p.f_leaf, frames, 64, &n, &why);
        CHECK_MSG(k == -EFAULT && n == 3, "%d, %zu frames", k, n);
        CHECK(why && strstr(why, "_PyInterpreterFrame at 0x5000"));
        image_put64(&p.im, p.f_outer + p.l.frame_previous, p.f_module + 4);
        CHECK(walk(&p, p.f_leaf, frames, 64, &n, &why) == -EFAULT && n == 3);
        CHECK(why && strstr(why, "aligned"));
        image_put64(&p.im, p.f_outer + p.l.frame_previous, UINT64_C(0xfffffffffffffff0));
        CHECK(walk(&p, p.f_leaf, frames, 64, &n, &why) == -EFAULT && n == 3);
        CHECK(why && strstr(why, "beyond user space"));

        /* A code object outside, null, or not one (another type). */
        image_put64(&p.im, p.f_outer + p.l.frame_previous, p.f_module);
        image_put64(&p.im, p.f_middle + p.l.frame_code, UINT64_C(0x7fff00000000));
        CHECK(walk(&p, p.f_leaf, frames, 64, &n, &why) == -EFAULT && n == 1);
        CHECK(why && strstr(why, "code object"));
        image_put64(&p.im, p.f_middle + p.l.frame_code, 0);
        CHECK(walk(&p, p.f_leaf, frames, 64, &n, &why) == -EFAULT && n == 1);
        CHECK(why && strstr(why, "null"));
        image_put64(&p.im, p.f_middle + p.l.frame_code, p.code_middle);
        image_put64(&p.im, p.code_middle + 8, IMAGE_STR_TYPE);
        CHECK(walk(&p, p.f_leaf, frames, 64, &n, &why) == -EBADMSG && n == 1);
        CHECK(why && strstr(why, "not a code object"));
        image_put64(&p.im, p.code_middle + 8, IMAGE_CODE_TYPE);

        /* An owner the version has not. */
        image_put8(&p.im, p.f_outer + p.l.frame_owner, 3);
        CHECK(walk(&p, p.f_leaf, frames, 64, &n, &why) == -EBADMSG && n == 2);
        CHECK(why && strstr(why, "owner 3"));
        image_put8(&p.im, p.f_outer + p.l.frame_owner, 0);
        CHECK(walk(&p, p.f_leaf, frames, 64, &n, &why) == 0 && n == 4);
        process_done(&p);

        /* More frames than asked, and more than PY_FRAMES_MAX. */
        build_3_11(&p);
        uint64_t f = 0;
        for (size_t i = 0; i < PY_FRAMES_MAX + 5; i++)
                f = image_frame(&p.im, &p.l, p.code_outer, 1, f, 0, false);
        CHECK(walk(&p, f, frames, 10, &n, &why) == -E2BIG && n == 10);
        CHECK(why && strstr(why, "more than 10"));
        CHECK(walk(&p, f, frames, PY_FRAMES_MAX + 8, &n, &why) == -E2BIG && n == PY_FRAMES_MAX);
        process_done(&p);

        /* 3.12: a chain of shims only, longer than any real one. */
        PyLayout l12;
        MUST(py_layout_from_table(3, 12, EM_X86_64, &l12, NULL));
        process_build(&p, &l12, 0);
        f = 0;
        for (size_t i = 0; i < 2 * PY_FRAMES_MAX + 5; i++)
                f = shim(&p, f);
        CHECK(walk(&p, f, frames, 64, &n, &why) == -E2BIG && n == 0);
        CHECK(why && strstr(why, "links"));
        process_done(&p);
        free(why);
}

/* The leaf's qualname replaced by str s: what a walk says. */
static int walk_with_name(Process *p, uint64_t s, size_t *n, char **why, char name[static 4 * PY_STRING_MAX + 1]) {
        PyFrame frames[8];
        image_put64(&p->im, p->code_leaf + p->l.code_qualname, s);
        PyReader *r = NULL;
        MUST(py_reader_new(&p->l, image_read, &p->im, &r));
        int k = py_reader_walk(r, p->f_leaf, frames, 8, n, why);
        name[0] = 0;
        if (k == 0)
                snprintf(name, 4 * PY_STRING_MAX + 1, "%s", frames[0].name);
        py_reader_free(r);
        return k;
}

TEST(hostile_strings) {
        static char name[4 * PY_STRING_MAX + 1];
        char *why = NULL;
        size_t n;
        Process p;
        build_3_11(&p);
        const PyLayout *l = &p.l;

        uint64_t s = image_str(&p.im, l, "fine");
        CHECK(walk_with_name(&p, s, &n, &why, name) == 0 && strcmp(name, "fine") == 0);

        /* A length beyond any name, or beyond what the image holds. */
        image_put64(&p.im, s + l->unicode_length, UINT64_C(1) << 40);
        CHECK(walk_with_name(&p, s, &n, &why, name) == -E2BIG && n == 0);
        CHECK(why && strstr(why, "characters, more than 1024"));
        image_put64(&p.im, s + l->unicode_length, PY_STRING_MAX + 1);
        CHECK(walk_with_name(&p, s, &n, &why, name) == -E2BIG);
        uint64_t at_end = IMAGE_BASE + p.im.size - l->unicode_ascii_data - 8;
        memcpy(image_at(&p.im, at_end), image_at(&p.im, s), l->unicode_ascii_data);
        image_put64(&p.im, at_end + l->unicode_length, 100);
        CHECK(walk_with_name(&p, at_end, &n, &why, name) == -EFAULT);
        CHECK(why && strstr(why, "str characters"));

        /* The longest name there may be, and one without its end. */
        char longest[PY_STRING_MAX + 1];
        memset(longest, 'x', PY_STRING_MAX);
        longest[PY_STRING_MAX] = 0;
        s = image_str(&p.im, l, longest);
        CHECK(walk_with_name(&p, s, &n, &why, name) == 0 && strlen(name) == PY_STRING_MAX);
        s = image_str(&p.im, l, "unended");
        image_put8(&p.im, s + l->unicode_ascii_data + 7, 'x');
        CHECK(walk_with_name(&p, s, &n, &why, name) == -EBADMSG);
        CHECK(why && strstr(why, "does not end"));

        /* Not a compact str; a kind that is none; ASCII that is not. */
        s = image_str(&p.im, l, "state");
        image_put32(&p.im, s + l->unicode_state, 1u << 2 | 1u << 6);
        CHECK(walk_with_name(&p, s, &n, &why, name) == -EBADMSG && why && strstr(why, "not a compact str"));
        image_put32(&p.im, s + l->unicode_state, 3u << 2 | 1u << 5);
        CHECK(walk_with_name(&p, s, &n, &why, name) == -EBADMSG);
        s = image_str(&p.im, l, "asc");
        image_put8(&p.im, s + l->unicode_ascii_data + 1, 0xe9);
        CHECK(walk_with_name(&p, s, &n, &why, name) == -EBADMSG && why && strstr(why, "says ASCII"));

        /* Every kind to UTF-8; a lone surrogate and a NUL replaced. */
        uint32_t latin[] = { 'c', 0xe9 };
        s = image_str_chars(&p.im, l, latin, 2, 1);
        CHECK(walk_with_name(&p, s, &n, &why, name) == 0 && strcmp(name, "c\xc3\xa9") == 0);
        uint32_t ucs2[] = { 0x2603, 0xd800, 0 };
        s = image_str_chars(&p.im, l, ucs2, 3, 2);
        CHECK(walk_with_name(&p, s, &n, &why, name) == 0 && strcmp(name, "\xe2\x98\x83\xef\xbf\xbd\xef\xbf\xbd") == 0);
        uint32_t ucs4[] = { 0x1f600, 'a' };
        s = image_str_chars(&p.im, l, ucs4, 2, 4);
        CHECK(walk_with_name(&p, s, &n, &why, name) == 0 && strcmp(name, "\xf0\x9f\x98\x80"
                                                                         "a") == 0);
        uint32_t beyond[] = { 0x110000 };
        s = image_str_chars(&p.im, l, beyond, 1, 4);
        CHECK(walk_with_name(&p, s, &n, &why, name) == -EBADMSG && why && strstr(why, "no character"));

        /* The line table: too big, without end, broken (line 0, not a
         * failure: the name and file still say where). */
        uint64_t lt;
        memcpy(&lt, image_at(&p.im, p.code_leaf + l->code_linetable), 8);
        image_put64(&p.im, lt + l->bytes_size, PY_LINETABLE_MAX + 1);
        CHECK(walk_with_name(&p, image_str(&p.im, l, "leaf"), &n, &why, name) == -E2BIG);
        CHECK(why && strstr(why, "bytes"));
        image_put64(&p.im, lt + l->bytes_size, 4);
        image_put8(&p.im, lt + l->bytes_data + 4, 1);
        CHECK(walk_with_name(&p, image_str(&p.im, l, "leaf"), &n, &why, name) == -EBADMSG);
        CHECK(why && strstr(why, "does not end"));
        image_put8(&p.im, lt + l->bytes_data + 4, 0);
        image_put8(&p.im, lt + l->bytes_data, 0x05);
        PyFrame frames[8];
        CHECK(walk(&p, p.f_leaf, frames, 8, &n, &why) == 0 && n == 4 && frames[0].line == 0);
        free(why);
        process_done(&p);
}

TEST(hostile_thread_lists) {
        PyThread threads[8];
        PyReader *r = NULL;
        char *why = NULL;
        Process p;
        build_3_11(&p);
        const PyLayout *l = &p.l;
        uint64_t interp;
        memcpy(&interp, image_at(&p.im, p.runtime + l->runtime_interpreters_head), 8);
        MUST(py_reader_new(l, image_read, &p.im, &r));

        CHECK(py_reader_threads(r, p.runtime, threads, 1, &why) == -E2BIG && why && strstr(why, "more than 1"));
        image_put64(&p.im, p.t_other + l->tstate_next, p.t_main);
        CHECK(py_reader_threads(r, p.runtime, threads, 8, &why) == -ELOOP && why && strstr(why, "thread states"));
        image_put64(&p.im, p.t_other + l->tstate_next, p.t_other + 3);
        CHECK(py_reader_threads(r, p.runtime, threads, 8, &why) == -EFAULT);
        image_put64(&p.im, p.t_other + l->tstate_next, 0);
        image_put64(&p.im, interp + l->interp_next, interp);
        CHECK(py_reader_threads(r, p.runtime, threads, 8, &why) == -ELOOP && why && strstr(why, "interpreters"));
        image_put64(&p.im, interp + l->interp_next, UINT64_C(0x10));
        CHECK(py_reader_threads(r, p.runtime, threads, 8, &why) == -EFAULT);
        image_put64(&p.im, interp + l->interp_next, 0);
        /* 3.11's _PyCFrame out of the image. */
        image_put64(&p.im, p.t_other + l->tstate_cframe, UINT64_C(0x7ff000000000));
        CHECK(py_reader_threads(r, p.runtime, threads, 8, &why) == -EFAULT && why && strstr(why, "_PyCFrame"));
        uint64_t frame = 1;
        CHECK(py_reader_current_frame(r, p.t_other, &frame, &why) == -EFAULT);
        image_put64(&p.im, p.t_other + l->tstate_cframe, 0);
        CHECK(py_reader_current_frame(r, p.t_other, &frame, &why) == 0 && frame == 0);
        CHECK(py_reader_threads(r, p.runtime, threads, 8, &why) == 2 && threads[1].frame == 0);
        CHECK(py_reader_threads(r, UINT64_C(0x2000), threads, 8, &why) == -EFAULT);

        /* More interpreters than there may be. */
        uint64_t prev = 0;
        for (size_t i = 0; i < PY_INTERPRETERS_MAX + 1; i++) {
                uint64_t in = image_alloc(&p.im, 128);
                image_put64(&p.im, in + l->interp_next, prev);
                prev = in;
        }
        image_put64(&p.im, p.runtime + l->runtime_interpreters_head, prev);
        CHECK(py_reader_threads(r, p.runtime, threads, 8, &why) == -E2BIG && why && strstr(why, "interpreters"));
        free(why);
        py_reader_free(r);
        process_done(&p);
}

TEST(code_cache) {
        PyFrame frames[8];
        PyReaderStats st;
        PyReader *r = NULL;
        char *why = NULL;
        size_t n;
        Process p;
        build_3_11(&p);

        MUST(py_reader_new(&p.l, image_read, &p.im, &r));
        MUST(py_reader_walk(r, p.f_leaf, frames, 8, &n, &why));
        CHECK(n == 4);
        py_reader_get_stats(r, &st);
        CHECK(st.code_lookups == 4 && st.code_hits == 0);

        /* Again: each frame and its code object's header, nothing else. */
        uint64_t before = p.im.reads;
        MUST(py_reader_walk(r, p.f_leaf, frames, 8, &n, &why));
        CHECK_MSG(p.im.reads - before == 2 * n, "%" PRIu64 " reads for %zu frames", p.im.reads - before, n);
        py_reader_get_stats(r, &st);
        CHECK(st.code_lookups == 8 && st.code_hits == 4 && st.reads == p.im.reads);

        /* A code object freed and another made at its address: read again. */
        image_put64(&p.im, p.code_leaf + p.l.code_qualname, image_str(&p.im, &p.l, "reborn"));
        MUST(py_reader_walk(r, p.f_leaf, frames, 8, &n, &why));
        CHECK(n == 4 && strcmp(frames[0].name, "reborn") == 0);
        CHECK(strcmp(frames[1].name, "Worker.middle") == 0);

        /* More code objects than the cache keeps (copies of outer's, with
         * its strings): it stays within its bound and right. */
        uint8_t header[256];
        memcpy(header, image_at(&p.im, p.code_outer), p.l.code_adaptive);
        uint64_t first_group = 0;
        size_t n_groups = (PY_CODE_CACHE_MAX + 1000) / 500;
        for (size_t g = 0; g < n_groups; g++) {
                uint64_t f = 0;
                for (size_t i = 0; i < 500; i++) {
                        uint64_t c = image_alloc(&p.im, p.l.code_adaptive + 16);
                        memcpy(image_at(&p.im, c), header, p.l.code_adaptive);
                        f = image_frame(&p.im, &p.l, c, 2, f, 0, false);
                }
                if (g == 0)
                        first_group = f;
                PyFrame many[500];
                MUST(py_reader_walk(r, f, many, 500, &n, &why));
                CHECK(n == 500 && strcmp(many[0].name, "outer") == 0 && strcmp(many[499].name, "outer") == 0);
                CHECK(many[0].line == 12 && many[499].entry);
        }
        PyFrame again[500];
        MUST(py_reader_walk(r, first_group, again, 500, &n, &why));
        CHECK(n == 500 && strcmp(again[250].filename, "/srv/app.py") == 0);
        py_reader_get_stats(r, &st);
        CHECK(st.code_lookups == 12 + (n_groups + 1) * 500);
        free(why);
        py_reader_free(r);
        process_done(&p);
}

/* A process that runs while it is read: when the reader reaches one frame,
 * a code object it has read already is replaced by another at its address. */
typedef struct Racing {
        Process *p;
        uint64_t when, code, qualname;
} Racing;

static int racing_read(void *userdata, uint64_t addr, void *buf, size_t n) {
        Racing *race = userdata;
        if (race->when && addr >= race->when && addr < race->when + 128) {
                image_put64(&race->p->im, race->code + race->p->l.code_qualname, race->qualname);
                race->when = 0;
        }
        return image_read(&race->p->im, addr, buf, n);
}

TEST(code_changes_during_walk) {
        PyFrame frames[8];
        PyReader *r = NULL;
        char *why = NULL;
        size_t n;
        Process p;
        build_3_11(&p);

        /* outer runs leaf's code object too; when middle is read, that
         * code object becomes another. The walk cannot show both. */
        image_put64(&p.im, p.f_outer + p.l.frame_code, p.code_leaf);
        Racing race = { &p, p.f_outer, p.code_leaf, image_str(&p.im, &p.l, "other") };
        MUST(py_reader_new(&p.l, racing_read, &race, &r));
        int k = py_reader_walk(r, p.f_leaf, frames, 8, &n, &why);
        CHECK_MSG(k == -EAGAIN && n == 2, "%d, %zu frames", k, n);
        CHECK(why && strstr(why, "changed during the walk"));
        CHECK(n >= 1 && strcmp(frames[0].name, "leaf") == 0);
        /* The next walk sees the new one. */
        MUST(py_reader_walk(r, p.f_leaf, frames, 8, &n, &why));
        CHECK(n == 4 && strcmp(frames[0].name, "other") == 0 && strcmp(frames[2].name, "other") == 0);
        free(why);
        py_reader_free(r);
        process_done(&p);
}

TEST(linetable) {
        /* 3 units at line 10 (short form, code 0, one column byte), 2 at
         * 12 (ONE_LINE2, two bytes), 1 with no location, 4 at 7 (LONG: -5
         * as svarint 11, end line, two columns), 2 at 7 (NO_COLUMNS 0). */
        const uint8_t t[] = { 0x80 | 0 << 3 | 2,
                              0x05,
                              0x80 | 12 << 3 | 1,
                              0x01,
                              0x02,
                              0x80 | 15 << 3 | 0,
                              0x80 | 14 << 3 | 3,
                              11,
                              0,
                              1,
                              2,
                              0x80 | 13 << 3 | 1,
                              0 };
        CHECK(py_linetable_line(t, sizeof(t), 10, -2) == 10);
        CHECK(py_linetable_line(t, sizeof(t), 10, 0) == 10);
        CHECK(py_linetable_line(t, sizeof(t), 10, 5) == 10);
        CHECK(py_linetable_line(t, sizeof(t), 10, 6) == 12);
        CHECK(py_linetable_line(t, sizeof(t), 10, 9) == 12);
        CHECK(py_linetable_line(t, sizeof(t), 10, 10) == 0);
        CHECK(py_linetable_line(t, sizeof(t), 10, 12) == 7);
        CHECK(py_linetable_line(t, sizeof(t), 10, 19) == 7);
        CHECK(py_linetable_line(t, sizeof(t), 10, 20) == 7);
        CHECK(py_linetable_line(t, sizeof(t), 10, 24) == 0); /* past the end */

        /* A multi-byte varint: +200 lines. */
        const uint8_t big[] = { 0x80 | 13 << 3 | 0, 64 | (400 & 63), 400 >> 6 };
        CHECK(py_linetable_line(big, sizeof(big), 1, 0) == 201);
        /* Broken: no entry byte first, a varint cut short, one that never
         * ends, a line below 1. */
        const uint8_t none_first[] = { 0x05 };
        CHECK(py_linetable_line(none_first, 1, 1, 0) == -EBADMSG);
        const uint8_t cut[] = { 0x80 | 13 << 3 | 0, 64 | 1 };
        CHECK(py_linetable_line(cut, sizeof(cut), 1, 0) == -EBADMSG);
        uint8_t endless[64];
        endless[0] = 0x80 | 14 << 3;
        memset(endless + 1, 64 | 63, sizeof(endless) - 1);
        CHECK(py_linetable_line(endless, sizeof(endless), 1, 0) == -EBADMSG);
        const uint8_t below[] = { 0x80 | 13 << 3 | 0, 11 };
        CHECK(py_linetable_line(below, sizeof(below), 3, 0) == 0);
        CHECK(py_linetable_line(NULL, 0, 3, 0) == 0);
}

/* --seeds DIR: the fuzz target's seeds (tests/fuzz/fuzz-python-frames.c),
 * one process per version, its frame offset the main thread's leaf. */
static int write_seeds(const char *dir) {
        for (unsigned minor = 11; minor <= 14; minor++) {
                Process p;
                PyLayout l;
                if (minor <= 12)
                        MUST(py_layout_from_table(3, minor, EM_X86_64, &l, NULL));
                else
                        l = image_debug_layout(minor);
                process_build(&p, &l, minor >= 13 ? minor : 0);
                uint8_t header[16] = { (uint8_t) (minor - 11) };
                uint64_t offset = p.f_leaf - IMAGE_BASE;
                memcpy(header + 8, &offset, 8);
                char path[4096];
                snprintf(path, sizeof(path), "%s/python-3.%u", dir, minor);
                FILE *f = fopen(path, "we");
                if (!f || fwrite(header, 1, 16, f) != 16 || fwrite(p.im.data, 1, p.im.used, f) != p.im.used ||
                    fclose(f) != 0) {
                        fprintf(stderr, "FAIL: %s: %m\n", path);
                        return 1;
                }
                process_done(&p);
        }
        return 0;
}

int main(int argc, char **argv) {
        if (argc == 3 && strcmp(argv[1], "--seeds") == 0)
                return write_seeds(argv[2]);
        return test_main(argc, argv);
}
