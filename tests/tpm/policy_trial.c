/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * src/policy.c against the TPM's own policy engine: each policy command
 * runs on a TPM (swtpm, tests/cli/test_policy_tpm.sh starts one) in a
 * trial session, or a real policy session where the TPM also checks its
 * conditions, and Esys_PolicyGetDigest's answer must equal what
 * mb_policy_* computed without a TPM. Usage: policy_trial TCTI-CONF.
 * Prints PASS:/FAIL: lines; exit status 1 when a case failed.
 *
 * The TPM's state this test changes: PCRs 4, 7, 9, 12, 16 and 23 are
 * extended, NV index 0x01804D53 (the epoch counter of docs/SEALING.md) is
 * defined and incremented. Never point it at a real TPM.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

#include "mb/policy.h"
#include "mb/sha.h"

#define NV_EPOCH 0x01804D53u

static ESYS_CONTEXT *ctx;
static int n_failed;

#define TRY(call) do { TSS2_RC rc_ = (call); if (rc_ != TSS2_RC_SUCCESS) { \
        fprintf(stderr, "  %s:%d: %s: %s\n", __FILE__, __LINE__, #call, Tss2_RC_Decode(rc_)); goto out; } } while (0)
#define CHECK(cond) do { if (!(cond)) { \
        fprintf(stderr, "  %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); goto out; } } while (0)

static void report(const char *name, bool ok) {
        printf("%s: policy-tpm %s\n", ok ? "PASS" : "FAIL", name);
        n_failed += !ok;
}

static void hexdump(const char *what, const uint8_t *p, size_t n) {
        fprintf(stderr, "  %s ", what);
        for (size_t i = 0; i < n; i++)
                fprintf(stderr, "%02x", p[i]);
        fprintf(stderr, "\n");
}

/* A session of type TPM2_SE_TRIAL or TPM2_SE_POLICY, SHA-256, unsalted. */
static TSS2_RC start(TPM2_SE type, ESYS_TR *ret) {
        TPMT_SYM_DEF sym = { .algorithm = TPM2_ALG_NULL };

        return Esys_StartAuthSession(ctx, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                     NULL, type, &sym, TPM2_ALG_SHA256, ret);
}

/* The session's policyDigest equals want (and the session is flushed). */
static bool digest_is(ESYS_TR s, const mb_policy *want) {
        TPM2B_DIGEST *d = NULL;
        bool ok = false;

        TRY(Esys_PolicyGetDigest(ctx, s, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &d));
        ok = d->size == MB_POLICY_SIZE && memcmp(d->buffer, want->d, MB_POLICY_SIZE) == 0;
        if (!ok) {
                hexdump("TPM:  ", d->buffer, d->size);
                hexdump("mshim:", want->d, MB_POLICY_SIZE);
        }
out:
        Esys_Free(d);
        Esys_FlushContext(ctx, s);
        return ok;
}

static void sha256(const void *p, size_t n, uint8_t *out) {
        mb_hash_buf(MB_ALG_SHA256, p, n, out);
}

static mb_policy leaf(size_t i) {
        char s[32];
        mb_policy p;

        snprintf(s, sizeof(s), "leaf%zu", i);
        sha256(s, strlen(s), p.d);
        return p;
}

static TPML_PCR_SELECTION selection(uint32_t mask) {
        TPML_PCR_SELECTION sel = { .count = 1 };

        sel.pcrSelections[0].hash = TPM2_ALG_SHA256;
        sel.pcrSelections[0].sizeofSelect = 3;
        for (int i = 0; i < 3; i++)
                sel.pcrSelections[0].pcrSelect[i] = (uint8_t) (mask >> (8 * i));
        return sel;
}

/* The SHA-256 values of the PCRs in mask, ascending, read one at a time
 * (PCR_Read returns at most 8 digests a call). */
static bool read_pcrs(uint32_t mask, uint8_t *values, size_t *ret_n) {
        size_t n = 0;

        for (unsigned i = 0; i < 24; i++) {
                TPML_PCR_SELECTION sel = selection(1u << i), *out_sel = NULL;
                TPML_DIGEST *v = NULL;
                bool ok = false;

                if (!(mask >> i & 1))
                        continue;
                TRY(Esys_PCR_Read(ctx, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &sel, NULL, &out_sel, &v));
                CHECK(v->count == 1 && v->digests[0].size == 32);
                memcpy(values + 32 * n++, v->digests[0].buffer, 32);
                ok = true;
        out:
                Esys_Free(out_sel);
                Esys_Free(v);
                if (!ok)
                        return false;
        }
        *ret_n = n;
        return true;
}

/* mb's PolicyPCR over the TPM's current values of mask, from *p. */
static bool mb_pcr_now(mb_policy *p, uint32_t mask) {
        uint8_t values[24 * 32], digest[MB_POLICY_SIZE];
        size_t n;

        return read_pcrs(mask, values, &n) && mb_policy_pcr_digest(values, n, 32, digest) == MB_OK &&
               mb_policy_pcr(p, MB_ALG_SHA256, mask, digest) == MB_OK;
}

/* PolicyPCR with an empty pcrDigest: the TPM hashes its own PCR values. */
static TSS2_RC tpm_pcr_now(ESYS_TR s, uint32_t mask) {
        TPM2B_DIGEST none = { .size = 0 };
        TPML_PCR_SELECTION sel = selection(mask);

        return Esys_PolicyPCR(ctx, s, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &none, &sel);
}

static TSS2_RC tpm_or(ESYS_TR s, const mb_policy *branches, size_t n) {
        TPML_DIGEST list = { .count = (UINT32) n };

        for (size_t i = 0; i < n; i++) {
                list.digests[i].size = MB_POLICY_SIZE;
                memcpy(list.digests[i].buffer, branches[i].d, MB_POLICY_SIZE);
        }
        return Esys_PolicyOR(ctx, s, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &list);
}

static void extend_pcrs(void) {
        static const unsigned pcrs[] = { 4, 7, 9, 12, 16, 23 };

        for (size_t i = 0; i < sizeof(pcrs) / sizeof(pcrs[0]); i++) {
                TPML_DIGEST_VALUES v = { .count = 1 };
                ESYS_TR h = ESYS_TR_PCR0 + pcrs[i];
                char what[16];

                v.digests[0].hashAlg = TPM2_ALG_SHA256;
                snprintf(what, sizeof(what), "event%u", pcrs[i]);
                sha256(what, strlen(what), v.digests[0].digest.sha256);
                TRY(Esys_PCR_Extend(ctx, h, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &v));
        }
        return;
out:
        report("extend PCRs", false);
}

/* PolicyPCR for several masks: the TPM computing pcrDigest from its own PCRs
 * (trial session), and a real session given mshim's pcrDigest, which the
 * TPM accepts only if it equals its own. */
static void test_pcr_masks(void) {
        static const uint32_t masks[] = { 0x000001, 0x000081, 0x001290, 0x801290, 0x010090, 0xFFFFFF };

        for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
                uint8_t values[24 * 32];
                TPM2B_DIGEST given = { .size = MB_POLICY_SIZE };
                TPML_PCR_SELECTION sel = selection(masks[i]);
                ESYS_TR s = ESYS_TR_NONE;
                mb_policy p;
                size_t n;
                char name[64];
                bool ok = false;

                mb_policy_reset(&p);
                CHECK(read_pcrs(masks[i], values, &n));
                CHECK(mb_policy_pcr_digest(values, n, 32, given.buffer) == MB_OK);
                CHECK(mb_policy_pcr(&p, MB_ALG_SHA256, masks[i], given.buffer) == MB_OK);
                TRY(start(TPM2_SE_TRIAL, &s));
                TRY(tpm_pcr_now(s, masks[i]));
                CHECK(digest_is(s, &p));
                TRY(start(TPM2_SE_POLICY, &s));
                TRY(Esys_PolicyPCR(ctx, s, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &given, &sel));
                CHECK(digest_is(s, &p));
                ok = true;
        out:
                snprintf(name, sizeof(name), "PolicyPCR mask 0x%06x", masks[i]);
                report(name, ok);
        }
}

/* A real session refuses a pcrDigest that is not its PCRs' (so the test
 * above cannot pass by a TPM that ignores the digest). */
static void test_pcr_wrong_digest(void) {
        TPM2B_DIGEST given = { .size = MB_POLICY_SIZE };
        TPML_PCR_SELECTION sel = selection(0x1290);
        ESYS_TR s = ESYS_TR_NONE;
        TSS2_RC rc;
        bool ok = false;

        memset(given.buffer, 0x42, MB_POLICY_SIZE);
        TRY(start(TPM2_SE_POLICY, &s));
        rc = Esys_PolicyPCR(ctx, s, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &given, &sel);
        Esys_FlushContext(ctx, s);
        CHECK(rc != TSS2_RC_SUCCESS);
        ok = true;
out:
        report("PolicyPCR refuses another state's digest", ok);
}

static void test_or(size_t n) {
        mb_policy b[8], p;
        ESYS_TR s = ESYS_TR_NONE;
        char name[64];
        bool ok = false;

        for (size_t i = 0; i < n; i++)
                b[i] = leaf(i);
        p = b[n - 1];
        CHECK(mb_policy_or(&p, b, n) == MB_OK);
        TRY(start(TPM2_SE_TRIAL, &s));
        TRY(tpm_or(s, b, n));
        CHECK(digest_is(s, &p));
        ok = true;
out:
        snprintf(name, sizeof(name), "PolicyOR of %zu", n);
        report(name, ok);
}

/* Walk a leaf's path to the root in a real policy session, where every
 * PolicyOR checks that the session's digest is one of its branches: leaf
 * `index` is PolicyPCR over the TPM's current PCRs 4, 7, 16, every other
 * leaf over made-up values. */
static void test_tree(size_t n, size_t index) {
        static mb_policy leaves[MB_POLICY_TREE_MAX_LEAVES];
        mb_policy steps[MB_POLICY_TREE_MAX_DEPTH][MB_POLICY_OR_MAX], root;
        size_t counts[MB_POLICY_TREE_MAX_DEPTH], depth;
        ESYS_TR s = ESYS_TR_NONE;
        char name[80];
        bool ok = false;

        for (size_t i = 0; i < n; i++) {
                uint8_t digest[MB_POLICY_SIZE];
                mb_policy l = leaf(i);

                sha256(l.d, sizeof(l.d), digest);
                mb_policy_reset(&leaves[i]);
                if (i == index)
                        CHECK(mb_pcr_now(&leaves[i], 0x010090));
                else
                        CHECK(mb_policy_pcr(&leaves[i], MB_ALG_SHA256, 0x010090, digest) == MB_OK);
        }
        CHECK(mb_policy_tree_root(leaves, n, &root) == MB_OK);
        CHECK(mb_policy_tree_path(leaves, n, index, steps, counts, &depth) == MB_OK);
        TRY(start(TPM2_SE_POLICY, &s));
        TRY(tpm_pcr_now(s, 0x010090));
        for (size_t i = 0; i < depth; i++)
                TRY(tpm_or(s, steps[i], counts[i]));
        CHECK(digest_is(s, &root));
        s = ESYS_TR_NONE;
        ok = true;
out:
        if (s != ESYS_TR_NONE && !ok)
                Esys_FlushContext(ctx, s);
        snprintf(name, sizeof(name), "OR tree of %zu (depth %zu), leaf %zu walked to the root", n,
                 (size_t) (n <= 8 ? 1 : n <= 64 ? 2 : 3), index);
        report(name, ok);
}

/* NIST P-256's base point G (FIPS 186-4 §D.1.2.3): a valid public key
 * nobody needs the private half of. */
static const uint8_t p256_gx[32] = {
        0x6b, 0x17, 0xd1, 0xf2, 0xe1, 0x2c, 0x42, 0x47, 0xf8, 0xbc, 0xe6, 0xe5, 0x63, 0xa4, 0x40, 0xf2,
        0x77, 0x03, 0x7d, 0x81, 0x2d, 0xeb, 0x33, 0xa0, 0xf4, 0xa1, 0x39, 0x45, 0xd8, 0x98, 0xc2, 0x96,
};
static const uint8_t p256_gy[32] = {
        0x4f, 0xe3, 0x42, 0xe2, 0xfe, 0x1a, 0x7f, 0x9b, 0x8e, 0xe7, 0xeb, 0x4a, 0x7c, 0x0f, 0x9e, 0x16,
        0x2b, 0xce, 0x33, 0x57, 0x6b, 0x31, 0x5e, 0xce, 0xcb, 0xb6, 0x40, 0x68, 0x37, 0xbf, 0x51, 0xf5,
};

static TPM2B_PUBLIC ecc_template(TPMA_OBJECT attrs) {
        TPM2B_PUBLIC pub = { 0 };

        pub.publicArea.type = TPM2_ALG_ECC;
        pub.publicArea.nameAlg = TPM2_ALG_SHA256;
        pub.publicArea.objectAttributes = attrs;
        pub.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
        pub.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_ECDSA;
        pub.publicArea.parameters.eccDetail.scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256;
        pub.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
        pub.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
        return pub;
}

/* The Name mshim computes without a TPM (mb_policy_name) from the
 * marshalled TPM2B_PUBLIC, as a sealed file holds it. */
static bool name_of_public(const TPM2B_PUBLIC *pub, TPM2B_NAME *ret) {
        uint8_t buf[sizeof(TPM2B_PUBLIC)];
        size_t off = 0, n;

        if (Tss2_MU_TPM2B_PUBLIC_Marshal(pub, buf, sizeof(buf), &off) != TSS2_RC_SUCCESS ||
            mb_policy_name(buf, off, false, ret->name, &n) != MB_OK)
                return false;
        ret->size = (UINT16) n;
        return true;
}

/* PolicyAuthorize in a trial session by a LoadExternal'd P-256 public key,
 * after PolicyAuthValue (the TPM clears the digest first), with an empty
 * and a non-empty policyRef, then PolicyAuthValue on top (the PIN). */
static void test_authorize(const char *ref) {
        TPM2B_PUBLIC pub = ecc_template(TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_USERWITHAUTH);
        TPMT_TK_VERIFIED none = { .tag = TPM2_ST_VERIFIED, .hierarchy = TPM2_RH_NULL };
        TPM2B_DIGEST approved = { .size = MB_POLICY_SIZE };
        TPM2B_NONCE nref = { .size = (UINT16) strlen(ref) };
        TPM2B_NAME *name = NULL, mine;
        ESYS_TR key = ESYS_TR_NONE, s = ESYS_TR_NONE;
        mb_policy p = leaf(3), a = leaf(0);
        char title[160];
        bool ok = false;

        pub.publicArea.unique.ecc.x.size = 32;
        memcpy(pub.publicArea.unique.ecc.x.buffer, p256_gx, 32);
        pub.publicArea.unique.ecc.y.size = 32;
        memcpy(pub.publicArea.unique.ecc.y.buffer, p256_gy, 32);
        memcpy(approved.buffer, a.d, MB_POLICY_SIZE);
        memcpy(nref.buffer, ref, nref.size);
        TRY(Esys_LoadExternal(ctx, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, NULL, &pub, ESYS_TR_RH_NULL, &key));
        TRY(Esys_TR_GetName(ctx, key, &name));
        CHECK(name_of_public(&pub, &mine));
        CHECK(name->size == mine.size && memcmp(name->name, mine.name, mine.size) == 0);
        CHECK(mb_policy_authorize(&p, name->name, name->size, (const uint8_t *) ref, nref.size) == MB_OK);
        TRY(start(TPM2_SE_TRIAL, &s));
        TRY(Esys_PolicyAuthValue(ctx, s, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE));
        TRY(Esys_PolicyAuthorize(ctx, s, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &approved, &nref, name, &none));
        CHECK(digest_is(s, &p));
        mb_policy_auth_value(&p);
        TRY(start(TPM2_SE_TRIAL, &s));
        TRY(Esys_PolicyAuthorize(ctx, s, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &approved, &nref, name, &none));
        TRY(Esys_PolicyAuthValue(ctx, s, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE));
        CHECK(digest_is(s, &p));
        ok = true;
out:
        Esys_Free(name);
        if (key != ESYS_TR_NONE)
                Esys_FlushContext(ctx, key);
        snprintf(title, sizeof(title), "PolicyAuthorize (policyRef \"%s\") and PolicyAuthValue; mb_policy_name of the key is the TPM's", ref);
        report(title, ok);
}

static void test_auth_value(void) {
        ESYS_TR s = ESYS_TR_NONE;
        mb_policy p;
        bool ok = false;

        mb_policy_reset(&p);
        mb_policy_auth_value(&p);
        TRY(start(TPM2_SE_TRIAL, &s));
        TRY(Esys_PolicyAuthValue(ctx, s, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE));
        CHECK(digest_is(s, &p));
        ok = true;
out:
        report("PolicyAuthValue", ok);
}

/* The epoch counter as docs/SEALING.md defines it: TPM_NT_COUNTER,
 * OWNERWRITE OWNERREAD AUTHREAD NO_DA, empty auth. */
static bool define_counter(ESYS_TR *ret) {
        TPM2B_AUTH auth = { .size = 0 };
        TPM2B_NV_PUBLIC pub = { .nvPublic = {
                .nvIndex = NV_EPOCH, .nameAlg = TPM2_ALG_SHA256, .dataSize = 8,
                .attributes = TPMA_NV_OWNERWRITE | TPMA_NV_OWNERREAD | TPMA_NV_AUTHREAD | TPMA_NV_NO_DA |
                              (TPM2_NT_COUNTER << TPMA_NV_TPM2_NT_SHIFT),
        } };

        TRY(Esys_NV_DefineSpace(ctx, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &auth, &pub, ret));
        return true;
out:
        return false;
}

static bool increment(ESYS_TR nv, uint64_t *ret_value) {
        TPM2B_MAX_NV_BUFFER *data = NULL;
        bool ok = false;

        TRY(Esys_NV_Increment(ctx, ESYS_TR_RH_OWNER, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE));
        TRY(Esys_NV_Read(ctx, nv, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, 8, 0, &data));
        CHECK(data->size == 8);
        *ret_value = 0;
        for (int i = 0; i < 8; i++)
                *ret_value = *ret_value << 8 | data->buffer[i];
        ok = true;
out:
        Esys_Free(data);
        return ok;
}

/* The counter's Name, from the TPM (NV_ReadPublic), checked against the
 * one mshim computes from the marshalled TPM2B_NV_PUBLIC (mb_policy_name),
 * which includes TPMA_NV_WRITTEN (set by the first increment). */
static bool nv_name(ESYS_TR nv, TPM2B_NAME *ret) {
        TPM2B_NV_PUBLIC *pub = NULL;
        TPM2B_NAME *name = NULL;
        uint8_t buf[sizeof(TPM2B_NV_PUBLIC)], mine[MB_POLICY_NAME_MAX];
        size_t off = 0, n = 0;
        bool ok = false;

        TRY(Esys_NV_ReadPublic(ctx, nv, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &pub, &name));
        TRY(Tss2_MU_TPM2B_NV_PUBLIC_Marshal(pub, buf, sizeof(buf), &off));
        CHECK(mb_policy_name(buf, off, true, mine, &n) == MB_OK);
        CHECK(pub->nvPublic.attributes & TPMA_NV_WRITTEN);
        CHECK(name->size == n && memcmp(name->name, mine, n) == 0);
        *ret = *name;
        ok = true;
out:
        Esys_Free(pub);
        Esys_Free(name);
        return ok;
}

static TPM2B_OPERAND epoch_operand(uint64_t epoch) {
        TPM2B_OPERAND op = { .size = 8 };

        for (int i = 0; i < 8; i++)
                op.buffer[i] = (uint8_t) (epoch >> (56 - 8 * i));
        return op;
}

/* PolicyNV(counter, epoch, 0, UNSIGNED_LE) in a session of type type. */
static TSS2_RC tpm_nv(ESYS_TR s, ESYS_TR nv, uint64_t epoch) {
        TPM2B_OPERAND op = epoch_operand(epoch);

        return Esys_PolicyNV(ctx, nv, nv, s, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &op, 0,
                             TPM2_EO_UNSIGNED_LE);
}

/* A real session's PolicyNV passes exactly when counter <= epoch. */
static bool nv_passes(ESYS_TR nv, uint64_t epoch) {
        ESYS_TR s = ESYS_TR_NONE;
        TSS2_RC rc;

        if (start(TPM2_SE_POLICY, &s) != TSS2_RC_SUCCESS)
                return false;
        rc = tpm_nv(s, nv, epoch);
        Esys_FlushContext(ctx, s);
        return rc == TSS2_RC_SUCCESS;
}

/* PolicyNV with UNSIGNED_LE against the epoch counter: the trial digest,
 * and a real session's verdict before and after an increment (revocation). */
static void test_nv(ESYS_TR nv, uint64_t *ret_counter) {
        TPM2B_NAME name;
        TPM2B_OPERAND op;
        ESYS_TR s = ESYS_TR_NONE;
        uint64_t counter = 0;
        mb_policy p;
        bool ok = false;

        CHECK(increment(nv, &counter));
        CHECK(nv_name(nv, &name));
        op = epoch_operand(counter);
        mb_policy_reset(&p);
        CHECK(mb_policy_nv(&p, name.name, name.size, op.buffer, op.size, 0, MB_TPM_EO_UNSIGNED_LE) == MB_OK);
        TRY(start(TPM2_SE_TRIAL, &s));
        TRY(tpm_nv(s, nv, counter));
        CHECK(digest_is(s, &p));
        report("PolicyNV UNSIGNED_LE (trial digest; mb_policy_name of the counter is the TPM's)", true);
        CHECK(nv_passes(nv, counter) && nv_passes(nv, counter + 1) && !nv_passes(nv, counter - 1));
        CHECK(increment(nv, &counter));
        CHECK(!nv_passes(nv, counter - 1) && nv_passes(nv, counter));
        *ret_counter = counter;
        ok = true;
out:
        report("PolicyNV UNSIGNED_LE: epoch >= counter passes, an older epoch is refused after an increment", ok);
}

/* PolicyAuthorize in a real session after PolicyNV(epoch) + PolicyPCR(now),
 * with the ticket VerifySignature gives for a key LoadExternal'd (public
 * part only) into hierarchy. */
static TSS2_RC authorize_with(ESYS_TR nv, uint64_t counter, const TPM2B_PUBLIC *pub, ESYS_TR hierarchy,
                              const TPM2B_DIGEST *ahash, const TPMT_SIGNATURE *sig, const TPM2B_DIGEST *approved,
                              const mb_policy *want) {
        TPM2B_NONCE ref = { .size = 0 };
        TPMT_TK_VERIFIED *ticket = NULL;
        TPM2B_NAME *name = NULL;
        ESYS_TR key = ESYS_TR_NONE, s = ESYS_TR_NONE;
        TSS2_RC rc;

        if ((rc = Esys_LoadExternal(ctx, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, NULL, pub, hierarchy, &key)) ||
            (rc = Esys_TR_GetName(ctx, key, &name)) ||
            (rc = Esys_VerifySignature(ctx, key, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ahash, sig, &ticket)) ||
            (rc = start(TPM2_SE_POLICY, &s)) || (rc = tpm_nv(s, nv, counter)) || (rc = tpm_pcr_now(s, 0x001290)) ||
            (rc = Esys_PolicyAuthorize(ctx, s, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, approved, &ref, name, ticket)))
                goto out;
        rc = digest_is(s, want) ? TSS2_RC_SUCCESS : TSS2_BASE_RC_GENERAL_FAILURE;
        s = ESYS_TR_NONE;
out:
        if (s != ESYS_TR_NONE)
                Esys_FlushContext(ctx, s);
        if (key != ESYS_TR_NONE)
                Esys_FlushContext(ctx, key);
        Esys_Free(ticket);
        Esys_Free(name);
        return rc;
}

/* The whole signed policy of docs/SEALING.md in a real session: the
 * approved policy PolicyNV(epoch) + PolicyPCR(now) computed by mshim, its
 * aHash signed (by a TPM key standing in for mshim's policy key), the
 * public key LoadExternal'd, VerifySignature's ticket, and PolicyAuthorize,
 * which the TPM accepts only if the session's digest is the approved policy
 * and the ticket is for H(approvedPolicy || policyRef). The public key must
 * go into the owner hierarchy: VerifySignature gives a key in the null
 * hierarchy a NULL ticket (Part 3, §20.1), which PolicyAuthorize refuses. */
static void test_signed(ESYS_TR nv, uint64_t counter) {
        TPM2B_PUBLIC tmpl = ecc_template(TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_USERWITHAUTH |
                                         TPMA_OBJECT_SENSITIVEDATAORIGIN);
        TPM2B_SENSITIVE_CREATE sens = { 0 };
        TPM2B_DATA outside = { 0 };
        TPML_PCR_SELECTION none_pcrs = { 0 };
        TPMT_SIG_SCHEME scheme = { .scheme = TPM2_ALG_ECDSA, .details.ecdsa.hashAlg = TPM2_ALG_SHA256 };
        TPMT_TK_HASHCHECK hc = { .tag = TPM2_ST_HASHCHECK, .hierarchy = TPM2_RH_NULL };
        TPM2B_DIGEST ahash = { .size = MB_POLICY_SIZE }, approved_d = { .size = MB_POLICY_SIZE };
        TPMT_SIGNATURE *sig = NULL;
        TPM2B_PUBLIC *pub = NULL;
        TPM2B_NAME key_name, nvn;
        TPM2B_OPERAND op = epoch_operand(counter);
        ESYS_TR signer = ESYS_TR_NONE;
        mb_policy approved, object;
        bool ok = false, refused = false;

        CHECK(nv_name(nv, &nvn));
        mb_policy_reset(&approved);
        CHECK(mb_policy_nv(&approved, nvn.name, nvn.size, op.buffer, op.size, 0, MB_TPM_EO_UNSIGNED_LE) == MB_OK);
        CHECK(mb_pcr_now(&approved, 0x001290));
        {
                uint8_t values[4 * 32];
                size_t n;
                mb_policy one_call;

                CHECK(read_pcrs(0x001290, values, &n));
                CHECK(mb_policy_approved(nvn.name, nvn.size, counter, MB_ALG_SHA256, 0x001290, values, 32, &one_call) == MB_OK);
                CHECK(memcmp(&one_call, &approved, sizeof(approved)) == 0);
        }
        mb_policy_authorize_ahash(&approved, NULL, 0, ahash.buffer);
        memcpy(approved_d.buffer, approved.d, MB_POLICY_SIZE);

        TRY(Esys_CreatePrimary(ctx, ESYS_TR_RH_NULL, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sens, &tmpl,
                               &outside, &none_pcrs, &signer, &pub, NULL, NULL, NULL));
        TRY(Esys_Sign(ctx, signer, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &ahash, &scheme, &hc, &sig));
        CHECK(name_of_public(pub, &key_name));
        mb_policy_reset(&object);
        CHECK(mb_policy_authorize(&object, key_name.name, key_name.size, NULL, 0) == MB_OK);
        TRY(authorize_with(nv, counter, pub, ESYS_TR_RH_OWNER, &ahash, sig, &approved_d, &object));
        ok = true;
        refused = authorize_with(nv, counter, pub, ESYS_TR_RH_NULL, &ahash, sig, &approved_d, &object) != TSS2_RC_SUCCESS;
out:
        if (signer != ESYS_TR_NONE)
                Esys_FlushContext(ctx, signer);
        Esys_Free(sig);
        Esys_Free(pub);
        report("signed policy end to end: NV + PCR approved, signed aHash, PolicyAuthorize in a real session", ok);
        report("PolicyAuthorize refuses the ticket of a key LoadExternal'd into the null hierarchy", refused);
}

int main(int argc, char **argv) {
        TSS2_TCTI_CONTEXT *tcti = NULL;
        ESYS_TR nv = ESYS_TR_NONE;
        uint64_t counter = 0;

        if (argc != 2) {
                fprintf(stderr, "usage: policy_trial TCTI-CONF (e.g. swtpm:path=/tmp/x/srv)\n");
                return 2;
        }
        if (Tss2_TctiLdr_Initialize(argv[1], &tcti) != TSS2_RC_SUCCESS ||
            Esys_Initialize(&ctx, tcti, NULL) != TSS2_RC_SUCCESS) {
                printf("FAIL: policy-tpm cannot reach the TPM at %s\n", argv[1]);
                return 1;
        }
        extend_pcrs();
        test_pcr_masks();
        test_pcr_wrong_digest();
        test_or(2);
        test_or(8);
        test_tree(9, 8);
        test_tree(65, 64);
        test_tree(70, 0);
        test_tree(70, 69);
        test_tree(512, 300);
        test_tree(512, 511);
        test_authorize("");
        test_authorize("mshim");
        test_auth_value();
        if (define_counter(&nv)) {
                test_nv(nv, &counter);
                test_signed(nv, counter);
        } else {
                report("define the epoch counter", false);
        }
        Esys_Finalize(&ctx);
        Tss2_TctiLdr_Finalize(&tcti);
        return n_failed ? 1 : 0;
}
