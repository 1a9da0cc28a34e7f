/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A counting mb_emit sink for the fuzz targets: it writes nothing, but reads
 * every byte it is handed (keys, strings, hex blobs) so that ASan sees an
 * out-of-bounds or use-after-free read at the decoder call that caused it,
 * and it checks that begin/end calls nest.
 */
#ifndef MB_FUZZ_SINK_H
#define MB_FUZZ_SINK_H

#include <stdlib.h>
#include "mb/emit.h"

typedef struct fuzz_sink {
        uint64_t sum;           /* a checksum of everything seen, so reads are not optimised away */
        int depth;
        mb_emit emit;
} fuzz_sink;

static inline void fuzz_touch(fuzz_sink *s, const void *p, size_t n) {
        const volatile uint8_t *b = p;
        for (size_t i = 0; i < n; i++)
                s->sum += b[i];
}

/* For targets without an emit sink: read every byte of [p, p+n) into a
 * global checksum, so ASan checks the read and the compiler keeps it. */
static volatile uint64_t fuzz_checksum;

static inline void fuzz_read(const void *p, size_t n) {
        const volatile uint8_t *b = p;
        for (size_t i = 0; i < n; i++)
                fuzz_checksum += b[i];
}

/* Abort unless [p, p+n) lies inside [buf, buf+size): a parser handed back
 * a slice that is not in its input. */
static inline void fuzz_inside(const void *buf, size_t size, const void *p, size_t n) {
        const uint8_t *b = buf, *q = p;

        if (n == 0)
                return;
        if (!q || q < b || (size_t) (q - b) > size || size - (size_t) (q - b) < n)
                abort();
}

static inline void fuzz_key(fuzz_sink *s, const char *key) {
        if (key)
                for (const volatile char *k = key; *k; k++)
                        s->sum += (uint8_t) *k;
}

static inline fuzz_sink *fuzz_sink_of(mb_emit *e) { return (fuzz_sink *) e->ctx; }

static void fz_begin_obj(mb_emit *e, const char *key) { fuzz_key(fuzz_sink_of(e), key); fuzz_sink_of(e)->depth++; }
static void fz_begin_arr(mb_emit *e, const char *key) { fuzz_key(fuzz_sink_of(e), key); fuzz_sink_of(e)->depth++; }
static void fz_end(mb_emit *e) {
        if (--fuzz_sink_of(e)->depth < 0)
                abort();        /* an end without a begin: the decoder's nesting is wrong */
}
static void fz_str(mb_emit *e, const char *key, const char *s, size_t len) {
        fuzz_key(fuzz_sink_of(e), key);
        if (len && !s)
                abort();
        fuzz_touch(fuzz_sink_of(e), s, len);
}
static void fz_u64(mb_emit *e, const char *key, uint64_t v) { fuzz_key(fuzz_sink_of(e), key); fuzz_sink_of(e)->sum += v; }
static void fz_hex(mb_emit *e, const char *key, const uint8_t *p, size_t n) {
        fuzz_key(fuzz_sink_of(e), key);
        if (n && !p)
                abort();
        fuzz_touch(fuzz_sink_of(e), p, n);
}
static void fz_bool(mb_emit *e, const char *key, bool v) { fuzz_key(fuzz_sink_of(e), key); fuzz_sink_of(e)->sum += v; }

static const mb_emit_ops fuzz_sink_ops = {
        .begin_obj = fz_begin_obj, .end_obj = fz_end,
        .begin_arr = fz_begin_arr, .end_arr = fz_end,
        .str = fz_str, .u64 = fz_u64, .hex = fz_hex, .boolean = fz_bool,
};

static inline void fuzz_sink_init(fuzz_sink *s) {
        s->sum = 0;
        s->depth = 0;
        s->emit.ops = &fuzz_sink_ops;
        s->emit.ctx = s;
}

#endif
