/* cmd-dump.c: `periscope dump` (see issue 2). */
#include <stdio.h>

#include "commands.h"

int cmd_dump(int argc, char **argv) {
        fprintf(stderr, "periscope dump: not yet available\n");
        return 1;
}
