/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* stderr-helper: stands in for periscope-helper (through the real bwrap
 * launcher) and writes to its stderr what a hostile helper would: a plain
 * line, one posing as periscoped with control characters and a terminal
 * escape, one of 10 000 bytes, then 100 short ones; then it closes its
 * socket, so every file it was asked about is "helper failed". */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
        fprintf(stderr, "hello from the stand-in helper\n");
        fprintf(stderr, "\rperiscoped: recording 1: finished, \x1b[2Jforged\n");
        char big[10001];
        memset(big, 'x', sizeof big - 1);
        big[sizeof big - 1] = '\0';
        fprintf(stderr, "long:%s\n", big);
        for (int i = 0; i < 100; i++)
                fprintf(stderr, "flood line %d\n", i);
        fflush(stderr);
        return 1;
}
