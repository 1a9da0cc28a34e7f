/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * SHA-1, SHA-256, SHA-384 and SHA-512 as specified by FIPS 180-4, and SM3
 * (GB/T 32905-2016, whose compression function is src/sm3.c): the portable
 * engine. The loader and the sanitized tests use it as the engine
 * (src/sha_engine.c); the host CLI's OpenSSL engine hands it SM3.
 *
 * Words are assembled from bytes in big-endian order (FIPS 180-4 §3.1), so
 * the code is independent of host byte order and never performs an
 * unaligned load. Whole blocks are compressed straight from the caller's
 * buffer; only a partial block is copied into h->u.p.block.
 */
#include "mb/sha.h"

static inline uint32_t be32(const uint8_t *p) {
        return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | (uint32_t) p[3];
}

static inline uint64_t be64(const uint8_t *p) {
        return ((uint64_t) be32(p) << 32) | be32(p + 4);
}

static inline void put_be32(uint8_t *p, uint32_t v) {
        p[0] = (uint8_t) (v >> 24); p[1] = (uint8_t) (v >> 16); p[2] = (uint8_t) (v >> 8); p[3] = (uint8_t) v;
}

static inline void put_be64(uint8_t *p, uint64_t v) {
        put_be32(p, (uint32_t) (v >> 32));
        put_be32(p + 4, (uint32_t) v);
}

static inline uint32_t rol32(uint32_t x, unsigned n) { return (x << n) | (x >> (32 - n)); }
static inline uint32_t ror32(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }
static inline uint64_t ror64(uint64_t x, unsigned n) { return (x >> n) | (x << (64 - n)); }

/* Ch and Maj, FIPS 180-4 §4.1.1-§4.1.3 (shared by all three families). */
#define CH(x, y, z)  (((x) & (y)) ^ (~(x) & (z)))
#define MAJ(x, y, z) (((x) & (y)) ^ ((x) & (z)) ^ ((y) & (z)))

/* ---- SHA-1 (§6.1) --------------------------------------------------------- */

static void sha1_blocks(uint32_t *h, const uint8_t *p, size_t nblocks) {
        for (; nblocks; nblocks--, p += 64) {
                /* §6.1.2 step 1, with W kept as a 16-word ring buffer. */
                uint32_t w[16], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];

                for (unsigned t = 0; t < 80; t++) {
                        uint32_t f, k, tmp;

                        if (t < 16)
                                w[t] = be32(p + 4 * t);
                        else
                                w[t & 15] = rol32(w[(t - 3) & 15] ^ w[(t - 8) & 15] ^
                                                  w[(t - 14) & 15] ^ w[t & 15], 1);

                        /* §4.1.1 functions and §4.2.1 constants by round. */
                        if (t < 20) {
                                f = CH(b, c, d);
                                k = 0x5a827999;
                        } else if (t < 40) {
                                f = b ^ c ^ d;
                                k = 0x6ed9eba1;
                        } else if (t < 60) {
                                f = MAJ(b, c, d);
                                k = 0x8f1bbcdc;
                        } else {
                                f = b ^ c ^ d;
                                k = 0xca62c1d6;
                        }
                        tmp = rol32(a, 5) + f + e + k + w[t & 15];
                        e = d;
                        d = c;
                        c = rol32(b, 30);
                        b = a;
                        a = tmp;
                }
                h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e;
        }
}

/* ---- SHA-256 (§6.2) ------------------------------------------------------- */

/* §4.2.2 */
static const uint32_t K256[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/* One round of §6.2.2 step 3, with the eight working variables renamed
 * instead of moved (the caller rotates the arguments): h becomes the new
 * a (T1 + T2) and d the new e (d + T1). Ch and Maj in their equivalent
 * forms with one operation fewer each: fewer instructions is what counts
 * for the loader, which hashes a whole initrd for the TOTP code, under
 * emulation as well. */
#define SHA256_ROUND(a, b, c, d, e, f, g, h, t) do { \
                uint32_t t1_ = (h) + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) + \
                               ((g) ^ ((e) & ((f) ^ (g)))) + K256[t] + w[t]; \
                (d) += t1_; \
                (h) = t1_ + (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) + (((a) & (b)) | ((c) & ((a) | (b)))); \
        } while (0)

