/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* flatpak-info.h: the helper's reader of a Flatpak instance's
 * /.flatpak-info (a GKeyFile the app's sandbox setup wrote, readable and
 * forgeable by the app's user): answers the fields the daemon uses
 * (protocol/helper-protocol.h, FLATPAK_INFO). */
#pragma once

#include <stddef.h>

#include "protocol.h"

/* Parses the keyfile behind fd into reply; -EBADMSG/-EFBIG with ret_why. */
int flatpak_info_read(int fd, HelperWriter *reply, char **ret_why);
