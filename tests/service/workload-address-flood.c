/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload-address-flood.c: a hostile program that floods its control fd
 * (SYSPROF_CONTROL_FD, through Debian's real libsysprof-capture-4
 * collector) with SAMPLE frames whose stacks are distinct code addresses:
 * every byte of libc's executable mapping in turn, from several processes,
 * so the service is asked to symbolize millions of distinct (pid, address)
 * pairs. Usage: workload-address-flood SECONDS PROCESSES
 * Prints "flood PID addresses N" per process when done. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sysprof-capture.h>

#define FLOOD_DEPTH 64

typedef struct Flood {
        uint64_t start, size; /* libc's r-xp mapping */
        uint64_t next;        /* offset of the next address */
        uint64_t sent;
} Flood;

static int find_libc_text(uint64_t *start, uint64_t *size) {
        FILE *f = fopen("/proc/self/maps", "re");
        if (!f)
                return -1;
        char line[512];
        int r = -1;
        while (fgets(line, sizeof line, f)) {
                unsigned long long a, b;
                char perms[8];
                if (sscanf(line, "%llx-%llx %7s", &a, &b, perms) == 3 && strcmp(perms, "r-xp") == 0 &&
                    strstr(line, "/libc.so")) {
                        *start = a;
                        *size = b - a;
                        r = 0;
                        break;
                }
        }
        fclose(f);
        return r;
}

static int flood_stack(SysprofCaptureAddress *addrs, unsigned n, void *data) {
        Flood *fl = data;
        unsigned k = n < FLOOD_DEPTH ? n : FLOOD_DEPTH;
        for (unsigned i = 0; i < k; i++) {
                addrs[i] = fl->start + 1 + fl->next; /* a return address: never the mapping's first byte */
                fl->next = (fl->next + 1) % (fl->size - 1);
        }
        fl->sent += k;
        return (int) k;
}

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

static int flood(double seconds, unsigned index) {
        Flood fl = {};
        if (find_libc_text(&fl.start, &fl.size) < 0 || fl.size < 2) {
                fprintf(stderr, "workload-address-flood: libc's text not found in /proc/self/maps\n");
                return 1;
        }
        /* each process starts elsewhere: together they cover more pairs sooner */
        fl.next = (fl.size / 8) * (index % 8);
        double end = now_s() + seconds;
        while (now_s() < end)
                for (int i = 0; i < 256; i++)
                        sysprof_collector_sample(flood_stack, &fl);
        printf("flood %d addresses %" PRIu64 "\n", (int) getpid(), fl.sent);
        fflush(stdout);
        return 0;
}

int main(int argc, char **argv) {
        if (argc != 3) {
                fprintf(stderr, "usage: workload-address-flood SECONDS PROCESSES\n");
                return 2;
        }
        double seconds = atof(argv[1]);
        unsigned n = (unsigned) atoi(argv[2]);
        if (!getenv("SYSPROF_CONTROL_FD")) {
                fprintf(stderr, "workload-address-flood: no SYSPROF_CONTROL_FD: run it under periscope record\n");
                return 1;
        }
        for (unsigned i = 1; i < n; i++) {
                pid_t pid = fork();
                if (pid < 0)
                        return 1;
                if (pid == 0)
                        return flood(seconds, i);
        }
        int ret = flood(seconds, 0);
        int status;
        while (wait(&status) > 0)
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        ret = 1;
        return ret;
}
