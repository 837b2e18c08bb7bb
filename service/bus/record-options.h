/* SPDX-License-Identifier: LGPL-2.1-or-later */
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
#include "resolver.h"

/* Reads the a{sv} at the message's read position into *ret (defaults for
 * what is absent) and checks every value but "container"'s processes
 * (record_options_expand_container()) and whether the given pids exist
 * (record_options_check_targets(), once the caller is authorized). On
 * failure fills error with an org.periscope.Error.* naming the option and
 * why, and returns negative. */
int record_options_parse(sd_bus_message *m, RecordOptions *ret, sd_bus_error *error);

/* Whether every process given in 'pids' and 'command-pid' exists and is
 * not a zombie; error (NoSuchProcess) says which is not, with its command
 * and parent. Only for a caller authorized to record them: told before,
 * a caller would learn that another user's process exists and what it
 * runs (authorization.h says the same for both). */
int record_options_check_targets(const RecordOptions *o, sd_bus_error *error);

/* "container": adds the processes of every running container/app matching
 * it to o->pids (when some of the matches are caller_uid's own, only those),
 * or says to wait for them when it exists but does not run; r parses the
 * users' files (on a fiber: user-file-jobs.h). Nothing without "container".
 * On failure as record_options_parse(). */
int record_options_expand_container(RecordOptions *o, uid_t caller_uid, Resolver *res, sd_bus_error *error);

/* The list of option keys, comma-separated (for messages and docs). */
const char *record_options_known_keys(void);
