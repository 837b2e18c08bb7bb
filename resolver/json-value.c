/* json-value.c: strict recursive-descent JSON parser (see json-value.h). */
#include "json-value.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct Parser {
        const unsigned char *p, *end, *start;
        size_t n_values, max_values;
        int error;
} Parser;

static int fail(Parser *ps, int error) {
        if (ps->error == 0)
                ps->error = error;
        return ps->error;
}

static void skip_ws(Parser *ps) {
        while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
                ps->p++;
}

JsonValue *json_value_free(JsonValue *v) {
        if (!v)
                return NULL;
        free(v->string);
        for (size_t i = 0; i < v->n_items; i++) {
                json_value_free(v->items[i]);
                if (v->keys)
                        free(v->keys[i]);
        }
        free(v->items);
        free(v->keys);
        free(v);
        return NULL;
}

static JsonValue *new_value(Parser *ps, JsonType type) {
        if (++ps->n_values > ps->max_values) {
                fail(ps, -E2BIG);
                return NULL;
        }
        JsonValue *v = calloc(1, sizeof(*v));
        if (!v)
                fail(ps, -ENOMEM);
        else
                v->type = type;
        return v;
}

/* Appends one UTF-8 encoded code point to buf. */
static void put_utf8(char *buf, size_t *n, uint32_t cp) {
        if (cp < 0x80)
                buf[(*n)++] = (char) cp;
        else if (cp < 0x800) {
                buf[(*n)++] = (char) (0xC0 | (cp >> 6));
                buf[(*n)++] = (char) (0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
                buf[(*n)++] = (char) (0xE0 | (cp >> 12));
                buf[(*n)++] = (char) (0x80 | ((cp >> 6) & 0x3F));
                buf[(*n)++] = (char) (0x80 | (cp & 0x3F));
        } else {
                buf[(*n)++] = (char) (0xF0 | (cp >> 18));
                buf[(*n)++] = (char) (0x80 | ((cp >> 12) & 0x3F));
                buf[(*n)++] = (char) (0x80 | ((cp >> 6) & 0x3F));
                buf[(*n)++] = (char) (0x80 | (cp & 0x3F));
        }
}

/* Length of a valid UTF-8 sequence at p (1..4), or 0 if invalid. */
static size_t utf8_valid_len(const unsigned char *p, const unsigned char *end) {
        unsigned char c = p[0];
        size_t need;
        uint32_t cp, min;
        if (c < 0x80)
                return 1;
        if ((c & 0xE0) == 0xC0)
                need = 2, cp = c & 0x1F, min = 0x80;
        else if ((c & 0xF0) == 0xE0)
                need = 3, cp = c & 0x0F, min = 0x800;
        else if ((c & 0xF8) == 0xF0)
                need = 4, cp = c & 0x07, min = 0x10000;
        else
                return 0;
        if ((size_t) (end - p) < need)
                return 0;
        for (size_t i = 1; i < need; i++) {
                if ((p[i] & 0xC0) != 0x80)
                        return 0;
                cp = (cp << 6) | (p[i] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
                return 0;
        return need;
}

static int hex4(Parser *ps, uint32_t *ret) {
        uint32_t v = 0;
        if (ps->end - ps->p < 4)
                return fail(ps, -EBADMSG);
        for (int i = 0; i < 4; i++) {
                unsigned char c = *ps->p++;
                v <<= 4;
                if (c >= '0' && c <= '9')
                        v |= c - '0';
                else if (c >= 'a' && c <= 'f')
                        v |= c - 'a' + 10;
                else if (c >= 'A' && c <= 'F')
                        v |= c - 'A' + 10;
                else
                        return fail(ps, -EBADMSG);
        }
        *ret = v;
        return 0;
}

/* Parses a string at ps->p (on the opening quote) into a new buffer. */
static char *parse_string(Parser *ps) {
        const unsigned char *s = ++ps->p;
        /* The decoded string is never longer than its encoding. */
        const unsigned char *q = s;
        while (q < ps->end && *q != '"') {
                if (*q == '\\' && q + 1 < ps->end)
                        q++;
                q++;
        }
        if (q >= ps->end) {
                fail(ps, -EBADMSG);
                return NULL;
        }
        char *buf = malloc((size_t) (q - s) + 1);
        size_t n = 0;
        if (!buf) {
                fail(ps, -ENOMEM);
                return NULL;
        }
        while (ps->p < ps->end && *ps->p != '"') {
                unsigned char c = *ps->p;
                if (c < 0x20)
                        goto bad;
                if (c == '\\') {
                        ps->p++;
                        if (ps->p >= ps->end)
                                goto bad;
                        c = *ps->p++;
                        switch (c) {
                        case '"': buf[n++] = '"'; break;
                        case '\\': buf[n++] = '\\'; break;
                        case '/': buf[n++] = '/'; break;
                        case 'b': buf[n++] = '\b'; break;
                        case 'f': buf[n++] = '\f'; break;
                        case 'n': buf[n++] = '\n'; break;
                        case 'r': buf[n++] = '\r'; break;
                        case 't': buf[n++] = '\t'; break;
                        case 'u': {
                                uint32_t cp, lo;
                                if (hex4(ps, &cp) < 0)
                                        goto bad;
                                if (cp >= 0xDC00 && cp <= 0xDFFF)
                                        goto bad;
                                if (cp >= 0xD800 && cp <= 0xDBFF) {
                                        if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u')
                                                goto bad;
                                        ps->p += 2;
                                        if (hex4(ps, &lo) < 0 || lo < 0xDC00 || lo > 0xDFFF)
                                                goto bad;
                                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                                }
                                if (cp == 0)
                                        goto bad; /* embedded NUL: refuse, callers use C strings */
                                put_utf8(buf, &n, cp);
                                break;
                        }
                        default:
                                goto bad;
                        }
                        continue;
                }
                size_t l = utf8_valid_len(ps->p, ps->end);
                if (l == 0)
                        goto bad;
                memcpy(buf + n, ps->p, l);
                n += l;
                ps->p += l;
        }
        if (ps->p >= ps->end)
                goto bad;
        ps->p++; /* closing quote */
        buf[n] = 0;
        return buf;
bad:
        free(buf);
        fail(ps, -EBADMSG);
        return NULL;
}

static int parse_number(Parser *ps, double *ret) {
        const unsigned char *s = ps->p;
        if (ps->p < ps->end && *ps->p == '-')
                ps->p++;
        if (ps->p >= ps->end)
                return fail(ps, -EBADMSG);
        if (*ps->p == '0')
                ps->p++;
        else if (*ps->p >= '1' && *ps->p <= '9')
                while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
                        ps->p++;
        else
                return fail(ps, -EBADMSG);
        if (ps->p < ps->end && *ps->p == '.') {
                ps->p++;
                if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
                        return fail(ps, -EBADMSG);
                while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
                        ps->p++;
        }
        if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
                ps->p++;
                if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
                        ps->p++;
                if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
                        return fail(ps, -EBADMSG);
                while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
                        ps->p++;
        }
        char tmp[64];
        size_t l = (size_t) (ps->p - s);
        if (l >= sizeof(tmp))
                return fail(ps, -EBADMSG);
        memcpy(tmp, s, l);
        tmp[l] = 0;
        *ret = strtod(tmp, NULL);
        return 0;
}

static int append_item(Parser *ps, JsonValue *v, char *key, JsonValue *item, size_t *cap) {
        if (v->n_items == *cap) {
                size_t ncap = *cap ? *cap * 2 : 4;
                JsonValue **ni = realloc(v->items, ncap * sizeof(*ni));
                if (!ni)
                        return fail(ps, -ENOMEM);
                v->items = ni;
                if (v->type == JSON_OBJECT) {
                        char **nk = realloc(v->keys, ncap * sizeof(*nk));
                        if (!nk)
                                return fail(ps, -ENOMEM);
                        v->keys = nk;
                }
                *cap = ncap;
        }
        if (v->keys)
                v->keys[v->n_items] = key;
        v->items[v->n_items++] = item;
        return 0;
}

static JsonValue *parse_value(Parser *ps, unsigned depth);

static JsonValue *parse_container(Parser *ps, unsigned depth, bool object) {
        JsonValue *v = new_value(ps, object ? JSON_OBJECT : JSON_ARRAY);
        size_t cap = 0;
        char close = object ? '}' : ']';
        if (!v)
                return NULL;
        ps->p++;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == close) {
                ps->p++;
                return v;
        }
        for (;;) {
                char *key = NULL;
                skip_ws(ps);
                if (object) {
                        if (ps->p >= ps->end || *ps->p != '"')
                                goto bad;
                        key = parse_string(ps);
                        if (!key)
                                goto bad;
                        skip_ws(ps);
                        if (ps->p >= ps->end || *ps->p != ':') {
                                free(key);
                                goto bad;
                        }
                        ps->p++;
                }
                JsonValue *item = parse_value(ps, depth + 1);
                if (!item || append_item(ps, v, key, item, &cap) < 0) {
                        free(key);
                        json_value_free(item);
                        goto bad;
                }
                skip_ws(ps);
                if (ps->p >= ps->end)
                        goto bad;
                if (*ps->p == ',') {
                        ps->p++;
                        continue;
                }
                if (*ps->p == close) {
                        ps->p++;
                        return v;
                }
                goto bad;
        }
bad:
        fail(ps, -EBADMSG);
        json_value_free(v);
        return NULL;
}

static bool match_literal(Parser *ps, const char *lit) {
        size_t l = strlen(lit);
        if ((size_t) (ps->end - ps->p) < l || memcmp(ps->p, lit, l) != 0)
                return false;
        ps->p += l;
        return true;
}

static JsonValue *parse_value(Parser *ps, unsigned depth) {
        JsonValue *v;
        if (depth > JSON_MAX_DEPTH) {
                fail(ps, -EBADMSG);
                return NULL;
        }
        skip_ws(ps);
        if (ps->p >= ps->end) {
                fail(ps, -EBADMSG);
                return NULL;
        }
        switch (*ps->p) {
        case '{':
                return parse_container(ps, depth, true);
        case '[':
                return parse_container(ps, depth, false);
        case '"':
                v = new_value(ps, JSON_STRING);
                if (v && !(v->string = parse_string(ps))) {
                        json_value_free(v);
                        return NULL;
                }
                return v;
        case 't':
        case 'f':
        case 'n': {
                JsonType t = *ps->p == 't' ? JSON_TRUE : *ps->p == 'f' ? JSON_FALSE : JSON_NULL;
                if (!match_literal(ps, t == JSON_TRUE ? "true" : t == JSON_FALSE ? "false" : "null")) {
                        fail(ps, -EBADMSG);
                        return NULL;
                }
                return new_value(ps, t);
        }
        default:
                v = new_value(ps, JSON_NUMBER);
                if (v && parse_number(ps, &v->number) < 0) {
                        json_value_free(v);
                        return NULL;
                }
                return v;
        }
}

int json_parse(const char *data, size_t len, size_t max_values, JsonValue **ret, size_t *ret_error_offset) {
        Parser ps = {
                .p = (const unsigned char *) data,
                .start = (const unsigned char *) data,
                .end = (const unsigned char *) data + len,
                .max_values = max_values,
        };
        JsonValue *v = parse_value(&ps, 0);
        if (v) {
                skip_ws(&ps);
                if (ps.p != ps.end) {
                        fail(&ps, -EBADMSG);
                        json_value_free(v);
                        v = NULL;
                }
        }
        if (!v) {
                if (ret_error_offset)
                        *ret_error_offset = (size_t) (ps.p - ps.start);
                return ps.error ? ps.error : -EBADMSG;
        }
        *ret = v;
        return 0;
}

const JsonValue *json_object_get(const JsonValue *v, const char *key) {
        if (!v || v->type != JSON_OBJECT)
                return NULL;
        for (size_t i = 0; i < v->n_items; i++)
                if (strcmp(v->keys[i], key) == 0)
                        return v->items[i];
        return NULL;
}

const char *json_object_get_string(const JsonValue *v, const char *key) {
        const JsonValue *m = json_object_get(v, key);
        return m && m->type == JSON_STRING ? m->string : NULL;
}
