/* cmd-dump.c: `periscope dump FILE [--json]`: every frame of a capture, as
 * readable text or as one JSON document for scripts (field names are listed
 * in docs/capture-format.md, "JSON dump"). On a malformed capture it prints
 * the frames before the error, then the error, and exits non-zero. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <json-glib/json-glib.h>

#include "analysis.h"
#include "commands.h"

#define TEXT_DATA_PREVIEW 64 /* bytes of a FILE_CHUNK shown in text mode */

/* Counter types by id, from CTRDEF frames, so CTRSET values print as the
 * right type. */
typedef GHashTable CounterTypes;

static const char *context_name(uint64_t addr) {
        switch (addr) {
        case CAPTURE_CONTEXT_HYPERVISOR: return "hypervisor";
        case CAPTURE_CONTEXT_KERNEL: return "kernel";
        case CAPTURE_CONTEXT_USER: return "user";
        case CAPTURE_CONTEXT_GUEST: return "guest";
        case CAPTURE_CONTEXT_GUEST_KERNEL: return "guest-kernel";
        case CAPTURE_CONTEXT_GUEST_USER: return "guest-user";
        default: return NULL;
        }
}

static bool counter_is_double(CounterTypes *types, uint32_t id) {
        return GPOINTER_TO_UINT(g_hash_table_lookup(types, GUINT_TO_POINTER(id))) == CAPTURE_COUNTER_DOUBLE + 1;
}

static void remember_counter_types(CounterTypes *types, const CaptureFrame *f) {
        if (f->type != CAPTURE_FRAME_CTRDEF)
                return;
        for (unsigned i = 0; i < f->ctrdef.n_counters; i++)
                g_hash_table_replace(types, GUINT_TO_POINTER(f->ctrdef.counters[i].id),
                                     GUINT_TO_POINTER(f->ctrdef.counters[i].type + 1u));
}

static char *escaped(const char *s) {
        return g_strescape(s, NULL);
}

static void print_addresses(const uint64_t *addrs, unsigned n) {
        for (unsigned i = 0; i < n; i++) {
                const char *ctx = capture_address_is_context(addrs[i]) ? context_name(addrs[i]) : NULL;
                if (ctx)
                        printf("    [%s]\n", ctx);
                else
                        printf("    0x%016" PRIx64 "\n", addrs[i]);
        }
}

