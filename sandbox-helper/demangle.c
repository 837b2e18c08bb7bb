/* demangle.c: libstdc++'s __cxa_demangle (elfutils has no demangler). The
 * helper links libstdc++, so this runs only inside the sandbox. */
#include "demangle.h"

#include <stdlib.h>
#include <string.h>

/* From libstdc++ (cxxabi.h is C++ only). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *helper_demangle(const char *name, size_t max_input) {
        if (strncmp(name, "_Z", 2) == 0 && strnlen(name, max_input + 1) <= max_input) {
                int status = -1;
                char *d = __cxa_demangle(name, NULL, NULL, &status);
                if (status == 0 && d)
                        return d;
                free(d);
        }
        return strdup(name);
}
