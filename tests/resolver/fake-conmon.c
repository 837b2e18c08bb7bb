/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fake-conmon: pretends to be Podman's conmon for a container it does not
 * run: its executable is called conmon, its command line says
 * `-c ID`, and its child announces container=podman. Prints the child's pid
 * and waits. A user running it must not get the child counted as a process
 * of container ID (tests/resolver/test-fake-conmon.sh).
 *   fake-conmon -c ID */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
        if (argc != 3 || strcmp(argv[1], "-c") != 0) {
                fprintf(stderr, "usage: conmon -c ID\n");
                return 2;
        }
        pid_t child = fork();
        if (child < 0)
                return 1;
        if (child == 0) {
                char *const env[] = { "container=podman", NULL };
                char *const args[] = { "sleep", "60", NULL };
                execve("/bin/sleep", args, env);
                _exit(127);
        }
        printf("%d\n", (int) child);
        fflush(stdout);
        int status;
        waitpid(child, &status, 0);
        return 0;
}
