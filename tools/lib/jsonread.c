/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The CLI's one JSON reader (RFC 8259), for documents mshim reads back and
 * documents from elsewhere alike: `mshim predict --json` output (policy
 * approve --predicted, seal --literal, totp enroll --literal:
 * tools/lib/predjson.c), attestation evidence (mshim verify) and LUKS2
 * metadata from cryptsetup (tools/lib/luks2.c). Strict and
 * bounded everywhere, whoever wrote the document (tools/lib/jsonread.h).
 */
#include <stdlib.h>
#include <string.h>
#include "jsonread.h"

typedef struct jrp {
        const char *s;
        size_t n, off, nodes;
        const jr_limits *lim;
        const char *err;
        size_t err_off;
} jrp;

static bool jr_fail(jrp *p, const char *why) {
        if (!p->err) {
                p->err = why;
                p->err_off = p->off;
        }
        return false;
}

static void jr_ws(jrp *p) {
        while (p->off < p->n && (p->s[p->off] == ' ' || p->s[p->off] == '\t' || p->s[p->off] == '\r' ||
                                 p->s[p->off] == '\n'))
                p->off++;
}

static bool jr_lit(jrp *p, char c) {
        jr_ws(p);
        if (p->off < p->n && p->s[p->off] == c) {
                p->off++;
                return true;
        }
        return false;
}

/* A string: escapes decoded; \u outside ASCII kept as '?'. Control
 * characters refused. */
static bool jr_string(jrp *p, char **ret, size_t *ret_len) {
        size_t start, cap, len = 0;
        char *out;

        if (!jr_lit(p, '"'))
                return jr_fail(p, "expected a string");
        start = p->off;
        while (p->off < p->n && p->s[p->off] != '"')
                p->off += p->s[p->off] == '\\' ? 2 : 1;
        if (p->off >= p->n)
                return jr_fail(p, "unterminated string");
        cap = p->off - start;
        if (cap > p->lim->max_string)
                return jr_fail(p, "string too long");
        out = malloc(cap + 1);
        if (!out)
                return jr_fail(p, "out of memory");
        for (size_t i = start; i < p->off; i++) {
                unsigned char c = (unsigned char) p->s[i];
                if (c < 0x20) {
                        free(out);
                        p->off = i;
                        return jr_fail(p, "control character in a string");
                }
                if (c != '\\') {
                        out[len++] = (char) c;
                        continue;
                }
                c = (unsigned char) p->s[++i];
                if (c == 'u') {
                        int v = 0;
                        for (int k = 1; k <= 4; k++) {
                                int h = i + k < p->off ? mb_hexval(p->s[i + k]) : -1;
                                if (h < 0) {
                                        free(out);
                                        return jr_fail(p, "bad \\u escape");
                                }
                                v = v << 4 | h;
                        }
                        i += 4;
                        out[len++] = v > 0 && v < 0x80 ? (char) v : '?';
                        continue;
                }
                const char *esc = strchr("\"\"\\\\//b\bf\fn\nr\rt\t", c);
                if (!c || !esc || (esc - "\"\"\\\\//b\bf\fn\nr\rt\t") % 2) {
                        free(out);
                        return jr_fail(p, "bad escape in a string");
                }
                out[len++] = esc[1];
        }
        out[len] = 0;
        p->off++;
        *ret = out;
        *ret_len = len;
        return true;
}

static bool jr_value(jrp *p, jr_node *v, int depth);

static bool jr_push(jrp *p, jr_node *v, jr_node **ret) {
        jr_node *k;

        if (++p->nodes > p->lim->max_nodes)
                return jr_fail(p, "too many values");
        if (v->n_kids % 16 == 0) {
                k = realloc(v->kids, (v->n_kids + 16) * sizeof(*k));
                if (!k)
                        return jr_fail(p, "out of memory");
                v->kids = k;
        }
        *ret = &v->kids[v->n_kids++];
        memset(*ret, 0, sizeof(**ret));
        return true;
}

