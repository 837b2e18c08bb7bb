/* manager.c: the list of recordings of the daemon. */
#include "manager.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "recording-bus.h"
#include "unwind.h"

int manager_add_recording(Manager *m, RecordingBus *rb) {
        if (GROW_ARRAY(m->recordings, m->allocated_recordings, m->n_recordings + 1, 8) < 0)
                return -ENOMEM;
        m->recordings[m->n_recordings++] = rb;
        return 0;
}

void manager_remove_recording(Manager *m, RecordingBus *rb) {
        for (size_t i = 0; i < m->n_recordings; i++)
                if (m->recordings[i] == rb) {
                        memmove(m->recordings + i, m->recordings + i + 1,
                                (m->n_recordings - i - 1) * sizeof(RecordingBus *));
                        m->n_recordings--;
                        break;
                }
        if (m->exiting && m->n_recordings == 0)
                (void) sd_event_exit(m->event, 0);
}

void manager_end_all(Manager *m) {
        m->exiting = true;
        if (m->n_recordings == 0) {
                (void) sd_event_exit(m->event, 0);
                return;
        }
        /* recording_end may free (and so remove) entries: walk a copy. */
        size_t n = m->n_recordings;
        RecordingBus **copy = calloc(n, sizeof(RecordingBus *));
        if (!copy) {
                (void) sd_event_exit(m->event, -ENOMEM);
                return;
        }
        memcpy(copy, m->recordings, n * sizeof(RecordingBus *));
        for (size_t i = 0; i < n; i++)
                recording_end(recording_bus_get_recording(copy[i]), m->peer ? RECORDING_END_CLIENT_VANISHED : RECORDING_END_SHUTDOWN, 0, NULL);
        free(copy);
}

void manager_init_helper_config(Manager *m) {
        m->helper_config = (HelperClientConfig) { .wait_hook = manager_spill_rings, .wait_hook_userdata = m };
}

void manager_spill_rings(void *userdata) {
        Manager *m = userdata;
        for (size_t i = 0; i < m->n_recordings; i++)
                recording_spill_rings(recording_bus_get_recording(m->recordings[i]));
}

struct UnwindTables *manager_get_unwind_tables(Manager *m) {
        if (!m->unwind_tables)
                (void) unwind_tables_new(&m->helper_config, &m->unwind_tables);
        return m->unwind_tables;
}
