/* symbolize-stage.h: the "symbolize" post-stop stage of a recording. */
#pragma once

#include "recording.h"

/* Symbolizes every (pid, address) the recording saw (service/symbolize.c)
 * and embeds __symbols__ and __periscope/symbols in its capture, emitting
 * Progress("symbolize", done, total). Skipped when the "symbolize" option is
 * off. Synchronous: the helper's per-request timeout bounds each step. */
int stage_symbolize(Recording *r);
