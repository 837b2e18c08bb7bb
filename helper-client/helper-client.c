/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helper-client.c: launches periscope-helper under bwrap and talks to it.
 * Every reply is validated before anything of it is used; on any failure the
 * helper is killed and the caller gets HELPER_CLIENT_FAILED with a reason. */
#include "helper-client.h"
#include "helper-client-internal.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "basic.h"
#include "protocol.h"
#include "sandbox-launch.h"
#include "sandbox-seccomp.h"

#define CLIENT_BATCH 256u

struct HelperClient {
        HelperClientConfig config;
        char *helper_path;
        pid_t pid;   /* bwrap, or 0 */
        int sock;    /* our end, or -1 */
        uint32_t next_id;
        unsigned starts;
        uint64_t busy_ms;    /* spent waiting for answers, against config.time_budget_ms */
        bool budget_spent;
        bool cancelled;      /* wait_readable said -ECANCELED: no more requests */
};

static void config_defaults(HelperClientConfig *c) {
        if (!c->bwrap_path)
                c->bwrap_path = "/usr/bin/bwrap";
        if (c->memory_limit == 0)
                c->memory_limit = 2ull << 30;
        if (c->cpu_seconds == 0)
                c->cpu_seconds = 60;
        if (c->max_files == 0)
                c->max_files = 64;
        if (c->timeout_ms == 0)
                c->timeout_ms = 10000;
}

static char *resolve_helper_path(const HelperClientConfig *c) {
        return sandbox_program_path(c->helper_path, "PERISCOPE_HELPER", "sandbox-helper/periscope-helper",
                                    PERISCOPE_LIBEXECDIR "/periscope-helper");
}

int helper_client_new(const HelperClientConfig *config, HelperClient **ret) {
        _cleanup_free_ HelperClient *c = calloc(1, sizeof *c);
        if (!c)
                return -ENOMEM;
        if (config)
                c->config = *config;
        config_defaults(&c->config);
        c->helper_path = resolve_helper_path(&c->config);
        if (!c->helper_path)
                return -errno;
        c->config.helper_path = c->helper_path;
        c->sock = -1;
        c->next_id = 1;
        *ret = TAKE_PTR(c);
        return 0;
}

/* bwrap command line: the common sandbox (sandbox-launch.h), uid 65534
 * inside (the host's is the launch's: HELPER_CLIENT_USER when the client is
 * root), the helper binary read-only from the fd at 4 (the helper's uid need
 * not reach the folder it lies in), nothing else. */
static int build_argv(const SandboxLaunch *l, const HelperClientConfig *cfg, char *const *helper_args,
                      SandboxArgvStrings *strings, char ***ret) {
        size_t n_args = 0;
        while (helper_args[n_args])
                n_args++;
        size_t max = SANDBOX_ARGV_HEAD_MAX + 24 + n_args + 1;
        _cleanup_free_ char **argv = calloc(max, sizeof(char *));
        if (!argv)
                return -ENOMEM;
        size_t i = sandbox_argv_head(l, argv, strings);
        argv[i++] = "--uid";
        argv[i++] = "65534";
        argv[i++] = "--gid";
        argv[i++] = "65534";
        argv[i++] = "--ro-bind-fd";
        argv[i++] = "4";
        argv[i++] = "/run/periscope-helper";
        argv[i++] = "--remount-ro";
        argv[i++] = "/";
        argv[i++] = "--chdir";
        argv[i++] = "/";
        argv[i++] = "--";
        argv[i++] = "/run/periscope-helper";
        for (size_t k = 0; k < n_args; k++)
                argv[i++] = helper_args[k];
        argv[i] = NULL;
        *ret = TAKE_PTR(argv);
        return 0;
}

/* Starts the helper with child_sock at fd 3 (-1: /dev/null there), its
 * output to out_fd (-1: /dev/null) and its stderr to err_fd (-1: ours). */
