/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-connect.c: the connection periscoped serves on (bus-connect.h). */
#include "bus-connect.h"

#include <errno.h>
#include <stdbool.h>
#include <systemd/sd-id128.h>

/* Starts bus, or unrefs it on failure (r: the setup's result so far). */
static int start_or_unref(sd_bus *bus, int r, sd_bus **ret) {
        if (r >= 0)
                r = sd_bus_negotiate_fds(bus, true);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r < 0) {
                sd_bus_unref(bus);
                return r;
        }
        *ret = bus;
        return 0;
}

/* A client of the bus at address. */
static int connect_address(const char *address, sd_bus **ret) {
        sd_bus *bus = NULL;
        int r = sd_bus_new(&bus);
        if (r < 0)
                return r;
        r = sd_bus_set_address(bus, address);
        if (r >= 0)
                r = sd_bus_set_bus_client(bus, true);
        return start_or_unref(bus, r, ret);
}

/* The server of the one peer at the other end of fd. */
static int connect_peer(int fd, sd_bus **ret) {
        sd_id128_t id;
        sd_bus *bus = NULL;
        int r = sd_id128_randomize(&id);
        if (r < 0)
                return r;
        r = sd_bus_new(&bus);
        if (r < 0)
                return r;
        r = sd_bus_set_fd(bus, fd, fd);
        if (r >= 0)
                r = sd_bus_set_server(bus, true, id);
        return start_or_unref(bus, r, ret);
}

int bus_connect(BusKind kind, const char *address, int peer_fd, sd_bus **ret) {
        switch (kind) {
        case BUS_SYSTEM:
                return sd_bus_open_system(ret);
        case BUS_SESSION:
                return sd_bus_open_user(ret);
        case BUS_ADDRESS:
                return address ? connect_address(address, ret) : -EINVAL;
        case BUS_PEER:
                return peer_fd >= 0 ? connect_peer(peer_fd, ret) : -EBADF;
        }
        return -EINVAL;
}

int bus_peer_finish_auth(sd_bus *bus) {
        int r;
        while (!sd_bus_is_ready(bus)) {
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                r = sd_bus_wait(bus, 10 * 1000000ull);
                if (r < 0)
                        return r;
                if (r == 0)
                        return -ETIMEDOUT;
        }
        do
                r = sd_bus_process(bus, NULL);
        while (r > 0);
        return r;
}

const char *bus_kind_describe(BusKind kind, const char *address) {
        switch (kind) {
        case BUS_SYSTEM:
                return "the system bus";
        case BUS_SESSION:
                return "the session bus";
        case BUS_ADDRESS:
                return address;
        case BUS_PEER:
                return "the peer";
        }
        return "?";
}
