/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `mshim log`'s pass over the events on several threads (logwork.h).
 *
 * The log is cut into chunks of CHUNK_EVENTS records. A chunk lives in one
 * of N_SLOTS slots and moves FREE -> READY (parsed into the slot and
 * replayed by the one thread cutting chunks at the time) -> BUSY (a thread
 * checks and prints its events into the slot's buffer) -> DONE -> FREE
 * (written to stdout, in order, by the calling thread). One mutex guards the slot states and counters; all the
 * work happens outside it, and there are only a few hundred transitions even
 * on a 100,000-event log, so the lock is never contended for long.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "logwork.h"
#include "replay_batch.h"
#include "sha512x8.h"

#define CHUNK_EVENTS 128
#define N_SLOTS      16
#define MAX_THREADS  8
#define MAX_JOBS     (2 * CHUNK_EVENTS)     /* deferred SHA-384/512 digests per chunk */
#define RELEASE_STEP (1u << 20)             /* give back written log pages 1 MiB at a time */

typedef enum lw_state { SLOT_FREE, SLOT_READY, SLOT_BUSY, SLOT_DONE } lw_state;

typedef struct lw_slot {
        lw_state state;
        mb_tcglog_event *evs;   /* its records, as the replay parsed them */
        uint32_t n_events;
        size_t end;             /* offset just past its last record */
        uint32_t n_bad;         /* integrity mismatches among them */
        out_capture out;        /* their printed text */
} lw_slot;

typedef struct logwork {
        pthread_mutex_t lock;
        pthread_cond_t changed;
        lw_slot slots[N_SLOTS];
        uint64_t n_produced;    /* chunks cut; chunk k lives in slots[k % N_SLOTS] */
        uint64_t n_written;     /* chunks written to stdout */
        bool produced_all;
        bool producing;         /* a thread is cutting the next chunk */
        uint32_t n_bad;
        /* Only the thread cutting a chunk (producing) touches these until
         * the others are joined. */
        mb_tcglog *log;
        mb_replay *replay;
        replay_batch *batch;    /* NULL: extends run one at a time */
        uint32_t n_events;
        uint32_t n_short, first_short;
        mb_err err;
        cli_file *file;         /* the writer's alone */
        /* Set before any thread starts; read-only after. */
        bool x8;                /* SHA-384/512 integrity digests eight at a time */
        logwork_print_fn print;
        const void *ctx;
} logwork;

/* Parse and replay the next chunk into s. Returns true if it was the last. */
static bool produce(logwork *w, lw_slot *s) {
        mb_err err = MB_OK;
        uint32_t n = 0;

        while (n < CHUNK_EVENTS && (err = mb_tcglog_next(w->log, &s->evs[n])) == MB_OK) {
                const mb_tcglog_event *ev = &s->evs[n];
                /* The header record has its one SHA-1 slot by definition. */
                if (ev->number > 0 && ev->n_digests < w->log->n_algs && w->n_short++ == 0)
                        w->first_short = ev->number;
                mb_replay_event(w->replay, ev);
                n++;
        }
        s->n_events = n;
        s->end = w->log->off;
        w->n_events += n;
        if (n == CHUNK_EVENTS)
                return false;
        w->err = err == MB_END ? MB_OK : err;
        if (w->batch)
                replay_batch_flush(w->batch);
        return true;
}

/* Check every event of a chunk. With eight SHA-512 lanes, the SHA-384/512
 * digests of all its events are confirmed in one batch (the check defers
 * them, mb_evdata_check_deferred); an event whose deferred digest does not
 * match gets the full one-event check, which decides its verdict. */
static void check_chunk(const logwork *w, const mb_tcglog_event *evs, uint32_t n, mb_integrity *integ,
                        const char **conv) {
        static const uint16_t deferred_algs[] = { MB_ALG_SHA384, MB_ALG_SHA512 };
        sha512x8_job jobs[MAX_JOBS];
        uint32_t job_event[MAX_JOBS], n_jobs = 0;

        for (uint32_t i = 0; i < n; i++) {
                mb_integrity_deferred d;

                if (!w->x8) {
                        integ[i] = mb_evdata_check(&evs[i], &conv[i]);
                        continue;
                }
                integ[i] = mb_evdata_check_deferred(&evs[i], deferred_algs, MB_ARRAY_SIZE(deferred_algs), &conv[i], &d);
                if (d.n_digests > MAX_JOBS - n_jobs) {
                        integ[i] = mb_evdata_check(&evs[i], &conv[i]);
                        continue;
                }
                for (uint32_t k = 0; k < d.n_digests; k++) {
                        jobs[n_jobs] = (sha512x8_job) { .alg = evs[i].digests[d.digest_index[k]].alg, .p = d.p, .n = d.n,
                                                        .suffix = d.suffix, .suffix_n = d.suffix_n };
                        job_event[n_jobs++] = i | (uint32_t) d.digest_index[k] << 24;
                }
        }
        sha512x8_hash_jobs(jobs, n_jobs);
        for (uint32_t j = 0; j < n_jobs; j++) {
                const mb_tcglog_event *ev = &evs[job_event[j] & 0xffffff];
                const mb_tcglog_digest *g = &ev->digests[job_event[j] >> 24];

                if (memcmp(jobs[j].digest, g->bytes, g->size) != 0)
                        integ[job_event[j] & 0xffffff] = mb_evdata_check(ev, &conv[job_event[j] & 0xffffff]);
        }
}

/* Check and print the chunk in s into its buffer. */
static void format(const logwork *w, lw_slot *s) {
        mb_integrity integ[CHUNK_EVENTS];
        const char *conv[CHUNK_EVENTS];

        check_chunk(w, s->evs, s->n_events, integ, conv);
        s->n_bad = 0;
        out_capture_begin(&s->out);
        for (uint32_t i = 0; i < s->n_events; i++) {
                if (integ[i] == MB_INTEGRITY_MISMATCH)
                        s->n_bad++;
                w->print(w->ctx, &s->evs[i], integ[i], conv[i]);
        }
        out_capture_end(&s->out);
}

static lw_slot *oldest_ready(logwork *w) {
        for (uint64_t k = w->n_written; k < w->n_produced; k++)
                if (w->slots[k % N_SLOTS].state == SLOT_READY)
                        return &w->slots[k % N_SLOTS];
        return NULL;
}

/* The loop every thread runs, lock held except while working. The writer
 * (the caller of logwork_run) writes finished chunks first so slots come
 * free; then a thread cuts the next chunk if no other is cutting one, since
 * the replay is the one part that cannot be shared; then it formats the
 * oldest waiting chunk. Any thread may cut the next chunk, so a thread the
 * machine stalls holds up the replay for one chunk at most. */
static void work(logwork *w, bool writer) {
        pthread_mutex_lock(&w->lock);
        for (;;) {
                lw_slot *s = &w->slots[w->n_written % N_SLOTS];

                if (writer && w->n_written < w->n_produced && s->state == SLOT_DONE) {
                        pthread_mutex_unlock(&w->lock);
                        out_put(s->out.buf, s->out.len);
                        pthread_mutex_lock(&w->lock);
                        w->n_bad += s->n_bad;
                        s->state = SLOT_FREE;
                        w->n_written++;
                        /* Every chunk up to this one is done with; queued
                         * replay digests that point back there are simply
                         * read from the file again. */
                        if (w->file && s->end - w->file->released >= RELEASE_STEP)
                                cli_file_release(w->file, s->end);
                } else if (!w->producing && !w->produced_all && w->n_produced - w->n_written < N_SLOTS) {
                        bool last;
                        s = &w->slots[w->n_produced % N_SLOTS];
                        w->producing = true;
                        pthread_mutex_unlock(&w->lock);
                        last = produce(w, s);
                        pthread_mutex_lock(&w->lock);
                        w->producing = false;
                        s->state = SLOT_READY;
                        w->n_produced++;
                        w->produced_all = last;
                } else if ((s = oldest_ready(w)) != NULL) {
                        s->state = SLOT_BUSY;
                        pthread_mutex_unlock(&w->lock);
                        format(w, s);
                        pthread_mutex_lock(&w->lock);
                        s->state = SLOT_DONE;
                } else if (w->produced_all && (!writer || w->n_written == w->n_produced)) {
                        break;
                } else {
                        pthread_cond_wait(&w->changed, &w->lock);
                        continue;
                }
                pthread_cond_broadcast(&w->changed);
        }
        pthread_mutex_unlock(&w->lock);
}

static void *helper_main(void *arg) {
        work(arg, false);
        return NULL;
}

/* MSHIM_THREADS, or the CPUs this process may run on. */
static int thread_count(void) {
        const char *env = getenv("MSHIM_THREADS");
        cpu_set_t set;
        long n = 0;

        if (env && *env) {
                char *end;
                n = strtol(env, &end, 10);
                if (*end || n <= 0) {
                        cli_error("warning: MSHIM_THREADS=%s is not a positive number; ignored", env);
                        n = 0;
                }
        }
        if (n <= 0)
                n = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
        return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int) n;
}

