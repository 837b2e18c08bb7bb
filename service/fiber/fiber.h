/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fiber.h: runs synchronous code that waits on other processes (the
 * post-stop symbolization: many helper round trips, debug-file lookups;
 * anything that asks the sandboxed helper) without blocking the
 * single-threaded service. The body runs on a stack of its own, in the
 * service's thread; whenever it waits for the sandboxed helper it goes back
 * to the event loop (an sd-event I/O source and a timer wake it), and after
 * a slice of CPU work (FIBER_SLICE_MS) it lets every pending event run first. No threads: at
 * any moment either the loop or the body runs, never both. */
#pragma once

#include <stdbool.h>
#include <systemd/sd-event.h>

typedef struct Fiber Fiber;

/* The body: runs on the fiber, returns its result. */
typedef int (*FiberBody)(Fiber *f, void *userdata);
/* Called on the loop's stack once the body returned (or, after
 * fiber_cancel(), from inside it); the fiber is freed right after. */
typedef void (*FiberDone)(int result, void *userdata);

/* Starts body on a new fiber from the event loop (a defer source: never
 * from inside this call); `what` (a static string) names it in the log. */
int fiber_start(sd_event *e, const char *what, FiberBody body, FiberDone done, void *userdata, Fiber **ret);

/* On the fiber: waits until fd is readable (1), timeout_ms passed (0), or
 * the fiber was cancelled (-ECANCELED: stop; later waits return it at
 * once). The signature of HelperClientConfig.wait_readable (userdata: the
 * fiber). */
int fiber_wait_readable(int fd, unsigned timeout_ms, void *fiber);

/* On the fiber: after FIBER_SLICE_MS of work since the loop last ran,
 * lets every pending event run first (an idle-priority source resumes it).
 * Returns 0, or -ECANCELED once the fiber was cancelled (a body that can
 * stop early does). */
int fiber_yield(Fiber *f);

#define FIBER_SLICE_MS 5

/* On the fiber: lets every pending event run first now, whatever the slice
 * (after work whose listeners on the loop may queue more urgent work).
 * Returns as fiber_yield(). */
int fiber_give_way(Fiber *f);

/* From the loop: the body must end now: its waits fail with -ECANCELED, its
 * yields return at once. It runs to its end inside this call, done is
 * called, and the fiber is freed. */
void fiber_cancel(Fiber *f);
