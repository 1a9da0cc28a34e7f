/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: the TCG event log codec, replay, payload decoders and
 * integrity rules, i.e. everything `mshim log` runs on an untrusted file.
 * The input is copied into a buffer of exactly its size so ASan catches a
 * read one byte past the end of the log.
 */
#include <stdlib.h>
#include <string.h>

#include "mb/evdata.h"
#include "mb/tcglog.h"
#include "sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint8_t *buf = malloc(size ? size : 1);
        mb_tcglog log;
        mb_tcglog_event ev;
        static mb_replay replay; /* ~7 KiB: keep it off the fuzzer's stack */
        fuzz_sink sink;
        mb_err err;

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        fuzz_sink_init(&sink);

        err = mb_tcglog_open(&log, buf, size);
        if (err == MB_OK) {
                mb_replay_init(&replay, &log);
                while ((err = mb_tcglog_next(&log, &ev)) == MB_OK) {
                        const char *conv = NULL;
                        uint8_t loc;

                        if (ev.data_size && (ev.data < buf || ev.data + ev.data_size > buf + size))
                                abort(); /* event data must lie inside the log */
                        for (uint32_t i = 0; i < ev.n_digests && i < MB_TCGLOG_MAX_ALGS; i++) {
                                fuzz_touch(&sink, ev.digests[i].bytes, ev.digests[i].size);
                                (void) mb_tcglog_event_digest(&ev, ev.digests[i].alg);
                        }
                        if (ev.n_digests > MB_TCGLOG_MAX_ALGS)
                                abort();
                        fuzz_touch(&sink, ev.data, ev.data_size);
                        if (mb_tcglog_startup_locality(&ev, &loc))
                                sink.sum += loc;
                        const char *name = mb_tcglog_type_name(ev.type);
                        if (name)
                                fuzz_key(&sink, name);

                        (void) mb_evdata_check(&ev, &conv);
                        if (conv)
                                fuzz_key(&sink, conv);
                        /* The deferring form must list only real digests
                         * and bytes inside the event. */
                        {
                                static const uint16_t algs[] = { MB_ALG_SHA384, MB_ALG_SHA512 };
                                mb_integrity_deferred d;
                                (void) mb_evdata_check_deferred(&ev, algs, 2, &conv, &d);
                                if (d.n_digests > ev.n_digests)
                                        abort();
                                for (uint32_t k = 0; k < d.n_digests; k++)
                                        if (d.digest_index[k] >= ev.n_digests)
                                                abort();
                                if (d.n_digests) {
                                        fuzz_touch(&sink, d.p, d.n);
                                        fuzz_touch(&sink, d.suffix, d.suffix_n);
                                }
                        }
                        mb_replay_event(&replay, &ev);

                        mb_emit_begin_obj(&sink.emit, NULL);
                        mb_evdata_decode(&ev, &sink.emit);
                        mb_emit_end_obj(&sink.emit);
                        if (sink.depth != 0)
                                abort(); /* the decoder left an object or array open */
                }
                for (uint32_t b = 0; b < replay.n_banks; b++)
                        (void) mb_replay_bank(&replay, replay.banks[b].alg);
        }
        if (err != MB_END && err != MB_OK) {
                /* The error must name a place inside the input, and why. */
                if (log.err_offset > size || !log.err_reason)
                        abort();
                fuzz_key(&sink, log.err_reason);
        }
        (void) mb_strerror(err);
        free(buf);
        return 0;
}
