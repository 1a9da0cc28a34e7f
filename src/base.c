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

bool mb_str_eq(mb_str s, const char *lit) {
        size_t n = mb_strnlen(lit, (size_t) -1);
        return s.len == n && mb_memcmp(s.p, lit, n) == 0;
}
