/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-open.c: see capture-open.h. */
#include "capture-open.h"

#include <stdio.h>
#include <stdlib.h>

#include <glib.h>

int cli_capture_open(const char *command, const char *path, CaptureReader **ret) {
        g_autofree char *error = NULL;
        int k = capture_reader_open_path(path, ret, &error);
        if (k < 0)
                fprintf(stderr, "periscope %s: %s\n", command, error ? error : g_strerror(-k));
        return k;
}

const char *cli_capture_read_error(CaptureReader *r, int k) {
        return capture_reader_error(r) ? capture_reader_error(r) : g_strerror(-k);
}
