/* SPDX-License-Identifier: BSD-2-Clause */
/* `mshim predict --json` output, read back for mshim policy approve and
 * mshim seal --literal (docs/predict.md "Output", RFC 8259). */
#include <string.h>
#include "predjson.h"

/* Nesting: the document, "pcrs", a bank; anything deeper is in members
 * we skip, bounded too. */
#define MAX_DEPTH 16
#define MAX_STRING 4096

typedef struct jp {
        const char *name;
        const char *s;
        size_t n, off;
        const char *err;        /* the first error, with err_off */
        size_t err_off;
} jp;

static bool fail(jp *p, const char *why) {
        if (!p->err) {
                p->err = why;
                p->err_off = p->off;
        }
        return false;
}

static void ws(jp *p) {
        while (p->off < p->n && strchr(" \t\r\n", p->s[p->off]) && p->s[p->off])
                p->off++;
}

static bool lit(jp *p, char c) {
        ws(p);
        if (p->off < p->n && p->s[p->off] == c) {
                p->off++;
                return true;
        }
        return false;
}

static bool expect(jp *p, char c) {
        return lit(p, c) || fail(p, c == ':' ? "expected ':'" : c == '"' ? "expected a string" : "unexpected character");
}

static int hexval(char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A string into out (NUL-terminated, at most MAX_STRING bytes); \u
 * escapes outside ASCII are kept as '?' (no member mshim reads needs
 * them: keys and hex are ASCII). */
static bool string(jp *p, char *out) {
        size_t len = 0;

        if (!expect(p, '"'))
                return false;
        for (;;) {
                unsigned char c;
                if (p->off >= p->n)
                        return fail(p, "unterminated string");
                c = (unsigned char) p->s[p->off++];
                if (c == '"')
                        break;
                if (c < 0x20)
                        return fail(p, "control character in a string");
                if (c == '\\') {
                        const char *esc = "\"\\/bfnrt", *rep = "\"\\/\b\f\n\r\t", *e;
                        if (p->off >= p->n)
                                return fail(p, "unterminated string");
                        c = (unsigned char) p->s[p->off++];
                        if (c == 'u') {
                                unsigned v = 0;
                                for (int i = 0; i < 4; i++) {
                                        int h = p->off < p->n ? hexval(p->s[p->off]) : -1;
                                        if (h < 0)
                                                return fail(p, "bad \\u escape");
                                        v = v << 4 | (unsigned) h;
                                        p->off++;
                                }
                                c = v && v < 0x80 ? (unsigned char) v : '?';
                        } else if ((e = strchr(esc, c)) && c) {
                                c = (unsigned char) rep[e - esc];
                        } else
                                return fail(p, "bad escape in a string");
                }
                if (len == MAX_STRING)
                        return fail(p, "string too long");
                out[len++] = (char) c;
        }
        out[len] = 0;
        return true;
}

/* A non-negative integer below 2^31 (the PCR indices of "changed"). */
static bool integer(jp *p, long *ret) {
        long v = 0;
        size_t start;

        ws(p);
        start = p->off;
        while (p->off < p->n && p->s[p->off] >= '0' && p->s[p->off] <= '9') {
                v = v * 10 + (p->s[p->off++] - '0');
                if (v > 0x7fffffff)
                        return fail(p, "number too large");
        }
        if (p->off == start || (p->s[start] == '0' && p->off - start > 1))
                return fail(p, "expected a number");
        *ret = v;
        return true;
}

static bool skip_value(jp *p, int depth);

static bool skip_container(jp *p, int depth, char close) {
        static char key[MAX_STRING + 1];

        if (depth > MAX_DEPTH)
                return fail(p, "nested too deeply");
        if (lit(p, close))
                return true;
        do {
                if (close == '}' && (!string(p, key) || !expect(p, ':')))
                        return false;
                if (!skip_value(p, depth + 1))
                        return false;
        } while (lit(p, ','));
        return expect(p, close);
}

/* Any value, checked and skipped. */
static bool skip_value(jp *p, int depth) {
        static char buf[MAX_STRING + 1];
        static const char *words[] = { "true", "false", "null" };

        ws(p);
        if (p->off >= p->n)
                return fail(p, "unexpected end");
        switch (p->s[p->off]) {
        case '{': p->off++; return skip_container(p, depth, '}');
        case '[': p->off++; return skip_container(p, depth, ']');
        case '"': return string(p, buf);
        }
        for (size_t i = 0; i < MB_ARRAY_SIZE(words); i++) {
                size_t l = strlen(words[i]);
                if (p->n - p->off >= l && !memcmp(p->s + p->off, words[i], l)) {
                        p->off += l;
                        return true;
                }
        }
        /* Numbers: -?int frac? exp? */
        if (p->s[p->off] == '-')
                p->off++;
        {
                long v;
                if (!integer(p, &v))
                        return false;
        }
        if (p->off < p->n && p->s[p->off] == '.') {
                size_t d = ++p->off;
                while (p->off < p->n && p->s[p->off] >= '0' && p->s[p->off] <= '9')
                        p->off++;
                if (p->off == d)
                        return fail(p, "bad number");
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
                        return fail(p, "bad number");
        }
        return true;
}

/* "12": a PCR index 0-23 as the schema writes it (decimal, no sign or
 * leading zero). */
static bool pcr_key(jp *p, const char *key, uint32_t *ret) {
        size_t l = strlen(key);
        uint32_t v = 0;

        if (l == 0 || l > 2 || (l == 2 && key[0] == '0'))
                return fail(p, "a PCR index must be a decimal number 0-23");
        for (size_t i = 0; i < l; i++) {
                if (key[i] < '0' || key[i] > '9')
                        return fail(p, "a PCR index must be a decimal number 0-23");
                v = v * 10 + (uint32_t) (key[i] - '0');
        }
        if (v >= MB_PCR_COUNT)
                return fail(p, "a PCR index must be a decimal number 0-23");
        *ret = v;
        return true;
}

/* An object: '{', then each member's key (decoded) to fn, which parses
 * the value after the ':'; duplicate keys are fn's to refuse. */
typedef bool (*member_fn)(jp *p, const char *key, void *ctx);

static bool object(jp *p, member_fn fn, void *ctx) {
        char key[MAX_STRING + 1];

        if (!expect(p, '{'))
                return false;
        if (lit(p, '}'))
                return true;
        do {
                if (!string(p, key) || !expect(p, ':') || !fn(p, key, ctx))
                        return false;
        } while (lit(p, ','));
        return expect(p, '}');
}

typedef struct bank_ctx {
        pred_json *ret;
        uint16_t alg;
        uint32_t seen;
} bank_ctx;

/* A bank's member: "<pcr>": "<hex>". */
static bool bank_member(jp *p, const char *key, void *ctx) {
        static char hex[MAX_STRING + 1];
        bank_ctx *b = ctx;
        size_t size = mb_hash_size(b->alg);
        uint8_t v[MB_HASH_MAX];
        uint32_t pcr;

        if (!pcr_key(p, key, &pcr) || !string(p, hex))
                return false;
        if (b->seen & (1u << pcr))
                return fail(p, "a PCR given twice");
        b->seen |= 1u << pcr;
        if (strlen(hex) != 2 * size)
                return fail(p, "a PCR value of the wrong length for its bank");
        for (size_t i = 0; i < size; i++) {
                int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
                if (hi < 0 || lo < 0)
                        return fail(p, "a PCR value that is not hex");
                v[i] = (uint8_t) (hi << 4 | lo);
        }
        return mb_pcrs_set(&b->ret->pcrs, b->alg, pcr, v, size) == MB_OK || fail(p, "too many banks");
}

/* "pcrs"' member: a bank mshim knows, or another one, skipped. */
static bool pcrs_member(jp *p, const char *key, void *ctx) {
        bank_ctx b = { .ret = ctx, .alg = mb_hash_alg_by_name(key) };

        if (!b.alg)
                return skip_value(p, 2);
        for (uint32_t i = 0; i < b.ret->pcrs.n_banks; i++)
                if (b.ret->pcrs.banks[i].alg == b.alg)
                        return fail(p, "a bank given twice");
        return object(p, bank_member, &b);
}

/* "unpredictable"' member: "<pcr>": "<reason>". */
static bool unpredictable_member(jp *p, const char *key, void *ctx) {
        static char reason[MAX_STRING + 1];
        pred_json *ret = ctx;
        uint32_t pcr;

        if (!pcr_key(p, key, &pcr) || !string(p, reason))
                return false;
        if (ret->unpredictable & (1u << pcr))
                return fail(p, "a PCR given twice");
        ret->unpredictable |= 1u << pcr;
        return true;
}

static bool changed(jp *p) {
        long v;

        if (!expect(p, '['))
                return false;
        if (lit(p, ']'))
                return true;
        do {
                if (!integer(p, &v))
                        return false;
        } while (lit(p, ','));
        return expect(p, ']');
}

typedef struct doc_ctx {
        pred_json *ret;
        uint32_t seen;
} doc_ctx;

static const char *const known[] = { "schema", "mshim_version", "baseline", "pcrs", "changed", "unpredictable",
                                     "refused" };

static bool doc_member(jp *p, const char *key, void *ctx) {
        static char val[MAX_STRING + 1];
        doc_ctx *d = ctx;
        size_t k;

        for (k = 0; k < MB_ARRAY_SIZE(known) && strcmp(key, known[k]); k++)
                ;
        if (k == MB_ARRAY_SIZE(known))
                return skip_value(p, 1);        /* a member a later mshim-predict/1 may add */
        if (d->seen & (1u << k))
                return fail(p, "a member given twice");
        d->seen |= 1u << k;
        switch (k) {
        case 0:
                return string(p, val) && (!strcmp(val, "mshim-predict/1") || fail(p, "not schema mshim-predict/1"));
        case 3:
                return object(p, pcrs_member, d->ret);
        case 4:
                return changed(p);
        case 5:
                return object(p, unpredictable_member, d->ret);
        case 6:
                d->ret->refused = true;
                return string(p, val);
        default:
                return string(p, val);
        }
}

static bool document(jp *p, pred_json *ret) {
        doc_ctx d = { .ret = ret };

        if (!object(p, doc_member, &d))
                return false;
        ws(p);
        if (p->off != p->n)
                return fail(p, "text after the JSON object");
        /* schema, pcrs and unpredictable are required. */
        if ((d.seen & 0x29) != 0x29)
                return fail(p, "no schema, pcrs or unpredictable member: not `mshim predict --json` output");
        return true;
}

int pred_json_parse(const char *name, const char *buf, size_t size, pred_json *ret) {
        jp p = { .name = name, .s = buf, .n = size };
        pred_json r;

        memset(&r, 0, sizeof(r));
        if (!document(&p, &r)) {
                cli_error("%s: not `mshim predict --json` output (schema mshim-predict/1): %s at byte %zu", name,
                          p.err, p.err_off);
                return -1;
        }
        *ret = r;
        return 0;
}

int pred_json_load(const char *path, pred_json *ret) {
        cli_file f;
        int r;

        if (cli_file_load_max(path, PREDJSON_MAX_SIZE, "a prediction", &f) < 0)
                return -1;
        r = pred_json_parse(path, (const char *) f.data, f.size, ret);
        cli_file_free(&f);
        return r;
}

int pred_json_values(const char *name, const pred_json *p, uint32_t mask, uint8_t *values) {
        static const uint8_t zero[32];
        size_t k = 0;

        if (p->refused) {
                cli_error("%s: the firmware would refuse that boot (\"refused\"): nothing to approve", name);
                return -1;
        }
        if (p->unpredictable & mask) {
                cli_error("%s: PCR %d is unpredictable there: never approved or sealed to", name,
                          __builtin_ctz(p->unpredictable & mask));
                return -1;
        }
        for (uint32_t i = 0; i < MB_PCR_COUNT; i++) {
                const uint8_t *v;
                if (!(mask & (1u << i)))
                        continue;
                v = mb_pcrs_get(&p->pcrs, MB_ALG_SHA256, i);
                if (!v && i > 15) {
                        cli_error("%s: no sha256 value for PCR %u (it resets to a value other than zero)", name, i);
                        return -1;
                }
                /* Not listed: at its reset value, zero (docs/predict.md). */
                memcpy(values + 32 * k++, v ? v : zero, 32);
        }
        return 0;
}
