/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fiber.c: a body (a post-stop stage, unwind-table compiles) on its own stack (ucontext), resumed by
 * sd-event sources. The stack is an anonymous mapping with a guard page
 * below it; sanitizer builds are told about every switch. */
#include "fiber.h"

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "basic.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define FIBER_ASAN 1
#endif

/* The body calls into libdw-free code only (the helper parses), but
 * libdebuginfod and qsort run here: room for deep C stacks. */
#define FIBER_STACK_SIZE (8u << 20)
/* a slice with this much CPU time is worth a line in the log: some step
 * does not yield (wall time alone says more about the machine's load) */
#define FIBER_SLOW_SLICE_MS 50

struct Fiber {
        sd_event *event;
        const char *what;            /* what it runs, for the log */
        FiberBody body;
        FiberDone done;
        void *userdata;

        ucontext_t loop_context, fiber_context;
        void *stack;                 /* the mapping, guard page first */
        size_t stack_size;           /* usable, above the guard */
        sd_event_source *start_source;
        sd_event_source *io_source, *timer_source, *yield_source;
        int wake;                    /* what the pending wait returns */
        int64_t resumed_ms;          /* when the loop last handed over */
        int64_t resumed_cpu_ms;
        bool started, finished, cancelled, in_fiber;
        int result;
#ifdef FIBER_ASAN
        void *loop_fake_stack, *fiber_fake_stack;
        const void *loop_stack_bottom;
        size_t loop_stack_size;
#endif
};

static void fiber_free(Fiber *f) {
        f->start_source = sd_event_source_disable_unref(f->start_source);
        f->io_source = sd_event_source_disable_unref(f->io_source);
        f->timer_source = sd_event_source_disable_unref(f->timer_source);
        f->yield_source = sd_event_source_disable_unref(f->yield_source);
        if (f->stack)
                (void) munmap(f->stack, f->stack_size + (size_t) getpagesize());
        sd_event_unref(f->event);
        free(f);
}

/* Fiber -> loop. */
static void switch_to_loop(Fiber *f) {
        f->in_fiber = false;
#ifdef FIBER_ASAN
        __sanitizer_start_switch_fiber(f->finished ? NULL : &f->fiber_fake_stack, f->loop_stack_bottom,
                                       f->loop_stack_size);
#endif
        (void) swapcontext(&f->fiber_context, &f->loop_context);
#ifdef FIBER_ASAN
        __sanitizer_finish_switch_fiber(f->fiber_fake_stack, &f->loop_stack_bottom, &f->loop_stack_size);
#endif
        f->in_fiber = true;
}

/* Loop -> fiber, until it waits, yields or ends; at its end, done and free. */
static void switch_to_fiber(Fiber *f) {
        assert(!f->in_fiber && !f->finished);
        f->resumed_ms = now_monotonic_ms();
        struct timespec cpu0;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
        f->resumed_cpu_ms = (int64_t) cpu0.tv_sec * 1000 + cpu0.tv_nsec / 1000000;
#ifdef FIBER_ASAN
        __sanitizer_start_switch_fiber(&f->loop_fake_stack, (char *) f->stack + getpagesize(), f->stack_size);
#endif
        (void) swapcontext(&f->loop_context, &f->fiber_context);
#ifdef FIBER_ASAN
        __sanitizer_finish_switch_fiber(f->loop_fake_stack, NULL, NULL);
#endif
        int64_t ran = now_monotonic_ms() - f->resumed_ms;
        struct timespec cpu;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
        int64_t cpu_ms = (int64_t) cpu.tv_sec * 1000 + cpu.tv_nsec / 1000000 - f->resumed_cpu_ms;
        if (cpu_ms > FIBER_SLOW_SLICE_MS)
                log_warning("%s ran %lld ms (%lld ms of CPU time) without giving way to the event loop",
                            f->what, (long long) ran, (long long) cpu_ms);
        if (!f->finished)
                return;
        FiberDone done = f->done;
        void *userdata = f->userdata;
        int result = f->result;
        fiber_free(f);
        done(result, userdata);
}

/* The fiber's first frame: makecontext passes the pointer as two ints. */
static void fiber_main(unsigned hi, unsigned lo) {
        Fiber *f = (Fiber *) (((uintptr_t) hi << 32) | (uintptr_t) lo);
#ifdef FIBER_ASAN
        __sanitizer_finish_switch_fiber(NULL, &f->loop_stack_bottom, &f->loop_stack_size);
#endif
        f->in_fiber = true;
        f->result = f->body(f, f->userdata);
        f->finished = true;
        switch_to_loop(f);
        abort(); /* never resumed once finished */
}

