/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-connect.h: the connection periscoped serves on: the system bus, the
 * session bus, a bus at an address, or one client over a peer-to-peer
 * socket it inherited. */
#pragma once

#include <systemd/sd-bus.h>

typedef enum BusKind {
        BUS_SYSTEM,
        BUS_SESSION,
        BUS_ADDRESS,
        BUS_PEER,
} BusKind;

/* Opens the connection of that kind (address for BUS_ADDRESS, peer_fd for
 * BUS_PEER, whose server side this becomes); fds may be passed on it. */
int bus_connect(BusKind kind, const char *address, int peer_fd, sd_bus **ret);

/* Completes the server side of a peer's authentication before the event
 * loop runs, then handles whatever the client sent in the same read as
 * "BEGIN": sd-bus keeps such bytes buffered and the event loop would not
 * wake up for them. */
int bus_peer_finish_auth(sd_bus *bus);

/* What a log message calls the connection ("the system bus", the address…). */
const char *bus_kind_describe(BusKind kind, const char *address);
