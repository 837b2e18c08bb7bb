/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-dump.c: `periscope dump FILE [--json]`: every frame of a capture, as
 * readable text or as one JSON document for scripts (field names are listed
 * in docs/capture-format.md, "JSON dump"). On a malformed capture it prints
 * the frames before the error, then the error, and exits non-zero. What each
 * frame holds is analysis/'s (dump-frame.h); this file writes it. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <json-glib/json-glib.h>

#include "analysis.h"
#include "commands.h"

static char *escaped(const char *s) {
        return g_strescape(s, NULL);
}

/* The text of one field's value (after "NAME=" if it has one). */
static void text_value(const DumpField *d) {
        switch (d->kind) {
        case DUMP_INT:
                if (d->flags & DUMP_TEXT_UNSIGNED)
                        printf("%" PRIu64, (uint64_t) d->i);
                else
                        printf("%" PRId64, d->i);
                return;
        case DUMP_HEX:
                printf((d->flags & DUMP_TEXT_PAD) ? "0x%016" PRIx64 : "0x%" PRIx64, d->u);
                return;
        case DUMP_STR: {
                g_autofree char *e = escaped(d->s);
                printf("\"%s\"", e);
                return;
        }
        case DUMP_WORD:
                fputs(d->s, stdout);
                return;
        case DUMP_BOOL:
                fputs(d->b ? "true" : "false", stdout);
                return;
        case DUMP_COUNTER:
                if (d->counter.is_double)
                        printf("%g", d->counter.value.vdbl);
                else
                        printf("%" PRId64, d->counter.value.v64);
                return;
        case DUMP_STACK:
                printf("%u", d->stack.n);
                return;
        case DUMP_ITEMS:
                printf("%u", d->items.n);
                return;
        case DUMP_BYTES: {
                size_t n = MIN(d->bytes.len, DUMP_TEXT_PREVIEW);
                /* bytes after an embedded NUL still show, escaped */
                g_autoptr(GString) preview = g_string_new(NULL);
                for (size_t i = 0; i < n; i++) {
                        uint8_t c = d->bytes.data[i];
                        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
                                g_string_append_c(preview, (char) c);
                        else if (c == '\n')
                                g_string_append(preview, "\\n");
                        else
                                g_string_append_printf(preview, "\\x%02x", c);
                }
                printf("\"%s\"%s", preview->str, d->bytes.len > n ? "…" : "");
                return;
        }
        }
}

/* Fields [from, to) on one line, each after a space (the first of a line
 * of items without one). */
static void text_fields(const DumpField *fields, guint from, guint to, gboolean first) {
        for (guint i = from; i < to; i++) {
                const DumpField *d = &fields[i];
                if (d->flags & DUMP_JSON_ONLY)
                        continue;
                if (!first)
                        fputc((d->flags & DUMP_TEXT_DASH) ? '-' : ' ', stdout);
                first = FALSE;
                if (!(d->flags & DUMP_TEXT_UNNAMED))
                        printf("%s=", d->text_name ? d->text_name : d->name);
                text_value(d);
        }
}

static void dump_text_frame(const CaptureFrame *f, const GArray *fields) {
        printf("@%" PRIu64 " %s time=%" PRId64 " cpu=%d pid=%d len=%u", f->offset,
               capture_frame_type_to_string(f->type), f->time, f->cpu, f->pid, f->len);
        const DumpField *d = (const DumpField *) fields->data;
        guint end = fields->len;
        for (guint i = 0; i < fields->len; i++)
                if (d[i].kind == DUMP_ITEMS) {
                        end = i + 1; /* the items follow on lines of their own */
                        break;
                }
        text_fields(d, 0, end, FALSE);
        fputc('\n', stdout);
        for (guint i = 0; i < end; i++) {
                if (d[i].kind == DUMP_STACK)
                        for (unsigned j = 0; j < d[i].stack.n; j++) {
                                uint64_t a = d[i].stack.addrs[j];
                                const char *ctx = capture_address_is_context(a) ? dump_context_name(a) : NULL;
                                if (ctx)
                                        printf("    [%s]\n", ctx);
                                else
                                        printf("    0x%016" PRIx64 "\n", a);
                        }
                if (d[i].kind == DUMP_ITEMS)
                        for (unsigned j = 0; j < d[i].items.n; j++) {
                                guint at = end + j * d[i].items.per;
                                fputs("    ", stdout);
                                text_fields(d, at, at + d[i].items.per, TRUE);
                                fputc('\n', stdout);
                        }
        }
}

static char *hex(uint64_t v) {
        return g_strdup_printf("0x%" PRIx64, v);
}

static void json_add_int(JsonBuilder *b, const char *member, int64_t v) {
        json_builder_set_member_name(b, member);
        json_builder_add_int_value(b, v);
}

/* Strings from captures are arbitrary bytes (command lines, paths): invalid
 * UTF-8 becomes U+FFFD so the document stays valid JSON. */
static void json_add_str(JsonBuilder *b, const char *member, const char *v) {
        json_builder_set_member_name(b, member);
        if (g_utf8_validate(v, -1, NULL)) {
                json_builder_add_string_value(b, v);
                return;
        }
        g_autofree char *valid = g_utf8_make_valid(v, -1);
        json_builder_add_string_value(b, valid);
}