static int spawn(const HelperClientConfig *cfg, char *const *helper_args, int child_sock, int out_fd, int err_fd,
                 pid_t *ret) {
        _cleanup_close_ int binary = open(cfg->helper_path, O_PATH | O_CLOEXEC);
        if (binary < 0)
                return -errno;
        int fds[2] = { child_sock, binary };
        uid_t uid;
        gid_t gid;
        sandbox_user(HELPER_CLIENT_USER, HELPER_CLIENT_FALLBACK_ID, &uid, &gid);
        const SandboxLaunch l = {
                .bwrap_path = cfg->bwrap_path,
                .seccomp = SANDBOX_SECCOMP_PARSER,
                .fds = fds,
                .n_fds = ELEMENTSOF(fds),
                .stdout_fd = out_fd,
                .stderr_fd = err_fd,
                .uid = uid,
                .gid = gid,
                .memory_limit = cfg->memory_limit,
                .cpu_seconds = cfg->cpu_seconds,
                .max_files = cfg->max_files,
                .max_processes = SANDBOX_MAX_PROCESSES,
        };
        _cleanup_free_ char **argv = NULL;
        SandboxArgvStrings strings;
        int r = build_argv(&l, cfg, helper_args, &strings, &argv);
        if (r < 0)
                return r;
        return sandbox_spawn(&l, argv, ret);
}

