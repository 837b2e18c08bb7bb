/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* message-ids.h: the journal MESSAGE_IDs of periscoped's messages that an
 * administrator may want to find (`journalctl MESSAGE_ID=...`), fixed for
 * good (docs/periscoped.8.md lists them). */
#pragma once

/* A recording started (RECORDING=, UID= its owner). */
#define PERISCOPE_MESSAGE_RECORDING_STARTED "ad216ed2ed264624887bd2fa90a4580d"
/* A recording finished, however it ended (RECORDING=, UID=). */
#define PERISCOPE_MESSAGE_RECORDING_FINISHED "6e775cbf394d48bd94d70dac50b61d57"
/* A caller's request was refused (UID= the caller; RECORDING= when it
 * concerned one), with what it asked and why. */
#define PERISCOPE_MESSAGE_REQUEST_REFUSED "1ea429e269084945a2f1bc310be43d6c"
