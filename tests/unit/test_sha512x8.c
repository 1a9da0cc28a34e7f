/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The host CLI's eight-lane SHA-512 (tools/lib/sha512x8.c) and the batched
 * replay built on it (tools/lib/replay_batch.c), against libcrypto and against
 * the core's one-extend-at-a-time replay. Without AVX-512 there is nothing
 * to run: the cases print SKIP, which tests/run-all.sh does not count.
 */
#define OPENSSL_API_COMPAT 0x10101000L
#include <openssl/sha.h>
#include "testlib.h"
#include "mb/tcglog.h"
#include "replay_batch.h"
#include "sha512x8.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint8_t rnd8(void) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return (uint8_t) rng;
}
static void rnd_fill(uint8_t *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                p[i] = rnd8();
}
static uint64_t be64(const uint8_t *p) {
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
                v = (v << 8) | p[i];
        return v;
}

/* Hash eight messages of `blocks` whole blocks each through the lanes
 * (FIPS 180-4 padding as an extra block) and compare with libcrypto. */
static void check_messages(bool is384, size_t blocks) {
        uint8_t msg[SHA512X8_LANES][3 * 128], want[64];
        uint64_t h[8][SHA512X8_LANES], w[16][SHA512X8_LANES];

        for (int l = 0; l < SHA512X8_LANES; l++) {
                rnd_fill(msg[l], blocks * 128);
                for (int i = 0; i < 8; i++)
                        h[i][l] = is384 ? mb_sha384_iv[i] : mb_sha512_iv[i];
        }
        for (size_t b = 0; b <= blocks; b++) {
                for (int l = 0; l < SHA512X8_LANES; l++)
                        for (int t = 0; t < 16; t++)
                                w[t][l] = b < blocks ? be64(msg[l] + 128 * b + 8 * t)
                                        : t == 0 ? 1ULL << 63 : t == 15 ? blocks * 1024 : 0;
                sha512x8_compress(h, w);
        }
        for (int l = 0; l < SHA512X8_LANES; l++) {
                if (is384)
                        SHA384(msg[l], blocks * 128, want);
                else
                        SHA512(msg[l], blocks * 128, want);
                for (int i = 0; i < (is384 ? 6 : 8); i++)
                        CHECK(h[i][l] == be64(want + 8 * i));
        }
}

TEST(lanes_match_libcrypto) {
        for (size_t blocks = 1; blocks <= 3; blocks++) {
                check_messages(false, blocks);
                check_messages(true, blocks);
        }
}

/* A log's worth of extends in two banks, spread over PCRs the way firmware
 * spreads them (a few long chains, many short), with stretches on one PCR
 * alone (fewer lanes than worth batching) and more than a queue's worth per
 * chain: the batch must land exactly where one-at-a-time extends do. */
TEST(batched_replay_matches_core) {
        static const uint8_t pcr_of[16] = { 0, 1, 7, 7, 4, 4, 4, 7, 1, 2, 3, 5, 6, 9, 12, 14 };
        static uint8_t digests[3000][2][64];
        mb_tcglog log = { .n_algs = 3, .algs = { { MB_ALG_SHA384, 48 }, { MB_ALG_SHA256, 32 }, { MB_ALG_SHA512, 64 } } };
        mb_replay plain, batched;
        replay_batch *b;

        mb_replay_init(&plain, &log);
        mb_replay_init(&batched, &log);
        b = replay_batch_attach(&batched);
        CHECK(b != NULL);
        if (!b)
                return;
        for (int i = 0; i < 3000; i++) {
                mb_tcglog_event ev = { .number = (uint32_t) i + 1, .type = 0xd, .n_digests = 3 };
                ev.pcr = (i / 500) % 2 ? 4 : pcr_of[rnd8() % 16];
                rnd_fill(digests[i][0], 64);
                rnd_fill(digests[i][1], 64);
                ev.digests[0] = (mb_tcglog_digest) { MB_ALG_SHA384, 48, digests[i][0] };
                ev.digests[1] = (mb_tcglog_digest) { MB_ALG_SHA256, 32, digests[i][1] };
                ev.digests[2] = (mb_tcglog_digest) { MB_ALG_SHA512, 64, digests[i][1] };
                mb_replay_event(&plain, &ev);
                mb_replay_event(&batched, &ev);
        }
        replay_batch_flush(b);
        replay_batch_free(b);
        CHECK(batched.extend == NULL);
        for (uint32_t k = 0; k < 3; k++) {
                CHECK(batched.banks[k].extended == plain.banks[k].extended);
                CHECK(memcmp(batched.banks[k].pcr, plain.banks[k].pcr, sizeof(plain.banks[k].pcr)) == 0);
        }
}

/* Messages of every length around the block and padding boundaries, some
 * with a suffix, mixed SHA-384 and SHA-512, more jobs than lanes. */
TEST(jobs_match_libcrypto) {
        static uint8_t data[400];
        static const uint8_t suffix[2] = { 0, 0 };
        sha512x8_job jobs[2 * 300];
        size_t n = 0;

        rnd_fill(data, sizeof(data));
        for (size_t len = 0; len < 300; len++)
                for (int k = 0; k < 2; k++)
                        jobs[n++] = (sha512x8_job) { .alg = (len + k) % 3 ? MB_ALG_SHA512 : MB_ALG_SHA384,
                                                     .p = data + k, .n = len, .suffix = suffix, .suffix_n = k ? 2 : 0 };
        sha512x8_hash_jobs(jobs, n);
        for (size_t i = 0; i < n; i++) {
                uint8_t msg[402], want[64];
                memcpy(msg, jobs[i].p, jobs[i].n);
                memcpy(msg + jobs[i].n, suffix, jobs[i].suffix_n);
                if (jobs[i].alg == MB_ALG_SHA384) {
                        SHA384(msg, jobs[i].n + jobs[i].suffix_n, want);
                        CHECK(memcmp(jobs[i].digest, want, 48) == 0);
                } else {
                        SHA512(msg, jobs[i].n + jobs[i].suffix_n, want);
                        CHECK(memcmp(jobs[i].digest, want, 64) == 0);
                }
        }
        sha512x8_hash_jobs(jobs, 0);
}

TEST(no_batch_without_sha384_or_sha512) {
        mb_tcglog log = { .n_algs = 2, .algs = { { MB_ALG_SHA1, 20 }, { MB_ALG_SHA256, 32 } } };
        mb_replay r;

        mb_replay_init(&r, &log);
        CHECK(replay_batch_attach(&r) == NULL);
        CHECK(r.extend == NULL);
}

int main(void) {
        if (!sha512x8_usable()) {
                printf("SKIP: sha512x8 (this CPU has no AVX-512F)\n");
                return 0;
        }
        RUN(lanes_match_libcrypto);
        RUN(batched_replay_matches_core);
        RUN(jobs_match_libcrypto);
        RUN(no_batch_without_sha384_or_sha512);
        TL_EXIT();
}