static char *describe_exit(int status) {
        if (WIFSIGNALED(status))
                return strdup_printf("crashed (signal %d, %s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
        if (WIFEXITED(status) && WEXITSTATUS(status) == SANDBOX_EXIT_NO_UID && geteuid() == 0)
                return strdup_printf(
                        "could not take its unprivileged uid (user %s, else %u): needs CAP_SETUID and CAP_SETGID",
                        HELPER_CLIENT_USER, (unsigned) HELPER_CLIENT_FALLBACK_ID);
        /* bwrap reports a child killed by signal N as exit status 128+N */
        if (WIFEXITED(status) && WEXITSTATUS(status) > 128 && WEXITSTATUS(status) < 128 + 65)
                return strdup_printf("crashed (signal %d, %s)", WEXITSTATUS(status) - 128,
                                     strsignal(WEXITSTATUS(status) - 128));
        if (WIFEXITED(status))
                return strdup_printf("exited with status %d", WEXITSTATUS(status));
        return strdup("ended");
}

/* SIGKILL to the helper. It runs as its own unprivileged uid, which a
 * daemon without CAP_KILL may signal only with that effective uid: taken
 * for the call alone (the real uid stays root's, so it is given back). Else
 * the wait below would last until the helper ends its request by itself
 * (seconds on a large hostile file, the event loop stalled meanwhile). */
static void kill_helper(pid_t pid) {
        if (kill(pid, SIGKILL) == 0 || errno != EPERM)
                return;
        uid_t uid, euid = geteuid();
        gid_t gid;
        sandbox_user(HELPER_CLIENT_USER, HELPER_CLIENT_FALLBACK_ID, &uid, &gid);
        if (uid == (uid_t) -1 || euid != 0 || getuid() != 0 || setresuid((uid_t) -1, uid, (uid_t) -1) < 0)
                return;
        (void) kill(pid, SIGKILL);
        if (setresuid((uid_t) -1, euid, (uid_t) -1) < 0)
                abort(); /* never: the real uid is root's */
}

static void stop_helper(HelperClient *c) {
        c->sock = safe_close(c->sock);
        if (c->pid > 0) {
                kill_helper(c->pid);
                while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
        c->pid = 0;
}

HelperClient *helper_client_free(HelperClient *c) {
        if (!c)
                return NULL;
        stop_helper(c);
        free(c->helper_path);
        free(c);
        return NULL;
}

unsigned helper_client_get_starts(const HelperClient *c) {
        return c->starts;
}

uint64_t helper_client_get_busy_ms(const HelperClient *c) {
        return c->busy_ms;
}

bool helper_client_budget_spent(const HelperClient *c) {
        return c->budget_spent;
}

const HelperClientConfig *helper_client_get_config(const HelperClient *c) {
        return &c->config;
}

int helper_client_get_pid(const HelperClient *c) {
        return c->pid;
}

static int start_helper(HelperClient *c) {
        if (c->pid > 0)
                return 0;
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        char *args[] = { "--fd", "3", NULL };
        /* its stderr: a pipe the sink reads */
        int err[2] = { -1, -1 };
        int r = c->config.stderr_sink ? sandbox_stderr_pipe(err) : 0;
        pid_t pid;
        if (r >= 0)
                r = spawn(&c->config, args, sv[1], -1, err[1], &pid);
        safe_close(sv[1]);
        safe_close(err[1]);
        if (r < 0) {
                safe_close(err[0]);
                safe_close(sv[0]);
                return r;
        }
        if (err[0] >= 0)
                c->config.stderr_sink(err[0], pid, c->config.owner, HELPER_CLIENT_LOG_IDENTIFIER,
                                      c->config.stderr_sink_userdata);
        c->sock = sv[0];
        c->pid = pid;
        c->starts++;
        return 0;
}

static int64_t now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Marks the helper failed: kill it, say why. */
static int helper_failed(HelperClient *c, char **ret_why, char *reason) {
        int status = 0;
        bool exited = false;
        if (c->pid > 0 && !reason) {
                /* it went away on its own: collect how (it is dying already) */
                c->sock = safe_close(c->sock);
                for (int i = 0; i < 200; i++) {
                        pid_t p = waitpid(c->pid, &status, WNOHANG);
                        if (p == c->pid) {
                                exited = true;
                                break;
                        }
                        usleep(5000);
                }
                if (exited) {
                        c->pid = 0;
                        reason = describe_exit(status);
                } else
                        reason = strdup("closed its socket");
        }
        stop_helper(c);
        why_set(ret_why, strdup_printf("helper failed: %s", reason ? reason : "out of memory"));
        free(reason);
        return HELPER_CLIENT_FAILED;
}

/* Waits for the helper's socket to become readable within left ms: 1
 * readable, 0 timed out, < 0 failed (-ECANCELED: the caller gave up). */
static int wait_answer(HelperClient *c, int64_t left) {
        if (c->config.wait_readable)
                return c->config.wait_readable(c->sock, (unsigned) left, c->config.wait_readable_userdata);
        if (c->config.wait_hook && left > HELPER_CLIENT_WAIT_HOOK_MS)
                left = HELPER_CLIENT_WAIT_HOOK_MS;
        struct pollfd p = { .fd = c->sock, .events = POLLIN };
        int r = poll(&p, 1, (int) left);
        if (r < 0)
                return errno == EINTR ? 0 : -errno;
        if (r == 0 && c->config.wait_hook)
                c->config.wait_hook(c->config.wait_hook_userdata);
        /* POLLHUP/POLLERR: the receive below says how it ended */
        return r > 0;
}

/* Waits for the answer to request id: the helper's time for it counts
 * against the client's budget. */
static int receive_answer(HelperClient *c, uint16_t type, uint32_t id, HelperMessage *reply, char **ret_why) {
        int64_t start = now_ms(), deadline = start + c->config.timeout_ms;
        uint64_t busy_before = c->busy_ms, budget = c->config.time_budget_ms;
        bool budget_bound = budget > 0 && (budget <= busy_before || budget - busy_before < c->config.timeout_ms);
        if (budget_bound)
                deadline = start + (int64_t) (budget > busy_before ? budget - busy_before : 0);
        for (;;) {
                int64_t now = now_ms(), left = deadline - now;
                c->busy_ms = busy_before + (uint64_t) (now - start);
                if (left <= 0 && budget_bound) {
                        c->budget_spent = true;
                        return helper_failed(c, ret_why,
                                             strdup_printf("the recording's time budget of %u ms is spent",
                                                           c->config.time_budget_ms));
                }
                if (left <= 0)
                        return helper_failed(c, ret_why, strdup_printf("timed out after %u ms", c->config.timeout_ms));
                int r = wait_answer(c, left);
                if (r == -ECANCELED) {
                        c->cancelled = true;
                        return helper_failed(c, ret_why, strdup("cancelled (the recording was discarded)"));
                }
                if (r < 0)
                        return helper_failed(c, ret_why, strdup_printf("waiting for an answer: %s", strerror(-r)));
                if (r == 0)
                        continue;
                c->busy_ms = busy_before + (uint64_t) (now_ms() - start);
                HelperMessage m;
                r = helper_receive_message(c->sock, 0, &m);
                if (r == -ECONNRESET)
                        return helper_failed(c, ret_why, NULL);
                if (r < 0)
                        return helper_failed(c, ret_why, strdup_printf("invalid answer (%s)", strerror(-r)));
                if (m.header.request_id != id ||
                    (m.header.type != (type | HELPER_MSG_REPLY) && m.header.type != HELPER_MSG_ERROR)) {
                        helper_message_clear(&m);
                        return helper_failed(c, ret_why, strdup("invalid answer (wrong id or type)"));
                }
                *reply = m;
                return 0;
        }
}

/* One request/reply round trip. *reply is the validated header + payload. */
static int transact(HelperClient *c, uint16_t type, const HelperWriter *req, const int *fds, size_t n_fds,
                    HelperMessage *reply, char **ret_why) {
        if (c->cancelled) {
                why_set(ret_why, strdup("helper failed: cancelled (the recording was discarded)"));
                return HELPER_CLIENT_FAILED;
        }
        if (c->budget_spent) {
                why_set(ret_why, strdup_printf("helper failed: the recording's time budget of %u ms is spent",
                                               c->config.time_budget_ms));
                return HELPER_CLIENT_FAILED;
        }
        int r = start_helper(c);
        if (r < 0) {
                why_set(ret_why,
                        strdup_printf("helper failed: cannot start %s: %s", c->config.bwrap_path, strerror(-r)));
                return HELPER_CLIENT_FAILED;
        }
        uint32_t id = c->next_id++;
        r = helper_send_message(c->sock, type, id, req->data, req->size, fds, n_fds);
        if (r < 0)
                return helper_failed(c, ret_why, NULL);
        return receive_answer(c, type, id, reply, ret_why);
}

/* An ERROR reply: the helper's verdict on this file; it stays up. */
static int decode_error_reply(HelperClient *c, HelperMessage *m, char **ret_why) {
        HelperReader rd;
        helper_reader_init(&rd, m->payload, m->payload_size);
        int32_t error = (int32_t) helper_get_u32(&rd);
        _cleanup_free_ char *msg = helper_get_string(&rd, HELPER_MAX_ERROR_MESSAGE, true);
        if (!helper_reader_finished(&rd) || error >= 0 || error < -4095)
                return helper_failed(c, ret_why, strdup("invalid answer (malformed error)"));
        why_set(ret_why, TAKE_PTR(msg));
        return error;
}

/* Sends one request built in *req (then released) and waits for its answer:
 * 0 with *reply holding a non-error answer, or negative with *ret_why set (an
 * encoding failure, a failed helper, or the helper's own error reply). */
static int request(HelperClient *c, uint16_t type, HelperWriter *req, const int *fds, size_t n_fds,
                   HelperMessage *reply, char **ret_why) {
        int r = req->failed ? -ENOMEM : transact(c, type, req, fds, n_fds, reply, ret_why);
        helper_writer_done(req);
        if (r < 0)
                return r;
        if (reply->header.type == HELPER_MSG_ERROR) {
                r = decode_error_reply(c, reply, ret_why);
                helper_message_clear(reply);
                return r;
        }
        return 0;
}

int helper_client_request(HelperClient *c, uint16_t type, HelperWriter *req, const int *fds, size_t n_fds,
                          HelperMessage *reply, char **ret_why) {
        return request(c, type, req, fds, n_fds, reply, ret_why);
}

int helper_client_fail(HelperClient *c, char **ret_why, char *reason) {
        return helper_failed(c, ret_why, reason);
}

static int check_regular(int fd) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        return S_ISREG(st.st_mode) ? 0 : -EBADF;
}

bool helper_identify_reply_decode(const uint8_t *payload, size_t size, uint32_t flags, HelperIdentity *ret) {
        HelperReader rd;
        helper_reader_init(&rd, payload, size);
        HelperIdentity id = {};
        id.elf_class = helper_get_u8(&rd);
        id.elf_data = helper_get_u8(&rd);
        id.elf_type = helper_get_u16(&rd);
        id.elf_machine = helper_get_u16(&rd);
        uint16_t reserved = helper_get_u16(&rd);
        id.contents = helper_get_u32(&rd);
        id.debuglink_crc = helper_get_u32(&rd);
        id.file_crc = helper_get_u32(&rd);
        id.build_id_size = helper_get_u32(&rd);
        bool ok = !rd.failed && reserved == 0 && id.build_id_size <= HELPER_MAX_BUILD_ID &&
                  (id.contents & ~(uint32_t) 0x1ff) == 0 &&
                  !!(id.contents & HELPER_HAS_BUILD_ID) == (id.build_id_size > 0);
        if (ok)
                helper_get_bytes(&rd, id.build_id, id.build_id_size);
        _cleanup_free_ char *link = ok ? helper_get_string(&rd, HELPER_MAX_DEBUGLINK, true) : NULL;
        ok = ok && link && helper_reader_finished(&rd) && !strchr(link, '/') &&
             !!(id.contents & HELPER_HAS_DEBUGLINK) == (*link != '\0') &&
             (!(flags & HELPER_IDENTIFY_WANT_FILE_CRC) || (id.contents & HELPER_HAS_FILE_CRC));
        if (!ok)
                return false;
        strcpy(id.debuglink, link);
        *ret = id;
        return true;
}

int helper_client_identify(HelperClient *c, int fd, uint32_t flags, HelperIdentity *ret, char **ret_why) {
        int r = check_regular(fd);
        if (r < 0) {
                why_set(ret_why, strdup("not a regular file"));
                return r;
        }
        HelperWriter w;
        helper_writer_init(&w, HELPER_MAX_INLINE_PAYLOAD);
        helper_put_u32(&w, flags);
        HelperMessage m = {};
        r = request(c, HELPER_MSG_IDENTIFY, &w, &fd, 1, &m, ret_why);
        if (r < 0)
                return r;
        bool ok = helper_identify_reply_decode(m.payload, m.payload_size, flags, ret);
        helper_message_clear(&m);
        if (!ok)
                return helper_failed(c, ret_why, strdup("invalid answer to IDENTIFY"));
        return 0;
}

HelperSymbols *helper_symbols_free(HelperSymbols *s) {
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n_addresses; i++) {
                for (size_t k = 0; k < s->addresses[i].n_frames; k++) {
                        free(s->addresses[i].frames[k].name);
                        free(s->addresses[i].frames[k].file);
                }
                free(s->addresses[i].frames);
        }
        free(s->addresses);
        free(s);
        return NULL;
}

