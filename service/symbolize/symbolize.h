/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symbolize.h: the symbolize layer's public header: the addresses a recording
 * saw and the post-stop stage that names them into the capture.
 * Other folders include this header only. */
#pragma once

#include "address-set.h"
#include "symbolize-stage.h"
