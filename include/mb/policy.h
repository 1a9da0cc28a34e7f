/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TPM 2.0 policy digests, computed the way the TPM computes a session's
 * policyDigest (TPM 2.0 Part 3, "Enhanced Authorization" commands, §23), so
 * that mshim seal can set an object's authPolicy and mshim policy approve
 * can sign an approved policy without a TPM (no trial session needed), and
 * the loader and the host compute the same digests (docs/SEALING.md).
 *
 * Only SHA-256 policies: every object and session mshim makes uses
 * nameAlg/authHash SHA-256. Every function updates *p in place, as the
 * TPM command of the same name updates policyDigest; on error *p is left
 * untouched.
 */
#ifndef MB_POLICY_H
#define MB_POLICY_H

#include "mb/base.h"

#define MB_POLICY_SIZE 32u

/* TPM_CC values the policy digests hash (TPM 2.0 Part 2, §6.5.2). */
#define MB_TPM_CC_POLICY_NV          0x00000149u
#define MB_TPM_CC_POLICY_OR          0x00000171u
#define MB_TPM_CC_POLICY_PCR         0x0000017Fu
#define MB_TPM_CC_POLICY_AUTHORIZE   0x0000016Au
#define MB_TPM_CC_POLICY_AUTH_VALUE  0x0000016Bu

/* TPM_EO (Part 2, §6.8): the PolicyNV comparison mshim uses. */
#define MB_TPM_EO_UNSIGNED_LE 0x0009u
#define MB_TPM_EO_BITCLEAR    0x000Bu /* the highest TPM_EO */

/* TPM2_PolicyOR takes 2 to 8 digests (Part 3, §23.6: pHashList). */
#define MB_POLICY_OR_MAX 8u
/* An OR tree of depth 3 (8^3 leaves): the literal mode's state limit. */
#define MB_POLICY_TREE_MAX_LEAVES 512u
#define MB_POLICY_TREE_MAX_DEPTH 3u

typedef struct mb_policy {
        uint8_t d[MB_POLICY_SIZE];
} mb_policy;

/* The largest TPM Name: nameAlg and a SHA-512 digest. */
#define MB_POLICY_NAME_MAX 66u

/* The TPM Name (Part 1, §16) of an object or NV index: nameAlg ||
 * H_nameAlg(public area), from its marshalled TPM2B_PUBLIC (nv_index
 * false: nameAlg is the TPMT_PUBLIC's second field) or TPM2B_NV_PUBLIC
 * (true: after the 4-byte nvIndex). MB_ERR_INVALID for a TPM2B whose size
 * is not the rest of the buffer or a nameAlg mshim cannot compute. */
mb_err mb_policy_name(const uint8_t *tpm2b, size_t size, bool nv_index, uint8_t ret_name[MB_POLICY_NAME_MAX],
                      size_t *ret_size);

/* A Name as the TPM checks one: a known nameAlg followed by exactly its
 * digest. */
bool mb_policy_is_name(const uint8_t *name, size_t size);

/* A fresh session's policyDigest: all zero. */
void mb_policy_reset(mb_policy *p);

/* The pcrDigest TPM2_PolicyPCR takes: SHA-256 of the selected PCRs' values
 * concatenated in ascending PCR order, one bank. values: n_pcrs values of
 * value_size bytes each, in that order. */
mb_err mb_policy_pcr_digest(const uint8_t *values, size_t n_pcrs, size_t value_size, uint8_t ret_digest[MB_POLICY_SIZE]);

/* The marshalled TPML_PCR_SELECTION TPM2_PolicyPCR hashes (Part 2,
 * §10.9.7): count = 1 (UINT32), the bank's TPM_ALG_ID (UINT16),
 * sizeofSelect = 3, then the 3-byte bitmap (bit i of octet i/8 for PCR i),
 * all big-endian. MB_ERR_INVALID for an unknown bank, an empty mask or a
 * PCR above 23. */
#define MB_POLICY_PCR_SELECTION_SIZE 10u
mb_err mb_policy_pcr_selection(uint16_t bank, uint32_t pcr_mask, uint8_t ret[MB_POLICY_PCR_SELECTION_SIZE]);

/* TPM2_PolicyPCR: one TPMS_PCR_SELECTION (bank alg, 3-byte bitmap of
 * PCRs 0-23 in pcr_mask) and the pcrDigest. */
mb_err mb_policy_pcr(mb_policy *p, uint16_t bank, uint32_t pcr_mask, const uint8_t pcr_digest[MB_POLICY_SIZE]);

