/* SPDX-License-Identifier: BSD-2-Clause */
/* A small JSON reader (tools/lib/json.h), RFC 8259. */
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "json.h"

/* cryptsetup's metadata nests 4 deep; anything far deeper is not it. */
#define JSON_MAX_DEPTH 32

typedef struct jr {
        const char *s;
        size_t n, off;
        const char *err;
} jr;

static bool fail(jr *p, const char *why) {
        if (!p->err)
                p->err = why;
        return false;
}

static void ws(jr *p) {
        while (p->off < p->n && (p->s[p->off] == ' ' || p->s[p->off] == '\t' || p->s[p->off] == '\r' || p->s[p->off] == '\n'))
                p->off++;
}

static bool peek(jr *p, char c) {
        ws(p);
        return p->off < p->n && p->s[p->off] == c;
}

static bool take(jr *p, char c) {
        if (!peek(p, c))
                return false;
        p->off++;
        return true;
}

static int hexval(char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Four hex digits at off (bounds checked). */
static bool hex4(jr *p, unsigned *ret) {
        unsigned v = 0;

        if (p->n - p->off < 4)
                return fail(p, "truncated \\u escape");
        for (int i = 0; i < 4; i++) {
                int h = hexval(p->s[p->off + (size_t) i]);
                if (h < 0)
                        return fail(p, "bad \\u escape");
                v = v << 4 | (unsigned) h;
        }
        p->off += 4;
        *ret = v;
        return true;
}

static size_t utf8_put(char *o, unsigned cp) {
        if (cp < 0x80) {
                o[0] = (char) cp;
                return 1;
        }
        if (cp < 0x800) {
                o[0] = (char) (0xc0 | cp >> 6);
                o[1] = (char) (0x80 | (cp & 0x3f));
                return 2;
        }
        if (cp < 0x10000) {
                o[0] = (char) (0xe0 | cp >> 12);
                o[1] = (char) (0x80 | (cp >> 6 & 0x3f));
                o[2] = (char) (0x80 | (cp & 0x3f));
                return 3;
        }
        o[0] = (char) (0xf0 | cp >> 18);
        o[1] = (char) (0x80 | (cp >> 12 & 0x3f));
        o[2] = (char) (0x80 | (cp >> 6 & 0x3f));
        o[3] = (char) (0x80 | (cp & 0x3f));
        return 4;
}

/* A \u escape (after the 'u'), a surrogate pair joined (RFC 8259 §7). */
static bool unicode(jr *p, char *o, size_t *len) {
        unsigned cp, lo;

        if (!hex4(p, &cp))
                return false;
        if (cp >= 0xdc00 && cp < 0xe000)
                return fail(p, "a lone low surrogate");
        if (cp >= 0xd800 && cp < 0xdc00) {
                if (p->n - p->off < 2 || p->s[p->off] != '\\' || p->s[p->off + 1] != 'u')
                        return fail(p, "a lone high surrogate");
                p->off += 2;
                if (!hex4(p, &lo) || lo < 0xdc00 || lo >= 0xe000)
                        return fail(p, "a high surrogate without its low one");
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        }
        if (cp == 0)
                return fail(p, "\\u0000 in a string");
        *len += utf8_put(o + *len, cp);
        return true;
}

/* A string (after its '"'): decoded into a malloc()ed copy. Decoding
 * never makes it longer than its text, escapes included. */
static char *string(jr *p) {
        size_t start = p->off, len = 0;
        char *o;

        while (p->off < p->n && p->s[p->off] != '"')
                p->off += p->s[p->off] == '\\' && p->n - p->off > 1 ? 2 : 1;
        if (p->off >= p->n) {
                fail(p, "unterminated string");
                return NULL;
        }
        o = malloc(p->off - start + 1);
        if (!o) {
                fail(p, "out of memory");
                return NULL;
        }
        for (p->off = start; p->s[p->off] != '"';) {
                unsigned char c = (unsigned char) p->s[p->off++];
                if (c < 0x20) {
                        fail(p, "a control character in a string");
                        goto bad;
                }
                if (c != '\\') {
                        o[len++] = (char) c;
                        continue;
                }
                c = (unsigned char) p->s[p->off++];
                switch (c) {
                case '"': case '\\': case '/': o[len++] = (char) c; break;
                case 'b': o[len++] = '\b'; break;
                case 'f': o[len++] = '\f'; break;
                case 'n': o[len++] = '\n'; break;
                case 'r': o[len++] = '\r'; break;
                case 't': o[len++] = '\t'; break;
                case 'u':
                        if (!unicode(p, o, &len))
                                goto bad;
                        break;
                default: fail(p, "bad escape in a string"); goto bad;
                }
        }
        p->off++;
        o[len] = 0;
        return o;
bad:
        free(o);
        return NULL;
}

static bool number(jr *p, json_value *v) {
        size_t start = p->off;

        if (p->off < p->n && p->s[p->off] == '-')
                p->off++;
        if (p->off >= p->n || p->s[p->off] < '0' || p->s[p->off] > '9')
                return fail(p, "unexpected character");
        while (p->off < p->n && strchr("0123456789.eE+-", p->s[p->off]) && p->s[p->off])
                p->off++;
        v->type = JSON_NUMBER;
        v->s = strndup(p->s + start, p->off - start);
        return v->s || fail(p, "out of memory");
}

static bool word(jr *p, const char *w) {
        size_t l = strlen(w);

        if (p->n - p->off < l || memcmp(p->s + p->off, w, l))
                return fail(p, "unexpected character");
        p->off += l;
        return true;
}

static bool value(jr *p, json_value *v, int depth);

/* One more slot in a container. */
static json_value *grow(jr *p, json_value *v, bool object) {
        json_value *nv = realloc(v->v, (v->n + 1) * sizeof(*nv));
        char **nk;

        if (!nv) {
                fail(p, "out of memory");
                return NULL;
        }
        v->v = nv;
        if (object) {
                nk = realloc(v->keys, (v->n + 1) * sizeof(*nk));
                if (!nk) {
                        fail(p, "out of memory");
                        return NULL;
                }
                v->keys = nk;
                v->keys[v->n] = NULL;
        }
        memset(&v->v[v->n], 0, sizeof(*nv));
        return &v->v[v->n++];
}

static bool container(jr *p, json_value *v, bool object, int depth) {
        char close = object ? '}' : ']';

        v->type = object ? JSON_OBJECT : JSON_ARRAY;
        if (depth >= JSON_MAX_DEPTH)
                return fail(p, "nested too deeply");
        if (take(p, close))
                return true;
        for (;;) {
                json_value *item = grow(p, v, object);
                if (!item)
                        return false;
                if (object) {
                        if (!take(p, '"'))
                                return fail(p, "expected a string");
                        if (!(v->keys[v->n - 1] = string(p)))
                                return false;
                        if (!take(p, ':'))
                                return fail(p, "expected ':'");
                }
                if (!value(p, item, depth + 1))
                        return false;
                if (take(p, close))
                        return true;
                if (!take(p, ','))
                        return fail(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
        }
}

static bool value(jr *p, json_value *v, int depth) {
        ws(p);
        if (p->off >= p->n)
                return fail(p, "unexpected end");
        switch (p->s[p->off]) {
        case '{': p->off++; return container(p, v, true, depth);
        case '[': p->off++; return container(p, v, false, depth);
        case '"':
                p->off++;
                v->type = JSON_STRING;
                return (v->s = string(p)) != NULL;
        case 't': v->type = JSON_BOOL; v->b = true; return word(p, "true");
        case 'f': v->type = JSON_BOOL; return word(p, "false");
        case 'n': v->type = JSON_NULL; return word(p, "null");
        default: return number(p, v);
        }
}

static void free_members(json_value *v) {
        for (size_t i = 0; i < v->n; i++) {
                free_members(&v->v[i]);
                if (v->keys)
                        free(v->keys[i]);
        }
        free(v->v);
        free(v->keys);
        free(v->s);
}

void json_free(json_value *v) {
        if (v) {
                free_members(v);
                free(v);
        }
}

int json_parse(const char *text, size_t n, const char *what, json_value **ret) {
        jr p = { .s = text, .n = n };
        json_value *v = calloc(1, sizeof(*v));

        if (!v) {
                cli_error("out of memory");
                return -1;
        }
        if (value(&p, v, 0)) {
                ws(&p);
                if (p.off == p.n) {
                        *ret = v;
                        return 0;
                }
                fail(&p, "data after the document");
        }
        cli_error("%s: not JSON (%s, near byte %zu)", what, p.err, p.off);
        json_free(v);
        return -1;
}

const json_value *json_get(const json_value *v, const char *key) {
        for (size_t i = 0; v && v->type == JSON_OBJECT && i < v->n; i++)
                if (!strcmp(v->keys[i], key))
                        return &v->v[i];
        return NULL;
}

const char *json_str(const json_value *v) {
        return v && v->type == JSON_STRING ? v->s : NULL;
}

int json_uint(const json_value *v, unsigned long max, unsigned long *ret) {
        unsigned long x = 0;
        const char *s;

        if (!v || (v->type != JSON_STRING && v->type != JSON_NUMBER) || !*(s = v->s))
                return -1;
        for (; *s; s++) {
                if (*s < '0' || *s > '9' || (unsigned long) (*s - '0') > max)
                        return -1;
                if (x > (max - (unsigned long) (*s - '0')) / 10)
                        return -1;
                x = x * 10 + (unsigned long) (*s - '0');
        }
        *ret = x;
        return 0;
}
