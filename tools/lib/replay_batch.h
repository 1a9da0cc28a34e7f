/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Replay with the SHA-384/512 extends run eight at a time (sha512x8.h).
 *
 * Each (bank, PCR) pair is a chain of extends that must run in order, but
 * different chains are independent. The batch queues each chain's digests
 * (pointers into the log, which outlives the batch) and, when a queue fills
 * or at the end, runs one extend of each of the eight longest chains per
 * step: by Hu's rule (highest level first), the fewest steps any schedule
 * can manage. SHA-1 and SHA-256 extends stay immediate: libcrypto uses the
 * CPU's SHA instructions for them.
 */
#ifndef MB_REPLAY_BATCH_H
#define MB_REPLAY_BATCH_H

#include "mb/tcglog.h"

typedef struct replay_batch replay_batch;

/* Route r's SHA-384/512 extends through a new batch. NULL, leaving r as it
 * was, when the CPU cannot run eight lanes, r has no such bank, or memory
 * is short: the replay is then simply done one extend at a time. */
replay_batch *replay_batch_attach(mb_replay *r);
/* Apply every queued extend; r's PCR values are final after this. */
void replay_batch_flush(replay_batch *b);
void replay_batch_free(replay_batch *b);

#endif