static bool is_one_source_bit(uint8_t s) {
        return s == HELPER_SOURCE_SYMTAB || s == HELPER_SOURCE_DWARF || s == HELPER_SOURCE_DEBUG_FILE ||
               s == HELPER_SOURCE_MINIDEBUGINFO;
}

/* Validates and decodes one SYMBOLIZE reply into out[0..count). */
static bool decode_symbolize(HelperReader *rd, size_t count, uint32_t *sources, HelperAddressSymbols *out) {
        *sources |= helper_get_u32(rd);
        uint32_t n = helper_get_u32(rd);
        if (rd->failed || n != count || (*sources & ~(uint32_t) 0xf))
                return false;
        for (size_t i = 0; i < count; i++) {
                HelperAddressSymbols *a = &out[i];
                a->status = helper_get_u8(rd);
                uint8_t nf = helper_get_u8(rd);
                uint16_t reserved = helper_get_u16(rd);
                if (rd->failed || reserved != 0 || a->status >= _HELPER_ADDRESS_STATUS_MAX || nf > HELPER_MAX_FRAMES ||
                    (a->status == HELPER_ADDRESS_OK) != (nf > 0))
                        return false;
                if (nf == 0)
                        continue;
                a->frames = calloc(nf, sizeof(HelperFrame));
                if (!a->frames)
                        return false;
                for (size_t k = 0; k < nf; k++) {
                        HelperFrame *f = &a->frames[k];
                        a->n_frames = k + 1;
                        f->flags = helper_get_u8(rd);
                        f->source = helper_get_u8(rd);
                        reserved = helper_get_u16(rd);
                        f->line = helper_get_u32(rd);
                        f->column = helper_get_u32(rd);
                        f->offset = helper_get_u64(rd);
                        f->name = helper_get_string(rd, HELPER_MAX_NAME, true);
                        f->file = helper_get_string(rd, HELPER_MAX_PATH, true);
                        if (!f->name || !f->file || reserved != 0 || (f->flags & ~_HELPER_FRAME_FLAGS_ALL) ||
                            !is_one_source_bit(f->source) || !(*sources & f->source) || f->name[0] == '\0')
                                return false;
                        bool has_source = f->flags & HELPER_FRAME_HAS_SOURCE;
                        if (has_source != (f->file[0] != '\0' && f->line > 0))
                                return false;
                        if (!has_source) {
                                free(f->file);
                                f->file = NULL;
                        }
                }
        }
        return true;
}

