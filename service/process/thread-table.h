/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* thread-table.h: the current name of every thread a recording follows
 * (from the /proc snapshot and perf COMM records), so that a thread created
 * during the recording gets the name it inherits from the thread that
 * created it: the kernel copies the creator's comm at clone and sends no
 * COMM record for it. */
#pragma once

#include <stdint.h>

typedef struct ThreadTable ThreadTable;

int thread_table_new(ThreadTable **ret);
ThreadTable *thread_table_free(ThreadTable *t);

/* tid is now called name (cut at 16 bytes, as comm is). 0 or -ENOMEM. */
int thread_table_set(ThreadTable *t, int32_t tid, const char *name);

/* tid's name, or NULL when it is not known. */
const char *thread_table_get(const ThreadTable *t, int32_t tid);

/* Forgets tid (it exited: its tid may be reused). */
void thread_table_remove(ThreadTable *t, int32_t tid);
