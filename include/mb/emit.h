/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A structured-output sink. Core decoders (event payloads) describe what
 * they found through it without knowing whether the host prints JSON or a
 * human-readable table: tools/ provides both implementations.
 *
 * Calls nest like JSON: inside an object every value has a key; inside an
 * array keys are NULL. Strings are UTF-8 and length-delimited.
 */
#ifndef MB_EMIT_H
#define MB_EMIT_H

#include "mb/base.h"

typedef struct mb_emit mb_emit;

typedef struct mb_emit_ops {
        void (*begin_obj)(mb_emit *e, const char *key);
        void (*end_obj)(mb_emit *e);
        void (*begin_arr)(mb_emit *e, const char *key);
        void (*end_arr)(mb_emit *e);
        void (*str)(mb_emit *e, const char *key, const char *s, size_t len);
        void (*u64)(mb_emit *e, const char *key, uint64_t v);
        void (*hex)(mb_emit *e, const char *key, const uint8_t *p, size_t n);
        void (*boolean)(mb_emit *e, const char *key, bool v);
} mb_emit_ops;

struct mb_emit {
        const mb_emit_ops *ops;
        void *ctx;
};

static inline void mb_emit_begin_obj(mb_emit *e, const char *k) { e->ops->begin_obj(e, k); }
static inline void mb_emit_end_obj(mb_emit *e) { e->ops->end_obj(e); }
static inline void mb_emit_begin_arr(mb_emit *e, const char *k) { e->ops->begin_arr(e, k); }
static inline void mb_emit_end_arr(mb_emit *e) { e->ops->end_arr(e); }
static inline void mb_emit_str(mb_emit *e, const char *k, const char *s, size_t n) { e->ops->str(e, k, s, n); }
static inline void mb_emit_cstr(mb_emit *e, const char *k, const char *s) { e->ops->str(e, k, s, mb_strnlen(s, (size_t) -1)); }
static inline void mb_emit_u64(mb_emit *e, const char *k, uint64_t v) { e->ops->u64(e, k, v); }
static inline void mb_emit_hex(mb_emit *e, const char *k, const uint8_t *p, size_t n) { e->ops->hex(e, k, p, n); }
static inline void mb_emit_bool(mb_emit *e, const char *k, bool v) { e->ops->boolean(e, k, v); }

/* A bounded string builder over a caller's buffer, for composing values such
 * as device-path text. Never overflows; sets truncated when it had to cut. */
typedef struct mb_strbuf {
        char *p;
        size_t cap, len;
        bool truncated;
} mb_strbuf;

void mb_strbuf_init(mb_strbuf *b, char *storage, size_t cap);
void mb_strbuf_put(mb_strbuf *b, const char *s, size_t n);
void mb_strbuf_puts(mb_strbuf *b, const char *s);
void mb_strbuf_u64(mb_strbuf *b, uint64_t v);
void mb_strbuf_hex(mb_strbuf *b, const uint8_t *p, size_t n);      /* lower-case, no separators */
void mb_strbuf_hexnum(mb_strbuf *b, uint64_t v);                    /* "0x1f" */
void mb_strbuf_guid(mb_strbuf *b, const uint8_t guid[16]);          /* EFI mixed-endian GUID text */
/* UTF-16LE code units to UTF-8; stops at n_units or a NUL. Unpaired
 * surrogates become U+FFFD. */
void mb_strbuf_utf16le(mb_strbuf *b, const uint8_t *p, size_t n_units);

#endif