int helper_client_compile_unwind(HelperClient *c, int fd, const void *image, size_t image_size, void **ret_blob,
                                 size_t *ret_size, char **ret_why) {
        bool from_image = fd < 0;
        int r;

        if (from_image ? !image || image_size == 0 || image_size > HELPER_MAX_UNWIND_IMAGE : image_size != 0) {
                why_set(ret_why, strdup("invalid ELF image"));
                return -EINVAL;
        }
        if (!from_image) {
                r = check_regular(fd);
                if (r < 0) {
                        why_set(ret_why, strdup("not a regular file"));
                        return r;
                }
        }
        HelperWriter w;
        helper_writer_init(&w, HELPER_MAX_PAYLOAD);
        helper_put_u32(&w, from_image ? HELPER_UNWIND_IMAGE : 0);
        helper_put_u32(&w, (uint32_t) image_size);
        if (from_image)
                helper_put_bytes(&w, image, image_size);
        HelperMessage m = {};
        r = request(c, HELPER_MSG_COMPILE_UNWIND, &w, from_image ? NULL : &fd, from_image ? 0 : 1, &m, ret_why);
        if (r < 0)
                return r;
        /* receiving a large table took a slice (node's 6 MB: 20 ms), and
         * so does copying it */
        if (c->config.yield)
                c->config.yield(c->config.wait_readable_userdata);
        HelperReader rd;
        helper_reader_init(&rd, m.payload, m.payload_size);
        (void) helper_get_u32(&rd); /* fdes_eh_frame: statistics only */
        (void) helper_get_u32(&rd); /* fdes_debug_frame */
        (void) helper_get_u32(&rd); /* rows_unsupported */
        uint32_t size = helper_get_u32(&rd);
        _cleanup_free_ void *blob = NULL;
        const char *reason = "truncated";
        bool ok = !rd.failed && size <= HELPER_MAX_UNWIND_TABLE && size == rd.size - rd.offset;
        if (ok) {
                blob = malloc(size ? size : 1);
                if (!blob) {
                        helper_message_clear(&m);
                        return -ENOMEM;
                }
                helper_get_bytes(&rd, blob, size);
                ok = helper_reader_finished(&rd) &&
                     unwind_table_validate_sliced(blob, size, NULL, &reason, c->config.yield,
                                                  c->config.wait_readable_userdata) == 0;
        }
        helper_message_clear(&m);
        if (!ok)
                return helper_failed(c, ret_why, strdup_printf("invalid answer to COMPILE_UNWIND: %s", reason));
        *ret_blob = TAKE_PTR(blob);
        *ret_size = size;
        return 0;
}