static void json_add_symbol_frame(JsonBuilder *b, const SymbolFrame *f, bool kernel) {
        json_builder_begin_object(b);
        json_add_str(b, "function", f->function);
        if (f->file)
                json_add_str(b, "file", f->file);
        if (f->line)
                json_add_int(b, "line", f->line);
        json_builder_set_member_name(b, "inlined");
        json_builder_add_boolean_value(b, (f->flags & SYMBOL_FRAME_INLINED) != 0);
        json_builder_set_member_name(b, "kernel");
        json_builder_add_boolean_value(b, kernel || (f->flags & SYMBOL_FRAME_KERNEL));
        if (f->flags & SYMBOL_FRAME_UNRESOLVED) {
                json_builder_set_member_name(b, "unresolved");
                json_builder_add_boolean_value(b, true);
        }
        json_builder_end_object(b);
}

/* A stack's "addresses" and, parallel to them, "symbols": for each address
 * the functions the capture's symbol table puts there, innermost (inlined)
 * first and the function that holds the address last; [] when it names
 * none, null for a context marker. */
static void json_add_stack(JsonBuilder *b, const SymbolTable *t, int32_t pid, const uint64_t *addrs, unsigned n) {
        json_builder_set_member_name(b, "addresses");
        json_builder_begin_array(b);
        for (unsigned i = 0; i < n; i++) {
                g_autofree char *s = hex(addrs[i]);
                json_builder_add_string_value(b, s);
        }
        json_builder_end_array(b);
        g_autofree guint8 *ctx = g_new(guint8, n ? n : 1);
        report_stack_contexts(addrs, n, ctx);
        json_builder_set_member_name(b, "symbols");
        json_builder_begin_array(b);
        for (unsigned i = 0; i < n; i++) {
                if (ctx[i] == REPORT_ADDRESS_MARKER) {
                        json_builder_add_null_value(b);
                        continue;
                }
                const SymbolRange *r = t ? symbol_table_lookup(t, pid, addrs[i]) : NULL;
                json_builder_begin_array(b);
                for (uint32_t j = 0; r && j < r->n_frames; j++)
                        json_add_symbol_frame(b, &r->frames[j], ctx[i] == REPORT_ADDRESS_KERNEL);
                json_builder_end_array(b);
        }
        json_builder_end_array(b);
}

/* Fields [from, to) as members of the open object; returns where it stopped
 * (past the items of a list). */
static guint json_fields(JsonBuilder *b, const DumpField *fields, guint from, guint to, const SymbolTable *symbols) {
        guint i = from;
        while (i < to) {
                const DumpField *d = &fields[i++];
                if (d->flags & DUMP_TEXT_ONLY)
                        continue;
                switch (d->kind) {
                case DUMP_INT:
                        json_add_int(b, d->name, d->i);
                        break;
                case DUMP_HEX: {
                        g_autofree char *s = hex(d->u);
                        json_builder_set_member_name(b, d->name);
                        json_builder_add_string_value(b, s);
                        break;
                }
                case DUMP_STR:
                case DUMP_WORD:
                        json_add_str(b, d->name, d->s);
                        break;
                case DUMP_BOOL:
                        json_builder_set_member_name(b, d->name);
                        json_builder_add_boolean_value(b, d->b);
                        break;
                case DUMP_COUNTER:
                        json_builder_set_member_name(b, d->name);
                        if (d->counter.is_double && !isfinite(d->counter.value.vdbl))
                                json_builder_add_null_value(b); /* JSON has no NaN or infinity */
                        else if (d->counter.is_double)
                                json_builder_add_double_value(b, d->counter.value.vdbl);
                        else
                                json_builder_add_int_value(b, d->counter.value.v64);
                        break;
                case DUMP_STACK:
                        json_add_stack(b, symbols, d->stack.pid, d->stack.addrs, d->stack.n);
                        break;
                case DUMP_BYTES: {
                        g_autofree char *b64 = g_base64_encode(d->bytes.data, d->bytes.len);
                        json_add_str(b, d->name, b64);
                        break;
                }
                case DUMP_ITEMS:
                        json_builder_set_member_name(b, d->name);
                        json_builder_begin_array(b);
                        for (unsigned j = 0; j < d->items.n; j++) {
                                json_builder_begin_object(b);
                                i = json_fields(b, fields, i, i + d->items.per, symbols);
                                json_builder_end_object(b);
                        }
                        json_builder_end_array(b);
                        break;
                }
        }
        return i;
}

static JsonNode *json_frame(const CaptureFrame *f, const GArray *fields, const SymbolTable *symbols) {
        g_autoptr(JsonBuilder) b = json_builder_new();
        json_builder_begin_object(b);
        json_add_int(b, "offset", (int64_t) f->offset);
        json_add_str(b, "type", capture_frame_type_to_string(f->type));
        json_add_int(b, "type_id", f->type);
        json_add_int(b, "len", f->len);
        json_add_int(b, "cpu", f->cpu);
        json_add_int(b, "pid", f->pid);
        json_add_int(b, "time", f->time);
        json_fields(b, (const DumpField *) fields->data, 0, fields->len, symbols);
        json_builder_end_object(b);
        return json_builder_get_root(b);
}

