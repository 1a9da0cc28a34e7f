/* SPDX-License-Identifier: BSD-2-Clause */
/* An IMA measurement list judged against PCR 10 and an allowlist
 * (docs/ATTESTATION.md "IMA"). The list's parser is the core's
 * (include/mb/ima.h). */
#ifndef MB_TOOLS_IMA_H
#define MB_TOOLS_IMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "mb/ima.h"

/* --ima-allow FILE: one rule a line, '#' comments and blank lines skipped:
 *   DIGEST PATH   that content at that path (sha256sum's output: DIGEST is
 *                 hex, or ALG:hex; one or two spaces before PATH)
 *   DIGEST        that content at any path
 *   PATH          any content at that path (starts with '/')
 * The digest's algorithm is its prefix, else its length (40 sha1, 64
 * sha256, 96 sha384, 128 sha512). */
/* The rules are kept in one open-addressing table (linear probing) of
 * fixed-size slots, the paths and the tails of long digests in one arena:
 * an entry is judged with one or two cache misses, and the file is read
 * once and released after the load. */
typedef struct ima_slot {
        uint8_t head[32];               /* the digest's first 32 bytes (a SHA-1's 20, then zeros) */
        uint32_t path;                  /* the path's record in the arena, + 1; 0: no path */
        uint32_t tail;                  /* SHA-384/512: where bytes 32.. are in the arena */
        uint32_t check;                 /* the key's low 32 bits: most other rules skipped unread */
        uint16_t alg;                   /* the digest's; 0 for a path rule */
        uint8_t kind;                   /* IMA_RULE_*; 0: an empty slot */
} ima_slot;

typedef struct ima_allow {
        ima_slot *slots;                /* 48 bytes each, at most 2/3 used */
        size_t n_slots;
        uint8_t *arena;                 /* paths (u32 length, bytes) and digest tails */
        size_t arena_used;
        size_t n_kind[4];               /* the rules of each kind: a kind without any is never probed */
} ima_allow;

int ima_allow_load(const char *path, ima_allow *ret);  /* 0, or -1 with a message naming the line */
void ima_allow_free(ima_allow *a);

/* One bank to replay PCR 10 in, and the value the quote holds for it. */
typedef struct ima_bank {
        uint16_t alg;
        const uint8_t *want;
        uint8_t pcr[MB_HASH_MAX];       /* the replay, at the end of the list */
} ima_bank;

typedef struct ima_verdict {
        uint32_t entries;               /* in the list */
        uint32_t covered;               /* the first this many replay to every bank's want: the quote's */
        uint32_t violations;            /* among the covered */
        uint32_t refused;               /* the first covered entry the allowlist does not allow; 0 none */
        char why[512];                  /* and why, naming it */
        bool has_aggregate;             /* the first entry is "boot_aggregate": */
        char aggregate_alg[16];         /* its digest's algorithm, as logged */
        uint8_t aggregate[MB_HASH_MAX]; /* and its digest (copies: the list may be unmapped) */
        size_t aggregate_size;
} ima_verdict;

/* Replay list (the whole list, with its name for messages) in the n banks
 * from zero; the shortest prefix after which every bank equals its want is
 * what the quote covers (IMA appends after the quote was taken; what follows
 * is not judged). With allow, every covered entry must be allowed: the first
 * that is not, a violation among them (its data bound by no PCR), or an
 * entry of another PCR is v->refused. 0 with v filled (check v->covered
 * and v->refused), or EXIT_BAD_INPUT naming the entry that does not parse. */
int ima_judge(const char *name, const void *list, size_t size, ima_bank *banks, size_t n, const ima_allow *allow,
              ima_verdict *v);

/* IMA's boot_aggregate for a bank of alg (ima_calc_boot_aggregate, Linux
 * 5.8+): the hash of PCRs 0-7, and 8-9 too when alg is not SHA-1. pcrs[i]
 * the bank's value of PCR i. 0, or -1 for an algorithm mshim cannot hash. */
int ima_boot_aggregate(uint16_t alg, const uint8_t *const pcrs[10], uint8_t *ret);

#endif