int helper_symbolize_reply_decode(const uint8_t *payload, size_t size, size_t count, HelperSymbols **ret) {
        if (count == 0 || count > HELPER_MAX_BATCH)
                return -EINVAL;
        _cleanup_(helper_symbols_freep) HelperSymbols *s = calloc(1, sizeof *s);
        if (!s || !(s->addresses = calloc(count, sizeof(HelperAddressSymbols))))
                return -ENOMEM;
        s->n_addresses = count;
        HelperReader rd;
        helper_reader_init(&rd, payload, size);
        if (!decode_symbolize(&rd, count, &s->sources, s->addresses) || !helper_reader_finished(&rd))
                return -EBADMSG;
        *ret = TAKE_PTR(s);
        return 0;
}

static int symbolize_with_flags(HelperClient *c, int fd, int debug_fd, uint32_t flags, const uint64_t *offsets,
                                size_t n, HelperSymbols **ret, char **ret_why) {
        int r = check_regular(fd);
        if (r == 0 && debug_fd >= 0)
                r = check_regular(debug_fd);
        if (r < 0) {
                why_set(ret_why, strdup("not a regular file"));
                return r;
        }
        _cleanup_(helper_symbols_freep) HelperSymbols *s = calloc(1, sizeof *s);
        if (!s || !(s->addresses = calloc(n ? n : 1, sizeof(HelperAddressSymbols))))
                return -ENOMEM;
        s->n_addresses = n;
        int fds[2] = { fd, debug_fd };
        for (size_t start = 0; start < n; start += CLIENT_BATCH) {
                size_t count = n - start < CLIENT_BATCH ? n - start : CLIENT_BATCH;
                HelperWriter w;
                helper_writer_init(&w, HELPER_MAX_INLINE_PAYLOAD);
                helper_put_u32(&w, flags | (debug_fd >= 0 ? HELPER_SYMBOLIZE_DEBUG_FD : 0));
                helper_put_u32(&w, (uint32_t) count);
                for (size_t i = 0; i < count; i++)
                        helper_put_u64(&w, offsets[start + i]);
                HelperMessage m = {};
                r = request(c, HELPER_MSG_SYMBOLIZE, &w, fds, debug_fd >= 0 ? 2 : 1, &m, ret_why);
                if (r < 0)
                        return r;
                HelperReader rd;
                helper_reader_init(&rd, m.payload, m.payload_size);
                bool ok = decode_symbolize(&rd, count, &s->sources, s->addresses + start) && helper_reader_finished(&rd);
                helper_message_clear(&m);
                if (!ok)
                        return helper_failed(c, ret_why, strdup("invalid answer to SYMBOLIZE"));
        }
        *ret = TAKE_PTR(s);
        return 0;
}

