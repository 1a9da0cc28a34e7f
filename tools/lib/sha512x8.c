/* SPDX-License-Identifier: BSD-2-Clause */
/* Eight-lane SHA-512 compression with AVX-512F intrinsics (sha512x8.h), and
 * a scheduler that hashes many messages through it. Only the compression is
 * built for AVX-512; callers check sha512x8_usable() first, so the program
 * runs on any x86-64 (and builds, without the lanes, on other CPUs). */
#include <stdlib.h>
#include <string.h>
#include "mb/sha.h"
#include "sha512x8.h"

#if defined(__x86_64__)
#include <immintrin.h>

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

#else
/* Other CPUs: never usable, so the callers never reach these. */
bool sha512x8_usable(void) {
        return false;
}

void sha512x8_compress(uint64_t h[8][SHA512X8_LANES], const uint64_t w[16][SHA512X8_LANES]) {
        (void) h;
        (void) w;
        abort();
}
#endif

/* ---- many messages --------------------------------------------------- */

typedef struct x8_lane {
        sha512x8_job *job;      /* NULL: idle */
        size_t block, n_blocks;
} x8_lane;

/* Block k of the job's padded message (§5.1.2: 0x80, zeros, the length in
 * bits as a 128-bit big-endian number) as sixteen words in lane l of w. */
static void load_block(const x8_lane *ln, uint64_t w[16][SHA512X8_LANES], int l) {
        const sha512x8_job *j = ln->job;
        size_t len = j->n + j->suffix_n, off = ln->block * 128;
        uint8_t b[128];

        if (off + 128 <= j->n) {
                for (int t = 0; t < 16; t++)
                        w[t][l] = sha512x8_be64(j->p + off + 8 * t);
                return;
        }
        memset(b, 0, sizeof(b));
        if (off < j->n)
                memcpy(b, j->p + off, j->n - off);
        /* The suffix (at most a few bytes) may straddle two blocks. */
        for (size_t i = j->n > off ? j->n - off : 0; i < 128 && off + i < len; i++)
                b[i] = j->suffix[off + i - j->n];
        if (len >= off && len < off + 128)
                b[len - off] = 0x80;
        if (ln->block + 1 == ln->n_blocks) {
                /* Lengths here are far below 2^61 bytes: the high word is 0. */
                sha512x8_put_be64(b + 120, (uint64_t) len * 8);
        }
        for (int t = 0; t < 16; t++)
                w[t][l] = sha512x8_be64(b + 8 * t);
}

static void start_job(x8_lane *ln, sha512x8_job *j, uint64_t h[8][SHA512X8_LANES], int l) {
        const uint64_t *iv = j->alg == MB_ALG_SHA384 ? mb_sha384_iv : mb_sha512_iv;

        ln->job = j;
        ln->block = 0;
        /* 17 bytes of padding at least: 0x80 and the 16-byte length. */
        ln->n_blocks = (j->n + j->suffix_n + 17 + 127) / 128;
        for (int i = 0; i < 8; i++)
                h[i][l] = iv[i];
}

static void finish_job(x8_lane *ln, uint64_t h[8][SHA512X8_LANES], int l) {
        sha512x8_job *j = ln->job;
        int words = j->alg == MB_ALG_SHA384 ? 6 : 8;

        for (int i = 0; i < words; i++)
                sha512x8_put_be64(j->digest + 8 * i, h[i][l]);
        ln->job = NULL;
}

void sha512x8_hash_jobs(sha512x8_job *jobs, size_t n_jobs) {
        x8_lane lanes[SHA512X8_LANES] = { 0 };
        uint64_t h[8][SHA512X8_LANES] = { { 0 } }, w[16][SHA512X8_LANES];
        size_t next = 0;

        for (;;) {
                int active = 0;

                for (int l = 0; l < SHA512X8_LANES; l++) {
                        if (!lanes[l].job && next < n_jobs)
                                start_job(&lanes[l], &jobs[next++], h, l);
                        if (lanes[l].job) {
                                load_block(&lanes[l], w, l);
                                active++;
                        } else {
                                /* Idle lane: any defined input; its result is not used. */
                                for (int t = 0; t < 16; t++)
                                        w[t][l] = 0;
                        }
                }
                if (active == 0)
                        return;
                sha512x8_compress(h, w);
                for (int l = 0; l < SHA512X8_LANES; l++)
                        if (lanes[l].job && ++lanes[l].block == lanes[l].n_blocks)
                                finish_job(&lanes[l], h, l);
        }
}