static void sha256_blocks(uint32_t *h, const uint8_t *p, size_t nblocks) {
        for (; nblocks; nblocks--, p += 64) {
                uint32_t w[64], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];

                /* §6.2.2 step 1: message schedule, σ0/σ1 of §4.1.2. */
                for (unsigned t = 0; t < 16; t++)
                        w[t] = be32(p + 4 * t);
                for (unsigned t = 16; t < 64; t++) {
                        uint32_t s0 = ror32(w[t - 15], 7) ^ ror32(w[t - 15], 18) ^ (w[t - 15] >> 3);
                        uint32_t s1 = ror32(w[t - 2], 17) ^ ror32(w[t - 2], 19) ^ (w[t - 2] >> 10);
                        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
                }
                /* Steps 2-3: eight rounds per pass, after which every
                 * variable is back in its own name. */
                for (unsigned t = 0; t < 64; t += 8) {
                        SHA256_ROUND(a, b, c, d, e, f, g, hh, t);
                        SHA256_ROUND(hh, a, b, c, d, e, f, g, t + 1);
                        SHA256_ROUND(g, hh, a, b, c, d, e, f, t + 2);
                        SHA256_ROUND(f, g, hh, a, b, c, d, e, t + 3);
                        SHA256_ROUND(e, f, g, hh, a, b, c, d, t + 4);
                        SHA256_ROUND(d, e, f, g, hh, a, b, c, t + 5);
                        SHA256_ROUND(c, d, e, f, g, hh, a, b, t + 6);
                        SHA256_ROUND(b, c, d, e, f, g, hh, a, t + 7);
                }
                h[0] += a; h[1] += b; h[2] += c; h[3] += d;
                h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
        }
}

/* ---- SHA-384 / SHA-512 (§6.4, §6.5) --------------------------------------- */

static void sha512_blocks(uint64_t *h, const uint8_t *p, size_t nblocks) {
        for (; nblocks; nblocks--, p += 128) {
                uint64_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];

                /* §6.4.2 step 1, σ0/σ1 of §4.1.3. */
                for (unsigned t = 0; t < 16; t++)
                        w[t] = be64(p + 8 * t);
                for (unsigned t = 16; t < 80; t++) {
                        uint64_t s0 = ror64(w[t - 15], 1) ^ ror64(w[t - 15], 8) ^ (w[t - 15] >> 7);
                        uint64_t s1 = ror64(w[t - 2], 19) ^ ror64(w[t - 2], 61) ^ (w[t - 2] >> 6);
                        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
                }
                for (unsigned t = 0; t < 80; t++) {
                        uint64_t t1 = hh + (ror64(e, 14) ^ ror64(e, 18) ^ ror64(e, 41)) + CH(e, f, g) + mb_sha512_k[t] + w[t];
                        uint64_t t2 = (ror64(a, 28) ^ ror64(a, 34) ^ ror64(a, 39)) + MAJ(a, b, c);
                        hh = g; g = f; f = e; e = d + t1;
                        d = c; c = b; b = a; a = t1 + t2;
                }
                h[0] += a; h[1] += b; h[2] += c; h[3] += d;
                h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
        }
}

/* ---- initial values (§5.3) ------------------------------------------------ */

