/* record-output.h: the capture file of `periscope record`. It is written
 * under a hidden temporary name next to the target and takes the user's
 * name only once the recording has really started, so a recording that
 * never starts (refused, a command that cannot run) leaves nothing on disk
 * and an existing file of that name is kept. A target that exists and is
 * not a regular file (a pipe, /dev/stdout) is written directly. */
#pragma once

#include <gio/gio.h>

typedef struct RecordOutput {
        char *path;       /* the name the user asked for */
        char *temp;       /* the hidden name while not committed, or NULL */
        int fd;
} RecordOutput;

/* Creates the file; -1 with *error naming the path on failure. */
int record_output_open(RecordOutput *o, const char *path, GError **error);

/* Gives the file its name (replacing an older one). */
int record_output_commit(RecordOutput *o, GError **error);

/* Removes the file if it was never committed; frees o's fields. */
void record_output_finish(RecordOutput *o);
