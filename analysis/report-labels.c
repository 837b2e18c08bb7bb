/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-labels.c: address → frame labels, through the embedded symbol
 * table, JIT maps and MAP frames, with a per-address cache. */
#include "report-labels.h"

#include <string.h>

#include "capture.h"

struct ReportLabels {
        const ReportProfile *profile;
        gboolean with_lines;
        GPtrArray *labels;   /* ReportLabel* by id */
        GHashTable *by_text; /* text → id + 1 */
        GHashTable *cache;   /* AddrKey* → GArray of ids, outermost first */
};

typedef struct AddrKey {
        int32_t pid;
        gboolean kernel;
        uint64_t addr;
} AddrKey;

static guint addr_key_hash(gconstpointer v) {
        const AddrKey *k = v;
        return (guint) (k->addr ^ (k->addr >> 29)) ^ (guint) k->pid * 7919u ^ (guint) k->kernel;
}

static gboolean addr_key_equal(gconstpointer a, gconstpointer b) {
        const AddrKey *x = a, *y = b;
        return x->pid == y->pid && x->kernel == y->kernel && x->addr == y->addr;
}

static void label_free(gpointer p) {
        ReportLabel *l = p;
        g_free(l->text);
        g_free(l->function);
        g_free(l);
}

ReportLabels *report_labels_new(const ReportProfile *profile, gboolean with_lines) {
        ReportLabels *l = g_new0(ReportLabels, 1);
        l->profile = profile;
        l->with_lines = with_lines;
        l->labels = g_ptr_array_new_with_free_func(label_free);
        l->by_text = g_hash_table_new(g_str_hash, g_str_equal);
        l->cache = g_hash_table_new_full(addr_key_hash, addr_key_equal, g_free, (GDestroyNotify) g_array_unref);
        return l;
}

void report_labels_free(ReportLabels *l) {
        if (!l)
                return;
        g_hash_table_unref(l->cache);
        g_hash_table_unref(l->by_text);
        g_ptr_array_unref(l->labels);
        g_free(l);
}

guint report_labels_count(const ReportLabels *l) {
        return l->labels->len;
}

const ReportLabel *report_labels_get(const ReportLabels *l, guint id) {
        return g_ptr_array_index(l->labels, id);
}

