/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recording-python.c: the part that puts CPython threads' Python frames
 * in their samples (docs/python.md). A process that maps an interpreter
 * (python3.X, libpython3.X.so) has its _PyRuntime and
 * _PyEval_EvalFrameDefault placed by the helper (ELF_SYMBOLS, on a fiber),
 * its memory opened once; each sample of one of its threads then reads
 * that thread's frame chain (service/interp/, every read bounded) and
 * each native _PyEval_EvalFrameDefault frame of the stack gives way to the
 * Python frames of its call. A Python frame is an address of its own per
 * (code object, line) with CAPTURE_JITMAP_MARK, named by a JITMAP frame,
 * so reports, exports and Sysprof show it as they show JIT code. */
#include "recording-private.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic.h"
#include "fiber.h"
#include "interp.h"

#define PYTHON_MAX_PROCESSES 1024u     /* interpreters located per recording; more are not looked at */
#define PYTHON_MAX_CANDIDATES 4u       /* interpreter files looked at per process */
#define PYTHON_MAX_SYMBOLS 65536u      /* (code object, line) addresses per process; then one for the rest */
#define PYTHON_MAX_THREADS 1024u       /* thread states listed per process */
#define PYTHON_THREADS_REFRESH_MS 50   /* at most this often, a thread not listed lists them again */
#define PYTHON_THREADS_MAX_AGE_MS 1000 /* and a list this old is read again (threads come and go) */
#define PYTHON_MAX_FORKS 256u          /* forks waiting for their maps until the drain */
/* While an interpreter is read, the rings are drained this often (not only
 * at the recording's 100 ms tick): a sample's Python frames are read when
 * it is drained, and the sooner, the closer to the sample's instant. */
#define PYTHON_DRAIN_USEC (4 * 1000)
/* A sample drained later than this keeps its native frames (python_late). */
#define PYTHON_MAX_DELAY_NS (50 * 1000 * 1000ll)
#define PYTHON_MAX_NAME 1024u  /* bytes of a frame's name in the capture */
#define PYTHON_MAX_STACK 4096u /* addresses of a merged sample */
/* The synthetic addresses: CAPTURE_JITMAP_MARK, 'P', the symbol's index. */
#define PYTHON_ADDRESS(id) (CAPTURE_JITMAP_MARK | (0x50ull << 48) | (uint64_t) (id))

#if defined(__x86_64__)
#define PYTHON_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define PYTHON_MACHINE EM_AARCH64
#else
#define PYTHON_MACHINE EM_NONE
#endif

typedef enum PyState {
        PY_STATE_WAITING, /* its candidates wait for the helper */
        PY_STATE_READY,   /* frames are read */
        PY_STATE_NONE,    /* no interpreter, or one that cannot be read: nothing more is tried */
} PyState;

typedef struct PyCandidate {
        uint64_t start, pgoff; /* the executable mapping */
        int fd;                /* its pinned file (the recording's) */
        unsigned minor;        /* 3.minor from the file's name */
} PyCandidate;

typedef struct PySymbol {
        uint64_t code; /* 0: a free slot */
        int line;
        uint32_t id;
} PySymbol;

typedef struct PyProcess {
        pid_t pid;
        uint64_t generation; /* which PyProcess of the recording: a pid is reused by an exec */
        PyState state;
        PyCandidate candidates[PYTHON_MAX_CANDIDATES];
        size_t n_candidates, next_candidate;
        int mem_fd;
        uint64_t runtime, eval_start, eval_end; /* _PyRuntime, [_PyEval_EvalFrameDefault) */
        uint32_t version;                       /* PY_VERSION_HEX */
        PyReader *reader;
        PyThread *threads;
        size_t n_threads;
        int64_t threads_ms; /* when listed (0: never) */
        PySymbol *symbols;  /* open addressing over (code, line) */
        size_t n_symbols, symbols_size;
        bool overflow_named; /* PYTHON_MAX_SYMBOLS reached: its "rest" address is named */
        bool told;           /* its first read failure was logged */
        uint64_t read_failures;
} PyProcess;

