/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The sealed file (`mshim seal -o FILE`) and the approval files
 * (ESP/loader/mshim/approvals/NAME.approval) as the CLI uses them: read
 * from and written to files with the core's strict codec (src/sealfile.c,
 * docs/SEALING.md "Files"), the TPM structures unmarshalled.
 */
#ifndef MB_SEALDATA_H
#define MB_SEALDATA_H

#include "mb/sealfile.h"
#include "tpmseal.h"

#define SEAL_MAX_FILE ((size_t) 1 << 20)
#define SEAL_MAX_STATES MB_SEAL_STATE_MAX
#define SEAL_PCR_VALUE 32       /* sha256 */
/* One state: the selected PCRs' values, in ascending PCR order. */
#define SEAL_STATE_MAX MB_SEAL_VALUES_MAX

typedef struct seal_file {
        bool literal;           /* else signed */
        bool pin;
        uint32_t pcrs;          /* selected PCRs, bit i */
        uint32_t fence;         /* the unseal fence's PCRs (0: none, an older file) */
        TPM2B_PUBLIC srk;       /* the SRK's public area at seal time */
        TPM2B_PUBLIC pub;       /* the sealed object */
        TPM2B_PRIVATE priv;
        TPM2B_PUBLIC policy_key;        /* signed: the policy key (LoadExternal) */
        uint32_t nv_index;      /* signed: the epoch counter */
        TPM2B_NAME nv_name;
        size_t n_states;        /* literal: the boot states */
        uint8_t (*states)[SEAL_STATE_MAX];
} seal_file;

typedef mb_approval approval;

/* Number of PCRs in a mask. */
static inline size_t seal_pcr_count(uint32_t mask) { return (size_t) __builtin_popcount(mask); }

/* Text of each file; a malloc()ed string, or NULL with a message. */
char *seal_file_format(const seal_file *f);
char *approval_format(const approval *a);
/* Parse; -1 with a message naming path (and line). seal_file_free frees
 * the states. */
int seal_file_load(const char *path, seal_file *ret);
/* The same from text (size bytes) that came from elsewhere (a LUKS2
 * token); messages name it name. */
int seal_file_parse(const char *name, const char *text, size_t size, seal_file *ret);
void seal_file_free(seal_file *f);
int approval_load(const char *path, approval *ret);
/* The TOTP enrolment file at path (<ESP>/loader/mshim/totp), without its
 * literal states (ret->states NULL): 0, 1 when there is no such file, -1
 * with a message naming path (and line). */
int totp_enrolment_load(const char *path, mb_totp_enrolment *ret);

#endif
