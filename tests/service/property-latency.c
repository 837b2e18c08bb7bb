/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* property-latency.c: how long the service takes to answer
 * org.freedesktop.DBus.Properties.Get while a recording finishes. Reads the
 * recording's State over and over (a new call as soon as the last answered,
 * after a 5 ms pause) until it is "finished" or gone, and prints one line:
 *   gets N finishing_gets F finishing_ms D max_ms M max_finishing_ms X stop_ms S
 * A Get counts as "while finishing" when it was sent after the service had
 * said "finishing" (the post-stop stages run); S is the Get that was sent
 * before and answered after the Stop (the final drain of the rings).
 * Usage: property-latency BUS_ADDRESS RECORDING_PATH TIMEOUT_SECONDS
 *
 * With --profiler it reads the Profiler's Version instead (every recording
 * of the service slows it alike) until STOP_FILE exists, and prints
 *   gets N max_ms M slow_gets S
 * (S: Gets over 50 ms, each also said on stderr).
 * Usage: property-latency --profiler BUS_ADDRESS STOP_FILE TIMEOUT_SECONDS */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* --profiler: Version over and over until stop_file exists. */
static int probe_profiler(sd_bus *bus, const char *stop_file, double timeout_s) {
        double t_start = now_ms(), deadline = t_start + timeout_s * 1000, max = 0;
        unsigned gets = 0, slow = 0;
        while (access(stop_file, F_OK) < 0) {
                if (now_ms() > deadline) {
                        fprintf(stderr, "property-latency: %s did not appear within %.0f s\n", stop_file, timeout_s);
                        return 1;
                }
                sd_bus_error error = SD_BUS_ERROR_NULL;
                char *version = NULL;
                double t0 = now_ms();
                int r = sd_bus_get_property_string(bus, "org.periscope.Profiler1", "/org/periscope/Profiler1",
                                                   "org.periscope.Profiler1", "Version", &error, &version);
                double dt = now_ms() - t0;
                if (r < 0) {
                        fprintf(stderr, "property-latency: Version: %s\n", error.message ? error.message : strerror(-r));
                        sd_bus_error_free(&error);
                        return 1;
                }
                free(version);
                gets++;
                if (dt > max)
                        max = dt;
                if (dt > 50) {
                        slow++;
                        fprintf(stderr, "property-latency: %.1f ms at %.0f ms\n", dt, t0 - t_start);
                }
                usleep(5000);
        }
        printf("gets %u max_ms %.1f slow_gets %u\n", gets, max, slow);
        return 0;
}

int main(int argc, char **argv) {
        bool profiler = argc == 5 && strcmp(argv[1], "--profiler") == 0;
        if (profiler) {
                argv++;
                argc--;
        }
        if (argc != 4) {
                fprintf(stderr, "usage: property-latency [--profiler] BUS_ADDRESS RECORDING_PATH|STOP_FILE TIMEOUT_SECONDS\n");
                return 2;
        }
        sd_bus *bus = NULL;
        int r = sd_bus_new(&bus);
        if (r >= 0)
                r = sd_bus_set_address(bus, argv[1]);
        if (r >= 0)
                r = sd_bus_set_bus_client(bus, 1);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r < 0) {
                fprintf(stderr, "property-latency: cannot connect to %s: %s\n", argv[1], strerror(-r));
                return 1;
        }
        if (profiler) {
                int ret = probe_profiler(bus, argv[2], atof(argv[3]));
                sd_bus_unref(bus);
                return ret;
        }
        double deadline = now_ms() + atof(argv[3]) * 1000, max = 0, max_finishing = 0, finishing_since = 0;
        double finishing_ms = 0, stop_ms = 0;
        bool was_finishing = false;
        unsigned gets = 0, finishing_gets = 0;
        int ret = 1;
        while (now_ms() < deadline) {
                sd_bus_error error = SD_BUS_ERROR_NULL;
                char *state = NULL;
                double t0 = now_ms();
                r = sd_bus_get_property_string(bus, "org.periscope.Profiler1", argv[2], "org.periscope.Recording1",
                                               "State", &error, &state);
                double dt = now_ms() - t0;
                gets++;
                if (dt > max)
                        max = dt;
                if (r < 0) {
                        /* the object went away: it had finished */
                        fprintf(stderr, "property-latency: %s\n", error.message ? error.message : strerror(-r));
                        sd_bus_error_free(&error);
                        ret = finishing_gets > 0 ? 0 : 1;
                        break;
                }
                bool finishing = strcmp(state, "finishing") == 0;
                if (finishing && !was_finishing) {
                        stop_ms = dt; /* sent before the stages began */
                        finishing_since = t0;
                } else if (finishing) {
                        finishing_gets++;
                        if (dt > max_finishing)
                                max_finishing = dt;
                        if (dt > 50)
                                fprintf(stderr, "property-latency: %.1f ms at %.0f ms into finishing\n", dt,
                                        t0 - finishing_since);
                }
                if (finishing)
                        finishing_ms = now_ms() - finishing_since;
                was_finishing = finishing;
                bool finished = strcmp(state, "finished") == 0;
                free(state);
                if (finished) {
                        ret = 0;
                        break;
                }
                usleep(5000);
        }
        printf("gets %u finishing_gets %u finishing_ms %.0f max_ms %.1f max_finishing_ms %.1f stop_ms %.1f\n", gets,
               finishing_gets, finishing_ms, max, max_finishing, stop_ms);
        sd_bus_unref(bus);
        if (ret != 0)
                fprintf(stderr, "property-latency: the recording did not finish within %s s\n", argv[3]);
        return ret;
}