/* The unseal fence (docs/SEALING.md "The unseal fence"): the PCR the
 * initramfs extends once it has used a disk key or given up on it
 * (docs/MEASUREMENTS.md "PCR 15"); every disk key's policy requires it at
 * its reset value, so nothing later in that boot can unseal the key. */
#define MB_UNSEAL_FENCE_PCR 15u
/* The fence's event bytes, TPM2_PCR_Event's data (docs/MEASUREMENTS.md
 * "PCR 15": ASCII, no NUL): what `mshim fence` extends and what `mshim
 * verify` recognises in a quoted PCR 15. */
#define MB_UNSEAL_FENCE_EVENT "mshim-unseal-fence"

/* TPM2_PolicyPCR(sha256, pcr_mask, pcrDigest) with every selected PCR at
 * its reset value, 32 zero bytes (PCRs 0-15 of a PC Client TPM reset to
 * zero, TCG PC Client Platform TPM Profile §4.6.2): what the fence adds
 * to a disk key's policy. */
mb_err mb_policy_pcrs_zero(mb_policy *p, uint32_t pcr_mask);

/* TPM2_PolicyOR: n must be 2..8 (MB_ERR_INVALID) and p must equal one of
 * the branches (MB_ERR_NOTFOUND), as the TPM checks (TPM_RC_VALUE). */
mb_err mb_policy_or(mb_policy *p, const mb_policy *branches, size_t n);

/* TPM2_PolicyAuthorize by a key whose TPM Name is key_name (nameAlg ||
 * digest of its TPMT_PUBLIC), with policyRef ref (may be empty, at most 32
 * octets). The TPM clears the digest first, so the result does not depend
 * on *p (the ticket check against approvedPolicy is the TPM's). */
mb_err mb_policy_authorize(mb_policy *p, const uint8_t *key_name, size_t key_name_size, const uint8_t *ref, size_t ref_size);

/* aHash, the digest the policy key signs for TPM2_VerifySignature:
 * SHA-256(approvedPolicy || policyRef) (Part 3, §23.16). */
void mb_policy_authorize_ahash(const mb_policy *approved, const uint8_t *ref, size_t ref_size, uint8_t ret_ahash[MB_POLICY_SIZE]);

/* TPM2_PolicyNV: operandB (at most 64 octets) compared with the NV index
 * named nv_name at offset, by operation (TPM_EO). Names are checked: a
 * known nameAlg followed by exactly its digest. */
mb_err mb_policy_nv(mb_policy *p, const uint8_t *nv_name, size_t nv_name_size, const uint8_t *operand_b, size_t operand_b_size, uint16_t offset, uint16_t operation);

/* TPM2_PolicyAuthValue (a PIN). */
void mb_policy_auth_value(mb_policy *p);

/* The approvedPolicy of docs/SEALING.md's signed mode, from a fresh
 * session: PolicyNV(nv_name, operandB = epoch as 8 bytes big-endian,
 * offset 0, UNSIGNED_LE), then PolicyPCR(bank, pcr_mask, pcrDigest of
 * values: one value_size-byte value per PCR in pcr_mask, ascending). */
mb_err mb_policy_approved(const uint8_t *nv_name, size_t nv_name_size, uint64_t epoch, uint16_t bank,
                          uint32_t pcr_mask, const uint8_t *values, size_t value_size, mb_policy *ret);

/* A PolicyOR tree over n leaves (1..MB_POLICY_TREE_MAX_LEAVES): leaves in
 * groups of up to 8 per node, each level's nodes grouped again, until one
 * root; a group of one is joined with itself (PolicyOR needs two digests).
 * Root: the digest a session holds after the whole path. */
mb_err mb_policy_tree_root(const mb_policy *leaves, size_t n, mb_policy *ret_root);

/* The PolicyOR calls that take a session holding leaves[index] to the
 * root: ret_steps[i] lists the digests of step i's PolicyOR (count in
 * ret_counts[i]); *ret_n_steps is the depth (at most
 * MB_POLICY_TREE_MAX_DEPTH). */
mb_err mb_policy_tree_path(const mb_policy *leaves, size_t n, size_t index,
                           mb_policy ret_steps[MB_POLICY_TREE_MAX_DEPTH][MB_POLICY_OR_MAX],
                           size_t ret_counts[MB_POLICY_TREE_MAX_DEPTH], size_t *ret_n_steps);

#endif
