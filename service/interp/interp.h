/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* interp.h: the interpreter-frames layer's public header: the frames of
 * interpreted code read from a target's memory, as hostile input
 * (docs/python.md). For now CPython 3.11 to 3.14: its layouts per version
 * and the reader of its thread states and frame chains.
 * Other folders include this header only. */
#pragma once

#include "python-frames.h"
#include "python-layout.h"
