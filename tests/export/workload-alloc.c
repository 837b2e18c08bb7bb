/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workload-alloc.c: known allocations for the memory export test:
 *   keep_site: 30 x malloc(8192), never freed      = 245760 bytes in use
 *   temp_site: 1000 x malloc(512), each freed      = 512000 bytes allocated, 0 in use */
#include <stdlib.h>
#include <string.h>

static void *volatile kept[30];
static void *volatile sink;

__attribute__((noinline)) void keep_site(int i) {
        kept[i] = malloc(8192);
        memset(kept[i], i, 8192);
}

__attribute__((noinline)) void temp_site(int i) {
        char *p = malloc(512);
        memset(p, i, 512);
        sink = p;
        free(p);
}

int main(void) {
        for (int i = 0; i < 30; i++)
                keep_site(i);
        for (int i = 0; i < 1000; i++)
                temp_site(i);
        return 0;
}
