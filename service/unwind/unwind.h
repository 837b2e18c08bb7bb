/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind.h: the unwind layer's public header: a sample's user stack to
 * frames (frame pointers or DWARF through the helper's compiled tables).
 * Other folders include this header only. */
#pragma once

#include "unwind-tables.h"
#include "sample-stack-choose.h"
#include "sample-stack.h"
#include "sample-unwind.h"
