/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* basic.h: basic/'s public header. Helpers every Periscope component may use;
 * basic/ itself uses nothing of Periscope's (docs/ARCHITECTURE.md). */
#pragma once

#include "alloc-util.h"
#include "caller-opener.h"
#include "cleanup.h"
#include "fd-passing.h"
#include "io-util.h"
#include "log.h"
#include "parse-util.h"
#include "path-walk.h"
#include "proc-util.h"
#include "safe-open.h"
#include "sort-util.h"
#include "string-util.h"
#include "time-util.h"
#include "unaligned.h"
