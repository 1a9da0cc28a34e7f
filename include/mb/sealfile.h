/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The two text files of sealing (docs/SEALING.md, "Files"): the sealed file
 * `mshim seal -o FILE` writes and the approvals of
 * <ESP>/loader/mshim/approvals/. Both are lines of `key value`, the first
 * line naming the format and its version, binary values in lower-case hex.
 *
 * The parsers work over (buffer, length), trust no length they read and
 * refuse anything that is not exactly what the writers produce: an unknown
 * or repeated key, a missing required one, a key that does not belong to
 * the file's mode, odd or upper-case hex, a value over its limit, a line
 * without its newline, a control or non-ASCII byte, stray spaces. The
 * writers check the same rules, so they never write a file the parsers
 * refuse. On failure the ret_ structure is left untouched and *err_line
 * (when not NULL) is the 1-based line at fault, 0 for the file as a whole
 * (a missing key, a rule between keys).
 */
#ifndef MB_SEALFILE_H
#define MB_SEALFILE_H

#include "mb/base.h"
#include "mb/policy.h"

/* Bytes of a marshalled TPM2B_PUBLIC or TPM2B_PRIVATE in a sealed file:
 * more than any SHA-256 ECC or RSA-2048 object mshim makes needs. */
#define MB_SEAL_BLOB_MAX 1024u
/* A TPM Name: nameAlg (2 bytes) and its digest (at most SHA-512's 64). */
#define MB_SEAL_NAME_MAX MB_POLICY_NAME_MAX
/* The literal mode's states: MB_POLICY_TREE_MAX_LEAVES. */
#define MB_SEAL_STATE_MAX MB_POLICY_TREE_MAX_LEAVES
/* One state's PCR values: up to 24 PCRs of SHA-256. */
#define MB_SEAL_VALUES_MAX (24u * 32u)
/* A line: the longest key, a space, the hex of MB_SEAL_BLOB_MAX bytes. */
#define MB_SEAL_LINE_MAX (16u + 2u * MB_SEAL_BLOB_MAX)
/* An ECDSA P-256 signature in DER (SEQUENCE of two INTEGERs of at most 33
 * octets each: 2 + 2 * (2 + 33)). */
#define MB_APPROVAL_SIG_MAX 72u
#define MB_APPROVAL_LABEL_MAX 128u
#define MB_APPROVAL_ID_MAX 255u
/* "YYYY-MM-DDTHH:MM:SSZ" */
#define MB_APPROVAL_TIME_LEN 20u

typedef enum mb_seal_mode {
        MB_SEAL_SIGNED = 1,     /* PolicyAuthorize by the policy key */
        MB_SEAL_LITERAL = 2,    /* PolicyPCR states joined by a PolicyOR tree */
} mb_seal_mode;

typedef struct mb_sealed {
        mb_seal_mode mode;
        bool pin;                       /* PolicyAuthValue on top */
        uint16_t bank;                  /* MB_ALG_SHA256, the only bank */
        uint32_t pcrs;                  /* bit i: PCR i selected (0-23) */
        /* The unseal fence: the PCRs the object's policy requires at zero
         * after the mode's part (docs/SEALING.md "The unseal fence"); none
         * in files sealed before mshim had it (the key is absent). */
        uint32_t fence;
        size_t srk_public_size;         /* the SRK's TPM2B_PUBLIC at seal time */
        uint8_t srk_public[MB_SEAL_BLOB_MAX];
        /* signed mode only */
        size_t policy_key_size;         /* the policy key's TPM2B_PUBLIC */
        uint8_t policy_key[MB_SEAL_BLOB_MAX];
        uint32_t nv_index;              /* the epoch counter's handle */
        size_t nv_name_size;            /* its Name (as written) */
        uint8_t nv_name[MB_SEAL_NAME_MAX];
        /* literal mode only: n_states states, each the selected PCRs'
         * values in ascending PCR order (mb_sealed_state_size bytes),
         * back to back. */
        size_t n_states;
        const uint8_t *states;
        /* the sealed object */
        size_t public_size;             /* TPM2B_PUBLIC */
        uint8_t public_[MB_SEAL_BLOB_MAX];
        size_t private_size;            /* TPM2B_PRIVATE */
        uint8_t private_[MB_SEAL_BLOB_MAX];
} mb_sealed;