static int on_start(sd_event_source *s, void *userdata) {
        Fiber *f = userdata;
        f->start_source = sd_event_source_disable_unref(f->start_source);
        if (!f->started) {
                f->started = true;
                switch_to_fiber(f);
        }
        return 0;
}

int fiber_start(sd_event *e, const char *what, FiberBody body, FiberDone done, void *userdata, Fiber **ret) {
        Fiber *f = calloc(1, sizeof *f);
        if (!f)
                return -ENOMEM;
        f->event = sd_event_ref(e);
        f->what = what;
        f->body = body;
        f->done = done;
        f->userdata = userdata;
        size_t page = (size_t) getpagesize();
        f->stack_size = FIBER_STACK_SIZE;
        void *stack = mmap(NULL, f->stack_size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                           -1, 0);
        int r = stack == MAP_FAILED ? -errno : 0;
        if (r == 0) {
                f->stack = stack;
                /* the stack grows down: its lowest page faults instead of
                 * overwriting whatever lies below */
                if (mprotect(stack, page, PROT_NONE) < 0 || getcontext(&f->fiber_context) < 0)
                        r = -errno;
        }
        if (r == 0) {
                f->fiber_context.uc_stack.ss_sp = (char *) stack + page;
                f->fiber_context.uc_stack.ss_size = f->stack_size;
                f->fiber_context.uc_link = NULL;
                uintptr_t p = (uintptr_t) f;
                makecontext(&f->fiber_context, (void (*)(void)) fiber_main, 2, (unsigned) (p >> 32),
                            (unsigned) (p & 0xffffffffu));
                r = sd_event_add_defer(e, &f->start_source, on_start, f);
        }
        if (r < 0) {
                fiber_free(f);
                return r;
        }
        *ret = f;
        return 0;
}

/* A wake-up source fired: hand over to the fiber. */
static void wake_fiber(Fiber *f, int wake) {
        f->io_source = sd_event_source_disable_unref(f->io_source);
        f->timer_source = sd_event_source_disable_unref(f->timer_source);
        f->yield_source = sd_event_source_disable_unref(f->yield_source);
        f->wake = wake;
        switch_to_fiber(f);
}

static int on_readable(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        wake_fiber(userdata, 1);
        return 0;
}

static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        wake_fiber(userdata, 0);
        return 0;
}

static int on_yield(sd_event_source *s, void *userdata) {
        wake_fiber(userdata, 0);
        return 0;
}

int fiber_wait_readable(int fd, unsigned timeout_ms, void *fiber) {
        Fiber *f = fiber;
        assert(f->in_fiber);
        if (f->cancelled)
                return -ECANCELED;
        int r = sd_event_add_io(f->event, &f->io_source, fd, EPOLLIN, on_readable, f);
        if (r < 0)
                return r;
        r = sd_event_add_time_relative(f->event, &f->timer_source, CLOCK_MONOTONIC, (uint64_t) timeout_ms * 1000, 0,
                                       on_timeout, f);
        if (r < 0) {
                f->io_source = sd_event_source_disable_unref(f->io_source);
                return r;
        }
        switch_to_loop(f);
        return f->wake;
}

int fiber_yield(Fiber *f) {
        assert(f->in_fiber);
        if (f->cancelled)
                return -ECANCELED;
        if (now_monotonic_ms() - f->resumed_ms < FIBER_SLICE_MS)
                return 0;
        return fiber_give_way(f);
}

int fiber_give_way(Fiber *f) {
        assert(f->in_fiber);
        if (f->cancelled)
                return -ECANCELED;
        if (sd_event_add_defer(f->event, &f->yield_source, on_yield, f) < 0)
                return 0; /* then go on without a break */
        /* after everything else that is pending: rings, timers, bus calls */
        (void) sd_event_source_set_priority(f->yield_source, SD_EVENT_PRIORITY_IDLE);
        switch_to_loop(f);
        return f->cancelled ? -ECANCELED : 0;
}

void fiber_cancel(Fiber *f) {
        assert(!f->in_fiber);
        f->cancelled = true;
        f->start_source = sd_event_source_disable_unref(f->start_source);
        f->started = true;
        /* waiting, yielding or not started yet: run to the end now */
        wake_fiber(f, -ECANCELED);
}
