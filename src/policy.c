/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TPM 2.0 policy digests (include/mb/policy.h), computed as the TPM's
 * policy commands update a session's policyDigest (TPM 2.0 Part 3, §23).
 * Every number the TPM hashes is marshalled big-endian, as in its commands
 * (Part 2's canonical form).
 * Each function computes the new digest in a local first and writes *p
 * only on success.
 */
#include "mb/policy.h"
#include "mb/sha.h"

/* TPMS_PCR_SELECT.sizeofSelect for PCRs 0-23 (Part 2, §10.6.1: at least
 * PCR_SELECT_MIN = 3 octets on a PC Client TPM). */
#define PCR_SELECT_SIZE 3u
/* TPM2B_OPERAND and TPM2B_NONCE carry at most sizeof(TPMU_HA) octets (Part
 * 2): 64 for operandB. mshim's policyRef is empty; this module allows at
 * most the session's digest size, the most a TPM that only does SHA-256
 * accepts. */
#define OPERAND_MAX MB_HASH_MAX
#define POLICY_REF_MAX MB_POLICY_SIZE

static void put_be16(uint8_t *b, uint16_t v) {
        b[0] = (uint8_t) (v >> 8);
        b[1] = (uint8_t) v;
}

static void put_be32(uint8_t *b, uint32_t v) {
        put_be16(b, (uint16_t) (v >> 16));
        put_be16(b + 2, (uint16_t) v);
}

/* The first steps of every update: H(old || commandCode). SHA-256 is the
 * only algorithm here, always built in, so init cannot fail. */
static void start(mb_hash *h, const mb_policy *old, uint32_t cc) {
        uint8_t b[4];

        (void) mb_hash_init(h, MB_ALG_SHA256);
        mb_hash_update(h, old->d, MB_POLICY_SIZE);
        put_be32(b, cc);
        mb_hash_update(h, b, sizeof(b));
}

/* A TPM Name (Part 1, §16: nameAlg || H_nameAlg(public area)). */
bool mb_policy_is_name(const uint8_t *name, size_t size) {
        size_t n;

        if (!name || size < 2)
                return false;
        n = mb_hash_size((uint16_t) (name[0] << 8 | name[1]));
        return n != 0 && size - 2 == n;
}

mb_err mb_policy_name(const uint8_t *tpm2b, size_t size, bool nv_index, uint8_t ret_name[MB_POLICY_NAME_MAX],
                      size_t *ret_size) {
        /* nameAlg's offset in the public area: TPMT_PUBLIC.type (2 bytes)
         * or TPMS_NV_PUBLIC.nvIndex (4 bytes) comes first. */
        size_t at = nv_index ? 4 : 2, n;
        uint16_t alg;

        if (!tpm2b || size < 2 || (size_t) (tpm2b[0] << 8 | tpm2b[1]) != size - 2 || mb_out_of_bounds(size - 2, at, 2))
                return MB_ERR_INVALID;
        alg = (uint16_t) (tpm2b[2 + at] << 8 | tpm2b[2 + at + 1]);
        n = mb_hash_size(alg);
        if (n == 0 || mb_hash_buf(alg, tpm2b + 2, size - 2, ret_name + 2) != MB_OK)
                return MB_ERR_INVALID;
        put_be16(ret_name, alg);
        *ret_size = 2 + n;
        return MB_OK;
}

void mb_policy_reset(mb_policy *p) {
        mb_memset(p->d, 0, MB_POLICY_SIZE);
}

mb_err mb_policy_pcr_digest(const uint8_t *values, size_t n_pcrs, size_t value_size, uint8_t ret_digest[MB_POLICY_SIZE]) {
        /* At most the 24 PCRs a 3-octet selection names, each one digest. */
        if (!values || n_pcrs == 0 || n_pcrs > 8 * PCR_SELECT_SIZE || value_size == 0 || value_size > MB_HASH_MAX)
                return MB_ERR_INVALID;
        return mb_hash_buf(MB_ALG_SHA256, values, n_pcrs * value_size, ret_digest);
}

/* Part 3, §23.7 TPM2_PolicyPCR:
 *   policyDigest' = H(policyDigest || TPM_CC_PolicyPCR || pcrs || pcrDigest)
 * where pcrs is the marshalled TPML_PCR_SELECTION (Part 2, §10.9.7): count
 * (UINT32) = 1, then one TPMS_PCR_SELECTION (hash, sizeofSelect, pcrSelect,
 * bit i of octet i/8 for PCR i). */
mb_err mb_policy_pcr_selection(uint16_t bank, uint32_t pcr_mask, uint8_t ret[MB_POLICY_PCR_SELECTION_SIZE]) {
        if (mb_hash_size(bank) == 0 || pcr_mask == 0 || pcr_mask >> (8 * PCR_SELECT_SIZE))
                return MB_ERR_INVALID;
        put_be32(ret, 1);
        put_be16(ret + 4, bank);
        ret[6] = PCR_SELECT_SIZE;
        for (unsigned i = 0; i < PCR_SELECT_SIZE; i++)
                ret[7 + i] = (uint8_t) (pcr_mask >> (8 * i));
        return MB_OK;
}

mb_err mb_policy_pcr(mb_policy *p, uint16_t bank, uint32_t pcr_mask, const uint8_t pcr_digest[MB_POLICY_SIZE]) {
        uint8_t sel[MB_POLICY_PCR_SELECTION_SIZE];
        mb_hash h;

        if (mb_policy_pcr_selection(bank, pcr_mask, sel) != MB_OK)
                return MB_ERR_INVALID;
        start(&h, p, MB_TPM_CC_POLICY_PCR);
        mb_hash_update(&h, sel, sizeof(sel));
        mb_hash_update(&h, pcr_digest, MB_POLICY_SIZE);
        mb_hash_final(&h, p->d);
        return MB_OK;
}

mb_err mb_policy_pcrs_zero(mb_policy *p, uint32_t pcr_mask) {
        static const uint8_t zero[MB_POLICY_SIZE];
        uint8_t digest[MB_POLICY_SIZE];
        mb_hash h;

        if (pcr_mask == 0 || pcr_mask >> (8 * PCR_SELECT_SIZE))
                return MB_ERR_INVALID;
        /* pcrDigest: the selected PCRs' values, each 32 zero bytes. */
        (void) mb_hash_init(&h, MB_ALG_SHA256);
        for (uint32_t m = pcr_mask; m; m &= m - 1)
                mb_hash_update(&h, zero, sizeof(zero));
        mb_hash_final(&h, digest);
        return mb_policy_pcr(p, MB_ALG_SHA256, pcr_mask, digest);
}

/* Part 3, §23.6 TPM2_PolicyOR: the TPM refuses (TPM_RC_VALUE) unless the
 * session's digest is one of pHashList, then
 *   policyDigest' = H(0...0 || TPM_CC_PolicyOR || digests)
 * with the digests concatenated in the order given. */
mb_err mb_policy_or(mb_policy *p, const mb_policy *branches, size_t n) {
        static const mb_policy zero;
        bool found = false;
        mb_hash h;

        if (!branches || n < 2 || n > MB_POLICY_OR_MAX)
                return MB_ERR_INVALID;
        for (size_t i = 0; i < n; i++)
                found |= mb_memcmp(p->d, branches[i].d, MB_POLICY_SIZE) == 0;
        if (!found)
                return MB_ERR_NOTFOUND;
        start(&h, &zero, MB_TPM_CC_POLICY_OR);
        for (size_t i = 0; i < n; i++)
                mb_hash_update(&h, branches[i].d, MB_POLICY_SIZE);
        mb_hash_final(&h, p->d);
        return MB_OK;
}

/* Part 3, §23.16 TPM2_PolicyAuthorize: once the approved policy and its
 * ticket are checked, the digest is cleared and PolicyUpdate (§23.2.3) runs:
 *   policyDigest' = H(H(0...0 || TPM_CC_PolicyAuthorize || keyName) || policyRef)
 * The second hash is taken even for an empty policyRef. The result does
 * not depend on the digest before, which is what lets a signed policy
 * change without changing the object's authPolicy. */
mb_err mb_policy_authorize(mb_policy *p, const uint8_t *key_name, size_t key_name_size, const uint8_t *ref, size_t ref_size) {
        static const mb_policy zero;
        mb_policy next;
        mb_hash h;

        if (!mb_policy_is_name(key_name, key_name_size) || ref_size > POLICY_REF_MAX || (ref_size && !ref))
                return MB_ERR_INVALID;
        start(&h, &zero, MB_TPM_CC_POLICY_AUTHORIZE);
        mb_hash_update(&h, key_name, key_name_size);
        mb_hash_final(&h, next.d);
        (void) mb_hash_init(&h, MB_ALG_SHA256);
        mb_hash_update(&h, next.d, MB_POLICY_SIZE);
        mb_hash_update(&h, ref, ref_size);
        mb_hash_final(&h, p->d);
        return MB_OK;
}

/* Part 3, §23.16: the signer signs aHash = H(approvedPolicy || policyRef),
 * which TPM2_VerifySignature turns into the ticket PolicyAuthorize checks. */
void mb_policy_authorize_ahash(const mb_policy *approved, const uint8_t *ref, size_t ref_size, uint8_t ret_ahash[MB_POLICY_SIZE]) {
        mb_hash h;

        (void) mb_hash_init(&h, MB_ALG_SHA256);
        mb_hash_update(&h, approved->d, MB_POLICY_SIZE);
        mb_hash_update(&h, ref, ref_size);
        mb_hash_final(&h, ret_ahash);
}

/* Part 3, §23.9 TPM2_PolicyNV:
 *   args = H(operandB.buffer || offset || operation)
 *   policyDigest' = H(policyDigest || TPM_CC_PolicyNV || args || nvIndexName)
 * offset UINT16 and operation TPM_EO, both big-endian. */
mb_err mb_policy_nv(mb_policy *p, const uint8_t *nv_name, size_t nv_name_size, const uint8_t *operand_b, size_t operand_b_size,
                    uint16_t offset, uint16_t operation) {
        uint8_t args[MB_POLICY_SIZE], tail[4];
        mb_hash h;

        if (!mb_policy_is_name(nv_name, nv_name_size) || operand_b_size > OPERAND_MAX || (operand_b_size && !operand_b) ||
            operation > MB_TPM_EO_BITCLEAR)
                return MB_ERR_INVALID;
        put_be16(tail, offset);
        put_be16(tail + 2, operation);
        (void) mb_hash_init(&h, MB_ALG_SHA256);
        mb_hash_update(&h, operand_b, operand_b_size);
        mb_hash_update(&h, tail, sizeof(tail));
        mb_hash_final(&h, args);
        start(&h, p, MB_TPM_CC_POLICY_NV);
        mb_hash_update(&h, args, sizeof(args));
        mb_hash_update(&h, nv_name, nv_name_size);
        mb_hash_final(&h, p->d);
        return MB_OK;
}

/* Part 3, §23.17 TPM2_PolicyAuthValue:
 *   policyDigest' = H(policyDigest || TPM_CC_PolicyAuthValue) */
void mb_policy_auth_value(mb_policy *p) {
        mb_hash h;

        start(&h, p, MB_TPM_CC_POLICY_AUTH_VALUE);
        mb_hash_final(&h, p->d);
}

mb_err mb_policy_approved(const uint8_t *nv_name, size_t nv_name_size, uint64_t epoch, uint16_t bank,
                          uint32_t pcr_mask, const uint8_t *values, size_t value_size, mb_policy *ret) {
        uint8_t operand[8], digest[MB_POLICY_SIZE];
        size_t n_pcrs = 0;
        mb_policy p;
        mb_err e;

        for (uint32_t m = pcr_mask; m; m &= m - 1)
                n_pcrs++;
        if (value_size != mb_hash_size(bank))
                return MB_ERR_INVALID;
        for (unsigned i = 0; i < sizeof(operand); i++)
                operand[i] = (uint8_t) (epoch >> (56 - 8 * i));
        mb_policy_reset(&p);
        e = mb_policy_nv(&p, nv_name, nv_name_size, operand, sizeof(operand), 0, MB_TPM_EO_UNSIGNED_LE);
        if (e == MB_OK)
                e = mb_policy_pcr_digest(values, n_pcrs, value_size, digest);
        if (e == MB_OK)
                e = mb_policy_pcr(&p, bank, pcr_mask, digest);
        if (e == MB_OK)
                *ret = p;
        return e;
}

/* One node of an OR tree: PolicyOR over a group of 1..8 digests, a group
 * of one joined with itself. The session holds the group's first member
 * (any member gives the same result). */
static mb_err or_group(const mb_policy *group, size_t k, mb_policy *ret) {
        mb_policy pair[2];

        ret[0] = group[0];
        if (k > 1)
                return mb_policy_or(ret, group, k);
        pair[0] = pair[1] = group[0];
        return mb_policy_or(ret, pair, 2);
}

/* Members of the group starting at first in a level of m nodes. */
static size_t group_size(size_t m, size_t first) {
        return m - first < MB_POLICY_OR_MAX ? m - first : MB_POLICY_OR_MAX;
}

/* Build the tree level by level (leaves in groups of 8, then each level's
 * nodes again) until one node is left; on the way, record for leaf index
 * the group it belongs to at each level. steps may be NULL (root only). */
static mb_err tree_walk(const mb_policy *leaves, size_t n, size_t index,
                        mb_policy steps[MB_POLICY_TREE_MAX_DEPTH][MB_POLICY_OR_MAX],
                        size_t counts[MB_POLICY_TREE_MAX_DEPTH], size_t *ret_depth, mb_policy *ret_root) {
        /* Level 1 has at most 512 / 8 nodes. */
        mb_policy buf[2][MB_POLICY_TREE_MAX_LEAVES / MB_POLICY_OR_MAX];
        const mb_policy *level = leaves;
        size_t m = n, depth = 0;

        if (!leaves || n == 0 || n > MB_POLICY_TREE_MAX_LEAVES || index >= n)
                return MB_ERR_INVALID;
        do {
                mb_policy *next = buf[depth % 2];
                size_t groups = (m + MB_POLICY_OR_MAX - 1) / MB_POLICY_OR_MAX;
                size_t first = index / MB_POLICY_OR_MAX * MB_POLICY_OR_MAX;
                size_t k = group_size(m, first);

                if (steps) {
                        /* The PolicyOR a session holding level[index] sends. */
                        counts[depth] = k == 1 ? 2 : k;
                        for (size_t i = 0; i < counts[depth]; i++)
                                steps[depth][i] = level[first + (k == 1 ? 0 : i)];
                }
                for (size_t g = 0; g < groups; g++) {
                        mb_err e = or_group(level + g * MB_POLICY_OR_MAX, group_size(m, g * MB_POLICY_OR_MAX), &next[g]);
                        if (e != MB_OK)
                                return e;
                }
                level = next;
                m = groups;
                index /= MB_POLICY_OR_MAX;
                depth++;
        } while (m > 1);
        *ret_depth = depth;
        *ret_root = level[0];
        return MB_OK;
}

mb_err mb_policy_tree_root(const mb_policy *leaves, size_t n, mb_policy *ret_root) {
        size_t depth;

        return tree_walk(leaves, n, 0, NULL, NULL, &depth, ret_root);
}

mb_err mb_policy_tree_path(const mb_policy *leaves, size_t n, size_t index,
                           mb_policy ret_steps[MB_POLICY_TREE_MAX_DEPTH][MB_POLICY_OR_MAX],
                           size_t ret_counts[MB_POLICY_TREE_MAX_DEPTH], size_t *ret_n_steps) {
        mb_policy steps[MB_POLICY_TREE_MAX_DEPTH][MB_POLICY_OR_MAX], root;
        size_t counts[MB_POLICY_TREE_MAX_DEPTH], depth;
        mb_err e;

        mb_memset(steps, 0, sizeof(steps));
        mb_memset(counts, 0, sizeof(counts));
        e = tree_walk(leaves, n, index, steps, counts, &depth, &root);
        if (e != MB_OK)
                return e;
        mb_memcpy(ret_steps, steps, sizeof(steps));
        mb_memcpy(ret_counts, counts, sizeof(counts));
        *ret_n_steps = depth;
        return MB_OK;
}