typedef struct mb_approval {
        uint64_t epoch;                 /* the counter value it was signed at */
        uint16_t bank;                  /* MB_ALG_SHA256 */
        uint32_t pcrs;                  /* bit i: PCR i */
        uint8_t values[MB_SEAL_VALUES_MAX]; /* selected PCRs' values, ascending */
        uint8_t policy[MB_POLICY_SIZE]; /* approvedPolicy */
        size_t signature_size;          /* DER ECDSA-Sig-Value over aHash */
        uint8_t signature[MB_APPROVAL_SIG_MAX];
        char label[MB_APPROVAL_LABEL_MAX + 1];  /* "" when absent */
        char entry_id[MB_APPROVAL_ID_MAX + 1];  /* "" when absent */
        char created[MB_APPROVAL_TIME_LEN + 1];
} mb_approval;

/* Bytes of one state (or an approval's values): the number of PCRs in
 * pcrs times bank's digest size; 0 for an unknown bank. */
size_t mb_sealed_state_size(uint16_t bank, uint32_t pcrs);

/* Parse a sealed file. The literal mode's states are decoded into
 * state_buf (state_cap bytes; MB_SEAL_STATE_MAX * MB_SEAL_VALUES_MAX always
 * suffices, a smaller buffer gives MB_ERR_NOSPACE for a file with more),
 * which ret->states then points into; state_buf may be written even when
 * parsing fails. */
mb_err mb_sealed_parse(const char *buf, size_t size, uint8_t *state_buf, size_t state_cap, mb_sealed *ret,
                       size_t *err_line);
/* Write one into buf (cap bytes, NUL-terminated); *ret_len: its length
 * without the NUL. MB_ERR_NOSPACE when it does not fit; the rules of the
 * parser otherwise (MB_ERR_INVALID...). */
mb_err mb_sealed_write(const mb_sealed *s, char *buf, size_t cap, size_t *ret_len);

mb_err mb_approval_parse(const char *buf, size_t size, mb_approval *ret, size_t *err_line);
mb_err mb_approval_write(const mb_approval *a, char *buf, size_t cap, size_t *ret_len);

/* The TOTP enrolment the loader reads, <ESP>/loader/mshim/totp
 * (docs/CONFIG.md), written by `mshim totp enroll`: the persistent HMAC
 * key and its policy, whose keys and rules are the sealed file's (mode,
 * bank, pcrs; policy-key, nv-index, nv-name when signed; states when
 * literal). */
typedef struct mb_totp_enrolment {
        uint32_t handle;                /* the key's persistent handle (0x81......) */
        size_t name_size;               /* its Name */
        uint8_t name[MB_SEAL_NAME_MAX];
        uint8_t policy[MB_POLICY_SIZE]; /* its authPolicy */
        mb_seal_mode mode;
        uint16_t bank;                  /* MB_ALG_SHA256 */
        uint32_t pcrs;
        size_t policy_key_size;         /* signed: as mb_sealed's */
        uint8_t policy_key[MB_SEAL_BLOB_MAX];
        uint32_t nv_index;
        size_t nv_name_size;
        uint8_t nv_name[MB_SEAL_NAME_MAX];
        size_t n_states;                /* literal: as mb_sealed's */
        const uint8_t *states;
} mb_totp_enrolment;

/* As mb_sealed_parse and mb_sealed_write. */
mb_err mb_totp_enrolment_parse(const char *buf, size_t size, uint8_t *state_buf, size_t state_cap,
                               mb_totp_enrolment *ret, size_t *err_line);
mb_err mb_totp_enrolment_write(const mb_totp_enrolment *t, char *buf, size_t cap, size_t *ret_len);

/* The ECDSA signature's r and s as TPMS_SIGNATURE_ECDSA wants them: each
 * big-endian, left-padded to 32 bytes. MB_ERR_INVALID unless sig is a DER
 * SEQUENCE of two positive minimal INTEGERs that fit in 32 bytes. */
mb_err mb_approval_sig_rs(const uint8_t *sig, size_t size, uint8_t ret_r[32], uint8_t ret_s[32]);

#endif
