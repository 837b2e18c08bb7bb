/* demangle.h: C++ (Itanium ABI) name demangling for the helper. */
#pragma once

#include <stddef.h>

/* Returns a new string: the demangled form of `name` when it is a mangled
 * C++ name no longer than max_input bytes, else a copy of `name`. NULL only
 * when out of memory. */
char *helper_demangle(const char *name, size_t max_input);
