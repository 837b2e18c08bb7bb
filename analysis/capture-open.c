/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-open.c: see capture-open.h. */
#include "capture-open.h"

#include <stdio.h>
#include <stdlib.h>

#include <glib.h>

int cli_capture_open(const char *command, const char *path, CaptureReader **ret) {
        g_autofree char *error = NULL;
        int r = capture_reader_open_path(path, ret, &error);
        if (r < 0)
                fprintf(stderr, "periscope %s: %s\n", command, error ? error : g_strerror(-r));
        return r;
}

const char *cli_capture_read_error(CaptureReader *reader, int r) {
        return capture_reader_error(reader) ? capture_reader_error(reader) : g_strerror(-r);
}
