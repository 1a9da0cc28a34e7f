/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * PCR value sets: what a TPM reported (or a file says it reported), to be
 * compared with a replayed event log. The parser reads two text forms:
 *  - tpm2_pcrread's YAML:   "  sha256:" then "    0 : 0x3DCA..." lines;
 *  - plain lines:           "sha256:0=3dca..." (one PCR per line, '#' comments).
 */
#ifndef MB_PCRS_H
#define MB_PCRS_H

#include "mb/tcglog.h"

typedef struct mb_pcr_values {
        uint32_t n_banks;
        struct {
                uint16_t alg;
                uint16_t size;
                uint32_t present;       /* bit i: PCR i has a value */
                uint8_t pcr[MB_PCR_COUNT][MB_HASH_MAX];
        } banks[MB_TCGLOG_MAX_ALGS];
        size_t err_line;                /* 1-based line of a parse error */
} mb_pcr_values;

/* Parse either text form. MB_ERR_INVALID (err_line set) for a line that is
 * neither, an unknown bank name, a PCR index above 23, or a value whose
 * length is not the bank's digest size. */
mb_err mb_pcrs_parse(const char *buf, size_t size, mb_pcr_values *ret);
/* Record one value; used by the parser and by the TPM reader. */
mb_err mb_pcrs_set(mb_pcr_values *v, uint16_t alg, uint32_t pcr, const uint8_t *value, size_t size);
/* The value of PCR i in bank alg, or NULL. */
const uint8_t *mb_pcrs_get(const mb_pcr_values *v, uint16_t alg, uint32_t pcr);

#endif