static bool jr_container(jrp *p, jr_node *v, int depth, char close) {
        if (depth >= JR_MAX_DEPTH)
                return jr_fail(p, "nested too deeply");
        if (jr_lit(p, close))
                return true;
        do {
                jr_node *k;
                if (!jr_push(p, v, &k))
                        return false;
                if (close == '}') {
                        if (!jr_string(p, &k->key, &k->len))
                                return false;
                        for (size_t i = 0; i + 1 < v->n_kids; i++)
                                if (!strcmp(v->kids[i].key, k->key))
                                        return jr_fail(p, "duplicate member name");
                        if (!jr_lit(p, ':'))
                                return jr_fail(p, "expected ':'");
                }
                if (!jr_value(p, k, depth + 1))
                        return false;
        } while (jr_lit(p, ','));
        return jr_lit(p, close) || jr_fail(p, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
}

static bool jr_word(jrp *p, const char *w) {
        size_t n = strlen(w);

        if (p->n - p->off < n || memcmp(p->s + p->off, w, n))
                return jr_fail(p, "unexpected character");
        p->off += n;
        return true;
}

/* Numbers: RFC 8259's grammar; the text is kept. The integer part is
 * bounded by the caller (jr_limits). */
static bool jr_number(jrp *p, jr_node *v) {
        size_t start = p->off;

        if (p->off < p->n && p->s[p->off] == '-')
                p->off++;
        if (p->off < p->n && p->s[p->off] == '0')
                p->off++;
        else if (p->off < p->n && p->s[p->off] >= '1' && p->s[p->off] <= '9') {
                uint64_t ip = 0;
                while (p->off < p->n && p->s[p->off] >= '0' && p->s[p->off] <= '9') {
                        uint64_t d = (uint64_t) (p->s[p->off] - '0');
                        if (ip > (p->lim->max_int - d) / 10)
                                return jr_fail(p, "number too large");
                        ip = ip * 10 + d;
                        p->off++;
                }
        } else
                return jr_fail(p, "unexpected character");
        if (p->off < p->n && p->s[p->off] == '.') {
                size_t d = ++p->off;
                while (p->off < p->n && p->s[p->off] >= '0' && p->s[p->off] <= '9')
                        p->off++;
                if (p->off == d)
                        return jr_fail(p, "bad number");
        }
        if (p->off < p->n && (p->s[p->off] == 'e' || p->s[p->off] == 'E')) {
                size_t d;
                p->off++;
                if (p->off < p->n && (p->s[p->off] == '+' || p->s[p->off] == '-'))
                        p->off++;
                d = p->off;
                while (p->off < p->n && p->s[p->off] >= '0' && p->s[p->off] <= '9')
                        p->off++;
                if (p->off == d)
                        return jr_fail(p, "bad number");
        }
        if (p->off - start > 32)
                return jr_fail(p, "number too long");
        v->type = JR_NUMBER;
        v->len = p->off - start;
        v->str = strndup(p->s + start, v->len);
        return v->str || jr_fail(p, "out of memory");
}

static bool jr_value(jrp *p, jr_node *v, int depth) {
        jr_ws(p);
        v->off = p->off;
        if (p->off >= p->n)
                return jr_fail(p, "unexpected end");
        switch (p->s[p->off]) {
        case '{':
                p->off++;
                v->type = JR_OBJECT;
                return jr_container(p, v, depth, '}');
        case '[':
                p->off++;
                v->type = JR_ARRAY;
                return jr_container(p, v, depth, ']');
        case '"':
                v->type = JR_STRING;
                return jr_string(p, &v->str, &v->len);
        case 't':
                v->type = JR_BOOL;
                v->b = true;
                return jr_word(p, "true");
        case 'f':
                v->type = JR_BOOL;
                return jr_word(p, "false");
        case 'n':
                v->type = JR_NULL;
                return jr_word(p, "null");
        default:
                return jr_number(p, v);
        }
}

static void jr_free_kids(jr_node *n) {
        for (size_t i = 0; i < n->n_kids; i++)
                jr_free_kids(&n->kids[i]);
        free(n->kids);
        free(n->key);
        free(n->str);
}

void jr_free(jr_node *n) {
        if (n) {
                jr_free_kids(n);
                free(n);
        }
}

jr_node *jr_parse(const char *s, size_t n, const jr_limits *lim, const char **err, size_t *err_off) {
        jrp p = { s, n, 0, 0, lim, NULL, 0 };
        jr_node *root = calloc(1, sizeof(*root));

        if (!root) {
                *err = "out of memory";
                *err_off = 0;
                return NULL;
        }
        if (jr_value(&p, root, 0)) {
                jr_ws(&p);
                if (p.off == p.n)
                        return root;
                jr_fail(&p, "trailing characters after the document");
        }
        jr_free(root);
        *err = p.err;
        *err_off = p.err_off;
        return NULL;
}

const jr_node *jr_get(const jr_node *o, const char *key) {
        if (!o || o->type != JR_OBJECT)
                return NULL;
        for (size_t i = 0; i < o->n_kids; i++)
                if (!strcmp(o->kids[i].key, key))
                        return &o->kids[i];
        return NULL;
}

const char *jr_str(const jr_node *v) {
        return v && v->type == JR_STRING ? v->str : NULL;
}

bool jr_uint(const jr_node *v, uint32_t *ret) {
        return v && v->type == JR_NUMBER && jr_decimal(v->str, UINT32_MAX, ret);
}

bool jr_decimal(const char *s, uint32_t max, uint32_t *ret) {
        uint32_t x = 0;

        if (!*s)
                return false;
        for (; *s; s++) {
                uint32_t d = (uint32_t) (*s - '0');
                if (*s < '0' || *s > '9' || d > max || x > (max - d) / 10)
                        return false;
                x = x * 10 + d;
        }
        *ret = x;
        return true;
}

bool jr_pcr_index(const char *key, uint32_t *ret) {
        /* No leading zero: docs/schema/ writes "7", never "07". */
        if (key[0] == '0' && key[1])
                return false;
        return jr_decimal(key, MB_PCR_COUNT - 1, ret);
}

bool jr_hex(const jr_node *v, size_t size, uint8_t *ret) {
        if (!v || v->type != JR_STRING || v->len != 2 * size)
                return false;
        for (size_t i = 0; i < size; i++) {
                int hi = mb_hexval(v->str[2 * i]), lo = mb_hexval(v->str[2 * i + 1]);
                if (hi < 0 || lo < 0)
                        return false;
                ret[i] = (uint8_t) (hi << 4 | lo);
        }
        return true;
}
