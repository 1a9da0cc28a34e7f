/* SPDX-License-Identifier: BSD-2-Clause */
/* The two mb_emit implementations of the CLI: JSON and one-line text. */
#include <string.h>
#include "cli.h"

#define MAX_DEPTH 63

/* ---- JSON (RFC 8259) ---------------------------------------------------- */

/* Bytes that must be escaped inside a JSON string (RFC 8259, 7): the
 * control characters, '"' and '\\'. Everything else, UTF-8 included, is
 * copied in runs. */
static const bool json_escape_table[256] = {
        [0x00 ... 0x1f] = true, ['"'] = true, ['\\'] = true,
};

static void json_escape_byte(unsigned char c) {
        static const char digits[] = "0123456789abcdef";
        char esc[6] = { '\\', 'u', '0', '0', digits[c >> 4], digits[c & 15] };

        switch (c) {
        case '"': out_put("\\\"", 2); break;
        case '\\': out_put("\\\\", 2); break;
        case '\n': out_put("\\n", 2); break;
        case '\r': out_put("\\r", 2); break;
        case '\t': out_put("\\t", 2); break;
        default: out_put(esc, sizeof(esc));
        }
}

/* Does any of the eight bytes in x need a look: a byte below 0x20, '"' or
 * '\\' (each borrows into its top bit once XORed to zero), or a non-ASCII
 * byte (to validate UTF-8)? Word arithmetic (SWAR), exact for "any". */
