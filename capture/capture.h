/* capture.h: the capture library's public API in one include. */
#pragma once

#include "capture-types.h"
#include "capture-reader.h"
#include "capture-writer.h"
