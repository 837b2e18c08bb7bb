/* report-flamegraph.h: `periscope report --flamegraph OUT.svg`: a
 * self-contained SVG flame graph (inline CSS and JavaScript, no network):
 * hover shows name, samples and percent; click zooms into a frame; the search
 * box highlights matching frames and says how many samples they cover. */
#pragma once

#include <glib.h>

#include "report-callgraph.h"

/* Writes the flame graph of g to path (atomically: a temporary file renamed
 * into place). title is shown at the top. */
gboolean report_write_flamegraph(const ReportCallGraph *g, const char *path, const char *title, GError **error);
