/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: IMA's binary measurement list (src/ima.c). Walks every
 * entry: each slice it hands back must lie inside the input, entries must
 * advance and be numbered in order, and the digest of every entry hashes
 * (sha1, sha256) without reading outside it. A failure must leave the
 * position at the failing entry.
 */
#include <stdlib.h>

#include "mb/ima.h"
#include "sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        mb_ima_log log;
        mb_ima_entry e;
        uint8_t d[MB_HASH_MAX];
        uint32_t n = 0;
        size_t last = 0;
        mb_err r;

        mb_ima_begin(&log, data, size);
        while ((r = mb_ima_next(&log, &e)) == MB_OK) {
                if (e.number != ++n || e.offset != last || log.off <= last || log.off > size)
                        abort();
                last = log.off;
                fuzz_inside(data, size, e.template_sha1, MB_IMA_SHA1_SIZE);
                fuzz_inside(data, size, e.name.p, e.name.len);
                fuzz_inside(data, size, e.data, e.data_size);
                if (e.kind != MB_IMA_OTHER) {
                        fuzz_inside(e.data, e.data_size, e.digest_alg.p, e.digest_alg.len);
                        fuzz_inside(e.data, e.data_size, e.digest, e.digest_size);
                        fuzz_inside(e.data, e.data_size, e.path.p, e.path.len);
                        fuzz_read(e.digest, e.digest_size);
                        fuzz_read(e.path.p, e.path.len);
                }
                if (e.sig_size)
                        fuzz_inside(e.data, e.data_size, e.sig, e.sig_size);
                if (mb_ima_extend_digest(&e, MB_ALG_SHA1, d) != MB_OK ||
                    mb_ima_extend_digest(&e, MB_ALG_SHA256, d) != MB_OK)
                        abort();
                fuzz_read(d, sizeof(d));
        }
        if (r != MB_END && log.off != last)
                abort();
        return 0;
}
