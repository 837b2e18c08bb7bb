/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-autoptr.h: g_autoptr() support for the capture library's types in
 * GLib code (the CLI). */
#pragma once

#include <glib.h>

#include "capture.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CaptureReader, capture_reader_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CaptureStats, capture_stats_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SymbolChunks, symbol_chunks_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SymbolTable, symbol_table_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CaptureWriter, capture_writer_free)