static const uint32_t IV1[5] = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0 };
static const uint32_t IV256[8] = {
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

/* ---- public API ------------------------------------------------------------ */

static size_t block_size(uint16_t alg) {
        return alg == MB_ALG_SHA384 || alg == MB_ALG_SHA512 ? 128 : 64;
}

mb_err mb_hash_soft_init(mb_hash *h, uint16_t alg) {
        switch (alg) {
        case MB_ALG_SHA1:
                mb_memcpy(h->u.p.h.s32, IV1, sizeof(IV1));
                break;
        case MB_ALG_SHA256:
                mb_memcpy(h->u.p.h.s32, IV256, sizeof(IV256));
                break;
        case MB_ALG_SHA384:
                mb_memcpy(h->u.p.h.s64, mb_sha384_iv, sizeof(mb_sha384_iv));
                break;
        case MB_ALG_SHA512:
                mb_memcpy(h->u.p.h.s64, mb_sha512_iv, sizeof(mb_sha512_iv));
                break;
        case MB_ALG_SM3_256:
                mb_memcpy(h->u.p.h.s32, mb_sm3_iv, sizeof(h->u.p.h.s32));
                break;
        default:
                return MB_ERR_UNSUPPORTED;
        }
        h->alg = alg;
        h->u.p.total = 0;
        h->u.p.fill = 0;
        return MB_OK;
}

static void compress(mb_hash *h, const uint8_t *p, size_t nblocks) {
        switch (h->alg) {
        case MB_ALG_SHA1:
                sha1_blocks(h->u.p.h.s32, p, nblocks);
                break;
        case MB_ALG_SHA256:
                sha256_blocks(h->u.p.h.s32, p, nblocks);
                break;
        case MB_ALG_SM3_256:
                mb_sm3_blocks(h->u.p.h.s32, p, nblocks);
                break;
        default: /* SHA-384 and SHA-512 share the compression function (§6.5). */
                sha512_blocks(h->u.p.h.s64, p, nblocks);
                break;
        }
}

void mb_hash_soft_update(mb_hash *h, const void *data, size_t n) {
        const uint8_t *p = data;
        size_t bs = block_size(h->alg);

        /* Nothing to add; data may be NULL then, and NULL + 0 is undefined in C. */
        if (n == 0)
                return;
        h->u.p.total += n;
        if (h->u.p.fill) {
                size_t take = bs - h->u.p.fill < n ? bs - h->u.p.fill : n;

                mb_memcpy(h->u.p.block + h->u.p.fill, p, take);
                h->u.p.fill += take;
                p += take;
                n -= take;
                if (h->u.p.fill < bs)
                        return;
                compress(h, h->u.p.block, 1);
                h->u.p.fill = 0;
        }
        if (n >= bs) {
                compress(h, p, n / bs);
                p += n - n % bs;
                n %= bs;
        }
        mb_memcpy(h->u.p.block, p, n);
        h->u.p.fill = n;
}

void mb_hash_soft_final(mb_hash *h, uint8_t *ret_digest) {
        size_t bs = block_size(h->alg);
        /* The length field is 64 bits for SHA-1/256 and SM3 (GB/T 32905 §5.2),
         * 128 bits for SHA-384/512 (§5.1). */
        size_t lenfield = bs / 8;
        uint64_t bits = h->u.p.total << 3;

        h->u.p.block[h->u.p.fill++] = 0x80;
        if (h->u.p.fill > bs - lenfield) {
                mb_memset(h->u.p.block + h->u.p.fill, 0, bs - h->u.p.fill);
                compress(h, h->u.p.block, 1);
                h->u.p.fill = 0;
        }
        mb_memset(h->u.p.block + h->u.p.fill, 0, bs - h->u.p.fill);
        if (bs == 128)
                put_be64(h->u.p.block + bs - 16, h->u.p.total >> 61);
        put_be64(h->u.p.block + bs - 8, bits);
        compress(h, h->u.p.block, 1);

        /* SHA-384 is SHA-512 with other IVs, truncated to six words (§6.5). */
        if (bs == 128) {
                for (size_t i = 0; i < mb_hash_size(h->alg) / 8; i++)
                        put_be64(ret_digest + 8 * i, h->u.p.h.s64[i]);
        } else {
                for (size_t i = 0; i < mb_hash_size(h->alg) / 4; i++)
                        put_be32(ret_digest + 4 * i, h->u.p.h.s32[i]);
        }
}
