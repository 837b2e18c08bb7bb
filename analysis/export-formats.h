/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* export-formats.h: the writers of `periscope export`, one per format and
 * file (export-pprof.c, export-speedscope.c, export-perf-script.c,
 * export-folded.c). Each appends the whole document to out and returns
 * FALSE with error set only when it cannot produce it. */
#pragma once

#include <glib.h>

#include "export-model.h"

/* gzipped profile.proto, as `go tool pprof` reads it. */
gboolean export_pprof(const ExportModel *m, GByteArray *out, GError **error);

/* speedscope's file format (https://www.speedscope.app/file-format-schema.json). */
gboolean export_speedscope(const ExportModel *m, GByteArray *out, GError **error);

/* The text `perf script` prints for a `perf record -g` recording. */
gboolean export_perf_script(const ExportModel *m, GByteArray *out, GError **error);

/* FlameGraph's folded stacks: "outer;...;inner COUNT" per line. */
gboolean export_folded(const ExportModel *m, GByteArray *out, GError **error);