typedef struct Python {
        Recording *rec;
        PyProcess **processes;
        size_t n_processes, n_allocated;
        size_t last; /* index of the last process a sample was of */
        uint64_t generations;
        pid_t forks[PYTHON_MAX_FORKS]; /* children of interpreters, looked at in the next drain */
        size_t n_forks;
        Fiber *fiber;
        HelperClient *helper;         /* its waits go back to the loop; used on the fiber only */
        sd_event_source *drain_timer; /* PYTHON_DRAIN_USEC, once an interpreter is located */
        PyFrame frames[PY_FRAMES_MAX];
        uint64_t stack[PYTHON_MAX_STACK];
        uint64_t located, samples, python_frames, read_failures, unmatched, after_exit;
        uint64_t delay_sum_ns, delay_max_ns, n_delays; /* from a sample's time to its drain */
        uint64_t late;                                 /* drained after PYTHON_MAX_DELAY_NS: left native */
        uint64_t read_ns;                              /* spent reading chains (the part's cost per sample) */
} Python;

/* ---- processes ---- */

static void py_process_free(PyProcess *p) {
        if (!p)
                return;
        py_reader_free(p->reader);
        safe_close(p->mem_fd);
        free(p->threads);
        free(p->symbols);
        free(p);
}

static PyProcess *python_find(Python *py, pid_t pid) {
        if (py->last < py->n_processes && py->processes[py->last]->pid == pid)
                return py->processes[py->last];
        for (size_t i = 0; i < py->n_processes; i++)
                if (py->processes[i]->pid == pid) {
                        py->last = i;
                        return py->processes[i];
                }
        return NULL;
}

static void python_forget(Python *py, pid_t pid) {
        for (size_t i = 0; i < py->n_processes; i++)
                if (py->processes[i]->pid == pid) {
                        py_process_free(py->processes[i]);
                        py->processes[i] = py->processes[--py->n_processes];
                        return;
                }
}

/* "python3.11", "python3.11d", "libpython3.11.so.1.0": 11; else 0. */
static unsigned interpreter_minor(const char *filename) {
        const char *base = strrchr(filename, '/');
        base = base ? base + 1 : filename;
        bool lib = strncmp(base, "libpython3.", 11) == 0;
        if (!lib && strncmp(base, "python3.", 8) != 0)
                return 0;
        const char *p = base + (lib ? 11 : 8);
        unsigned minor = 0;
        size_t digits = 0;
        for (; *p >= '0' && *p <= '9' && digits < 3; p++, digits++)
                minor = minor * 10 + (unsigned) (*p - '0');
        if (digits == 0 || minor < 11 || minor > 99)
                return 0;
        while (*p >= 'a' && *p <= 'z' && *p != '.') /* abiflags: d, t */
                p++;
        if (lib ? strncmp(p, ".so", 3) != 0 || (p[3] != '\0' && p[3] != '.') : *p != '\0')
                return 0;
        return minor;
}

static void python_fiber_start(Python *py);
static void python_drain_often(Python *py);

/* An executable mapping of pid: a candidate when it is an interpreter's
 * file, pinned. */
static int python_consider(Python *py, pid_t pid, const ProcessMapping *m) {
        unsigned minor = m && m->filename ? interpreter_minor(m->filename) : 0;
        if (minor == 0 || !m->pinned || m->pinned->fd < 0)
                return 0;
        PyProcess *p = python_find(py, pid);
        if (!p) {
                if (py->n_processes >= PYTHON_MAX_PROCESSES)
                        return 0;
                if (GROW_ARRAY(py->processes, py->n_allocated, py->n_processes + 1, 16) < 0)
                        return -ENOMEM;
                p = calloc(1, sizeof *p);
                if (!p)
                        return -ENOMEM;
                *p = (PyProcess){
                        .pid = pid, .generation = ++py->generations, .state = PY_STATE_WAITING, .mem_fd = -EBADF
                };
                py->processes[py->n_processes++] = p;
        }
        if (p->state == PY_STATE_READY || p->n_candidates >= PYTHON_MAX_CANDIDATES)
                return 0;
        for (size_t i = 0; i < p->n_candidates; i++)
                if (p->candidates[i].start == m->start)
                        return 0;
        p->candidates[p->n_candidates++] = (PyCandidate){ m->start, m->pgoff, m->pinned->fd, minor };
        p->state = PY_STATE_WAITING;
        python_fiber_start(py);
        return 0;
}

