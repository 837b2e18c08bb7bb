/* record-options.h: the a{sv} options of Record(), decoded and checked into
 * a RecordOptions (recording-options.h). Each option is one row of the
 * table in record-options.c (key, D-Bus signature, parser); other
 * components add theirs there and a field in RecordOptions. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "recording.h"

/* Reads the a{sv} at the message's read position into *ret (defaults for
 * what is absent) and checks every value; "container" prefers caller_uid's
 * own containers when others match too. On failure fills error with an
 * org.periscope.Error.* naming the option and why, and returns negative. */
int record_options_parse(sd_bus_message *m, uid_t caller_uid, HelperClient *user_file_helper, RecordOptions *ret,
                         sd_bus_error *error);

/* The list of option keys, comma-separated (for messages and docs). */
const char *record_options_known_keys(void);
