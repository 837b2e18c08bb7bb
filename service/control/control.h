/* control.h: the control layer's public header: the control fd's ring that
 * traced programs write marks, logs, counters and allocations into.
 * Other folders include this header only. */
#pragma once

#include "control-ring.h"