static void dump_text_frame(const CaptureFrame *f, CounterTypes *types) {
        printf("@%" PRIu64 " %s time=%" PRId64 " cpu=%d pid=%d len=%u", f->offset, capture_frame_type_to_string(f->type),
               f->time, f->cpu, f->pid, f->len);
        switch (f->type) {
        case CAPTURE_FRAME_SAMPLE:
                printf(" tid=%d addresses=%u\n", f->sample.tid, f->sample.n_addrs);
                print_addresses(f->sample.addrs, f->sample.n_addrs);
                return;
        case CAPTURE_FRAME_MAP: {
                g_autofree char *name = escaped(f->map.filename);
                printf(" 0x%" PRIx64 "-0x%" PRIx64 " offset=0x%" PRIx64 " inode=%" PRIu64 " \"%s\"\n", f->map.start,
                       f->map.end, f->map.offset, f->map.inode, name);
                return;
        }
        case CAPTURE_FRAME_PROCESS: {
                g_autofree char *cmd = escaped(f->process.cmdline);
                printf(" cmdline=\"%s\"\n", cmd);
                return;
        }
        case CAPTURE_FRAME_FORK:
                printf(" child_pid=%d\n", f->fork.child_pid);
                return;
        case CAPTURE_FRAME_JITMAP:
                printf(" entries=%u\n", f->jitmap.n_entries);
                for (uint32_t i = 0; i < f->jitmap.n_entries; i++) {
                        g_autofree char *name = escaped(f->jitmap.entries[i].name);
                        printf("    0x%016" PRIx64 " \"%s\"\n", f->jitmap.entries[i].address, name);
                }
                return;
        case CAPTURE_FRAME_CTRDEF:
                printf(" counters=%u\n", f->ctrdef.n_counters);
                for (unsigned i = 0; i < f->ctrdef.n_counters; i++) {
                        const CaptureCounterDef *c = &f->ctrdef.counters[i];
                        g_autofree char *cat = escaped(c->category);
                        g_autofree char *name = escaped(c->name);
                        g_autofree char *desc = escaped(c->description);
                        if (c->type == CAPTURE_COUNTER_DOUBLE)
                                printf("    id=%u double \"%s\" \"%s\" \"%s\" initial=%g\n", c->id, cat, name, desc,
                                       c->value.vdbl);
                        else
                                printf("    id=%u int64 \"%s\" \"%s\" \"%s\" initial=%" PRId64 "\n", c->id, cat, name,
                                       desc, c->value.v64);
                }
                return;
        case CAPTURE_FRAME_CTRSET:
                printf(" values=%u\n", f->ctrset.n_values);
                for (uint32_t i = 0; i < f->ctrset.n_values; i++) {
                        const CaptureCounterSetValue *v = &f->ctrset.values[i];
                        if (counter_is_double(types, v->id))
                                printf("    id=%u %g\n", v->id, v->value.vdbl);
                        else
                                printf("    id=%u %" PRId64 "\n", v->id, v->value.v64);
                }
                return;
        case CAPTURE_FRAME_MARK: {
                g_autofree char *group = escaped(f->mark.group);
                g_autofree char *name = escaped(f->mark.name);
                g_autofree char *msg = escaped(f->mark.message);
                printf(" duration=%" PRId64 " group=\"%s\" name=\"%s\" message=\"%s\"\n", f->mark.duration, group, name,
                       msg);
                return;
        }
        case CAPTURE_FRAME_METADATA: {
                g_autofree char *id = escaped(f->metadata.id);
                g_autofree char *md = escaped(f->metadata.metadata);
                printf(" id=\"%s\" metadata=\"%s\"\n", id, md);
                return;
        }
        case CAPTURE_FRAME_LOG: {
                g_autofree char *domain = escaped(f->log.domain);
                g_autofree char *msg = escaped(f->log.message);
                printf(" severity=%u domain=\"%s\" message=\"%s\"\n", f->log.severity, domain, msg);
                return;
        }
        case CAPTURE_FRAME_FILE_CHUNK: {
                g_autofree char *path = escaped(f->file_chunk.path);
                size_t n = MIN(f->file_chunk.len, TEXT_DATA_PREVIEW);
                /* bytes after an embedded NUL still show, escaped */
                GString *preview = g_string_new(NULL);
                for (size_t i = 0; i < n; i++) {
                        uint8_t c = f->file_chunk.data[i];
                        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
                                g_string_append_c(preview, (char) c);
                        else if (c == '\n')
                                g_string_append(preview, "\\n");
                        else
                                g_string_append_printf(preview, "\\x%02x", c);
                }
                printf(" path=\"%s\" data_len=%u is_last=%s data=\"%s\"%s\n", path, f->file_chunk.len,
                       f->file_chunk.is_last ? "true" : "false", preview->str, f->file_chunk.len > n ? "…" : "");
                g_string_free(preview, TRUE);
                return;
        }
        case CAPTURE_FRAME_ALLOCATION:
                printf(" tid=%d alloc_addr=0x%" PRIx64 " alloc_size=%" PRId64 " addresses=%u\n", f->allocation.tid,
                       f->allocation.alloc_addr, f->allocation.alloc_size, f->allocation.n_addrs);
                print_addresses(f->allocation.addrs, f->allocation.n_addrs);
                return;
        case CAPTURE_FRAME_OVERLAY: {
                g_autofree char *src = escaped(f->overlay.src);
                g_autofree char *dst = escaped(f->overlay.dst);
                printf(" layer=%u src=\"%s\" dst=\"%s\"\n", f->overlay.layer, src, dst);
                return;
        }
        default:
                printf("\n");
                return;
        }
}

static char *hex(uint64_t v) {
        return g_strdup_printf("0x%" PRIx64, v);
}