static void python_consider_process(Python *py, pid_t pid) {
        size_t n = 0;
        const ProcessMapping *maps = process_maps_get(py->rec->maps, (int32_t) pid, &n);
        for (size_t i = 0; maps && i < n; i++)
                if (python_consider(py, pid, &maps[i]) < 0) {
                        recording_fail(py->rec, -ENOMEM, "out of memory");
                        return;
                }
}

/* ---- reading the target ---- */

static int python_read(void *userdata, uint64_t addr, void *buf, size_t n) {
        PyProcess *p = userdata;
        if (p->mem_fd < 0)
                return -EBADF;
        if (n == 0)
                return 0;
        if (addr > INT64_MAX || n > (size_t) INT64_MAX - addr)
                return -EFAULT;
        ssize_t k = pread(p->mem_fd, buf, n, (off_t) addr);
        if (k < 0)
                return errno == EIO ? -EFAULT : -errno;
        if (k == 0)
                return -ESRCH; /* its memory is gone: it exited (an unmapped address is EIO) */
        return (size_t) k == n ? 0 : -EFAULT;
}

/* /proc/PID/mem, once, checked like the other /proc opens of a recording. */
static int python_open_memory(Python *py, PyProcess *p) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/mem", (int) p->pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        if (py->rec->check_owner) {
                int r = process_recheck_after_open(py->rec->owner_uid, p->pid, "python frames (/proc/PID/mem)");
                if (r < 0) {
                        safe_close(fd);
                        return r;
                }
        }
        p->mem_fd = fd;
        return 0;
}

/* Places pid's interpreter from one candidate: 0 and ready, -ENOENT when
 * the file holds no _PyRuntime, or another error (logged by the caller). */
static PyProcess *python_find_generation(Python *py, pid_t pid, uint64_t generation) {
        PyProcess *p = python_find(py, pid);
        return p && p->generation == generation ? p : NULL;
}

static int python_locate(Python *py, pid_t pid, uint64_t generation, const PyCandidate *c, char **ret_why) {
        static const char *const names[] = { "_PyRuntime", "_PyEval_EvalFrameDefault", "Py_Version" };
        HelperElfSymbol sym[ELEMENTSOF(names)];
        int r = helper_client_elf_symbols(py->helper, c->fd, c->start, c->pgoff, names, ELEMENTSOF(names), sym,
                                          ret_why);
        if (r < 0)
                return r;
        if (!sym[0].found || !sym[1].found || sym[1].size == 0)
                return -ENOENT;
        /* the process may have exec'd or exited while the helper looked */
        PyProcess *p = python_find_generation(py, pid, generation);
        if (!p)
                return -ESRCH;
        if (p->mem_fd < 0) {
                r = python_open_memory(py, p);
                if (r < 0)
                        return r;
        }
        uint32_t version = PY_VERSION(3, c->minor);
        if (sym[2].found && (sym[2].size == 4 || sym[2].size == 8)) {
                uint64_t v = 0;
                uint32_t v32 = 0;
                r = sym[2].size == 8 ? python_read(p, sym[2].address, &v, 8) : python_read(p, sym[2].address, &v32, 4);
                if (r < 0)
                        return r;
                if (sym[2].size == 4)
                        v = v32;
                if (v > UINT32_MAX || PY_VERSION_MAJOR(v) != 3 || PY_VERSION_MINOR(v) != c->minor)
                        return why_setf(ret_why, -EBADMSG, "Py_Version 0x%llx is not the 3.%u its file names",
                                        (unsigned long long) v, c->minor);
                version = (uint32_t) v;
        }
        PyLayout layout;
        r = py_layout_load(python_read, p, sym[0].address, version, PYTHON_MACHINE, &layout, ret_why);
        if (r < 0)
                return r;
        r = py_reader_new(&layout, python_read, p, &p->reader);
        if (r < 0)
                return r;
        p->runtime = sym[0].address;
        p->eval_start = sym[1].address;
        p->eval_end = sym[1].address + sym[1].size;
        p->version = version;
        p->state = PY_STATE_READY;
        py->located++;
        python_drain_often(py);
        log_recording(LOG_INFO, py->rec->id, "process %d: CPython %u.%u, _PyRuntime at 0x%llx", (int) p->pid,
                      PY_VERSION_MAJOR(version), PY_VERSION_MINOR(version), (unsigned long long) p->runtime);
        return 0;
}

