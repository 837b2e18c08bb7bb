/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-export.c: libFuzzer target for `periscope export`: any bytes as a
 * capture (truncated, merged, hostile: whatever the mutations make of the
 * seeds, real captures of every kind) are loaded into the export model and
 * written in every format (pprof, speedscope, perf-script, folded), CPU
 * samples and allocations both. Built by fuzz.sh (target export). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <glib.h>

#include "export-formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static gboolean (*const writers[])(const ExportModel *m, GByteArray *out, GError **error) = {
        export_pprof,
        export_speedscope,
        export_perf_script,
        export_folded,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        int fd = memfd_create("capture", MFD_CLOEXEC);
        if (fd < 0)
                return 0;
        for (size_t done = 0; done < size;) {
                ssize_t k = write(fd, data + done, size - done);
                if (k <= 0) {
                        close(fd);
                        return 0;
                }
                done += (size_t) k;
        }
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        GArray *pids = g_array_new(FALSE, FALSE, sizeof(int32_t));
        ReportFilter filter = { .pids = pids };
        for (int memory = 0; memory <= 1; memory++) {
                ExportOptions o = { .filter = &filter, .memory = memory };
                GError *error = NULL;
                ExportModel *m = export_model_load(path, &o, &error);
                g_clear_error(&error);
                if (!m)
                        continue;
                for (size_t i = 0; i < G_N_ELEMENTS(writers); i++) {
                        GByteArray *out = g_byte_array_new();
                        (void) writers[i](m, out, &error);
                        g_clear_error(&error);
                        g_byte_array_unref(out);
                }
                export_model_free(m);
        }
        g_array_unref(pids);
        close(fd);
        return 0;
}