static char *json_node_text(JsonNode *node) {
        g_autoptr(JsonGenerator) gen = json_generator_new();
        json_generator_set_root(gen, node);
        return json_generator_to_data(gen, NULL);
}

static char *json_header(const char *path, CaptureReader *reader) {
        const CaptureFileHeader *h = capture_reader_get_header(reader);
        g_autoptr(JsonBuilder) b = json_builder_new();
        json_builder_begin_object(b);
        json_add_int(b, "version", h->version);
        json_builder_set_member_name(b, "little_endian");
        json_builder_add_boolean_value(b, h->little_endian);
        json_add_str(b, "capture_time", h->capture_time);
        json_add_int(b, "start_time", h->start_time);
        json_add_int(b, "end_time", h->end_time);
        json_add_int(b, "size", (int64_t) capture_reader_get_size(reader));
        json_builder_end_object(b);
        g_autoptr(JsonNode) root = json_builder_get_root(b);
        return json_node_text(root);
}

/* The capture's embedded symbol table, or NULL (the "symbols" lists are then
 * empty). Read with a reader of its own: the dump's reader counts the frames
 * it skips, and this is no part of the dump. */
static SymbolTable *load_symbols(const char *path) {
        g_autoptr(CaptureReader) reader = NULL;
        SymbolTable *symbols = NULL;
        if (capture_reader_open_path(path, &reader, NULL) < 0 || symbol_table_load(reader, &symbols, NULL) < 0)
                return NULL;
        return symbols;
}

/* Prints a JSON string literal (quotes included). */
static void print_json_string(const char *s) {
        g_autoptr(JsonNode) n = json_node_new(JSON_NODE_VALUE);
        g_autofree char *valid = g_utf8_make_valid(s, -1);
        json_node_set_string(n, valid);
        g_autofree char *text = json_node_text(n);
        fputs(text, stdout);
}

int cmd_dump(int argc, char **argv) {
        gboolean json = FALSE;
        const GOptionEntry entries[] = {
                { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print one JSON document (frames as objects)", NULL },
                { NULL },
        };
        g_autoptr(GOptionContext) ctx = g_option_context_new("FILE — print every frame of a capture");
        g_option_context_add_main_entries(ctx, entries, NULL);
        g_autoptr(GError) gerr = NULL;
        if (!g_option_context_parse(ctx, &argc, &argv, &gerr)) {
                fprintf(stderr, "periscope dump: %s\n", gerr->message);
                return 2;
        }
        if (argc != 2) {
                fprintf(stderr, "periscope dump: expected exactly one capture file (periscope dump FILE [--json])\n");
                return 2;
        }
        const char *path = argv[1];

        g_autoptr(CaptureReader) reader = NULL;
        int r = cli_capture_open("dump", path, &reader);
        if (r < 0)
                return 1;

        g_autoptr(DumpFrames) frames = dump_frames_new();
        g_autoptr(GArray) fields = g_array_new(FALSE, FALSE, sizeof(DumpField));
        CaptureFrame f;
        if (json) {
                /* Streamed: one frame object at a time, so big captures do not
                 * build one huge tree. The document stays valid on errors. */
                SymbolTable *symbols = load_symbols(path);
                g_autofree char *header = json_header(path, reader);
                printf("{\"path\":");
                print_json_string(path);
                printf(",\"header\":%s,\"frames\":[", header);
                bool first = true;
                while ((r = capture_reader_next(reader, &f)) > 0) {
                        dump_frames_describe(frames, &f, fields);
                        g_autoptr(JsonNode) node = json_frame(&f, fields, symbols);
                        g_autofree char *text = json_node_text(node);
                        printf("%s\n%s", first ? "" : ",", text);
                        first = false;
                }
                printf("\n],\"skipped_frames\":%" PRIu64 ",\"error\":", capture_reader_get_skipped(reader));
                if (r < 0)
                        print_json_string(cli_capture_read_error(reader, r));
                else
                        printf("null");
                printf("}\n");
                symbol_table_free(symbols);
        } else {
                const CaptureFileHeader *h = capture_reader_get_header(reader);
                printf("# %s: Sysprof capture version %u, %s-endian, captured at %s, start_time=%" PRId64
                       " end_time=%" PRId64 "\n",
                       path, h->version, h->little_endian ? "little" : "big", h->capture_time, h->start_time,
                       h->end_time);
                while ((r = capture_reader_next(reader, &f)) > 0) {
                        dump_frames_describe(frames, &f, fields);
                        dump_text_frame(&f, fields);
                }
                printf("# %" PRIu64 " frames of unknown types skipped\n", capture_reader_get_skipped(reader));
        }
        fflush(stdout);
        if (r < 0) {
                fprintf(stderr, "periscope dump: %s: %s (frames before it were printed)\n", path,
                        cli_capture_read_error(reader, r));
                return 1;
        }
        return 0;
}
