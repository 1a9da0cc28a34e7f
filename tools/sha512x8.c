/* SPDX-License-Identifier: BSD-2-Clause */
/* Eight-lane SHA-512 compression with AVX-512F intrinsics (sha512x8.h).
 * Only this function is built for AVX-512; the caller checks
 * sha512x8_usable() first, so the program still runs on any x86-64. */
#include <immintrin.h>
#include <stdlib.h>
#include "mb/sha.h"
#include "sha512x8.h"

bool sha512x8_usable(void) {
        const char *off = getenv("MSHIM_NO_AVX512");

        if (off && *off && *off != '0')
                return false;
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f");
}

/* §4.1.3: Σ and σ are three rotates or shifts XORed (ternary logic 0x96),
 * Ch is 0xca and Maj 0xe8 as three-input truth tables. */
#define XOR3(a, b, c) _mm512_ternarylogic_epi64((a), (b), (c), 0x96)
#define BSIG0(x) XOR3(_mm512_ror_epi64((x), 28), _mm512_ror_epi64((x), 34), _mm512_ror_epi64((x), 39))
#define BSIG1(x) XOR3(_mm512_ror_epi64((x), 14), _mm512_ror_epi64((x), 18), _mm512_ror_epi64((x), 41))
#define SSIG0(x) XOR3(_mm512_ror_epi64((x), 1), _mm512_ror_epi64((x), 8), _mm512_srli_epi64((x), 7))
#define SSIG1(x) XOR3(_mm512_ror_epi64((x), 19), _mm512_ror_epi64((x), 61), _mm512_srli_epi64((x), 6))

__attribute__((target("avx512f")))
void sha512x8_compress(uint64_t h[8][SHA512X8_LANES], const uint64_t w[16][SHA512X8_LANES]) {
        __m512i W[16], v[8];

        for (int i = 0; i < 16; i++)
                W[i] = _mm512_loadu_si512(w[i]);
        for (int i = 0; i < 8; i++)
                v[i] = _mm512_loadu_si512(h[i]);
        /* §6.4.2 step 3, with the schedule of step 1 kept as a 16-word ring. */
        for (int t = 0; t < 80; t++) {
                __m512i wt = W[t & 15], t1, t2;

                if (t >= 16) {
                        wt = _mm512_add_epi64(_mm512_add_epi64(wt, SSIG0(W[(t - 15) & 15])),
                                              _mm512_add_epi64(W[(t - 7) & 15], SSIG1(W[(t - 2) & 15])));
                        W[t & 15] = wt;
                }
                t1 = _mm512_add_epi64(_mm512_add_epi64(v[7], BSIG1(v[4])),
                                      _mm512_add_epi64(_mm512_ternarylogic_epi64(v[4], v[5], v[6], 0xca),
                                                       _mm512_add_epi64(wt, _mm512_set1_epi64((long long) mb_sha512_k[t]))));
                t2 = _mm512_add_epi64(BSIG0(v[0]), _mm512_ternarylogic_epi64(v[0], v[1], v[2], 0xe8));
                v[7] = v[6];
                v[6] = v[5];
                v[5] = v[4];
                v[4] = _mm512_add_epi64(v[3], t1);
                v[3] = v[2];
                v[2] = v[1];
                v[1] = v[0];
                v[0] = _mm512_add_epi64(t1, t2);
        }
        /* Step 4. */
        for (int i = 0; i < 8; i++)
                _mm512_storeu_si512(h[i], _mm512_add_epi64(_mm512_loadu_si512(h[i]), v[i]));
}
