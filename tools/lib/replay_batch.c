/* SPDX-License-Identifier: BSD-2-Clause */
/* Batched SHA-384/512 replay (replay_batch.h). */
#include <stdlib.h>
#include <string.h>
#include "replay_batch.h"
#include "sha512x8.h"

#define QUEUE_CAP 128   /* digests per chain before everything is flushed */
#define MIN_LANES 3     /* below this, one-at-a-time extends are cheaper */

typedef struct rb_chain {
        const uint8_t *digest[QUEUE_CAP];
        uint32_t n;     /* queued */
        uint32_t done;  /* of those, applied during the current flush */
} rb_chain;

struct replay_batch {
        mb_replay *r;
        rb_chain chains[MB_TCGLOG_MAX_ALGS][MB_PCR_COUNT];      /* [bank index][pcr] */
};

static bool batched_alg(uint16_t alg) {
        return alg == MB_ALG_SHA384 || alg == MB_ALG_SHA512;
}

/* The initial values once per lane, and SHA-512's padding block for a
 * 128-byte message (§5.1.2: 0x80, zeros, the bit length 1024). */
static uint64_t iv_lanes[2][8][SHA512X8_LANES];
static uint64_t pad1024[16][SHA512X8_LANES];

__attribute__((constructor)) static void lane_tables_init(void) {
        for (int l = 0; l < SHA512X8_LANES; l++) {
                for (int i = 0; i < 8; i++) {
                        iv_lanes[0][i][l] = mb_sha384_iv[i];
                        iv_lanes[1][i][l] = mb_sha512_iv[i];
                }
                pad1024[0][l] = 1ULL << 63;
                pad1024[15][l] = 128 * 8;
        }
}

/* Up to eight PCRs whose chains have the most extends left, longest first. */
static uint32_t pick_lanes(const rb_chain *chains, uint32_t lane_pcr[SHA512X8_LANES]) {
        uint32_t n = 0;

        for (uint32_t p = 0; p < MB_PCR_COUNT; p++) {
                uint32_t left = chains[p].n - chains[p].done, i;
                if (left == 0)
                        continue;
                /* Insertion into the short sorted list, dropping the shortest. */
                for (i = n < SHA512X8_LANES ? n : SHA512X8_LANES; i > 0; i--) {
                        const rb_chain *c = &chains[lane_pcr[i - 1]];
                        if (c->n - c->done >= left)
                                break;
                        if (i < SHA512X8_LANES)
                                lane_pcr[i] = lane_pcr[i - 1];
                }
                if (i < SHA512X8_LANES) {
                        lane_pcr[i] = p;
                        if (n < SHA512X8_LANES)
                                n++;
                }
        }
        return n;
}

/* One extend in each of the n lanes: pcr = H(pcr || digest), FIPS 180-4
 * padding (§5.1.2) written out. Unused lanes repeat lane 0's work. */
static void extend_lanes(mb_pcr_bank *bank, rb_chain *chains, const uint32_t *lane_pcr, uint32_t n) {
        bool is512 = bank->alg == MB_ALG_SHA512;
        uint32_t words = bank->size / 8;        /* 6 or 8 */
        uint64_t h[8][SHA512X8_LANES], w[16][SHA512X8_LANES];

        for (uint32_t l = 0; l < SHA512X8_LANES; l++) {
                uint32_t p = lane_pcr[l < n ? l : 0];
                const uint8_t *d = chains[p].digest[chains[p].done];

                for (uint32_t i = 0; i < words; i++) {
                        w[i][l] = sha512x8_be64(bank->pcr[p] + 8 * i);
                        w[words + i][l] = sha512x8_be64(d + 8 * i);
                }
                if (!is512) {
                        /* 96 message bytes, then 0x80, zeros and the bit length 768. */
                        w[12][l] = 1ULL << 63;
                        w[13][l] = w[14][l] = 0;
                        w[15][l] = 96 * 8;
                }
        }
        memcpy(h, iv_lanes[is512], sizeof(h));
        sha512x8_compress(h, w);
        /* 128 message bytes fill SHA-512's first block; the padding is a block of its own. */
        if (is512)
                sha512x8_compress(h, (const uint64_t (*)[SHA512X8_LANES]) pad1024);
        for (uint32_t l = 0; l < n; l++) {
                uint32_t p = lane_pcr[l];
                for (uint32_t i = 0; i < words; i++)
                        sha512x8_put_be64(bank->pcr[p] + 8 * i, h[i][l]);
                chains[p].done++;
        }
}

static void flush_bank(mb_pcr_bank *bank, rb_chain *chains) {
        uint32_t lane_pcr[SHA512X8_LANES], n;

        while ((n = pick_lanes(chains, lane_pcr)) > 0) {
                if (n >= MIN_LANES) {
                        extend_lanes(bank, chains, lane_pcr, n);
                        continue;
                }
                for (uint32_t l = 0; l < n; l++) {
                        rb_chain *c = &chains[lane_pcr[l]];
                        mb_pcr_extend(bank->alg, bank->pcr[lane_pcr[l]], c->digest[c->done++]);
                }
        }
        for (uint32_t p = 0; p < MB_PCR_COUNT; p++)
                chains[p].n = chains[p].done = 0;
}

void replay_batch_flush(replay_batch *b) {
        for (uint32_t i = 0; i < b->r->n_banks; i++)
                if (batched_alg(b->r->banks[i].alg))
                        flush_bank(&b->r->banks[i], b->chains[i]);
}

static void queue_extend(void *ctx, mb_pcr_bank *bank, uint32_t pcr, const uint8_t *digest) {
        replay_batch *b = ctx;
        rb_chain *c;

        if (!batched_alg(bank->alg)) {
                mb_pcr_extend(bank->alg, bank->pcr[pcr], digest);
                return;
        }
        c = &b->chains[bank - b->r->banks][pcr];
        if (c->n == QUEUE_CAP)
                replay_batch_flush(b);
        c->digest[c->n++] = digest;
}

replay_batch *replay_batch_attach(mb_replay *r) {
        replay_batch *b;
        bool any = false;

        for (uint32_t i = 0; i < r->n_banks; i++)
                any |= r->banks[i].computable && batched_alg(r->banks[i].alg);
        if (!any || !sha512x8_usable())
                return NULL;
        b = calloc(1, sizeof(*b));
        if (!b)
                return NULL;
        b->r = r;
        r->extend = queue_extend;
        r->extend_ctx = b;
        return b;
}

void replay_batch_free(replay_batch *b) {
        if (!b)
                return;
        b->r->extend = NULL;
        b->r->extend_ctx = NULL;
        free(b);
}
