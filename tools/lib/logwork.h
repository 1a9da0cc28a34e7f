/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The decode/check/replay pass of `mshim log`, spread over the CPUs.
 *
 * Replaying is sequential (each extend needs the previous PCR value), but
 * checking and printing an event depend only on that event. So the log is
 * parsed and replayed in order, one chunk of events at a time, by one thread
 * at a time (whichever is free); every thread checks and prints whole chunks
 * into private buffers; the calling thread writes the buffers to stdout in
 * log order. The output is byte for byte what one
 * thread would print, and memory stays bounded: a fixed number of chunks are
 * in flight, whatever the log's length.
 */
#ifndef MB_LOGWORK_H
#define MB_LOGWORK_H

#include "cli.h"
#include "mb/evdata.h"
#include "mb/tcglog.h"

/* Prints one event through the out_* writers; called on any thread, so it
 * must only read ctx. */
typedef void (*logwork_print_fn)(const void *ctx, const mb_tcglog_event *ev, mb_integrity integ,
                                 const char *convention);

typedef struct logwork_result {
        uint32_t n_events;
        uint32_t n_integrity_bad;
        /* Records (past the header) with fewer digests than the Spec ID
         * header declares, and the first of them: their missing banks are
         * not extended, so those banks' replay is incomplete. */
        uint32_t n_short, first_short;
        mb_err err;             /* MB_OK, or the decode error that stopped the pass */
} logwork_result;

/* Run the pass over *log (opened, positioned at its first record) into
 * *replay (initialised), printing each event with print(ctx, ...). On
 * return *log holds the parser's final state (err_* on a decode error).
 * As chunks are written, the pages of file (the mapping log reads; may be
 * NULL) before them are released, so memory stays flat however long the log.
 * Threads: MSHIM_THREADS from the environment if set (1 = no extra
 * thread), otherwise one per online CPU, at most 8. */
void logwork_run(mb_tcglog *log, mb_replay *replay, logwork_print_fn print, const void *ctx,
                 cli_file *file, logwork_result *ret);

#endif
