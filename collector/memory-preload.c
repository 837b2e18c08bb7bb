/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* memory-preload.c: libperiscope-memory.so, the LD_PRELOAD memory profiler.
 *
 * Interposes malloc, calloc, realloc, free, posix_memalign, aligned_alloc,
 * memalign and valloc; every allocation becomes an ALLOCATION frame (address,
 * size, thread, backtrace innermost first) and every free one with size 0,
 * written into a control-fd ring (SYSPROF_CONTROL_FD, Sysprof's collector
 * protocol, one ring per thread) that periscoped drains into the capture.
 *
 * Safe during start-up: until dlsym(RTLD_NEXT) has found the real functions
 * (dlsym itself allocates), requests are served from a static bootstrap
 * arena that free() ignores. Safe in threads: a thread-local guard makes
 * every allocation made while recording (by the unwinder, the ring request,
 * pthread) go straight to the real allocator unrecorded. Stacks come from
 * libunwind's unw_backtrace() (as Sysprof's collector does): with its
 * per-thread cache of frame rules it is 6-9x cheaper per allocation than
 * glibc's backtrace(), which looks every frame's FDE up again through
 * libgcc (bench/memory-profiler.md). After fork() the
 * child drops the parent's ring and asks for its own.
 *
 * An LD_PRELOAD library has no event loop to hang state on: the few
 * process-wide variables below (the real functions, the arena, the control
 * socket lock) are the minimum interposition needs. */
#include <dlfcn.h>
#include <errno.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "basic.h"

#define EXPORT __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))

#define MAX_FRAMES 128
#define FRAME_ALLOCATION 14
#define FRAME_END 0xFF
#define ALLOCATION_HEADER 48
#define RING_WAIT_MS 1000 /* then the record is dropped, as Sysprof's collector does */

/* ---- the real allocator ---- */

static void *(*real_malloc)(size_t);
static void (*real_free)(void *);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static void *(*real_valloc)(size_t);

/* ---- bootstrap arena: serves allocations made before dlsym() returns ---- */

#define BOOT_SIZE (512 * 1024)
static _Alignas(64) uint8_t boot_arena[BOOT_SIZE];
static size_t boot_used;

static bool is_boot(const void *p) {
        return (const uint8_t *) p >= boot_arena && (const uint8_t *) p < boot_arena + BOOT_SIZE;
}

/* 16-byte header holding the size, then the block (aligned to align). */
static void *boot_alloc(size_t size, size_t align) {
        if (align < 16)
                align = 16;
        if (size > BOOT_SIZE || align > 4096)
                return NULL;
        size_t need = size + 16 + align;
        size_t start = __atomic_fetch_add(&boot_used, need, __ATOMIC_RELAXED);
        if (start + need > BOOT_SIZE)
                return NULL;
        uintptr_t p = (uintptr_t) boot_arena + start + 16;
        p = (p + align - 1) & ~(uintptr_t) (align - 1);
        ((size_t *) p)[-1] = size;
        return (void *) p;
}

static size_t boot_size(const void *p) {
        return ((const size_t *) p)[-1];
}

static bool resolving;

static void resolve(void) {
        if (real_malloc || resolving)
                return;
        resolving = true;
        real_free = dlsym(RTLD_NEXT, "free");
        real_calloc = dlsym(RTLD_NEXT, "calloc");
        real_realloc = dlsym(RTLD_NEXT, "realloc");
        real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
        real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
        real_memalign = dlsym(RTLD_NEXT, "memalign");
        real_valloc = dlsym(RTLD_NEXT, "valloc");
        void *m = dlsym(RTLD_NEXT, "malloc");
        __atomic_store_n(&real_malloc, m, __ATOMIC_RELEASE);
        resolving = false;
}

/* ---- per-thread ring ---- */

typedef struct RingHeader {
        uint32_t head, tail, offset, size;
} RingHeader;

typedef enum {
        THREAD_NEW,      /* not asked for a ring yet */
        THREAD_ACTIVE,   /* has a ring */
        THREAD_OFF,      /* no control fd, refused, or exiting */
} ThreadMode;

typedef struct ThreadState {
        ThreadMode mode;
        bool in_hook;            /* recording now: nested allocations are not recorded */
        int32_t pid, tid;
        RingHeader *header;
        uint8_t *data;
        uint32_t size;
        size_t map_size;
        uint64_t dropped;
} ThreadState;

static TLS ThreadState ts;
static pthread_mutex_t control_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t thread_key;
static bool thread_key_ok;

static int control_fd(void) {
        const char *s = getenv("SYSPROF_CONTROL_FD");
        if (!s || !*s)
                return -1;
        char *end;
        long v = strtol(s, &end, 10);
        if (*end || v < 0 || v > 1 << 20)
                return -1;
        return (int) v;
}

