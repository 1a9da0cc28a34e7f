/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The sealed file (`mshim seal -o FILE`) and the approval files
 * (ESP/loader/mshim/approvals/NAME.approval): text, one "key value" a line,
 * hex for binary values (docs/SEALING.md "Files"). Parsed strictly: a first
 * line naming the format, no unknown or repeated key, every required key,
 * values of the exact form and size.
 */
#ifndef MB_SEALDATA_H
#define MB_SEALDATA_H

#include "tpmseal.h"

#define SEAL_MAX_FILE ((size_t) 1 << 20)
#define SEAL_MAX_STATES MB_POLICY_TREE_MAX_LEAVES
#define SEAL_TEXT_MAX 128       /* label, entry id */
#define SEAL_PCR_VALUE 32       /* sha256 */
#define SEAL_COUNTER_MAX 1024

typedef struct seal_file {
        bool literal;           /* else signed */
        bool pin;
        uint32_t pcrs;          /* selected PCRs, bit i */
        TPM2B_PUBLIC srk;       /* the SRK's public area at seal time */
        TPM2B_PUBLIC pub;       /* the sealed object */
        TPM2B_PRIVATE priv;
        TPM2B_PUBLIC policy_key;        /* signed: the policy key (LoadExternal) */
        uint8_t counter[SEAL_COUNTER_MAX];      /* signed: the epoch counter's ESYS_TR, serialized */
        size_t counter_size;
        size_t n_states;        /* literal: the boot states, each the */
        uint8_t (*states)[MB_PCR_COUNT * SEAL_PCR_VALUE];       /* selected PCRs' values in order */
} seal_file;

typedef struct approval {
        uint64_t epoch;
        uint32_t pcrs;
        uint8_t values[MB_PCR_COUNT * SEAL_PCR_VALUE];  /* the selected PCRs', in order */
        mb_policy policy;       /* approvedPolicy */
        uint8_t sig_r[32], sig_s[32];
        char label[SEAL_TEXT_MAX + 1], entry_id[SEAL_TEXT_MAX + 1];
        char created[32];       /* UTC, 2026-12-03T19:00:00Z */
} approval;

/* Number of PCRs in a mask. */
static inline size_t seal_pcr_count(uint32_t mask) { return (size_t) __builtin_popcount(mask); }

/* Text of each file; a malloc()ed string or NULL (out of memory). */
char *seal_file_format(const seal_file *f);
char *approval_format(const approval *a);
/* Parse; -1 with a message naming path and line. seal_file_free frees states. */
int seal_file_load(const char *path, seal_file *ret);
void seal_file_free(seal_file *f);
int approval_load(const char *path, approval *ret);

#endif