static int python_on_drain_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Python *py = userdata;
        if (py->rec->state != RECORDING_STATE_RECORDING)
                return 0;
        recording_drain(py->rec, false);
        int r = sd_event_source_set_time_relative(s, PYTHON_DRAIN_USEC);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static void python_drain_often(Python *py) {
        if (py->drain_timer)
                return;
        int r = sd_event_add_time_relative(py->rec->event, &py->drain_timer, CLOCK_MONOTONIC, PYTHON_DRAIN_USEC, 500,
                                           python_on_drain_timer, py);
        if (r < 0)
                log_recording_errno(LOG_INFO, py->rec->id, r,
                                    "Python frames are read at the 100 ms drains only: no timer: %m");
}

/* ---- locating interpreters, on a fiber ---- */

static int python_wait_readable(int fd, unsigned timeout_ms, void *userdata) {
        Python *py = userdata;
        return fiber_wait_readable(fd, timeout_ms, py->fiber);
}

static void python_yield(void *userdata) {
        Python *py = userdata;
        if (py->fiber)
                (void) fiber_yield(py->fiber);
}

static PyProcess *python_next_waiting(Python *py) {
        for (size_t i = 0; i < py->n_processes; i++) {
                PyProcess *p = py->processes[i];
                if (p->state == PY_STATE_WAITING && p->next_candidate < p->n_candidates)
                        return p;
        }
        return NULL;
}

static int python_on_fiber(Fiber *f, void *userdata) {
        Python *py = userdata;
        Recording *rec = py->rec;
        if (!py->helper) {
                HelperClientConfig c = rec->helper;
                c.time_budget_ms = 0;
                c.timeout_ms = 5000;
                c.wait_readable = python_wait_readable;
                c.wait_readable_userdata = py;
                c.yield = python_yield;
                int r = helper_client_new(&c, &py->helper);
                if (r < 0) {
                        py->helper = NULL;
                        return r;
                }
        }
        PyProcess *p;
        while (!rec->error && (p = python_next_waiting(py))) {
                const PyCandidate c = p->candidates[p->next_candidate++];
                pid_t pid = p->pid;
                uint64_t generation = p->generation;
                _cleanup_free_ char *why = NULL;
                int r = python_locate(py, pid, generation, &c, &why);
                if (r == -ECANCELED)
                        return r;
                p = python_find_generation(py, pid, generation); /* gone meanwhile (an exec, an exit)? */
                if (r < 0 && p && r != -ENOENT) {
                        if (why)
                                log_recording(LOG_INFO, rec->id, "process %d: no Python frames: %s", (int) pid, why);
                        else
                                log_recording_errno(LOG_INFO, rec->id, r, "process %d: no Python frames: %m",
                                                    (int) pid);
                        p->state = PY_STATE_NONE;
                } else if (r < 0 && p && p->next_candidate >= p->n_candidates)
                        p->state = PY_STATE_NONE;
                if (fiber_yield(f) == -ECANCELED)
                        return -ECANCELED;
        }
        return 0;
}