/* Asks the service for a ring and maps it [header | data | data]. */
static int ring_request(int sock) {
        static const char request[10] = "CreatRing";
        size_t sent = 0;
        while (sent < sizeof(request)) {
                ssize_t k = send(sock, request + sent, sizeof(request) - sent, MSG_NOSIGNAL);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return -1;
                sent += (size_t) k;
        }
        int fd = -1;
        if (fd_receive_with_byte(sock, MSG_CMSG_CLOEXEC, NULL, &fd) < 0 || fd < 0)
                return -1; /* gone, or the service refused (no fd) */

        long page = sysconf(_SC_PAGESIZE);
        struct stat st;
        int r = -1;
        if (fstat(fd, &st) < 0 || st.st_size < 2 * page || st.st_size % page != 0 || st.st_size > (1l << 31))
                goto out;
        size_t size = (size_t) st.st_size - (size_t) page;
        size_t total = (size_t) page + 2 * size;
        uint8_t *map = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED)
                goto out;
        if (mmap(map + page + size, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, page) == MAP_FAILED) {
                munmap(map, total);
                goto out;
        }
        RingHeader *h = (RingHeader *) map;
        if (h->offset != (uint32_t) page || h->size != size) {
                munmap(map, total);
                goto out;
        }
        ts.header = h;
        ts.data = map + page;
        ts.size = (uint32_t) size;
        ts.map_size = total;
        r = 0;
out:
        close(fd);
        return r;
}

/* Room for len bytes at the tail, or NULL after waiting RING_WAIT_MS. */
static uint8_t *ring_reserve(uint32_t len) {
        for (int i = 0; i <= RING_WAIT_MS; i++) {
                uint32_t head = __atomic_load_n(&ts.header->head, __ATOMIC_ACQUIRE);
                uint32_t tail = ts.header->tail;
                if (head >= ts.size || tail >= ts.size)
                        return NULL;
                uint32_t used = tail >= head ? tail - head : ts.size - head + tail;
                if (ts.size - used > len) /* never fill it completely: head == tail means empty */
                        return ts.data + tail;
                struct timespec d = { 0, 1000000 };
                nanosleep(&d, NULL);
        }
        return NULL;
}

static void ring_commit(uint32_t len) {
        uint32_t tail = (ts.header->tail + len) % ts.size;
        __atomic_store_n(&ts.header->tail, tail, __ATOMIC_RELEASE);
}

static void frame_header(uint8_t *f, uint16_t len, uint8_t type) {
        memcpy(f, &len, 2);
        int16_t cpu = -1;
        memcpy(f + 2, &cpu, 2);
        memcpy(f + 4, &ts.pid, 4);
        int64_t t = now_monotonic_ns();
        memcpy(f + 8, &t, 8);
        f[16] = type;
        memset(f + 17, 0, 7);
}

static void ring_unmap(void) {
        if (ts.header)
                munmap(ts.header, ts.map_size);
        ts.header = NULL;
        ts.data = NULL;
}

/* Thread exit: end the ring so the service removes it at once. */
static void thread_exit(void *arg) {
        (void) arg;
        if (ts.mode != THREAD_ACTIVE)
                return;
        ts.in_hook = true;
        uint8_t *f = ring_reserve(24);
        if (f) {
                frame_header(f, 24, FRAME_END);
                ring_commit(24);
        }
        ring_unmap();
        ts.mode = THREAD_OFF;
}

static void thread_setup(void) {
        ts.mode = THREAD_OFF;
        int sock = control_fd();
        if (sock < 0)
                return;
        ts.pid = getpid();
        ts.tid = (int32_t) syscall(SYS_gettid);
        pthread_mutex_lock(&control_lock);
        int r = ring_request(sock);
        pthread_mutex_unlock(&control_lock);
        if (r < 0)
                return;
        ts.mode = THREAD_ACTIVE;
        if (thread_key_ok)
                pthread_setspecific(thread_key, &ts);
}

static void after_fork_child(void) {
        /* The ring is the parent's; this process asks for its own. */
        pthread_mutex_init(&control_lock, NULL);
        ring_unmap();
        ts.mode = THREAD_NEW;
}

/* Writes one ALLOCATION frame; size 0 means free. caller is the return
 * address of the hooked call, where the stack starts. */
