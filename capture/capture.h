/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture.h: capture/'s public header: the Sysprof-compatible capture file
 * format (reader, writer, the symbol tables a capture carries). Uses only
 * basic/ (docs/ARCHITECTURE.md). */
#pragma once

#include "capture-reader.h"
#include "capture-stats.h"
#include "capture-types.h"
#include "capture-writer.h"
#include "file-identities.h"
#include "machine.h"
#include "off-cpu-frames.h"
#include "symbols.h"
#include "thread-names.h"
