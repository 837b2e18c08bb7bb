/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* control-record.c: a small recorder for tests and benchmarks of the control
 * fd that needs no daemon: serves the control-ring protocol in-process (the
 * same service/control-ring.c periscoped runs), optionally samples the
 * system counters, runs COMMAND with SYSPROF_CONTROL_FD (and LD_PRELOAD),
 * and writes a capture.
 *
 * usage: control-record [--preload LIB] [--counters] [--symbolize] OUT -- COMMAND [ARGS...]
 *
 * --symbolize stands in for the service's symbolizer: COMMAND must print
 * "pid PID base 0xBASE" on stdout; its functions (from `nm -S`) are then
 * embedded as the capture's symbol tables for that pid. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "basic.h"
#include "capture.h"
#include "control-ring.h"
#include "counters.h"

/* Adds every sized function symbol of exe, loaded at base in pid. */
static int symbolize(CaptureWriter *w, const char *exe, int32_t pid, uint64_t base) {
        char cmd[4096];
        snprintf(cmd, sizeof(cmd), "nm -S --defined-only '%s'", exe);
        FILE *p = popen(cmd, "r");
        if (!p)
                return -errno;
        SymbolTableBuilder *b;
        int r = symbol_table_builder_new(&b);
        if (r < 0) {
                pclose(p);
                return r;
        }
        char line[1024];
        size_t n = 0;
        while (fgets(line, sizeof(line), p)) {
                uint64_t value, size;
                char type, name[512];
                if (sscanf(line, "%" SCNx64 " %" SCNx64 " %c %511s", &value, &size, &type, name) != 4)
                        continue;
                if (type != 't' && type != 'T' && type != 'W' && type != 'w')
                        continue;
                if (size == 0)
                        continue;
                SymbolFrame fr = { .function = name };
                if (symbol_table_builder_add_range(b, pid, base + value, base + value + size, &fr, 1) == 0)
                        n++;
        }
        if (pclose(p) != 0 || n == 0) {
                symbol_table_builder_free(b);
                fprintf(stderr, "control-record: no symbols from nm for %s\n", exe);
                return -ENOENT;
        }
        r = symbol_table_builder_write(b, w, now_monotonic_ns());
        symbol_table_builder_free(b);
        return r;
}

int main(int argc, char **argv) {
        const char *preload = NULL;
        bool counters = false, symbolize_exe = false;
        int i = 1;
        for (; i < argc && strncmp(argv[i], "--", 2) == 0 && argv[i][2]; i++) {
                if (strcmp(argv[i], "--preload") == 0 && i + 1 < argc)
                        preload = argv[++i];
                else if (strcmp(argv[i], "--counters") == 0)
                        counters = true;
                else if (strcmp(argv[i], "--symbolize") == 0)
                        symbolize_exe = true;
                else {
                        fprintf(stderr, "control-record: unknown option %s\n", argv[i]);
                        return 2;
                }
        }
        if (i + 2 >= argc || strcmp(argv[i + 1], "--") != 0) {
                fprintf(stderr, "usage: control-record [--preload LIB] [--counters] [--symbolize] OUT -- COMMAND [ARGS...]\n");
                return 2;
        }
        const char *out = argv[i];
        char **command = argv + i + 2;

        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
                fprintf(stderr, "control-record: %s: %m\n", out);
                return 1;
        }
        sd_event *e;
        CaptureWriter *w;
        CounterIdAllocator ids = {};
        ControlServer *srv;
        Counters *ctr = NULL;
        int r;
        if ((r = sd_event_new(&e)) < 0 || (r = capture_writer_new_fd(fd, now_monotonic_ns(), &w)) < 0 ||
            (r = control_server_new(e, w, &ids, &srv)) < 0) {
                fprintf(stderr, "control-record: setup: %s\n", strerror(-r));
                return 1;
        }
        if (counters && (r = counters_new(e, w, &ids, NULL, 0, &ctr, NULL)) < 0) {
                fprintf(stderr, "control-record: counters: %s\n", strerror(-r));
                return 1;
        }
        int cfd;
        if ((r = control_server_open_fd(srv, &cfd)) < 0) {
                fprintf(stderr, "control-record: control fd: %s\n", strerror(-r));
                return 1;
        }
        int pipefd[2];
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return 1;
        pid_t pid = fork();
        if (pid == 0) {
                dup2(pipefd[1], 1);
                int child_fd = dup(cfd);
                char num[16];
                snprintf(num, sizeof(num), "%d", child_fd);
                setenv("SYSPROF_CONTROL_FD", num, 1);
                if (preload)
                        setenv("LD_PRELOAD", preload, 1);
                execvp(command[0], command);
                fprintf(stderr, "control-record: %s: %m\n", command[0]);
                _exit(127);
        }
        close(cfd);
        close(pipefd[1]);
        fcntl(pipefd[0], F_SETFL, O_NONBLOCK);

        char text[65536];
        size_t text_len = 0;
        int status = 0;
        bool exited = false;
        while (!exited || control_server_get_n_peers(srv) > 0) {
                sd_event_run(e, 10000);
                ssize_t k;
                while ((k = read(pipefd[0], text + text_len, sizeof(text) - 1 - text_len)) > 0) {
                        fwrite(text + text_len, 1, (size_t) k, stdout);
                        text_len += (size_t) k;
                }
                if (!exited && waitpid(pid, &status, WNOHANG) == pid)
                        exited = true;
        }
        text[text_len] = 0;
        fflush(stdout);
        control_server_stop(srv);
        if (ctr)
                counters_sample(ctr);

        if (symbolize_exe) {
                int32_t spid;
                uint64_t base;
                const char *line = strstr(text, "pid ");
                if (!line || sscanf(line, "pid %" SCNd32 " base 0x%" SCNx64, &spid, &base) != 2) {
                        fprintf(stderr, "control-record: --symbolize: the command did not print \"pid PID base 0xBASE\"\n");
                        return 1;
                }
                if (symbolize(w, command[0], spid, base) < 0)
                        return 1;
        }
        const ControlServerStats *st = control_server_get_stats(srv);
        fprintf(stderr, "control-record: %" PRIu64 " rings, %" PRIu64 " frames copied, %" PRIu64 " dropped rings\n",
                st->rings_created, st->frames_copied, st->rings_dropped);
        counters_free(ctr);
        control_server_free(srv);
        r = capture_writer_flush(w);
        capture_writer_free(w);
        sd_event_unref(e);
        close(fd);
        if (r < 0) {
                fprintf(stderr, "control-record: writing %s: %s\n", out, strerror(-r));
                return 1;
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