void logwork_run(mb_tcglog *log, mb_replay *replay, logwork_print_fn print, const void *ctx,
                 cli_file *file, logwork_result *ret) {
        logwork w = { .log = log, .replay = replay, .print = print, .ctx = ctx, .batch = replay_batch_attach(replay),
                      .x8 = sha512x8_usable(), .file = file };
        pthread_t tids[MAX_THREADS];
        int n_threads = thread_count(), started = 0;

        /* Each slot keeps its chunk's parsed records, so they are parsed
         * once: 16 x 128 records, about 360 KiB. */
        mb_tcglog_event *evs = calloc(N_SLOTS * CHUNK_EVENTS, sizeof(*evs));
        if (!evs) {
                cli_error("out of memory");
                exit(EXIT_BAD_INPUT);
        }
        for (int i = 0; i < N_SLOTS; i++)
                w.slots[i].evs = evs + i * CHUNK_EVENTS;
        pthread_mutex_init(&w.lock, NULL);
        pthread_cond_init(&w.changed, NULL);
        /* Without extra threads (a single CPU, or pthread_create failing)
         * the caller does everything itself. */
        for (int i = 1; i < n_threads; i++) {
                if (pthread_create(&tids[started], NULL, helper_main, &w) != 0)
                        break;
                started++;
        }
        work(&w, true);
        for (int i = 0; i < started; i++)
                pthread_join(tids[i], NULL);
        for (int i = 0; i < N_SLOTS; i++)
                out_capture_free(&w.slots[i].out);
        replay_batch_free(w.batch);
        free(evs);
        pthread_cond_destroy(&w.changed);
        pthread_mutex_destroy(&w.lock);
        *ret = (logwork_result) { .n_events = w.n_events, .n_integrity_bad = w.n_bad, .n_short = w.n_short,
                                  .first_short = w.first_short, .err = w.err };
}
