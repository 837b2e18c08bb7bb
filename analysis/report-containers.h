/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-containers.h: `periscope report --by-container`: samples grouped by
 * the Podman container or Flatpak app each process belongs to, from the
 * "periscope:container" chunks periscoped writes (docs/containers.md). */
#pragma once

#include <glib.h>
#include <stdio.h>

#include "report-pid-filter.h"

/* Prints the table for the capture at path; FALSE with error set when the
 * capture cannot be read. */
gboolean report_print_by_container(FILE *out, const char *path, const ReportPidFilter *filter, GError **error);

/* Prints, for the default report, one line per sampled process that belongs
 * to a container or app ("comm[pid]  podman NAME (IMAGE)"), so every report
 * names them; prints nothing when no process does. */
gboolean report_print_process_containers(FILE *out, const char *path, const ReportPidFilter *filter, GError **error);

/* pid → container or app label ("podman web (image)", "host (no
 * container)") of every sampled process the filter wants: the grouping
 * frames of `--by-container` with a tree or flame graph. NULL on error. */
GHashTable *report_containers_by_pid(const char *path, const ReportPidFilter *filter, GError **error);