static void python_fiber_done(int result, void *userdata) {
        Python *py = userdata;
        py->fiber = NULL;
        if (result < 0 && result != -ECANCELED)
                log_recording_errno(LOG_INFO, py->rec->id, result, "locating Python interpreters failed: %m");
        else if (result == 0 && python_next_waiting(py))
                python_fiber_start(py); /* candidates seen meanwhile */
}

static void python_fiber_start(Python *py) {
        Recording *rec = py->rec;
        if (py->fiber || rec->error || rec->state != RECORDING_STATE_RECORDING || !python_next_waiting(py))
                return;
        int r = fiber_start(rec->event, "locating Python interpreters", python_on_fiber, python_fiber_done, py,
                            &py->fiber);
        if (r < 0)
                log_recording_errno(LOG_INFO, rec->id, r, "cannot locate Python interpreters: %m");
}

/* ---- per sample ---- */

/* The address of (code, line) in p, named by a JITMAP frame the first
 * time. */
static int python_symbol(Python *py, PyProcess *p, const PyFrame *f, int64_t time, uint64_t *ret) {
        if (p->symbols_size == 0 || (p->n_symbols + 1) * 2 > p->symbols_size) {
                if (p->n_symbols < PYTHON_MAX_SYMBOLS) {
                        size_t size = p->symbols_size ? p->symbols_size * 2 : 256;
                        PySymbol *s = calloc(size, sizeof *s);
                        if (!s)
                                return -ENOMEM;
                        for (size_t i = 0; i < p->symbols_size; i++)
                                if (p->symbols[i].code) {
                                        size_t h = (p->symbols[i].code * 31 + (size_t) p->symbols[i].line) & (size - 1);
                                        while (s[h].code)
                                                h = (h + 1) & (size - 1);
                                        s[h] = p->symbols[i];
                                }
                        free(p->symbols);
                        p->symbols = s;
                        p->symbols_size = size;
                }
        }
        uint64_t code = f->code ? f->code : 1;
        size_t h = (code * 31 + (size_t) f->line) & (p->symbols_size - 1);
        for (; p->symbols[h].code; h = (h + 1) & (p->symbols_size - 1))
                if (p->symbols[h].code == code && p->symbols[h].line == f->line) {
                        *ret = PYTHON_ADDRESS(p->symbols[h].id);
                        return 0;
                }

        char name[PYTHON_MAX_NAME];
        uint32_t id;
        if (p->n_symbols >= PYTHON_MAX_SYMBOLS || (p->n_symbols + 1) * 2 > p->symbols_size) {
                id = PYTHON_MAX_SYMBOLS; /* the rest */
                *ret = PYTHON_ADDRESS(id);
                if (p->overflow_named)
                        return 0;
                snprintf(name, sizeof name, "py::[more than %u Python lines]", PYTHON_MAX_SYMBOLS);
                p->overflow_named = true;
        } else {
                id = (uint32_t) p->n_symbols++;
                p->symbols[h] = (PySymbol){ code, f->line, id };
                if (f->line > 0)
                        snprintf(name, sizeof name, "py::%s (%s:%d)", f->name, f->filename, f->line);
                else
                        snprintf(name, sizeof name, "py::%s (%s)", f->name, f->filename);
        }
        CaptureJitmapEntry e = { PYTHON_ADDRESS(id), name };
        *ret = e.address;
        return capture_writer_add_jitmap(py->rec->writer, time, -1, (int32_t) p->pid, &e, 1);
}

/* The thread state of tid: 1 and *ret, 0 when it has none (listed
 * lately), or a negative errno of the listing and its reason. */
