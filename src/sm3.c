/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The SM3 compression function (GB/T 32905-2016, also ISO/IEC 10118-3:2018
 * and draft-sca-cfrg-sm3), for TPM_ALG_SM3_256 PCR banks. Padding and
 * length encoding are those of SHA-256 (64-byte blocks, a 64-bit
 * big-endian bit count), so src/sha.c drives it like SHA-256; the host CLI
 * reaches it through src/sha.c's portable engine too (docs/DESIGN.md).
 */
#include "mb/sha.h"

/* §4.1 initial value IV. */
const uint32_t mb_sm3_iv[8] = {
        0x7380166f, 0x4914b2b9, 0x172442d7, 0xda8a0600, 0xa96f30bc, 0x163138aa, 0xe38dee4d, 0xb0fb0e4e,
};

/* A rotation by 0..31 bits without the undefined shift by 32. */
static inline uint32_t rol(uint32_t x, unsigned n) {
        n &= 31;
        return n ? (x << n) | (x >> (32 - n)) : x;
}

static inline uint32_t be32(const uint8_t *p) {
        return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | (uint32_t) p[3];
}

/* §4.4 permutations. */
static inline uint32_t p0(uint32_t x) { return x ^ rol(x, 9) ^ rol(x, 17); }
static inline uint32_t p1(uint32_t x) { return x ^ rol(x, 15) ^ rol(x, 23); }

void mb_sm3_blocks(uint32_t *v, const uint8_t *p, size_t nblocks) {
        for (; nblocks; nblocks--, p += 64) {
                uint32_t w[68], a = v[0], b = v[1], c = v[2], d = v[3], e = v[4], f = v[5], g = v[6], h = v[7];

                /* §5.3.2 message expansion; W'j = Wj ^ Wj+4 is formed in the loop. */
                for (unsigned j = 0; j < 16; j++)
                        w[j] = be32(p + 4 * j);
                for (unsigned j = 16; j < 68; j++)
                        w[j] = p1(w[j - 16] ^ w[j - 9] ^ rol(w[j - 3], 15)) ^ rol(w[j - 13], 7) ^ w[j - 6];
                /* §5.3.3 compression; constants Tj and functions FFj, GGj of §4.2-4.3. */
                for (unsigned j = 0; j < 64; j++) {
                        uint32_t t = j < 16 ? 0x79cc4519 : 0x7a879d8a;
                        uint32_t ss1 = rol(rol(a, 12) + e + rol(t, j), 7), ss2 = ss1 ^ rol(a, 12);
                        uint32_t ff = j < 16 ? a ^ b ^ c : (a & b) | (a & c) | (b & c);
                        uint32_t gg = j < 16 ? e ^ f ^ g : (e & f) | (~e & g);
                        uint32_t tt1 = ff + d + ss2 + (w[j] ^ w[j + 4]), tt2 = gg + h + ss1 + w[j];

                        d = c; c = rol(b, 9); b = a; a = tt1;
                        h = g; g = rol(f, 19); f = e; e = p0(tt2);
                }
                v[0] ^= a; v[1] ^= b; v[2] ^= c; v[3] ^= d;
                v[4] ^= e; v[5] ^= f; v[6] ^= g; v[7] ^= h;
        }
}
