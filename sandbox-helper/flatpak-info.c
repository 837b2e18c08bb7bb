/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* flatpak-info.c: /.flatpak-info in the helper (see flatpak-info.h). */
#include "flatpak-info.h"

#include <errno.h>
#include <glib.h>
#include <string.h>

#include "basic.h"

int flatpak_info_read(int fd, HelperWriter *reply, char **ret_why) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r = read_fd_bounded(fd, HELPER_MAX_FLATPAK_INFO, false, &text, &len);
        if (r < 0)
                return why_setf(ret_why, r, "%s", r == -EFBIG ? "it is larger than the limit" : strerror(-r));
        g_autoptr(GKeyFile) kf = g_key_file_new();
        g_autoptr(GError) error = NULL;
        if (!g_key_file_load_from_data(kf, text, len, G_KEY_FILE_NONE, &error))
                return why_setf(ret_why, -EBADMSG, "it is not a valid keyfile (%s)", error->message);
        static const char *const fields[][2] = {
                { "Application", "name" }, { "Application", "runtime" }, { "Instance", "instance-id" },
                { "Instance", "app-path" }, { "Instance", "runtime-path" },
        };
        for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
                g_autofree char *v = g_key_file_get_string(kf, fields[i][0], fields[i][1], NULL);
                if (i == 0 && (!v || !*v))
                        return why_setf(ret_why, -EBADMSG, "it has no [Application] name");
                helper_put_string(reply, v ? v : "", HELPER_MAX_FIELD);
        }
        return 0;
}