static void json_add_hex(JsonBuilder *b, const char *member, uint64_t v) {
        g_autofree char *s = hex(v);
        json_builder_set_member_name(b, member);
        json_builder_add_string_value(b, s);
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

static void json_add_addresses(JsonBuilder *b, const uint64_t *addrs, unsigned n) {
        json_builder_set_member_name(b, "addresses");
        json_builder_begin_array(b);
        for (unsigned i = 0; i < n; i++) {
                g_autofree char *s = hex(addrs[i]);
                json_builder_add_string_value(b, s);
        }
        json_builder_end_array(b);
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

/* "symbols", parallel to "addresses": for each address the functions the
 * capture's symbol table puts there, innermost (inlined) first and the
 * function that holds the address last; [] when it names none, null for a
 * context marker. */
static void json_add_symbols(JsonBuilder *b, const SymbolTable *t, int32_t pid, const uint64_t *addrs, unsigned n) {
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

static void json_add_counter_value(JsonBuilder *b, bool is_double, CaptureCounterValue v) {
        json_builder_set_member_name(b, "value");
        if (is_double && !isfinite(v.vdbl))
                json_builder_add_null_value(b); /* JSON has no NaN or infinity */
        else if (is_double)
                json_builder_add_double_value(b, v.vdbl);
        else
                json_builder_add_int_value(b, v.v64);
}

/* A stack (SAMPLE, ALLOCATION): its "addresses" and their "symbols". */
static void json_add_stack(JsonBuilder *b, const SymbolTable *t, int32_t pid, const uint64_t *addrs, unsigned n) {
        json_add_addresses(b, addrs, n);
        json_add_symbols(b, t, pid, addrs, n);
}

static JsonNode *json_frame(const CaptureFrame *f, CounterTypes *types, const SymbolTable *symbols) {
        g_autoptr(JsonBuilder) b = json_builder_new();
        json_builder_begin_object(b);
        json_add_int(b, "offset", (int64_t) f->offset);
        json_add_str(b, "type", capture_frame_type_to_string(f->type));
        json_add_int(b, "type_id", f->type);
        json_add_int(b, "len", f->len);
        json_add_int(b, "cpu", f->cpu);
        json_add_int(b, "pid", f->pid);
        json_add_int(b, "time", f->time);
        switch (f->type) {
        case CAPTURE_FRAME_SAMPLE:
                json_add_int(b, "tid", f->sample.tid);
                json_add_stack(b, symbols, f->pid, f->sample.addrs, f->sample.n_addrs);
                break;
        case CAPTURE_FRAME_MAP:
                json_add_hex(b, "start", f->map.start);
                json_add_hex(b, "end", f->map.end);
                json_add_hex(b, "file_offset", f->map.offset);
                json_add_int(b, "inode", (int64_t) f->map.inode);
                json_add_str(b, "filename", f->map.filename);
                break;
        case CAPTURE_FRAME_PROCESS:
                json_add_str(b, "cmdline", f->process.cmdline);
                break;
        case CAPTURE_FRAME_FORK:
                json_add_int(b, "child_pid", f->fork.child_pid);
                break;
        case CAPTURE_FRAME_JITMAP:
                json_builder_set_member_name(b, "entries");
                json_builder_begin_array(b);
                for (uint32_t i = 0; i < f->jitmap.n_entries; i++) {
                        json_builder_begin_object(b);
                        json_add_hex(b, "address", f->jitmap.entries[i].address);
                        json_add_str(b, "name", f->jitmap.entries[i].name);
                        json_builder_end_object(b);
                }
                json_builder_end_array(b);
                break;
        case CAPTURE_FRAME_CTRDEF:
                json_builder_set_member_name(b, "counters");
                json_builder_begin_array(b);
                for (unsigned i = 0; i < f->ctrdef.n_counters; i++) {
                        const CaptureCounterDef *c = &f->ctrdef.counters[i];
                        json_builder_begin_object(b);
                        json_add_int(b, "id", c->id);
                        json_add_str(b, "value_type", c->type == CAPTURE_COUNTER_DOUBLE ? "double" : "int64");
                        json_add_str(b, "category", c->category);
                        json_add_str(b, "name", c->name);
                        json_add_str(b, "description", c->description);
                        json_add_counter_value(b, c->type == CAPTURE_COUNTER_DOUBLE, c->value);
                        json_builder_end_object(b);
                }
                json_builder_end_array(b);
                break;
        case CAPTURE_FRAME_CTRSET:
                json_builder_set_member_name(b, "values");
                json_builder_begin_array(b);
                for (uint32_t i = 0; i < f->ctrset.n_values; i++) {
                        json_builder_begin_object(b);
                        json_add_int(b, "id", f->ctrset.values[i].id);
                        json_add_counter_value(b, counter_is_double(types, f->ctrset.values[i].id),
                                               f->ctrset.values[i].value);
                        json_builder_end_object(b);
                }
                json_builder_end_array(b);
                break;
        case CAPTURE_FRAME_MARK:
                json_add_int(b, "duration", f->mark.duration);
                json_add_str(b, "group", f->mark.group);
                json_add_str(b, "name", f->mark.name);
                json_add_str(b, "message", f->mark.message);
                break;
        case CAPTURE_FRAME_METADATA:
                json_add_str(b, "id", f->metadata.id);
                json_add_str(b, "metadata", f->metadata.metadata);
                break;
        case CAPTURE_FRAME_LOG:
                json_add_int(b, "severity", f->log.severity);
                json_add_str(b, "domain", f->log.domain);
                json_add_str(b, "message", f->log.message);
                break;
        case CAPTURE_FRAME_FILE_CHUNK: {
                json_add_str(b, "path", f->file_chunk.path);
                json_builder_set_member_name(b, "is_last");
                json_builder_add_boolean_value(b, f->file_chunk.is_last);
                json_add_int(b, "data_len", f->file_chunk.len);
                g_autofree char *b64 = g_base64_encode(f->file_chunk.data, f->file_chunk.len);
                json_add_str(b, "data_base64", b64);
                break;
        }
        case CAPTURE_FRAME_ALLOCATION:
                json_add_int(b, "tid", f->allocation.tid);
                json_add_hex(b, "alloc_addr", f->allocation.alloc_addr);
                json_add_int(b, "alloc_size", f->allocation.alloc_size);
                json_add_stack(b, symbols, f->pid, f->allocation.addrs, f->allocation.n_addrs);
                break;
        case CAPTURE_FRAME_OVERLAY:
                json_add_int(b, "layer", f->overlay.layer);
                json_add_str(b, "src", f->overlay.src);
                json_add_str(b, "dst", f->overlay.dst);
                break;
        default:
                break;
        }
        json_builder_end_object(b);
        return json_builder_get_root(b);
}

static char *json_node_text(JsonNode *node) {
        g_autoptr(JsonGenerator) gen = json_generator_new();
        json_generator_set_root(gen, node);
        return json_generator_to_data(gen, NULL);
}

static char *json_header(const char *path, CaptureReader *r) {
        const CaptureFileHeader *h = capture_reader_get_header(r);
        g_autoptr(JsonBuilder) b = json_builder_new();
        json_builder_begin_object(b);
        json_add_int(b, "version", h->version);
        json_builder_set_member_name(b, "little_endian");
        json_builder_add_boolean_value(b, h->little_endian);
        json_add_str(b, "capture_time", h->capture_time);
        json_add_int(b, "start_time", h->start_time);
        json_add_int(b, "end_time", h->end_time);
        json_add_int(b, "size", (int64_t) capture_reader_get_size(r));
        json_builder_end_object(b);
        g_autoptr(JsonNode) root = json_builder_get_root(b);
        return json_node_text(root);
}

/* The capture's embedded symbol table, or NULL (the "symbols" lists are then
 * empty). Read with a reader of its own: the dump's reader counts the frames
 * it skips, and this is no part of the dump. */
static SymbolTable *load_symbols(const char *path) {
        g_autoptr(CaptureReader) r = NULL;
        SymbolTable *symbols = NULL;
        if (capture_reader_open_path(path, &r, NULL) < 0 || symbol_table_load(r, &symbols, NULL) < 0)
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

        g_autoptr(CaptureReader) r = NULL;
        int k = cli_capture_open("dump", path, &r);
        if (k < 0)
                return 1;

        g_autoptr(GHashTable) types = g_hash_table_new(g_direct_hash, g_direct_equal);
        CaptureFrame f;
        if (json) {
                /* Streamed: one frame object at a time, so big captures do not
                 * build one huge tree. The document stays valid on errors. */
                SymbolTable *symbols = load_symbols(path);
                g_autofree char *header = json_header(path, r);
                printf("{\"path\":");
                print_json_string(path);
                printf(",\"header\":%s,\"frames\":[", header);
                bool first = true;
                while ((k = capture_reader_next(r, &f)) > 0) {
                        remember_counter_types(types, &f);
                        g_autoptr(JsonNode) node = json_frame(&f, types, symbols);
                        g_autofree char *text = json_node_text(node);
                        printf("%s\n%s", first ? "" : ",", text);
                        first = false;
                }
                printf("\n],\"skipped_frames\":%" PRIu64 ",\"error\":", capture_reader_get_skipped(r));
                if (k < 0)
                        print_json_string(cli_capture_read_error(r, k));
                else
                        printf("null");
                printf("}\n");
                symbol_table_free(symbols);
        } else {
                const CaptureFileHeader *h = capture_reader_get_header(r);
                printf("# %s: Sysprof capture version %u, %s-endian, captured at %s, start_time=%" PRId64
                       " end_time=%" PRId64 "\n",
                       path, h->version, h->little_endian ? "little" : "big", h->capture_time, h->start_time,
                       h->end_time);
                while ((k = capture_reader_next(r, &f)) > 0) {
                        remember_counter_types(types, &f);
                        dump_text_frame(&f, types);
                }
                printf("# %" PRIu64 " frames of unknown types skipped\n", capture_reader_get_skipped(r));
        }
        fflush(stdout);
        if (k < 0) {
                fprintf(stderr, "periscope dump: %s: %s (frames before it were printed)\n", path,
                        cli_capture_read_error(r, k));
                return 1;
        }
        return 0;
}
