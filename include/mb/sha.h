/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * SHA-1, SHA-256, SHA-384, SHA-512 (FIPS 180-4) and SM3 (GB/T 32905-2016),
 * streaming, no allocation.
 * Algorithms are named by their TPM_ALG_ID (TCG Algorithm Registry) because
 * that is how the event log and the TPM name them.
 */
#ifndef MB_SHA_H
#define MB_SHA_H

#include "mb/base.h"

#define MB_ALG_SHA1    0x0004
#define MB_ALG_SHA256  0x000B
#define MB_ALG_SHA384  0x000C
#define MB_ALG_SHA512  0x000D
#define MB_ALG_SM3_256 0x0012

#define MB_HASH_MAX 64 /* largest digest we produce or carry, in bytes */

/* Two engines implement mb_hash_init/update/final: src/sha_engine.c, the
 * portable src/sha.c, for the loader and the sanitized tests; and
 * tools/lib/sha_openssl.c, for the host CLI, which uses libcrypto's
 * CPU-specific code (SHA-NI, AVX2) for SHA and keeps its context in
 * `backend`, and hands SM3 to the portable code (docs/DESIGN.md). */
typedef struct mb_hash {
        uint16_t alg;
        union {
                struct {
                        uint64_t total;      /* bytes fed so far (SHA-384/512 lengths above 2^61 bytes are not a concern here) */
                        size_t fill;         /* bytes waiting in block[] */
                        union {
                                uint32_t s32[8];
                                uint64_t s64[8];
                        } h;
                        uint8_t block[128];
                } p;
                uint64_t backend[32];
        } u;
} mb_hash;

/* FIPS 180-4 §4.2.3 round constants and §5.3.4/§5.3.5 initial values. */
extern const uint64_t mb_sha512_k[80];
extern const uint64_t mb_sha384_iv[8];
extern const uint64_t mb_sha512_iv[8];

/* SM3's initial value and compression function (src/sm3.c), for src/sha.c. */
extern const uint32_t mb_sm3_iv[8];
void mb_sm3_blocks(uint32_t *v, const uint8_t *p, size_t nblocks);

/* Digest size in bytes for a TPM_ALG_ID we implement, 0 otherwise. */
size_t mb_hash_size(uint16_t alg);
/* Lower-case name ("sha256", "sm3_256"), or NULL for an algorithm without a
 * name here. */
const char *mb_hash_name(uint16_t alg);
/* Inverse of mb_hash_name; 0 when unknown. */
uint16_t mb_hash_alg_by_name(const char *name);

mb_err mb_hash_init(mb_hash *h, uint16_t alg);          /* MB_ERR_UNSUPPORTED for other algs */
void mb_hash_update(mb_hash *h, const void *data, size_t n);
void mb_hash_final(mb_hash *h, uint8_t *ret_digest);    /* writes mb_hash_size(alg) bytes */
/* The portable engine (src/sha.c), whichever engine is linked: the host
 * engine computes SM3 with it. Same contract as the three above. */
mb_err mb_hash_soft_init(mb_hash *h, uint16_t alg);
void mb_hash_soft_update(mb_hash *h, const void *data, size_t n);
void mb_hash_soft_final(mb_hash *h, uint8_t *ret_digest);
/* One-shot convenience. */
mb_err mb_hash_buf(uint16_t alg, const void *data, size_t n, uint8_t *ret_digest);

#endif