char *report_printable(const char *s) {
        char *v = g_utf8_make_valid(s ? s : "", -1);
        for (char *p = v; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        *p = '?';
        return v;
}

/* Interns a label; takes ownership of text and function. */
static guint intern(ReportLabels *l, char *raw_text, char *raw_function, guint flags) {
        char *text = report_printable(raw_text), *function = report_printable(raw_function);
        g_free(raw_text);
        g_free(raw_function);
        gpointer v = g_hash_table_lookup(l->by_text, text);
        if (v) {
                g_free(text);
                g_free(function);
                return GPOINTER_TO_UINT(v) - 1;
        }
        ReportLabel *lab = g_new(ReportLabel, 1);
        lab->text = text;
        lab->function = function;
        lab->flags = flags;
        g_ptr_array_add(l->labels, lab);
        g_hash_table_insert(l->by_text, lab->text, GUINT_TO_POINTER(l->labels->len));
        return l->labels->len - 1;
}

guint report_labels_root(ReportLabels *l, const char *text) {
        return intern(l, g_strdup(text), g_strdup(text), REPORT_LABEL_ROOT);
}

static char *module_name(const char *filename) {
        return g_path_get_basename(filename && *filename ? filename : "?");
}

/* "module+0xOFFSET" (the file offset of addr in mapping m), unresolved. */
static guint intern_module_offset(ReportLabels *l, const ReportMap *m, uint64_t addr, const char *ksuffix) {
        g_autofree char *base = module_name(m->filename);
        char *function = g_strdup_printf("%s+0x%" G_GINT64_MODIFIER "x", base, (guint64) (addr - m->start + m->offset));
        guint kflag = *ksuffix ? REPORT_LABEL_KERNEL : 0;
        return intern(l, g_strconcat(function, ksuffix, NULL), function, kflag | REPORT_LABEL_UNRESOLVED);
}

/* The frames of one address, outermost first. */
static void resolve_address(ReportLabels *l, int32_t pid, gboolean kernel, uint64_t addr, GArray *out) {
        const ReportProfile *p = l->profile;
        const char *ksuffix = kernel ? " [kernel]" : "";
        guint kflag = kernel ? REPORT_LABEL_KERNEL : 0;

        const SymbolRange *r = p->symbols ? symbol_table_lookup(p->symbols, pid, addr) : NULL;
        if (r) {
                for (guint32 i = r->n_frames; i > 0; i--) {
                        const SymbolFrame *f = &r->frames[i - 1];
                        guint flags = kflag;
                        if (f->flags & SYMBOL_FRAME_KERNEL)
                                flags |= REPORT_LABEL_KERNEL;
                        const char *ks = (flags & REPORT_LABEL_KERNEL) ? " [kernel]" : "";
                        char *text;
                        if (f->flags & SYMBOL_FRAME_UNRESOLVED) {
                                flags |= REPORT_LABEL_UNRESOLVED;
                                const ReportMap *m = report_profile_find_map(p, pid, addr);
                                if (m && !kernel && strcmp(f->function, SYMBOL_NO_SYMBOL_NAME) == 0) {
                                        /* a file without symbols there: one row per address, by
                                         * file offset, that `periscope symbolize` can name later */
                                        guint id = intern_module_offset(l, m, addr, "");
                                        g_array_append_val(out, id);
                                        continue;
                                }
                                const char *mod = r->module;
                                g_autofree char *base = m ? module_name(m->filename) : NULL;
                                if (base)
                                        mod = base;
                                text = mod ? g_strdup_printf("%s %s%s", f->function, mod, ks)
                                           : g_strdup_printf("%s%s", f->function, ks);
                        } else {
                                g_autofree char *where = NULL;
                                if (l->with_lines && f->file && f->line) {
                                        g_autofree char *base = g_path_get_basename(f->file);
                                        where = g_strdup_printf(" at %s:%u", base, f->line);
                                }
                                if (f->flags & SYMBOL_FRAME_INLINED)
                                        flags |= REPORT_LABEL_INLINED;
                                text = g_strdup_printf("%s%s%s%s%s", f->function,
                                                       (f->flags & SYMBOL_FRAME_INLINED) ? " (inlined)" : "",
                                                       where ? where : "",
                                                       (f->flags & SYMBOL_FRAME_JIT) ? " [jit]" : "", ks);
                        }
                        guint id = intern(l, text, g_strdup(f->function), flags);
                        g_array_append_val(out, id);
                }
                return;
        }

        char *text;
        if ((addr & CAPTURE_JITMAP_MARK) == CAPTURE_JITMAP_MARK && !kernel) {
                const char *jit = report_profile_find_jit(p, pid, addr);
                if (jit) {
                        guint id = intern(l, g_strdup_printf("%s [jit]", jit), g_strdup(jit), 0);
                        g_array_append_val(out, id);
                        return;
                }
        }
        const ReportMap *m = report_profile_find_map(p, pid, addr);
        guint id;
        if (m)
                id = intern_module_offset(l, m, addr, ksuffix);
        else {
                text = g_strdup_printf("0x%" G_GINT64_MODIFIER "x%s", (guint64) addr, ksuffix);
                char *function = g_strndup(text, strlen(text) - strlen(ksuffix));
                id = intern(l, text, function, kflag | REPORT_LABEL_UNRESOLVED);
        }
        g_array_append_val(out, id);
}

void report_stack_contexts(const uint64_t *addrs, guint32 n, guint8 *out) {
        gboolean kernel = FALSE;
        for (guint32 i = 0; i < n; i++) {
                uint64_t a = addrs[i];
                if (capture_address_is_context(a)) {
                        kernel = a == CAPTURE_CONTEXT_KERNEL || a == CAPTURE_CONTEXT_GUEST_KERNEL ||
                                 a == CAPTURE_CONTEXT_HYPERVISOR;
                        out[i] = REPORT_ADDRESS_MARKER;
                } else if (a == 0)
                        out[i] = REPORT_ADDRESS_MARKER; /* end of a frame-pointer chain perf sometimes keeps */
                else {
                        if (kernel && capture_address_is_user_half(a))
                                kernel = FALSE; /* Sysprof 48's lost user marker (capture-types.h) */
                        out[i] = kernel ? REPORT_ADDRESS_KERNEL : REPORT_ADDRESS_USER;
                }
        }
}

void report_labels_resolve_stack(ReportLabels *l, const ReportRawStack *stack, GArray *out) {
        /* Context markers apply to the addresses after them (innermost
         * first), so find each address's context walking forward, then emit
         * from the outermost end. */
        g_autofree guint8 *is_kernel = g_new0(guint8, stack->n_addrs ? stack->n_addrs : 1);
        report_stack_contexts(stack->addrs, stack->n_addrs, is_kernel);
        for (guint32 i = stack->n_addrs; i > 0; i--) {
                if (is_kernel[i - 1] == REPORT_ADDRESS_MARKER)
                        continue;
                AddrKey key = { stack->pid, is_kernel[i - 1], stack->addrs[i - 1] };
                GArray *ids = g_hash_table_lookup(l->cache, &key);
                if (!ids) {
                        ids = g_array_new(FALSE, FALSE, sizeof(guint));
                        resolve_address(l, key.pid, key.kernel, key.addr, ids);
                        g_hash_table_insert(l->cache, g_memdup2(&key, sizeof(key)), ids);
                }
                g_array_append_vals(out, ids->data, ids->len);
        }
}
