/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* journal-log.h: periscoped's log sink for the journal. When its stderr is
 * the journal's stream ($JOURNAL_STREAM names stderr's device and inode, as
 * systemd.exec(5) documents), each message goes to the journal with
 * sd_journal_send(): PRIORITY= its level, SYSLOG_IDENTIFIER= the program's
 * name once (not again inside MESSAGE=), and the fields of log.h
 * (RECORDING=, UID=, MESSAGE_ID=, ERRNO=). Anywhere else (a terminal, a
 * file, the CLI's private daemon) the plain lines of log.h stay. */
#pragma once

#include <stdbool.h>

/* Whether fd is the stream $JOURNAL_STREAM names. */
bool journal_stream_is_fd(int fd);

/* Sets the journal sink (log_set_sink()) when stderr is the journal; returns
 * whether it did. */
bool journal_log_setup(void);
