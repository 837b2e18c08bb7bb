/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-containers.h: `periscope report --by-container`: samples grouped by
 * the Podman container or Flatpak app each process belongs to, from the
 * "periscope:container" chunks periscoped writes (docs/containers.md). */
#pragma once

#include <glib.h>
#include <stdio.h>

#include "capture.h"
#include "report-pid-filter.h"
#include "report-profile.h"

/* The chunks of the descriptions while a capture loads (pid → GString). */
GHashTable *report_containers_chunks_new(void);

/* Loading: keeps f's part of a description and, once it is whole, the
 * label of its process in p->container_labels. */
void report_containers_collect(ReportProfile *p, GHashTable *chunks, const CaptureFrame *f);

/* Prints the table for the capture model p. */
void report_print_by_container(FILE *out, const ReportProfile *p, const ReportPidFilter *filter);

/* Prints, for the default report, one line per sampled process that belongs
 * to a container or app ("comm[pid]  podman NAME (IMAGE)"), so every report
 * names them; prints nothing when no process does. */
void report_print_process_containers(FILE *out, const ReportProfile *p, const ReportPidFilter *filter);

/* pid → container or app label ("podman web (image)", "host (no
 * container)") of every sampled process the filter wants: the grouping
 * frames of `--by-container` with a tree or flame graph. */
GHashTable *report_containers_by_pid(const ReportProfile *p, const ReportPidFilter *filter);