static int python_thread(PyProcess *p, pid_t tid, const PyThread **ret, char **ret_why) {
        int64_t now = now_monotonic_ms();
        if (p->threads_ms != 0 && now - p->threads_ms < PYTHON_THREADS_MAX_AGE_MS)
                for (size_t i = 0; i < p->n_threads; i++)
                        if (p->threads[i].native_thread_id == (uint64_t) tid) {
                                *ret = &p->threads[i];
                                return 1;
                        }
        if (p->threads_ms != 0 && now - p->threads_ms < PYTHON_THREADS_REFRESH_MS)
                return 0;
        p->threads_ms = now;
        if (!p->threads) {
                p->threads = calloc(PYTHON_MAX_THREADS, sizeof *p->threads);
                if (!p->threads)
                        return -ENOMEM;
        }
        int n = py_reader_threads(p->reader, p->runtime, p->threads, PYTHON_MAX_THREADS, ret_why);
        p->n_threads = n > 0 ? (size_t) n : 0;
        if (n < 0)
                return n;
        for (size_t i = 0; i < p->n_threads; i++)
                if (p->threads[i].native_thread_id == (uint64_t) tid) {
                        *ret = &p->threads[i];
                        return 1;
                }
        return 0;
}

/* The thread's chain into py->frames. The thread runs on while it is read:
 * a walk whose thread has another current frame after it may have read
 * frames of calls that returned meanwhile (a caller's slot taken by the
 * next call), so it is read once more, and then taken as empty
 * (-EAGAIN) if it changed again. */
static int python_walk(Python *py, PyProcess *p, const PyThread *t, uint64_t *frame, size_t *n_frames, char **ret_why) {
        for (unsigned attempt = 0; attempt < 2; attempt++) {
                uint64_t after = 0;
                *n_frames = 0;
                int r = py_reader_current_frame(p->reader, t->tstate, frame, ret_why);
                if (r < 0 || *frame == 0)
                        return r;
                r = py_reader_walk(p->reader, *frame, py->frames, PY_FRAMES_MAX, n_frames, ret_why);
                if (r < 0)
                        return r;
                r = py_reader_current_frame(p->reader, t->tstate, &after, ret_why);
                if (r < 0)
                        return r;
                if (after == *frame)
                        return 0;
        }
        *n_frames = 0;
        return -EAGAIN;
}

static bool in_eval(const PyProcess *p, uint64_t a, bool return_address) {
        if (return_address) /* a call's return address may be one past its function */
                return a > p->eval_start && a <= p->eval_end;
        return a >= p->eval_start && a < p->eval_end;
}

static void python_read_failed(Python *py, PyProcess *p, int r, const char *why) {
        py->read_failures++;
        p->read_failures++;
        if (!p->told && why)
                log_recording(LOG_INFO, py->rec->id, "process %d: Python frames not read: %s", (int) p->pid, why);
        else if (!p->told)
                log_recording_errno(LOG_INFO, py->rec->id, r, "process %d: Python frames not read: %m", (int) p->pid);
        p->told = true;
}

