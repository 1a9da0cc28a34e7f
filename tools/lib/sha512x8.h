/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Eight independent SHA-512 block compressions at once (FIPS 180-4 §6.4.2),
 * one per 64-bit lane of an AVX-512 register. libcrypto hashes one message
 * at a time; a log replay has many independent PCR chains, and this runs
 * eight of their extends for about the price of two.
 */
#ifndef MB_SHA512X8_H
#define MB_SHA512X8_H

#include "mb/base.h"

#define SHA512X8_LANES 8

/* Big-endian 64-bit words, as SHA-512 reads and writes them. */
static inline uint64_t sha512x8_be64(const uint8_t *p) {
        uint64_t v;
        __builtin_memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        v = __builtin_bswap64(v);
#endif
        return v;
}

static inline void sha512x8_put_be64(uint8_t *p, uint64_t v) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        v = __builtin_bswap64(v);
#endif
        __builtin_memcpy(p, &v, 8);
}

/* True on an x86-64 CPU with AVX-512F when MSHIM_NO_AVX512 is not set;
 * elsewhere the functions below must not be called. */
bool sha512x8_usable(void);
/* h[i][lane] += compress(h[.][lane], w[.][lane]): the state's words and
 * the block's sixteen message words (already in host order), lane-major. */
void sha512x8_compress(uint64_t h[8][SHA512X8_LANES], const uint64_t w[16][SHA512X8_LANES]);

/* SHA-384 or SHA-512 of p[0..n) followed by suffix[0..suffix_n). */
typedef struct sha512x8_job {
        uint16_t alg;                   /* MB_ALG_SHA384 or MB_ALG_SHA512 */
        const uint8_t *p;
        size_t n;
        const uint8_t *suffix;
        size_t suffix_n;
        uint8_t digest[64];             /* out: 48 or 64 bytes */
} sha512x8_job;

/* Hash every job, eight lanes at a time: a lane whose message is done takes
 * the next job, so messages of any length share the lanes. */
void sha512x8_hash_jobs(sha512x8_job *jobs, size_t n_jobs);

#endif