static void record(void *addr, int64_t size, void *caller) {
        if (ts.in_hook || !addr)
                return;
        ts.in_hook = true;
        if (ts.mode == THREAD_NEW)
                thread_setup();
        if (ts.mode == THREAD_ACTIVE) {
                void *stack[MAX_FRAMES + 8];
                int n = 0, first = 0;
                if (size != 0) {
                        n = unw_backtrace(stack, MAX_FRAMES + 8);
                        for (int i = 0; i < n && i < 8; i++)
                                if (stack[i] == caller) {
                                        first = i;
                                        break;
                                }
                        n -= first;
                        if (n > MAX_FRAMES)
                                n = MAX_FRAMES;
                        if (n < 0)
                                n = 0;
                }
                uint32_t len = ALLOCATION_HEADER + 8 * (uint32_t) n;
                uint8_t *f = ring_reserve(len);
                if (f) {
                        frame_header(f, (uint16_t) len, FRAME_ALLOCATION);
                        uint64_t a = (uint64_t) (uintptr_t) addr;
                        memcpy(f + 24, &a, 8);
                        memcpy(f + 32, &size, 8);
                        memcpy(f + 40, &ts.tid, 4);
                        uint16_t nn = (uint16_t) n;
                        memcpy(f + 44, &nn, 2);
                        memset(f + 46, 0, 2);
                        for (int i = 0; i < n; i++) {
                                uint64_t pc = (uint64_t) (uintptr_t) stack[first + i];
                                memcpy(f + ALLOCATION_HEADER + 8 * i, &pc, 8);
                        }
                        ring_commit(len);
                } else
                        ts.dropped++;
        }
        ts.in_hook = false;
}

__attribute__((constructor)) static void memory_preload_init(void) {
        resolve();
        ts.in_hook = true;
        thread_key_ok = pthread_key_create(&thread_key, thread_exit) == 0;
        pthread_atfork(NULL, NULL, after_fork_child);
        void *warm[4];
        unw_backtrace(warm, 4); /* sets up libunwind now, not inside the first malloc */
        ts.in_hook = false;
}

/* ---- the interposed functions ---- */

EXPORT void *malloc(size_t size) {
        if (!__atomic_load_n(&real_malloc, __ATOMIC_ACQUIRE)) {
                resolve();
                if (!real_malloc)
                        return boot_alloc(size, 16);
        }
        void *p = real_malloc(size);
        record(p, (int64_t) size, __builtin_return_address(0));
        return p;
}

EXPORT void free(void *p) {
        if (!p || is_boot(p))
                return;
        if (!real_free)
                resolve();
        record(p, 0, NULL);
        real_free(p);
}

EXPORT void *calloc(size_t n, size_t size) {
        size_t total;
        if (__builtin_mul_overflow(n, size, &total)) {
                errno = ENOMEM;
                return NULL;
        }
        if (!__atomic_load_n(&real_malloc, __ATOMIC_ACQUIRE) || !real_calloc) {
                resolve();
                if (!real_malloc || !real_calloc)
                        return boot_alloc(total, 16); /* static: already zero */
        }
        void *p = real_calloc(n, size);
        record(p, (int64_t) total, __builtin_return_address(0));
        return p;
}

EXPORT void *realloc(void *old, size_t size) {
        if (old && is_boot(old)) {
                void *p = malloc(size);
                if (p) {
                        size_t n = boot_size(old);
                        memcpy(p, old, n < size ? n : size);
                }
                return p;
        }
        if (!__atomic_load_n(&real_malloc, __ATOMIC_ACQUIRE) || !real_realloc) {
                resolve();
                if (!real_realloc)
                        return boot_alloc(size, 16);
        }
        void *caller = __builtin_return_address(0);
        void *p = real_realloc(old, size);
        if (p || size == 0) {
                if (old)
                        record(old, 0, NULL);
                if (p)
                        record(p, (int64_t) size, caller);
        }
        return p;
}

EXPORT int posix_memalign(void **ret, size_t align, size_t size) {
        if (!real_posix_memalign) {
                resolve();
                if (!real_posix_memalign) {
                        *ret = boot_alloc(size, align);
                        return *ret ? 0 : ENOMEM;
                }
        }
        int r = real_posix_memalign(ret, align, size);
        if (r == 0)
                record(*ret, (int64_t) size, __builtin_return_address(0));
        return r;
}

EXPORT void *aligned_alloc(size_t align, size_t size) {
        if (!real_aligned_alloc) {
                resolve();
                if (!real_aligned_alloc)
                        return boot_alloc(size, align);
        }
        void *p = real_aligned_alloc(align, size);
        record(p, (int64_t) size, __builtin_return_address(0));
        return p;
}

EXPORT void *memalign(size_t align, size_t size) {
        if (!real_memalign) {
                resolve();
                if (!real_memalign)
                        return boot_alloc(size, align);
        }
        void *p = real_memalign(align, size);
        record(p, (int64_t) size, __builtin_return_address(0));
        return p;
}

EXPORT void *valloc(size_t size) {
        if (!real_valloc) {
                resolve();
                if (!real_valloc)
                        return boot_alloc(size, 4096);
        }
        void *p = real_valloc(size);
        record(p, (int64_t) size, __builtin_return_address(0));
        return p;
}
