/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim core: the one error type and the few memory helpers the pure core
 * needs. Everything in src/ builds three ways (loader, host CLI, sanitized
 * tests), so nothing here may depend on libc beyond the freestanding headers.
 */
#ifndef MB_BASE_H
#define MB_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The core's single error type. efi/ converts it to EFI_STATUS in exactly
 * one place (mb_efi_status), tools/ to an exit status and a message. */
typedef enum mb_err {
        MB_OK = 0,
        MB_END,            /* iteration finished: not an error */
        MB_ERR_TRUNCATED,  /* input ends inside a structure */
        MB_ERR_INVALID,    /* input is structurally wrong */
        MB_ERR_UNSUPPORTED,/* well-formed, but not something we handle */
        MB_ERR_NOSPACE,    /* caller's output buffer is too small */
        MB_ERR_NOTFOUND,   /* a looked-up item does not exist */
        MB_ERR_TOOLONG,    /* a line or field exceeds its documented limit */
        MB_ERR_OVERFLOW,   /* a size computation would overflow */
} mb_err;

const char *mb_strerror(mb_err e);

/* True when [off, off+n) does not fit in size. Written so that no
 * subtraction can wrap (tss2-mu's idiom). */
static inline bool mb_out_of_bounds(size_t size, size_t off, size_t n) {
        return size < off || size - off < n;
}

static inline uint16_t mb_le16(const uint8_t *p) {
        return (uint16_t) (p[0] | (p[1] << 8));
}
static inline uint32_t mb_le32(const uint8_t *p) {
        return (uint32_t) p[0] | ((uint32_t) p[1] << 8) | ((uint32_t) p[2] << 16) | ((uint32_t) p[3] << 24);
}
static inline uint64_t mb_le64(const uint8_t *p) {
        return (uint64_t) mb_le32(p) | ((uint64_t) mb_le32(p + 4) << 32);
}
static inline void mb_put_le16(uint8_t *p, uint16_t v) {
        p[0] = (uint8_t) v; p[1] = (uint8_t) (v >> 8);
}
static inline void mb_put_le32(uint8_t *p, uint32_t v) {
        p[0] = (uint8_t) v; p[1] = (uint8_t) (v >> 8); p[2] = (uint8_t) (v >> 16); p[3] = (uint8_t) (v >> 24);
}

/* memcpy and memset are the two functions every build has (gnu-efi's libefi
 * provides them for the compiler's own use), so the builtins are safe and
 * let the compiler inline small copies. The others are the core's own. */
static inline void mb_memcpy(void *dst, const void *src, size_t n) {
        if (n)
                __builtin_memcpy(dst, src, n);
}
static inline void mb_memset(void *dst, int c, size_t n) {
        if (n)
                __builtin_memset(dst, c, n);
}
static inline int mb_memcmp(const void *a, const void *b, size_t n) {
        const uint8_t *x = a, *y = b;
        for (; n; n--, x++, y++)
                if (*x != *y)
                        return *x < *y ? -1 : 1;
        return 0;
}
static inline size_t mb_strnlen(const char *s, size_t max) {
        size_t n = 0;
        while (n < max && s[n])
                n++;
        return n;
}

/* The value of a hex digit (either case), -1 for anything else. */
static inline int mb_hexval(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* A borrowed, non-NUL-terminated string slice. */
typedef struct mb_str {
        const char *p;
        size_t len;
} mb_str;

bool mb_str_eq(mb_str s, const char *lit);

#define MB_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
