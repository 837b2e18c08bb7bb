/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* demangle.h: C++, Rust (legacy and v0) and D name demangling for the helper. */
#pragma once

#include <stddef.h>

/* Returns a new string: the demangled form of `name` when it is a mangled
 * C++, Rust or D name no longer than max_input bytes (Rust without its
 * `::h<hash>` suffix), else a copy of `name`. NULL only when out of memory. */
char *helper_demangle(const char *name, size_t max_input);
