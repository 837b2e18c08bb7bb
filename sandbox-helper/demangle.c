/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* demangle.c: symbol demangling with libiberty's cplus_demangle (elfutils
 * has no demangler): C++ (Itanium ABI), Rust legacy (`_ZN…17h<hash>E`, hash
 * dropped, `$u7b$`-style escapes decoded) and v0 (`_R…`), and D (`_D…`).
 * libiberty is linked statically into the helper only, so this parser of
 * untrusted names runs inside the sandbox; its recursion limit stays on. */
#include "demangle.h"

#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

/* Parameters and qualifiers as c++filt prints them; no DMGL_VERBOSE, which
 * would keep Rust's hash suffixes. */
#define DEMANGLE_OPTIONS (DMGL_PARAMS | DMGL_ANSI)

char *helper_demangle(const char *name, size_t max_input) {
        if (strnlen(name, max_input + 1) <= max_input) {
                char *d = NULL;
                if (strncmp(name, "_Z", 2) == 0 || strncmp(name, "_R", 2) == 0)
                        /* DMGL_AUTO tries Rust (legacy and v0) before C++:
                         * legacy Rust names are valid C++ names too */
                        d = cplus_demangle(name, DMGL_AUTO | DEMANGLE_OPTIONS);
                else if (strncmp(name, "_D", 2) == 0)
                        d = cplus_demangle(name, DMGL_DLANG | DEMANGLE_OPTIONS);
                if (d && *d)
                        return d;
                free(d);
        }
        return strdup(name);
}
