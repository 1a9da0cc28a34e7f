/* SPDX-License-Identifier: BSD-2-Clause */
#include "mb/pcrs.h"

#define MAX_LINE 1024

mb_err mb_pcrs_set(mb_pcr_values *v, uint16_t alg, uint32_t pcr, const uint8_t *value, size_t size) {
        uint32_t i;

        if (pcr >= MB_PCR_COUNT || size != mb_hash_size(alg) || size == 0)
                return MB_ERR_INVALID;
        for (i = 0; i < v->n_banks; i++)
                if (v->banks[i].alg == alg)
                        break;
        if (i == v->n_banks) {
                if (v->n_banks == MB_TCGLOG_MAX_ALGS)
                        return MB_ERR_NOSPACE;
                v->banks[i].alg = alg;
                v->banks[i].size = (uint16_t) size;
                v->banks[i].present = 0;
                v->n_banks++;
        }
        mb_memcpy(v->banks[i].pcr[pcr], value, size);
        v->banks[i].present |= 1u << pcr;
        return MB_OK;
}

const uint8_t *mb_pcrs_get(const mb_pcr_values *v, uint16_t alg, uint32_t pcr) {
        for (uint32_t i = 0; i < v->n_banks; i++)
                if (v->banks[i].alg == alg && pcr < MB_PCR_COUNT && (v->banks[i].present & (1u << pcr)))
                        return v->banks[i].pcr[pcr];
        return NULL;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

static mb_str trim(const char *p, size_t n) {
        while (n && is_space(*p))
                p++, n--;
        while (n && is_space(p[n - 1]))
                n--;
        return (mb_str) { p, n };
}

/* Hex digits with an optional 0x prefix into out; returns bytes or -1. */
static int parse_hex(mb_str s, uint8_t *out, size_t cap) {
        if (s.len >= 2 && s.p[0] == '0' && (s.p[1] == 'x' || s.p[1] == 'X'))
                s.p += 2, s.len -= 2;
        if (s.len % 2 || s.len / 2 > cap)
                return -1;
        for (size_t i = 0; i < s.len / 2; i++) {
                int hi = mb_hexval(s.p[2 * i]), lo = mb_hexval(s.p[2 * i + 1]);
                if (hi < 0 || lo < 0)
                        return -1;
                out[i] = (uint8_t) (hi << 4 | lo);
        }
        return (int) (s.len / 2);
}

static bool parse_index(mb_str s, uint32_t *ret) {
        uint32_t v = 0;

        if (s.len == 0 || s.len > 2)
                return false;
        for (size_t i = 0; i < s.len; i++) {
                if (s.p[i] < '0' || s.p[i] > '9')
                        return false;
                v = v * 10 + (uint32_t) (s.p[i] - '0');
        }
        *ret = v;
        return true;
}

static uint16_t bank_alg(mb_str s) {
        char name[16];

        if (s.len == 0 || s.len >= sizeof(name))
                return 0;
        mb_memcpy(name, s.p, s.len);
        name[s.len] = 0;
        return mb_hash_alg_by_name(name);
}

static const char *find(const char *p, size_t n, char c) {
        for (size_t i = 0; i < n; i++)
                if (p[i] == c)
                        return p + i;
        return NULL;
}

/* One line of either form; *bank carries the current YAML bank. */
static mb_err parse_line(mb_str line, uint16_t *bank, mb_pcr_values *v) {
        mb_str t = trim(line.p, line.len), key, val;
        const char *sep;
        uint8_t value[MB_HASH_MAX];
        uint32_t idx;
        int n;

        if (t.len == 0 || t.p[0] == '#' || mb_str_eq(t, "---"))
                return MB_OK;
        if (t.p[t.len - 1] == ':') {            /* YAML bank header, or the "pcrs:" root */
                key = trim(t.p, t.len - 1);
                if (mb_str_eq(key, "pcrs"))
                        return MB_OK;
                *bank = bank_alg(key);
                return *bank ? MB_OK : MB_ERR_INVALID;
        }
        if ((sep = find(t.p, t.len, '='))) {    /* bank:index=hex */
                const char *colon = find(t.p, (size_t) (sep - t.p), ':');
                if (!colon)
                        return MB_ERR_INVALID;
                *bank = bank_alg(trim(t.p, (size_t) (colon - t.p)));
                key = trim(colon + 1, (size_t) (sep - colon - 1));
        } else if ((sep = find(t.p, t.len, ':'))) { /* YAML "  0 : 0x..." */
                key = trim(t.p, (size_t) (sep - t.p));
        } else
                return MB_ERR_INVALID;
        val = trim(sep + 1, t.len - (size_t) (sep + 1 - t.p));
        if (*bank == 0 || !parse_index(key, &idx))
                return MB_ERR_INVALID;
        n = parse_hex(val, value, sizeof(value));
        if (n < 0)
                return MB_ERR_INVALID;
        return mb_pcrs_set(v, *bank, idx, value, (size_t) n);
}

mb_err mb_pcrs_parse(const char *buf, size_t size, mb_pcr_values *ret) {
        mb_pcr_values v = { 0 };
        uint16_t bank = 0;
        size_t off = 0, lineno = 0;

        while (off < size) {
                const char *nl = find(buf + off, size - off, '\n');
                size_t len = nl ? (size_t) (nl - (buf + off)) : size - off;
                mb_err r;

                lineno++;
                r = len > MAX_LINE ? MB_ERR_TOOLONG : parse_line((mb_str) { buf + off, len }, &bank, &v);
                if (r != MB_OK) {
                        ret->err_line = lineno;
                        return r;
                }
                off += len + (nl ? 1 : 0);
        }
        if (v.n_banks == 0) {
                ret->err_line = 0;
                return MB_ERR_NOTFOUND;
        }
        *ret = v;
        return MB_OK;
}
