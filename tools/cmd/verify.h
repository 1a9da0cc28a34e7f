/* SPDX-License-Identifier: BSD-2-Clause */
/* mshim verify: its sub-commands in tools/cmd/verify_cred.c, verify_ima.c, verify_state.c and verify_facts.c, which
 * tools/cmd/verify.c dispatches to. */
#ifndef MB_TOOLS_VERIFY_H
#define MB_TOOLS_VERIFY_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include "mb/pcrs.h"
#include "mb/sealfile.h"

/* mshim verify challenge ... and mshim verify register ... (argv[0] is
 * the sub-command): an exit status. */
int verify_challenge(int argc, char **argv);
int verify_register(int argc, char **argv);
/* mshim verify ima ... (tools/cmd/verify_ima.c). */
int verify_ima(int argc, char **argv);
/* mshim verify keylime-refstate ... (tools/cmd/verify_state.c). */
int verify_keylime_refstate(int argc, char **argv);

/* The AK of the machine registered in dir (NULL: the default directory)
 * under name (its AK's Name, hex): its TPM2B_PUBLIC in *ret_pub
 * (malloc()ed), and a sentence about the machine in *ret_about
 * (malloc()ed). 0; EXIT_CHECK_FAILED, with why (why_n bytes) saying so,
 * when no such machine is registered; EXIT_BAD_INPUT (a message) when the
 * name or the record is bad. */
int verify_machine_ak(const char *dir, const char *name, uint8_t **ret_pub, size_t *ret_n, char **ret_about,
                      char *why, size_t why_n);

/* What booted (tools/cmd/verify_facts.c), from an event log that replays
 * to a verified quote, for the PCRs in quoted: only data every digest of
 * its event covers is read. unseal_fence: verify_unseal_fence's answer
 * for the quoted PCR 15. images: the verifier's --image files, which name
 * the PCR 4 images whose Authenticode hash they have. NULL when out of
 * memory or the log does not parse. */
typedef struct verify_image {
        const char *name;
        const uint8_t *data;
        size_t size;
} verify_image;
typedef struct vf_facts vf_facts;
vf_facts *verify_facts(const uint8_t *log, size_t n, uint32_t quoted, int unseal_fence, const verify_image *img,
                       size_t n_img);
void verify_facts_free(vf_facts *f);
/* `"facts": {...}` (schema mshim-verdict/1), or the text. */
void verify_facts_json(const vf_facts *f);
void verify_facts_text(const vf_facts *f);
/* A JSON string of s, on standard output. */
void verify_json_str(const char *s);
/* A quoted PCR 15 value of bank alg: 0 zero (the unseal fence not up), 1
 * the fence's event alone, -1 anything else. */
int verify_unseal_fence(uint16_t alg, const uint8_t *value);

/* Reference states (tools/cmd/verify_state.c). */
typedef struct vs_ref {
        const char *path;
        bool approval;          /* else a prediction */
        const char *bad;        /* an approval that does not verify or is revoked: why (never matched) */
        bool revoked;           /* ... revoked: of an epoch below --epoch */
        char why[160];          /* bad's text when revoked */
        char label[MB_APPROVAL_LABEL_MAX + 1];
        uint32_t mask;          /* its SHA-256 PCRs */
        uint8_t values[MB_SEAL_VALUES_MAX];
} vs_ref;
/* Each FILE: a prediction (`mshim predict --json`, of the end of the
 * boot) or an approval (checked with the policy key at policy_pub, which
 * an approval needs, as it needs epoch: the machine's epoch counter, below
 * which an approval is revoked). NULL with *ret_err (an exit status,
 * message printed) when one cannot be read. */
vs_ref *verify_states_load(char *const *paths, size_t n, const char *policy_pub, const uint64_t *epoch,
                           int *ret_err);
/* --epoch N: the machine's epoch counter, decimal. 0, or -1 (a message). */
int verify_parse_epoch(const char *s, uint64_t *ret);
void verify_states_free(vs_ref *refs);
typedef struct vs_result {
        const vs_ref *matched;  /* the state the quoted PCRs are */
        const vs_ref *forged;   /* else: an approval that matches but does not verify */
        const vs_ref *closest;  /* else: the verified state with fewest differing PCRs */
        uint32_t differ;        /* ... and those PCRs */
} vs_result;
/* 1 a state matches the quoted SHA-256 PCRs, 0 none (ret says which is
 * closest). */
int verify_states_match(const vs_ref *refs, size_t n, const mb_pcr_values *quoted, vs_result *ret);
/* The state's value of PCR i, or NULL when it has none. */
const uint8_t *vs_value(const vs_ref *r, uint32_t i);

#endif
