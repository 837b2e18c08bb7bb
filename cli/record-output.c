/* record-output.c: the capture file of `periscope record` (see record-output.h). */
#include "record-output.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int record_output_open(RecordOutput *o, const char *path, GError **error) {
        *o = (RecordOutput) { .path = g_strdup(path), .fd = -1 };
        struct stat st;
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
                o->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
                if (o->fd < 0) {
                        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "cannot open %s: %s", path,
                                    g_strerror(errno));
                        return -1;
                }
                return 0;
        }
        g_autofree char *dir = g_path_get_dirname(path);
        g_autofree char *base = g_path_get_basename(path);
        g_autofree char *name = g_strdup_printf(".%s.XXXXXX", base);
        o->temp = g_build_filename(dir, name, NULL);
        o->fd = g_mkstemp_full(o->temp, O_WRONLY | O_CLOEXEC | O_NOCTTY, 0644);
        if (o->fd < 0) {
                g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "cannot create %s: %s", path,
                            g_strerror(errno));
                g_clear_pointer(&o->temp, g_free);
                return -1;
        }
        return 0;
}

int record_output_commit(RecordOutput *o, GError **error) {
        if (!o->temp)
                return 0;
        if (rename(o->temp, o->path) < 0) {
                g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "cannot name the capture %s: %s",
                            o->path, g_strerror(errno));
                return -1;
        }
        g_clear_pointer(&o->temp, g_free);
        return 0;
}

void record_output_finish(RecordOutput *o) {
        if (o->fd >= 0)
                close(o->fd);
        o->fd = -1;
        if (o->temp)
                (void) unlink(o->temp);
        g_clear_pointer(&o->temp, g_free);
        g_clear_pointer(&o->path, g_free);
}
