/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mb_strbuf: a bounded string builder (include/mb/emit.h). Every writer
 * funnels through sb_putc, so the capacity check lives in one place.
 * One byte of the storage is kept for a terminating NUL, so callers may
 * hand b->p to C-string consumers.
 */
#include "mb/emit.h"

void mb_strbuf_init(mb_strbuf *b, char *storage, size_t cap) {
        b->p = storage;
        b->cap = cap;
        b->len = 0;
        b->truncated = false;
        if (cap > 0)
                storage[0] = '\0';
}

/* Truncation is sticky: once a byte did not fit nothing more is written,
 * so the text never has a hole in the middle. */
static void sb_putc(mb_strbuf *b, char c) {
        if (b->truncated || b->cap == 0 || b->len >= b->cap - 1) {
                b->truncated = true;
                return;
        }
        b->p[b->len++] = c;
        b->p[b->len] = '\0';
}

/* The bulk form of sb_putc: the same capacity rule, one copy. */
void mb_strbuf_put(mb_strbuf *b, const char *s, size_t n) {
        size_t room;

        if (b->truncated || n == 0)
                return;
        room = b->cap ? b->cap - 1 - b->len : 0;
        if (n > room) {
                n = room;
                b->truncated = true;
        }
        if (b->cap == 0)
                return;
        mb_memcpy(b->p + b->len, s, n);
        b->len += n;
        b->p[b->len] = '\0';
}

void mb_strbuf_puts(mb_strbuf *b, const char *s) {
        mb_strbuf_put(b, s, mb_strnlen(s, (size_t) -1));
}

void mb_strbuf_u64(mb_strbuf *b, uint64_t v) {
        char tmp[20]; /* 2^64 - 1 has 20 decimal digits */
        size_t n = 0;
        do {
                tmp[n++] = (char) ('0' + v % 10);
                v /= 10;
        } while (v);
        while (n)
                sb_putc(b, tmp[--n]);
}

static const char sb_digits[] = "0123456789abcdef";

void mb_strbuf_hex(mb_strbuf *b, const uint8_t *p, size_t n) {
        char tmp[64];

        while (n) {
                size_t k = n < sizeof(tmp) / 2 ? n : sizeof(tmp) / 2;

                /* False positive: cppcheck 2.10 claims k < 1, so that i < k is always
                 * false; the while makes n >= 1, so k >= 1. */
                /* cppcheck-suppress knownConditionTrueFalse */
                for (size_t i = 0; i < k; i++) {
                        tmp[2 * i] = sb_digits[p[i] >> 4];
                        tmp[2 * i + 1] = sb_digits[p[i] & 0xf];
                }
                mb_strbuf_put(b, tmp, 2 * k);
                p += k;
                n -= k;
        }
}

void mb_strbuf_hexnum(mb_strbuf *b, uint64_t v) {
        int shift = 60;
        mb_strbuf_puts(b, "0x");
        while (shift > 0 && ((v >> shift) & 0xf) == 0)
                shift -= 4;
        for (; shift >= 0; shift -= 4)
                sb_putc(b, sb_digits[(v >> shift) & 0xf]);
}

/* EFI_GUID is { u32 Data1; u16 Data2; u16 Data3; u8 Data4[8] } stored
 * little endian, so the text form reverses the bytes of the first three
 * fields (UEFI spec, appendix A "GUID and Time Formats"). */
void mb_strbuf_guid(mb_strbuf *b, const uint8_t guid[16]) {
        static const uint8_t order[16] = { 3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15 };
        char text[36];
        size_t n = 0;

        for (size_t i = 0; i < 16; i++) {
                if (i == 4 || i == 6 || i == 8 || i == 10)
                        text[n++] = '-';
                text[n++] = sb_digits[guid[order[i]] >> 4];
                text[n++] = sb_digits[guid[order[i]] & 0xf];
        }
        mb_strbuf_put(b, text, n);
}

/* UTF-8 (RFC 3629). A sequence that does not fit is dropped whole, so a
 * truncated buffer still holds valid UTF-8. */
static void sb_put_codepoint(mb_strbuf *b, uint32_t cp) {
        char u[4];
        size_t n;
        if (cp < 0x80) {
                u[0] = (char) cp;
                n = 1;
        } else if (cp < 0x800) {
                u[0] = (char) (0xc0 | (cp >> 6));
                u[1] = (char) (0x80 | (cp & 0x3f));
                n = 2;
        } else if (cp < 0x10000) {
                u[0] = (char) (0xe0 | (cp >> 12));
                u[1] = (char) (0x80 | ((cp >> 6) & 0x3f));
                u[2] = (char) (0x80 | (cp & 0x3f));
                n = 3;
        } else {
                u[0] = (char) (0xf0 | (cp >> 18));
                u[1] = (char) (0x80 | ((cp >> 12) & 0x3f));
                u[2] = (char) (0x80 | ((cp >> 6) & 0x3f));
                u[3] = (char) (0x80 | (cp & 0x3f));
                n = 4;
        }
        if (b->cap == 0 || b->cap - 1 - b->len < n) {
                b->truncated = true;
                return;
        }
        mb_strbuf_put(b, u, n);
}

/* UTF-16 (RFC 2781): a high surrogate D800-DBFF followed by a low one
 * DC00-DFFF encodes one code point above U+FFFF; anything else in that
 * range is unpaired and becomes U+FFFD rather than invalid UTF-8. */
void mb_strbuf_utf16le(mb_strbuf *b, const uint8_t *p, size_t n_units) {
        for (size_t i = 0; i < n_units; i++) {
                uint32_t u = mb_le16(p + 2 * i);
                if (u == 0)
                        return;
                if (u >= 0xd800 && u <= 0xdbff && i + 1 < n_units) {
                        uint32_t lo = mb_le16(p + 2 * (i + 1));
                        if (lo >= 0xdc00 && lo <= 0xdfff) {
                                sb_put_codepoint(b, 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00));
                                i++;
                                continue;
                        }
                }
                if (u >= 0xd800 && u <= 0xdfff)
                        u = 0xfffd;
                sb_put_codepoint(b, u);
        }
}