int helper_client_symbolize(HelperClient *c, int fd, int debug_fd, const uint64_t *offsets, size_t n,
                            HelperSymbols **ret, char **ret_why) {
        return symbolize_with_flags(c, fd, debug_fd, 0, offsets, n, ret, ret_why);
}

int helper_client_symbolize_segment(HelperClient *c, int debug_fd, const uint64_t *offsets, size_t n,
                                    HelperSymbols **ret, char **ret_why) {
        return symbolize_with_flags(c, debug_fd, -1, HELPER_SYMBOLIZE_SEGMENT_OFFSETS, offsets, n, ret, ret_why);
}

int helper_client_run_probe(const HelperClientConfig *config, char *const *probe_args, char **ret_output) {
        HelperClientConfig cfg = config ? *config : (HelperClientConfig) {};
        config_defaults(&cfg);
        _cleanup_free_ char *path = resolve_helper_path(&cfg);
        if (!path)
                return -errno;
        cfg.helper_path = path;
        size_t n = 0;
        while (probe_args && probe_args[n])
                n++;
        _cleanup_free_ char **args = calloc(n + 2, sizeof(char *));
        if (!args)
                return -ENOMEM;
        args[0] = "--probe";
        for (size_t i = 0; i < n; i++)
                args[i + 1] = probe_args[i];
        int pipefd[2];
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        pid_t pid;
        int r = spawn(&cfg, args, -1, pipefd[1], -1, &pid);
        safe_close(pipefd[1]);
        _cleanup_close_ int rfd = pipefd[0];
        if (r < 0)
                return r;
        size_t size = 0, allocated = 4096;
        _cleanup_free_ char *out = malloc(allocated);
        int64_t deadline = now_ms() + cfg.timeout_ms;
        while (out) {
                int64_t left = deadline - now_ms();
                struct pollfd p = { .fd = rfd, .events = POLLIN };
                if (left <= 0 || poll(&p, 1, (int) left) <= 0) {
                        r = -ETIME;
                        break;
                }
                if (size + 1 >= allocated) {
                        r = -E2BIG;
                        break;
                }
                ssize_t k = read(rfd, out + size, allocated - size - 1);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                size += (size_t) k;
        }
        kill(pid, SIGKILL);
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (!out)
                return -ENOMEM;
        if (r < 0)
                return r;
        out[size] = '\0';
        *ret_output = TAKE_PTR(out);
        return 0;
}