static int python_sample(void *part, Recording *rec, const PerfSample *s, const uint64_t **addrs, size_t *n) {
        Python *py = part;
        PyProcess *p = python_find(py, (pid_t) s->pid);
        if (!p || p->state != PY_STATE_READY)
                return 0;
        const uint64_t *a = *addrs;
        size_t n_in = *n, evals = 0;
        bool user = false;
        for (size_t i = 0, depth = 0; i < n_in; i++) {
                if (capture_address_is_context(a[i])) {
                        user = a[i] == CAPTURE_CONTEXT_USER;
                        depth = 0;
                        continue;
                }
                if (user && in_eval(p, a[i], depth++ > 0))
                        evals++;
        }
        if (evals == 0)
                return 0; /* no Python on this stack */

        /* The chain is read now, not at the sample: a sample drained this
         * late (its process's first, waiting for unwind tables; a busy
         * daemon) would be given the frames of a later moment. A thread
         * off the CPU kept its frames until its wait ended. */
        int64_t delay = now_monotonic_ns() - (int64_t) (s->time + s->off_cpu_ns);
        if (delay > 0) {
                py->n_delays++;
                py->delay_sum_ns += (uint64_t) delay;
                if ((uint64_t) delay > py->delay_max_ns)
                        py->delay_max_ns = (uint64_t) delay;
        }
        if (delay > PYTHON_MAX_DELAY_NS) {
                py->late++;
                return 0;
        }

        _cleanup_free_ char *why = NULL;
        const PyThread *t = NULL;
        uint64_t frame = 0;
        size_t n_frames = 0;
        int64_t begin = now_monotonic_ns();
        int r = python_thread(p, (pid_t) s->tid, &t, &why);
        if (r > 0)
                r = python_walk(py, p, t, &frame, &n_frames, &why);
        py->read_ns += (uint64_t) (now_monotonic_ns() - begin);
        if (r == -ENOMEM)
                return r;
        if (r == -EAGAIN) {
                py->unmatched++; /* the chain changed under both reads */
                return 0;
        }
        if (r == -ESRCH) {
                /* it exited before its samples were drained: nothing to read any more */
                py->after_exit++;
                p->state = PY_STATE_NONE;
                return 0;
        }
        if (r < 0) {
                python_read_failed(py, p, r, why);
                return 0;
        }
        if (n_frames == 0)
                return 0;

        /* The groups of frames, one per eval call, newest first. */
        size_t groups = 0;
        for (size_t i = 0; i < n_frames; i++)
                if (py->frames[i].entry || i == n_frames - 1)
                        groups++;
        /* Each eval call of the stack began with an entry frame: fewer entry
         * frames than calls is a chain read after the stack changed (it is
         * read when the sample is drained, not at its instant), and its
         * frames would name calls that are not these; more is a native stack
         * cut short by its unwinding, whose innermost calls are matched. */
        if (groups < evals) {
                py->unmatched++;
                return 0;
        }

        size_t out = 0, next = 0, eval = 0;
        user = false;
        for (size_t i = 0, depth = 0; i < n_in; i++) {
                bool is_eval = false;
                if (capture_address_is_context(a[i])) {
                        user = a[i] == CAPTURE_CONTEXT_USER;
                        depth = 0;
                } else if (user)
                        is_eval = in_eval(p, a[i], depth++ > 0);
                if (!is_eval || next >= n_frames) {
                        if (out >= PYTHON_MAX_STACK)
                                break;
                        py->stack[out++] = a[i];
                        continue;
                }
                /* this call's frames, up to its entry frame; the outermost
                 * eval call of the stack takes the rest */
                bool last = ++eval == evals;
                for (; next < n_frames && out < PYTHON_MAX_STACK; next++) {
                        uint64_t sym;
                        r = python_symbol(py, p, &py->frames[next], (int64_t) s->time, &sym);
                        if (r < 0)
                                return r;
                        py->stack[out++] = sym;
                        py->python_frames++;
                        if (py->frames[next].entry && !last) {
                                next++;
                                break;
                        }
                }
        }
        py->samples++;
        *addrs = py->stack;
        *n = out;
        return 0;
}

/* ---- the part's hooks ---- */

static int python_start(void *part, Recording *rec, PerfEventsConfig *cfg, const char **ret_name, char **ret_why) {
        Python *py = part;
        /* only the processes the recording follows: not --system */
        if (!rec->options.python_frames || rec->options.system || PYTHON_MACHINE == EM_NONE)
                return 0;
        py->rec = rec;
        return 1;
}

/* the snapshot's processes */
static int python_begin(void *part, Recording *rec, const char **ret_name, char **ret_why) {
        Python *py = part;
        size_t n = 0;
        const int32_t *pids = process_maps_get_pids(rec->maps, &n);
        for (size_t i = 0; pids && i < n; i++)
                python_consider_process(py, (pid_t) pids[i]);
        return 0;
}

static int python_mmap2(void *part, Recording *rec, const PerfMmap2 *m) {
        Python *py = part;
        if (!interpreter_minor(m->filename))
                return 0;
        return python_consider(py, (pid_t) m->pid, process_maps_lookup(rec->maps, (int32_t) m->pid, m->addr));
}

