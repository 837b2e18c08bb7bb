/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* dump-frame.c: each frame type's fields for `periscope dump`, in one
 * switch; cli/cmd-dump.c writes them as text or JSON. */
#include "dump-frame.h"

struct DumpFrames {
        GHashTable *counter_types; /* GUINT_TO_POINTER(id) → type + 1, from CTRDEF frames */
};

DumpFrames *dump_frames_new(void) {
        DumpFrames *d = g_new0(DumpFrames, 1);
        d->counter_types = g_hash_table_new(g_direct_hash, g_direct_equal);
        return d;
}

void dump_frames_free(DumpFrames *d) {
        if (!d)
                return;
        g_hash_table_unref(d->counter_types);
        g_free(d);
}

const char *dump_context_name(uint64_t addr) {
        switch (addr) {
        case CAPTURE_CONTEXT_HYPERVISOR:
                return "hypervisor";
        case CAPTURE_CONTEXT_KERNEL:
                return "kernel";
        case CAPTURE_CONTEXT_USER:
                return "user";
        case CAPTURE_CONTEXT_GUEST:
                return "guest";
        case CAPTURE_CONTEXT_GUEST_KERNEL:
                return "guest-kernel";
        case CAPTURE_CONTEXT_GUEST_USER:
                return "guest-user";
        default:
                return NULL;
        }
}

static gboolean counter_is_double(DumpFrames *d, uint32_t id) {
        return GPOINTER_TO_UINT(g_hash_table_lookup(d->counter_types, GUINT_TO_POINTER(id))) ==
               CAPTURE_COUNTER_DOUBLE + 1;
}

static DumpField *add(GArray *fields, const char *name, DumpKind kind, DumpFlags flags) {
        DumpField f = { .name = name, .kind = kind, .flags = flags };
        g_array_append_val(fields, f);
        return &g_array_index(fields, DumpField, fields->len - 1);
}

static DumpField *add_int(GArray *fields, const char *name, int64_t v, DumpFlags flags) {
        DumpField *f = add(fields, name, DUMP_INT, flags);
        f->i = v;
        return f;
}

static DumpField *add_hex(GArray *fields, const char *name, uint64_t v, DumpFlags flags) {
        DumpField *f = add(fields, name, DUMP_HEX, flags);
        f->u = v;
        return f;
}

static DumpField *add_str(GArray *fields, const char *name, const char *v, DumpFlags flags) {
        DumpField *f = add(fields, name, DUMP_STR, flags);
        f->s = v;
        return f;
}

static void add_stack(GArray *fields, int32_t pid, const uint64_t *addrs, unsigned n) {
        DumpField *f = add(fields, "addresses", DUMP_STACK, 0);
        f->stack.pid = pid;
        f->stack.addrs = addrs;
        f->stack.n = n;
}

static void add_items(GArray *fields, const char *name, unsigned n, unsigned per) {
        DumpField *f = add(fields, name, DUMP_ITEMS, 0);
        f->items.n = n;
        f->items.per = per;
}

static void add_counter(GArray *fields, const char *text_name, gboolean is_double, CaptureCounterValue v,
                        DumpFlags flags) {
        DumpField *f = add(fields, "value", DUMP_COUNTER, flags);
        f->text_name = text_name;
        f->counter.is_double = is_double;
        f->counter.value = v;
}

