/* probe.c: --probe: reports file, network and capability access from inside
 * the sandbox, so a test can check the launcher's confinement for real. */
#include "probe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "basic.h"

static void probe_status_field(FILE *out, const char *field) {
        FILE *f = fopen("/proc/self/status", "re");
        if (!f) {
                fprintf(out, "%s: unreadable (%s)\n", field, strerror(errno));
                return;
        }
        char line[256];
        size_t fl = strlen(field);
        bool found = false;
        while (fgets(line, sizeof line, f))
                if (strncmp(line, field, fl) == 0 && line[fl] == ':') {
                        char *v = line + fl + 1;
                        v += strspn(v, " \t");
                        fprintf(out, "%s: %s", field, v);
                        found = true;
                }
        if (!found)
                fprintf(out, "%s: missing\n", field);
        fclose(f);
}

int helper_probe(char *const *paths, size_t n_paths, int port, FILE *out) {
        fprintf(out, "uid: %u\n", (unsigned) getuid());
        probe_status_field(out, "CapEff");
        probe_status_field(out, "CapPrm");
        probe_status_field(out, "NoNewPrivs");
        for (size_t i = 0; i < n_paths; i++) {
                _cleanup_close_ int fd = open(paths[i], O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (fd >= 0)
                        fprintf(out, "open %s: ok\n", paths[i]);
                else
                        fprintf(out, "open %s: %s\n", paths[i], strerror(errno));
        }
        if (port > 0) {
                _cleanup_close_ int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (s < 0)
                        fprintf(out, "connect 127.0.0.1:%d: %s\n", port, strerror(errno));
                else {
                        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port) };
                        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                        if (connect(s, (struct sockaddr *) &sa, sizeof sa) == 0)
                                fprintf(out, "connect 127.0.0.1:%d: ok\n", port);
                        else
                                fprintf(out, "connect 127.0.0.1:%d: %s\n", port, strerror(errno));
                }
        }
        fflush(out);
        return 0;
}