static inline bool word_needs_look(uint64_t x) {
        const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
        uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');

        return (((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b) | x) & highs;
}

/* Length of the well-formed UTF-8 sequence at p (RFC 3629 section 4: no
 * overlong forms, no surrogates, nothing above U+10FFFF), or 0. */
static size_t utf8_seq_len(const unsigned char *p, size_t n) {
        size_t len = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 ? 2 : 0;
        unsigned char lo = 0x80, hi = 0xbf;

        if (len == 0 || p[0] > 0xf4 || n < len)
                return 0;
        if (p[0] == 0xe0)
                lo = 0xa0;
        else if (p[0] == 0xed)
                hi = 0x9f;
        else if (p[0] == 0xf0)
                lo = 0x90;
        else if (p[0] == 0xf4)
                hi = 0x8f;
        if (p[1] < lo || p[1] > hi)
                return 0;
        for (size_t i = 2; i < len; i++)
                if (p[i] < 0x80 || p[i] > 0xbf)
                        return 0;
        return len;
}

/* RFC 8259 requires UTF-8. The core's decoders produce it, but a file name
 * on the command line need not be: an invalid byte becomes U+FFFD. */
void json_string(const char *s, size_t n) {
        const unsigned char *p = (const unsigned char *) s;
        size_t start = 0, i = 0;

        out_putc('"');
        while (i < n) {
                uint64_t x;
                if (n - i >= 8) {
                        memcpy(&x, p + i, 8);
                        if (!word_needs_look(x)) {
                                i += 8;
                                continue;
                        }
                }
                /* A word with something to look at, or the tail: byte by byte. */
                for (size_t end = n - i >= 8 ? i + 8 : n; i < end;) {
                        size_t len;
                        if (p[i] < 0x80) {
                                if (json_escape_table[p[i]]) {
                                        out_put(s + start, i - start);
                                        json_escape_byte(p[i]);
                                        start = i + 1;
                                }
                                i++;
                        } else if ((len = utf8_seq_len(p + i, n - i)) > 0) {
                                i += len;
                        } else {
                                out_put(s + start, i - start);
                                out_put("\xef\xbf\xbd", 3);
                                start = ++i;
                        }
                }
        }
        out_put(s + start, n - start);
        out_putc('"');
}

/* Keys are the program's own identifiers (and bank or PCR names it
 * formats), never input text: they need no escaping. */
void json_key(json_sink *j, const char *key) {
        if (j->need_comma[j->depth])
                out_putc(',');
        j->need_comma[j->depth] = true;
        if (key) {
                out_putc('"');
                out_puts(key);
                out_put("\":", 2);
        }
}

static void j_open(json_sink *j, const char *key, char c) {
        json_key(j, key);
        out_putc(c);
        if (j->depth < MAX_DEPTH)
                j->depth++;
        j->need_comma[j->depth] = false;
}

static void j_close(json_sink *j, char c) {
        out_putc(c);
        if (j->depth > 0)
                j->depth--;
}

static void j_begin_obj(mb_emit *e, const char *k) { j_open(e->ctx, k, '{'); }
static void j_end_obj(mb_emit *e) { j_close(e->ctx, '}'); }
static void j_begin_arr(mb_emit *e, const char *k) { j_open(e->ctx, k, '['); }
static void j_end_arr(mb_emit *e) { j_close(e->ctx, ']'); }
static void j_str(mb_emit *e, const char *k, const char *s, size_t n) { json_key(e->ctx, k); json_string(s, n); }
static void j_u64(mb_emit *e, const char *k, uint64_t v) { json_key(e->ctx, k); out_u64(v); }
static void j_bool(mb_emit *e, const char *k, bool v) { json_key(e->ctx, k); out_puts(v ? "true" : "false"); }
static void j_hex(mb_emit *e, const char *k, const uint8_t *p, size_t n) {
        json_key(e->ctx, k);
        out_putc('"');
        out_hex(p, n);
        out_putc('"');
}

static const mb_emit_ops json_ops = {
        j_begin_obj, j_end_obj, j_begin_arr, j_end_arr, j_str, j_u64, j_hex, j_bool,
};

void json_sink_init(json_sink *j) {
        memset(j, 0, sizeof(*j));
        j->emit.ops = &json_ops;
        j->emit.ctx = j;
}

void json_sink_init_member(json_sink *j) {
        json_sink_init(j);
        j->depth = 1;
        j->need_comma[1] = true;
}

/* ---- one-line text: key=value key={a=1 b=2} list=[x y] ------------------ */

/* Long blobs are cut in the table; --json always carries them whole. */
#define TEXT_HEX_MAX 32

static void t_sep(text_sink *t, const char *key) {
        if (t->need_sep[t->depth])
                out_putc(' ');
        t->need_sep[t->depth] = true;
        if (key) {
                out_puts(key);
                out_putc('=');
        }
}

static void t_open(text_sink *t, const char *key, char c) {
        /* The payload object itself is the line's top level: no braces. */
        if (t->depth > 0 || key == NULL || strcmp(key, "payload") != 0) {
                t_sep(t, key);
                out_putc(c);
        }
        if (t->depth < MAX_DEPTH)
                t->depth++;
        t->need_sep[t->depth] = false;
}

static void t_close(text_sink *t, char c) {
        if (t->depth > 0)
                t->depth--;
        if (t->depth > 0)
                out_putc(c);
}

static void t_begin_obj(mb_emit *e, const char *k) { t_open(e->ctx, k, '{'); }
static void t_end_obj(mb_emit *e) { t_close(e->ctx, '}'); }
static void t_begin_arr(mb_emit *e, const char *k) { t_open(e->ctx, k, '['); }
static void t_end_arr(mb_emit *e) { t_close(e->ctx, ']'); }
static void t_u64(mb_emit *e, const char *k, uint64_t v) { t_sep(e->ctx, k); out_u64(v); }
static void t_bool(mb_emit *e, const char *k, bool v) { t_sep(e->ctx, k); out_puts(v ? "yes" : "no"); }

static void t_str(mb_emit *e, const char *k, const char *s, size_t n) {
        bool quote = n == 0 || memchr(s, ' ', n) != NULL;

        t_sep(e->ctx, k);
        if (quote)
                out_putc('"');
        for (size_t i = 0; i < n; i++)
                out_putc((unsigned char) s[i] < 0x20 ? '.' : s[i]);
        if (quote)
                out_putc('"');
}

static void t_hex(mb_emit *e, const char *k, const uint8_t *p, size_t n) {
        t_sep(e->ctx, k);
        out_hex(p, n > TEXT_HEX_MAX ? TEXT_HEX_MAX : n);
        if (n > TEXT_HEX_MAX)
                out_puts("...");
}

static const mb_emit_ops text_ops = {
        t_begin_obj, t_end_obj, t_begin_arr, t_end_arr, t_str, t_u64, t_hex, t_bool,
};

void text_sink_init(text_sink *t) {
        memset(t, 0, sizeof(*t));
        t->emit.ops = &text_ops;
        t->emit.ctx = t;
}
