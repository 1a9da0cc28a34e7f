/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A table of PCR values by bank, as `mshim log` (the replay), `mshim
 * predict` (the prediction) and `mshim pcrs` (the TPM's) print it: one
 * printer for the text forms and one for the JSON "pcrs" member
 * ({ "<bank>": { "<pcr>": "<hex>" } }, docs/schema/).
 */
#ifndef MB_PCRTABLE_H
#define MB_PCRTABLE_H

#include "cli.h"

typedef struct pcrtab_bank {
        uint16_t alg, size;
        bool computable;                  /* false: "not computed", left out of JSON */
        uint32_t shown;                   /* bit i: PCR i is printed */
        const uint8_t (*pcr)[MB_HASH_MAX]; /* [MB_PCR_COUNT] */
} pcrtab_bank;

typedef struct pcrtab {
        uint32_t n_banks;
        pcrtab_bank banks[MB_TCGLOG_MAX_ALGS];
        uint32_t changed;                 /* text: "  changed" after the value */
        uint32_t unpredictable;           /* text: the reason instead of a value; JSON: left out */
        const char *const *reason;        /* [MB_PCR_COUNT]: unpredictable PCRs' reasons */
} pcrtab;

/* Add a bank (at most MB_TCGLOG_MAX_ALGS: the tables' sources hold no more). */
void pcrtab_add(pcrtab *t, uint16_t alg, uint16_t size, bool computable, uint32_t shown,
                const uint8_t (*pcr)[MB_HASH_MAX]);

typedef enum pcrtab_style {
        PCRTAB_LIST,    /* "<prefix><bank>:" then "  PCR  4: <hex>" */
        PCRTAB_PCRREAD, /* tpm2_pcrread's YAML: "  <bank>:" then "    4 : 0x<HEX>" */
} pcrtab_style;

/* The text form, each bank's heading after prefix (PCRTAB_LIST only). */
void pcrtab_text(const pcrtab *t, pcrtab_style style, const char *prefix);
/* The member "pcrs" of the object e is in. */
void pcrtab_json(const pcrtab *t, mb_emit *e);

#endif