/* a new program: what the old one was is forgotten */
static int python_comm(void *part, Recording *rec, const PerfComm *c) {
        if (c->exec && c->pid == c->tid)
                python_forget(part, (pid_t) c->pid);
        return 0;
}

static int python_task(void *part, Recording *rec, const PerfTask *t, bool fork) {
        Python *py = part;
        if (fork && t->pid != t->ppid) {
                /* a fork maps what its parent did: looked at once its maps are copied */
                const PyProcess *parent = python_find(py, (pid_t) t->ppid);
                if (parent && parent->n_candidates > 0 && py->n_forks < PYTHON_MAX_FORKS)
                        py->forks[py->n_forks++] = (pid_t) t->pid;
        } else if (!fork && t->pid == t->tid)
                python_forget(py, (pid_t) t->pid);
        return 0;
}

static void python_drain(void *part, Recording *rec, bool last) {
        Python *py = part;
        for (size_t i = 0; i < py->n_forks; i++)
                python_consider_process(py, py->forks[i]);
        py->n_forks = 0;
}

static void python_stop(void *part, Recording *rec) {
        Python *py = part;
        py->drain_timer = sd_event_source_disable_unref(py->drain_timer);
}

static void python_close(void *part, Recording *rec) {
        Python *py = part;
        python_stop(part, rec);
        if (py->fiber)
                fiber_cancel(py->fiber);
        py->helper = helper_client_free(py->helper);
}

static void python_write_stats(void *part, Recording *rec, CaptureStatsBuffer *out) {
        Python *py = part;
        (void) capture_stats_add_u64(out, CAPTURE_STAT_PYTHON_PROCESSES, py->located);
        (void) capture_stats_add_u64(out, CAPTURE_STAT_PYTHON_SAMPLES, py->samples);
        (void) capture_stats_add_u64(out, CAPTURE_STAT_PYTHON_FRAMES, py->python_frames);
        (void) capture_stats_add_u64(out, CAPTURE_STAT_PYTHON_READ_FAILURES, py->read_failures);
        (void) capture_stats_add_u64(out, CAPTURE_STAT_PYTHON_UNMATCHED, py->unmatched);
        (void) capture_stats_add_u64(out, CAPTURE_STAT_PYTHON_AFTER_EXIT, py->after_exit);
        (void) capture_stats_add_u64(out, CAPTURE_STAT_PYTHON_LATE, py->late);
        (void) capture_stats_add_u64(out, CAPTURE_STAT_PYTHON_READ_NS, py->read_ns);
        (void) capture_stats_add_u64(out, CAPTURE_STAT_PYTHON_DELAY_MEAN_NS,
                                     py->n_delays ? py->delay_sum_ns / py->n_delays : 0);
        (void) capture_stats_add_u64(out, CAPTURE_STAT_PYTHON_DELAY_MAX_NS, py->delay_max_ns);
}

static void python_get_stats(const void *part, const Recording *rec, RecordingStats *ret) {
        const Python *py = part;
        ret->python_processes = py->located;
        ret->python_samples = py->samples;
        ret->python_read_failures = py->read_failures;
}

static void python_free(void *part, Recording *rec) {
        Python *py = part;
        python_close(part, rec);
        for (size_t i = 0; i < py->n_processes; i++)
                py_process_free(py->processes[i]);
        free(py->processes);
        py->processes = NULL;
        py->n_processes = 0;
}

const RecordingPartVTable recording_part_python = {
        .name = "python",
        .size = sizeof(Python),
        .start = python_start,
        .begin = python_begin,
        .mmap2 = python_mmap2,
        .comm = python_comm,
        .task = python_task,
        .sample = python_sample,
        .drain = python_drain,
        .stop = python_stop,
        .close = python_close,
        .write_stats = python_write_stats,
        .get_stats = python_get_stats,
        .free = python_free,
};
