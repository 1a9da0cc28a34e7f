/* SPDX-License-Identifier: BSD-2-Clause */
#include "mb/base.h"

const char *mb_strerror(mb_err e) {
        switch (e) {
        case MB_OK: return "success";
        case MB_END: return "end of input";
        case MB_ERR_TRUNCATED: return "truncated input";
        case MB_ERR_INVALID: return "malformed input";
        case MB_ERR_UNSUPPORTED: return "unsupported";
        case MB_ERR_NOSPACE: return "buffer too small";
        case MB_ERR_NOTFOUND: return "not found";
        case MB_ERR_TOOLONG: return "too long";
        case MB_ERR_OVERFLOW: return "size overflow";
        }
        return "unknown error";
}

void mb_memcpy(void *dst, const void *src, size_t n) {
        uint8_t *d = dst;
        const uint8_t *s = src;
        while (n--)
                *d++ = *s++;
}

void mb_memset(void *dst, int c, size_t n) {
        uint8_t *d = dst;
        while (n--)
                *d++ = (uint8_t) c;
}

int mb_memcmp(const void *a, const void *b, size_t n) {
        const uint8_t *x = a, *y = b;
        for (; n; n--, x++, y++)
                if (*x != *y)
                        return *x < *y ? -1 : 1;
        return 0;
}

size_t mb_strnlen(const char *s, size_t max) {
        size_t n = 0;
        while (n < max && s[n])
                n++;
        return n;
}

bool mb_str_eq(mb_str s, const char *lit) {
        size_t n = mb_strnlen(lit, (size_t) -1);
        return s.len == n && mb_memcmp(s.p, lit, n) == 0;
}