void dump_frames_describe(DumpFrames *d, const CaptureFrame *f, GArray *fields) {
        g_array_set_size(fields, 0);
        switch (f->type) {
        case CAPTURE_FRAME_SAMPLE:
                add_int(fields, "tid", f->sample.tid, 0);
                add_stack(fields, f->pid, f->sample.addrs, f->sample.n_addrs);
                break;
        case CAPTURE_FRAME_MAP:
                add_hex(fields, "start", f->map.start, DUMP_TEXT_UNNAMED);
                add_hex(fields, "end", f->map.end, DUMP_TEXT_UNNAMED | DUMP_TEXT_DASH);
                add_hex(fields, "file_offset", f->map.offset, 0)->text_name = "offset";
                add_int(fields, "inode", (int64_t) f->map.inode, DUMP_TEXT_UNSIGNED);
                add_str(fields, "filename", f->map.filename, DUMP_TEXT_UNNAMED);
                break;
        case CAPTURE_FRAME_PROCESS:
                add_str(fields, "cmdline", f->process.cmdline, 0);
                break;
        case CAPTURE_FRAME_FORK:
                add_int(fields, "child_pid", f->fork.child_pid, 0);
                break;
        case CAPTURE_FRAME_JITMAP:
                add_items(fields, "entries", f->jitmap.n_entries, 2);
                for (uint32_t i = 0; i < f->jitmap.n_entries; i++) {
                        add_hex(fields, "address", f->jitmap.entries[i].address, DUMP_TEXT_UNNAMED | DUMP_TEXT_PAD);
                        add_str(fields, "name", f->jitmap.entries[i].name, DUMP_TEXT_UNNAMED);
                }
                break;
        case CAPTURE_FRAME_CTRDEF:
                add_items(fields, "counters", f->ctrdef.n_counters, 6);
                for (unsigned i = 0; i < f->ctrdef.n_counters; i++) {
                        const CaptureCounterDef *c = &f->ctrdef.counters[i];
                        gboolean dbl = c->type == CAPTURE_COUNTER_DOUBLE;
                        g_hash_table_replace(d->counter_types, GUINT_TO_POINTER(c->id), GUINT_TO_POINTER(c->type + 1u));
                        add_int(fields, "id", c->id, 0);
                        add(fields, "value_type", DUMP_WORD, DUMP_TEXT_UNNAMED)->s = dbl ? "double" : "int64";
                        add_str(fields, "category", c->category, DUMP_TEXT_UNNAMED);
                        add_str(fields, "name", c->name, DUMP_TEXT_UNNAMED);
                        add_str(fields, "description", c->description, DUMP_TEXT_UNNAMED);
                        add_counter(fields, "initial", dbl, c->value, 0);
                }
                break;
        case CAPTURE_FRAME_CTRSET:
                add_items(fields, "values", f->ctrset.n_values, 2);
                for (uint32_t i = 0; i < f->ctrset.n_values; i++) {
                        const CaptureCounterSetValue *v = &f->ctrset.values[i];
                        add_int(fields, "id", v->id, 0);
                        add_counter(fields, NULL, counter_is_double(d, v->id), v->value, DUMP_TEXT_UNNAMED);
                }
                break;
        case CAPTURE_FRAME_MARK:
                add_int(fields, "duration", f->mark.duration, 0);
                add_str(fields, "group", f->mark.group, 0);
                add_str(fields, "name", f->mark.name, 0);
                add_str(fields, "message", f->mark.message, 0);
                break;
        case CAPTURE_FRAME_METADATA:
                add_str(fields, "id", f->metadata.id, 0);
                add_str(fields, "metadata", f->metadata.metadata, 0);
                break;
        case CAPTURE_FRAME_LOG:
                add_int(fields, "severity", f->log.severity, 0);
                add_str(fields, "domain", f->log.domain, 0);
                add_str(fields, "message", f->log.message, 0);
                break;
        case CAPTURE_FRAME_FILE_CHUNK: {
                add_str(fields, "path", f->file_chunk.path, 0);
                add(fields, "is_last", DUMP_BOOL, DUMP_JSON_ONLY)->b = f->file_chunk.is_last;
                add_int(fields, "data_len", f->file_chunk.len, 0);
                add(fields, "is_last", DUMP_BOOL, DUMP_TEXT_ONLY)->b = f->file_chunk.is_last;
                DumpField *data = add(fields, "data_base64", DUMP_BYTES, 0);
                data->text_name = "data";
                data->bytes.data = f->file_chunk.data;
                data->bytes.len = f->file_chunk.len;
                break;
        }
        case CAPTURE_FRAME_ALLOCATION:
                add_int(fields, "tid", f->allocation.tid, 0);
                add_hex(fields, "alloc_addr", f->allocation.alloc_addr, 0);
                add_int(fields, "alloc_size", f->allocation.alloc_size, 0);
                add_stack(fields, f->pid, f->allocation.addrs, f->allocation.n_addrs);
                break;
        case CAPTURE_FRAME_OVERLAY:
                add_int(fields, "layer", f->overlay.layer, 0);
                add_str(fields, "src", f->overlay.src, 0);
                add_str(fields, "dst", f->overlay.dst, 0);
                break;
        default:
                break;
        }
}
