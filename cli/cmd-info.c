/* cmd-info.c: `periscope info` (see issue 2). */
#include <stdio.h>

#include "commands.h"

int cmd_info(int argc, char **argv) {
        fprintf(stderr, "periscope info: not yet available\n");
        return 1;
}
