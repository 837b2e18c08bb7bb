/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture-json.c: prints every frame of a capture as one JSON object per
 * line (the shape the service tests check with python), using our reader.
 * Usage: capture-json FILE */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "capture.h"

static void print_string(const char *s) {
        putchar('"');
        for (; *s; s++) {
                unsigned char c = (unsigned char) *s;
                if (c == '"' || c == '\\')
                        printf("\\%c", c);
                else if (c < 0x20)
                        printf("\\u%04x", c);
                else
                        putchar(c);
        }
        putchar('"');
}

int main(int argc, char **argv) {
        CaptureReader *r;
        char *error = NULL;
        if (argc != 2) {
                fprintf(stderr, "Usage: capture-json FILE\n");
                return 2;
        }
        if (capture_reader_open_path(argv[1], &r, &error) < 0) {
                fprintf(stderr, "capture-json: %s\n", error ? error : "cannot open");
                return 1;
        }
        const CaptureFileHeader *h = capture_reader_get_header(r);
        printf("{\"type\":\"HEADER\",\"start_time\":%" PRId64 ",\"end_time\":%" PRId64 "}\n", h->start_time,
               h->end_time);
        CaptureFrame f;
        int ret;
        while ((ret = capture_reader_next(r, &f)) > 0) {
                printf("{\"type\":\"%s\",\"time\":%" PRId64 ",\"cpu\":%d,\"pid\":%d",
                       capture_frame_type_to_string(f.type), f.time, f.cpu, f.pid);
                switch (f.type) {
                case CAPTURE_FRAME_SAMPLE:
                        printf(",\"tid\":%d,\"addrs\":[", f.sample.tid);
                        for (unsigned i = 0; i < f.sample.n_addrs; i++)
                                printf("%s%" PRIu64, i ? "," : "", f.sample.addrs[i]);
                        printf("]");
                        break;
                case CAPTURE_FRAME_MAP:
                        printf(",\"start\":%" PRIu64 ",\"end\":%" PRIu64 ",\"offset\":%" PRIu64 ",\"inode\":%" PRIu64
                               ",\"filename\":",
                               f.map.start, f.map.end, f.map.offset, f.map.inode);
                        print_string(f.map.filename);
                        break;
                case CAPTURE_FRAME_PROCESS:
                        printf(",\"cmdline\":");
                        print_string(f.process.cmdline);
                        break;
                case CAPTURE_FRAME_FORK:
                        printf(",\"child\":%d", f.fork.child_pid);
                        break;
                case CAPTURE_FRAME_METADATA:
                        printf(",\"id\":");
                        print_string(f.metadata.id);
                        printf(",\"metadata\":");
                        print_string(f.metadata.metadata);
                        break;
                case CAPTURE_FRAME_FILE_CHUNK:
                        printf(",\"path\":");
                        print_string(f.file_chunk.path);
                        printf(",\"len\":%u,\"is_last\":%s", f.file_chunk.len, f.file_chunk.is_last ? "true" : "false");
                        break;
                default:
                        break;
                }
                printf("}\n");
        }
        capture_reader_free(r);
        if (ret < 0) {
                printf("{\"type\":\"ERROR\",\"error\":");
                print_string(error ? error : "malformed frame");
                printf("}\n");
                return 1;
        }
        return 0;
}
