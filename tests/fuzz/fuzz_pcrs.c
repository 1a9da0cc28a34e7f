/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer target: the PCR value file parser (tpm2_pcrread YAML and plain lines). */
#include <stdlib.h>
#include <string.h>

#include "mb/pcrs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *buf = malloc(size ? size : 1);   /* exactly size bytes, no NUL */
        static mb_pcr_values v;
        volatile uint8_t sink = 0;

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        memset(&v, 0xa5, sizeof(v));
        if (mb_pcrs_parse(buf, size, &v) == MB_OK) {
                if (v.n_banks > MB_TCGLOG_MAX_ALGS)
                        abort();
                for (uint32_t b = 0; b < v.n_banks; b++)
                        for (uint32_t i = 0; i < MB_PCR_COUNT; i++) {
                                const uint8_t *p = mb_pcrs_get(&v, v.banks[b].alg, i);
                                if (p)
                                        for (size_t k = 0; k < v.banks[b].size; k++)
                                                sink ^= p[k];
                        }
        }
        (void) sink;
        free(buf);
        return 0;
}
