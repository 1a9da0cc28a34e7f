/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The SRK, the epoch counter, sealing and unsealing through tpm2-tss ESAPI
 * (docs/SEALING.md "TPM objects and handles"). Section numbers are TPM 2.0
 * Part 3 (commands) unless said otherwise.
 */
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include "tpmseal.h"

/* AES-128-CFB parameter encryption, SHA-256 sessions. */
static const TPMT_SYM_DEF session_sym = {
        .algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB,
};

/* ---- response codes -------------------------------------------------------- */

TSS2_RC ts_rc_base(TSS2_RC rc) {
        /* Part 2 §6.6: format-one codes carry a handle, session or parameter
         * number in bits 6 and 8-11; format-zero codes do not. */
        if (rc & TPM2_RC_FMT1)
                return rc & (0xFFFF0000u | TPM2_RC_FMT1 | 0x3Fu);
        return rc;
}

bool ts_rc_is_policy(TSS2_RC rc) {
        TSS2_RC b = ts_rc_base(rc);
        /* PolicyPCR, PolicyOR, PolicyAuthorize: a digest that does not
         * match is TPM_RC_VALUE; PolicyNV's false comparison TPM_RC_POLICY;
         * Unseal with the wrong policyDigest TPM_RC_POLICY_FAIL. */
        return b == TPM2_RC_VALUE || b == TPM2_RC_POLICY || b == TPM2_RC_POLICY_FAIL;
}

static int tpm_fail(const char *what, TSS2_RC rc) {
        cli_error("%s failed: %s", what, Tss2_RC_Decode(rc));
        return EXIT_BAD_INPUT;
}

void ts_flush(cli_tpm *t, ESYS_TR *h) {
        if (*h != ESYS_TR_NONE)
                Esys_FlushContext(t->esys, *h);
        *h = ESYS_TR_NONE;
}

/* ---- names ----------------------------------------------------------------- */

int ts_public_name(const TPM2B_PUBLIC *pub, TPM2B_NAME *ret) {
        uint8_t buf[sizeof(TPMT_PUBLIC)];
        size_t off = 0;
        unsigned int n = 0;

        if (pub->publicArea.nameAlg != TPM2_ALG_SHA256 ||
            Tss2_MU_TPMT_PUBLIC_Marshal(&pub->publicArea, buf, sizeof(buf), &off) != TSS2_RC_SUCCESS)
                return -1;
        /* Part 1 §16: Name = nameAlg (big-endian) || H_nameAlg(publicArea). */
        ret->name[0] = TPM2_ALG_SHA256 >> 8;
        ret->name[1] = TPM2_ALG_SHA256 & 0xff;
        if (!EVP_Digest(buf, off, ret->name + 2, &n, EVP_sha256(), NULL))
                return -1;
        ret->size = (UINT16) (2 + n);
        return 0;
}

/* ---- the SRK ------------------------------------------------------------- */

/* TCG "TPM 2.0 Provisioning Guidance" 1.0 §7.5.1, the ECC NIST P-256 SRK
 * template: restricted decryption key, AES-128-CFB, no scheme, no KDF,
 * empty authPolicy and unique. */
static const TPM2B_PUBLIC srk_template = {
        .publicArea = {
                .type = TPM2_ALG_ECC,
                .nameAlg = TPM2_ALG_SHA256,
                .objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |
                                    TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA | TPMA_OBJECT_RESTRICTED |
                                    TPMA_OBJECT_DECRYPT,
                .parameters.eccDetail = {
                        .symmetric = { .algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB },
                        .scheme = { .scheme = TPM2_ALG_NULL },
                        .curveID = TPM2_ECC_NIST_P256,
                        .kdf = { .scheme = TPM2_ALG_NULL },
                },
        },
};

/* The template's fields, whatever the unique (the key itself). */
static bool srk_is_template(const TPMT_PUBLIC *p) {
        const TPMT_PUBLIC *t = &srk_template.publicArea;
        const TPMS_ECC_PARMS *a = &p->parameters.eccDetail, *b = &t->parameters.eccDetail;

        return p->type == t->type && p->nameAlg == t->nameAlg && p->objectAttributes == t->objectAttributes &&
               p->authPolicy.size == 0 && a->symmetric.algorithm == b->symmetric.algorithm &&
               a->symmetric.keyBits.aes == b->symmetric.keyBits.aes && a->symmetric.mode.aes == b->symmetric.mode.aes &&
               a->scheme.scheme == b->scheme.scheme && a->curveID == b->curveID && a->kdf.scheme == b->kdf.scheme;
}

/* The key at TS_SRK_HANDLE: 0, 1 (none there), or an error. ESAPI reads
 * its public area (ReadPublic) and checks that the Name the TPM returns is
 * that public area's; the handle then carries the Name. */
static int srk_lookup(cli_tpm *t, ESYS_TR *ret_srk) {
        TSS2_RC rc = Esys_TR_FromTPMPublic(t->esys, TS_SRK_HANDLE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ret_srk);

        /* ReadPublic of an empty persistent handle: TPM_RC_HANDLE. */
        if (ts_rc_base(rc) == TPM2_RC_HANDLE)
                return 1;
        return rc == TSS2_RC_SUCCESS ? 0 : tpm_fail("reading the storage root key at 0x81000001 (ReadPublic)", rc);
}

static int srk_create(cli_tpm *t, ESYS_TR *ret_srk) {
        ESYS_TR obj = ESYS_TR_NONE;
        TPM2B_SENSITIVE_CREATE in = { 0 };
        TPML_PCR_SELECTION none = { 0 };
        TSS2_RC rc;

        rc = Esys_CreatePrimary(t->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &in,
                                &srk_template, NULL, &none, &obj, NULL, NULL, NULL, NULL);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail("creating the storage root key (CreatePrimary in the owner hierarchy)", rc);
        rc = Esys_EvictControl(t->esys, ESYS_TR_RH_OWNER, obj, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                               TS_SRK_HANDLE, ret_srk);
        ts_flush(t, &obj);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail("making the storage root key persistent at 0x81000001 (EvictControl)", rc);
        return 0;
}

int ts_srk_provision(cli_tpm *t, ESYS_TR *ret_srk, TPM2B_PUBLIC *ret_pub) {
        TPM2B_PUBLIC *pub = NULL;
        ESYS_TR srk = ESYS_TR_NONE;
        TSS2_RC rc;
        int r = srk_lookup(t, &srk);

        if (r == 1)
                r = srk_create(t, &srk);
        if (r)
                return r;
        rc = Esys_ReadPublic(t->esys, srk, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &pub, NULL, NULL);
        if (rc != TSS2_RC_SUCCESS) {
                Esys_TR_Close(t->esys, &srk);
                return tpm_fail("reading the storage root key's public area (ReadPublic)", rc);
        }
        if (!srk_is_template(&pub->publicArea)) {
                cli_error("the key at 0x81000001 is not a storage root key of the TCG template "
                          "(ECC P-256, restricted decrypt, AES-128-CFB, docs/SEALING.md); refusing to use it");
                Esys_Free(pub);
                Esys_TR_Close(t->esys, &srk);
                return EXIT_BAD_INPUT;
        }
        *ret_pub = *pub;
        *ret_srk = srk;
        Esys_Free(pub);
        return 0;
}

/* The key at TS_SRK_HANDLE against recorded: 0 the same (ret_srk set), 1
 * none there, 2 another (ret_found: its Name), or an exit status. A Name
 * covers the whole public area: equal Names, same key. */
static int srk_match(cli_tpm *t, const TPM2B_PUBLIC *recorded, ESYS_TR *ret_srk, TPM2B_NAME *ret_found) {
        ESYS_TR srk = ESYS_TR_NONE;
        TPM2B_NAME *name = NULL, want;
        int r = srk_lookup(t, &srk);

        if (r)
                return r;
        if (Esys_TR_GetName(t->esys, srk, &name) != TSS2_RC_SUCCESS || ts_public_name(recorded, &want) < 0) {
                Esys_Free(name);
                Esys_TR_Close(t->esys, &srk);
                cli_error("cannot compute the storage root key's Name");
                return EXIT_BAD_INPUT;
        }
        *ret_found = *name;
        r = name->size == want.size && memcmp(name->name, want.name, want.size) == 0 ? 0 : 2;
        Esys_Free(name);
        if (r)
                Esys_TR_Close(t->esys, &srk);
        else
                *ret_srk = srk;
        return r;
}

/* Would the owner hierarchy's seed make the recorded SRK again? The
 * template's key, transient (CreatePrimary is deterministic in the seed
 * and the template: Part 1 §26.3), against the recorded Name: 1 yes (the
 * seed is the one the secret was sealed under), 0 no (the TPM was
 * cleared), -1 unknown (CreatePrimary refused: an owner password, say). */
static int srk_seed_same(cli_tpm *t, const TPM2B_PUBLIC *recorded) {
        ESYS_TR obj = ESYS_TR_NONE;
        TPM2B_SENSITIVE_CREATE in = { 0 };
        TPML_PCR_SELECTION none = { 0 };
        TPM2B_NAME *name = NULL, want;
        int r = -1;

        if (ts_public_name(recorded, &want) < 0 ||
            Esys_CreatePrimary(t->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &in,
                               &srk_template, NULL, &none, &obj, NULL, NULL, NULL, NULL) != TSS2_RC_SUCCESS)
                return -1;
        if (Esys_TR_GetName(t->esys, obj, &name) == TSS2_RC_SUCCESS)
                r = name->size == want.size && memcmp(name->name, want.name, want.size) == 0;
        Esys_Free(name);
        ts_flush(t, &obj);
        return r;
}

/* The causes a sealed secret's SRK check names (docs/RECOVERY.md), each
 * with the commands that bring TPM unlock back after a passphrase boot:
 * the one wording unseal, the keyscript (which prints unseal's first
 * line) and mshim status (which shows the keyscript's outcome) share. */
static void srk_cause(cli_tpm *t, const TPM2B_PUBLIC *recorded, int r) {
        int same = srk_seed_same(t, recorded);

        if (same == 0)
                cli_error("the TPM was cleared (its owner seed changed: the storage root key at 0x81000001 is %s, "
                          "and the one the secret was sealed under can never be made again): after this "
                          "passphrase boot run 'mshim policy init --reset', then enrol again ('mshim luks remove "
                          "DEVICE; mshim luks enroll DEVICE', or 'mshim seal'; docs/RECOVERY.md \"TPM cleared\")",
                          r == 1 ? "gone" : "another key");
        else if (same == 1 && r == 1)
                cli_error("the storage root key at 0x81000001 was evicted (the TPM's owner seed is unchanged): "
                          "after this passphrase boot run 'mshim policy init --reset', which makes the same key "
                          "again (docs/RECOVERY.md \"SRK replaced\")");
        else if (same == 1)
                cli_error("the storage root key at 0x81000001 was replaced by another key (the TPM's owner seed is "
                          "unchanged): after this passphrase boot, if that key is yours to remove, run "
                          "'tpm2_evictcontrol -C o -c 0x81000001' and 'mshim policy init --reset' "
                          "(docs/RECOVERY.md \"SRK replaced\")");
        else
                cli_error("the storage root key at 0x81000001 is %s (the TPM was cleared, the key replaced, or this "
                          "is another machine): refusing to use it (docs/RECOVERY.md)",
                          r == 1 ? "gone" : "not the one the secret was sealed under");
}

int ts_srk_open(cli_tpm *t, const TPM2B_PUBLIC *recorded, ESYS_TR *ret_srk) {
        TPM2B_NAME found;
        int r = srk_match(t, recorded, ret_srk, &found);

        if (r == 1 || r == 2)
                srk_cause(t, recorded, r);
        return r == 1 || r == 2 ? EXIT_BAD_INPUT : r;
}

int ts_srk_match(cli_tpm *t, const TPM2B_PUBLIC *recorded) {
        ESYS_TR srk = ESYS_TR_NONE;
        TPM2B_NAME found;
        int r = srk_match(t, recorded, &srk, &found);

        if (r == 0)
                Esys_TR_Close(t->esys, &srk);
        return r;
}

/* A Name in hex, for messages. */
static void name_hex(const TPM2B_NAME *n, char out[2 * sizeof(n->name) + 1]) {
        size_t k = 0;

        for (size_t i = 0; i < n->size && i < sizeof(n->name); i++)
                k += (size_t) snprintf(out + k, 3, "%02x", n->name[i]);
        out[k] = 0;
}

int ts_srk_recorded(cli_tpm *t, const TPM2B_PUBLIC *recorded, const char *record, ESYS_TR *ret_srk) {
        char want_hex[2 * sizeof(((TPM2B_NAME *) 0)->name) + 1], found_hex[sizeof(want_hex)];
        TPM2B_NAME found, want;
        int r = srk_match(t, recorded, ret_srk, &found);

        if (r != 1 && r != 2)
                return r;
        want_hex[0] = 0;
        if (ts_public_name(recorded, &want) == 0)
                name_hex(&want, want_hex);
        if (r == 1) {
                cli_error("the TPM has no storage root key at 0x81000001, but %s records the one mshim first "
                          "used (Name %s): the TPM was cleared or the key evicted; refusing to make another "
                          "(docs/SEALING.md \"The SRK record\"; after a passphrase boot, 'mshim policy init --reset' "
                          "makes it again: docs/RECOVERY.md)", record, want_hex);
        } else {
                name_hex(&found, found_hex);
                cli_error("the storage root key at 0x81000001 (Name %s) is not the one %s recorded at mshim's "
                          "first use (Name %s): substituted, or the TPM was cleared; refusing to use it "
                          "(docs/SEALING.md \"The SRK record\")", found_hex, record, want_hex);
        }
        return EXIT_BAD_INPUT;
}

/* ---- the epoch counter ------------------------------------------------- */

static const TPM2B_NV_PUBLIC counter_public = {
        .nvPublic = {
                .nvIndex = TS_COUNTER_INDEX,
                .nameAlg = TPM2_ALG_SHA256,
                /* Part 2 §13.4: TPM_NT_COUNTER in bits 4-7. */
                .attributes = (TPM2_NT_COUNTER << TPMA_NV_TPM2_NT_SHIFT) | TPMA_NV_OWNERWRITE | TPMA_NV_OWNERREAD |
                              TPMA_NV_AUTHREAD | TPMA_NV_NO_DA,
                .dataSize = TS_COUNTER_SIZE,
        },
};

/* Attributes that must be as mshim set them (the rest are the TPM's:
 * WRITTEN, ...). */
#define COUNTER_ATTR_MASK (TPMA_NV_TPM2_NT_MASK | TPMA_NV_OWNERWRITE | TPMA_NV_OWNERREAD | TPMA_NV_AUTHREAD | \
                           TPMA_NV_NO_DA | TPMA_NV_AUTHWRITE | TPMA_NV_POLICYWRITE | TPMA_NV_POLICYREAD | \
                           TPMA_NV_PPWRITE | TPMA_NV_PPREAD | TPMA_NV_POLICY_DELETE)

static int counter_read(cli_tpm *t, ESYS_TR nv, uint64_t *ret) {
        TPM2B_MAX_NV_BUFFER *data = NULL;
        TSS2_RC rc = Esys_NV_Read(t->esys, nv, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, TS_COUNTER_SIZE, 0, &data);
        uint64_t v = 0;

        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail("reading the epoch counter 0x01804D53 (NV_Read)", rc);
        /* A counter reads as a big-endian UINT64 (Part 2 §13.4). */
        for (size_t i = 0; i < TS_COUNTER_SIZE && i < data->size; i++)
                v = v << 8 | data->buffer[i];
        Esys_Free(data);
        *ret = v;
        return 0;
}

static int counter_check(cli_tpm *t, ESYS_TR nv) {
        TPM2B_NV_PUBLIC *pub = NULL;
        TSS2_RC rc = Esys_NV_ReadPublic(t->esys, nv, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &pub, NULL);
        bool ok;

        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail("reading the epoch counter's attributes (NV_ReadPublic)", rc);
        ok = pub->nvPublic.nameAlg == TPM2_ALG_SHA256 && pub->nvPublic.dataSize == TS_COUNTER_SIZE &&
             pub->nvPublic.authPolicy.size == 0 &&
             (pub->nvPublic.attributes & COUNTER_ATTR_MASK) == counter_public.nvPublic.attributes;
        Esys_Free(pub);
        if (!ok) {
                cli_error("NV index 0x01804D53 exists but is not mshim's epoch counter (docs/SEALING.md); "
                          "refusing to use it");
                return EXIT_BAD_INPUT;
        }
        return 0;
}

int ts_counter_open(cli_tpm *t, ESYS_TR *ret_nv, TPM2B_NAME *ret_name, uint64_t *ret_value) {
        ESYS_TR nv = ESYS_TR_NONE;
        TPM2B_NAME *name = NULL;
        TSS2_RC rc = Esys_TR_FromTPMPublic(t->esys, TS_COUNTER_INDEX, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &nv);

        if (ts_rc_base(rc) == TPM2_RC_HANDLE) {
                cli_error("the TPM has no epoch counter (NV index 0x01804D53): run 'mshim policy init' first (set up "
                          "before, and the TPM cleared since: 'mshim policy init --reset', docs/RECOVERY.md)");
                return EXIT_BAD_INPUT;
        }
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail("opening the epoch counter 0x01804D53 (NV_ReadPublic)", rc);
        rc = Esys_TR_GetName(t->esys, nv, &name);
        if (rc != TSS2_RC_SUCCESS) {
                Esys_TR_Close(t->esys, &nv);
                return tpm_fail("the epoch counter's Name", rc);
        }
        *ret_name = *name;
        Esys_Free(name);
        if (ret_value && counter_read(t, nv, ret_value)) {
                Esys_TR_Close(t->esys, &nv);
                return EXIT_BAD_INPUT;
        }
        *ret_nv = nv;
        return 0;
}

/* ESAPI's serialization of an ESYS_TR (Esys_TR_Serialize, the form of
 * tpm2-tools' .tr files): handle, TPM2B_NAME, resource type (2: an NV
 * index), TPM2B_NV_PUBLIC. */
#define IESYS_NV_RSRC 2u

/* The public area the counter at index has once written, and its Name. */
static int counter_written(uint32_t index, TPM2B_NV_PUBLIC *ret_pub, TPM2B_NAME *ret_name) {
        TPM2B_NV_PUBLIC pub = counter_public;
        TPM2B_NAME name = { 0 };
        uint8_t tmp[sizeof(TPMS_NV_PUBLIC)];
        size_t n = 0;
        unsigned int dl = 0;

        pub.nvPublic.nvIndex = index;
        pub.nvPublic.attributes |= TPMA_NV_WRITTEN;
        if (Tss2_MU_TPMS_NV_PUBLIC_Marshal(&pub.nvPublic, tmp, sizeof(tmp), &n) != TSS2_RC_SUCCESS)
                return -1;
        name.name[0] = TPM2_ALG_SHA256 >> 8;
        name.name[1] = TPM2_ALG_SHA256 & 0xff;
        if (!EVP_Digest(tmp, n, name.name + 2, &dl, EVP_sha256(), NULL))
                return -1;
        name.size = (UINT16) (2 + dl);
        *ret_pub = pub;
        *ret_name = name;
        return 0;
}

int ts_counter_name(TPM2B_NAME *ret) {
        TPM2B_NV_PUBLIC pub;

        return counter_written(TS_COUNTER_INDEX, &pub, ret);
}

static int counter_blob(uint32_t index, const TPM2B_NAME *name, uint8_t *buf, size_t max, size_t *ret_size) {
        TPM2B_NV_PUBLIC pub;
        TPM2B_NAME want;
        size_t off = 0;

        /* The public area the counter has once written; its Name must be
         * the recorded one (else the TPM's is asked for). */
        if (counter_written(index, &pub, &want) < 0 || want.size != name->size ||
            memcmp(want.name, name->name, want.size))
                return -1;
        if (Tss2_MU_TPM2_HANDLE_Marshal(index, buf, max, &off) != TSS2_RC_SUCCESS ||
            Tss2_MU_TPM2B_NAME_Marshal(name, buf, max, &off) != TSS2_RC_SUCCESS ||
            Tss2_MU_UINT32_Marshal(IESYS_NV_RSRC, buf, max, &off) != TSS2_RC_SUCCESS ||
            Tss2_MU_TPM2B_NV_PUBLIC_Marshal(&pub, buf, max, &off) != TSS2_RC_SUCCESS)
                return -1;
        *ret_size = off;
        return 0;
}

int ts_counter_from_name(cli_tpm *t, uint32_t index, const TPM2B_NAME *name, ESYS_TR *ret_nv, TPM2B_NAME *ret_name) {
        uint8_t buf[sizeof(TPM2B_NAME) + sizeof(TPM2B_NV_PUBLIC) + 8];
        size_t n = 0;
        ESYS_TR nv = ESYS_TR_NONE;

        if (index != TS_COUNTER_INDEX) {
                cli_error("the sealed file names NV index 0x%08x, not the epoch counter 0x01804D53 (damaged file)", index);
                return EXIT_BAD_INPUT;
        }
        /* No TPM command: the handle is made from the recorded Name. The
         * TPM still decides: PolicyNV extends the session with the Name of
         * the index the TPM has, so another index fails PolicyAuthorize. */
        if (counter_blob(index, name, buf, sizeof(buf), &n) == 0 &&
            Esys_TR_Deserialize(t->esys, buf, n, &nv) == TSS2_RC_SUCCESS) {
                *ret_nv = nv;
                *ret_name = *name;
                return 0;
        }
        /* A Name of other attributes: the TPM's own (NV_ReadPublic). */
        return ts_counter_open(t, ret_nv, ret_name, NULL);
}

int ts_counter_value(cli_tpm *t, ESYS_TR nv, uint64_t *ret_value) {
        return counter_read(t, nv, ret_value);
}

static int counter_increment(cli_tpm *t, ESYS_TR nv) {
        TSS2_RC rc = Esys_NV_Increment(t->esys, ESYS_TR_RH_OWNER, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE);

        return rc == TSS2_RC_SUCCESS ? 0 : tpm_fail("incrementing the epoch counter 0x01804D53 (NV_Increment)", rc);
}

int ts_counter_present(cli_tpm *t) {
        ESYS_TR nv = ESYS_TR_NONE;
        TSS2_RC rc = Esys_TR_FromTPMPublic(t->esys, TS_COUNTER_INDEX, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &nv);

        if (ts_rc_base(rc) == TPM2_RC_HANDLE)
                return 1;
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail("opening the epoch counter 0x01804D53 (NV_ReadPublic)", rc);
        Esys_TR_Close(t->esys, &nv);
        return 0;
}

int ts_counter_provision(cli_tpm *t, uint64_t *ret_value) {
        ESYS_TR nv = ESYS_TR_NONE;
        TSS2_RC rc = Esys_TR_FromTPMPublic(t->esys, TS_COUNTER_INDEX, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &nv);
        int r;

        if (ts_rc_base(rc) == TPM2_RC_HANDLE) {
                /* A counter reads only once written: define it, then the
                 * first increment (Part 3 §31.8) sets it to its start value. */
                rc = Esys_NV_DefineSpace(t->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                                         &(TPM2B_AUTH) { 0 }, &counter_public, &nv);
                if (rc != TSS2_RC_SUCCESS)
                        return tpm_fail("defining the epoch counter 0x01804D53 (NV_DefineSpace)", rc);
                r = counter_increment(t, nv);
        } else if (rc != TSS2_RC_SUCCESS) {
                return tpm_fail("opening the epoch counter 0x01804D53 (NV_ReadPublic)", rc);
        } else {
                r = counter_check(t, nv);
        }
        if (r == 0)
                r = counter_read(t, nv, ret_value);
        Esys_TR_Close(t->esys, &nv);
        return r;
}

int ts_counter_increment(cli_tpm *t, uint64_t *ret_value) {
        ESYS_TR nv = ESYS_TR_NONE;
        TPM2B_NAME name;
        int r = ts_counter_open(t, &nv, &name, NULL);

        if (r)
                return r;
        r = counter_check(t, nv);
        if (r == 0)
                r = counter_increment(t, nv);
        if (r == 0)
                r = counter_read(t, nv, ret_value);
        Esys_TR_Close(t->esys, &nv);
        return r;
}

/* ---- sealing --------------------------------------------------------------- */

void ts_pin_auth(const char *pin, TPM2B_AUTH *ret) {
        unsigned int n = 0;

        /* A PIN of any length: its SHA-256 is the authValue (at most the
         * nameAlg's digest size, Part 1 §19.6.4). */
        EVP_Digest(pin, strlen(pin), ret->buffer, &n, EVP_sha256(), NULL);
        ret->size = (UINT16) n;
}

static TSS2_RC salted_session(cli_tpm *t, ESYS_TR srk, TPM2_SE type, TPMA_SESSION attrs, ESYS_TR *ret) {
        TSS2_RC rc = Esys_StartAuthSession(t->esys, srk, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, NULL,
                                           type, &session_sym, TPM2_ALG_SHA256, ret);

        if (rc == TSS2_RC_SUCCESS)
                rc = Esys_TRSess_SetAttributes(t->esys, *ret, attrs, 0xff);
        return rc;
}

int ts_create(cli_tpm *t, ESYS_TR srk, const TPM2B_PUBLIC *tmpl, TPM2B_SENSITIVE_CREATE *in, TPM2B_PUBLIC *ret_pub,
              TPM2B_PRIVATE *ret_priv) {
        TPML_PCR_SELECTION none = { 0 };
        TPM2B_PUBLIC *pub = NULL;
        TPM2B_PRIVATE *priv = NULL;
        ESYS_TR s = ESYS_TR_NONE;
        TSS2_RC rc;

        /* The SRK's authorization (empty) in an HMAC session salted to it,
         * which also encrypts the first parameter, inSensitive. */
        rc = salted_session(t, srk, TPM2_SE_HMAC, TPMA_SESSION_DECRYPT | TPMA_SESSION_CONTINUESESSION, &s);
        if (rc == TSS2_RC_SUCCESS)
                rc = Esys_Create(t->esys, srk, s, ESYS_TR_NONE, ESYS_TR_NONE, in, tmpl, NULL, &none, &priv, &pub, NULL,
                                 NULL, NULL);
        OPENSSL_cleanse(in, sizeof(*in));
        ts_flush(t, &s);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail("creating an object under the storage root key (Create)", rc);
        *ret_pub = *pub;
        *ret_priv = *priv;
        Esys_Free(pub);
        Esys_Free(priv);
        return 0;
}

int ts_seal(cli_tpm *t, ESYS_TR srk, const mb_policy *policy, const char *pin, const uint8_t *secret, size_t n,
            TPM2B_PUBLIC *ret_pub, TPM2B_PRIVATE *ret_priv) {
        TPM2B_SENSITIVE_CREATE in = { 0 };
        TPM2B_PUBLIC tmpl = {
                .publicArea = {
                        .type = TPM2_ALG_KEYEDHASH,
                        .nameAlg = TPM2_ALG_SHA256,
                        /* Policy only (no userWithAuth); without a PIN the
                         * object has no authValue to guess: noDA. */
                        .objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | (pin ? 0 : TPMA_OBJECT_NODA),
                        .parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL,
                },
        };

        if (n == 0 || n > TS_SECRET_MAX) {
                cli_error("the secret must be 1 to %u bytes (it is %zu)", TS_SECRET_MAX, n);
                return EXIT_BAD_INPUT;
        }
        tmpl.publicArea.authPolicy.size = MB_POLICY_SIZE;
        memcpy(tmpl.publicArea.authPolicy.buffer, policy->d, MB_POLICY_SIZE);
        memcpy(in.sensitive.data.buffer, secret, n);
        in.sensitive.data.size = (UINT16) n;
        if (pin)
                ts_pin_auth(pin, &in.sensitive.userAuth);
        return ts_create(t, srk, &tmpl, &in, ret_pub, ret_priv);
}

/* ---- unsealing --------------------------------------------------------- */

int ts_unsealer_load(ts_unsealer *u, cli_tpm *t, ESYS_TR srk, const TPM2B_PUBLIC *pub, const TPM2B_PRIVATE *priv,
                     const TPM2B_AUTH *auth) {
        TSS2_RC rc;

        *u = (ts_unsealer) { .t = t, .srk = srk, .obj = ESYS_TR_NONE, .session = ESYS_TR_NONE, .pin = auth != NULL };
        rc = Esys_Load(t->esys, srk, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, priv, pub, &u->obj);
        if (rc != TSS2_RC_SUCCESS) {
                cli_error("the TPM does not take the sealed object (Load: %s): it was sealed by another TPM or "
                          "under another storage root key, or the file is damaged", Tss2_RC_Decode(rc));
                return EXIT_BAD_INPUT;
        }
        if (auth)
                Esys_TR_SetAuth(t->esys, u->obj, auth);
        return 0;
}

TSS2_RC ts_session_start(ts_unsealer *u) {
        return salted_session(u->t, u->srk, TPM2_SE_POLICY, TPMA_SESSION_CONTINUESESSION, &u->session);
}

TSS2_RC ts_policy_nv(ts_unsealer *u, ESYS_TR nv, uint64_t epoch) {
        TPM2B_OPERAND b = { .size = TS_COUNTER_SIZE };

        for (size_t i = 0; i < TS_COUNTER_SIZE; i++)
                b.buffer[i] = (uint8_t) (epoch >> (8 * (TS_COUNTER_SIZE - 1 - i)));
        /* §23.9: counter <= epoch, read with the index's own (empty) auth. */
        return Esys_PolicyNV(u->t->esys, nv, nv, u->session, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &b, 0,
                             TPM2_EO_UNSIGNED_LE);
}

TSS2_RC ts_policy_pcr(ts_unsealer *u, uint32_t mask, const uint8_t digest[MB_POLICY_SIZE]) {
        TPM2B_DIGEST d = { .size = MB_POLICY_SIZE };
        TPML_PCR_SELECTION sel = { .count = 1 };

        memcpy(d.buffer, digest, MB_POLICY_SIZE);
        sel.pcrSelections[0].hash = TPM2_ALG_SHA256;
        sel.pcrSelections[0].sizeofSelect = 3;
        for (int k = 0; k < 3; k++)
                sel.pcrSelections[0].pcrSelect[k] = (uint8_t) (mask >> (8 * k));
        /* §23.7: with pcrDigest given, the TPM compares it with the PCRs now
         * (TPM_RC_VALUE when they differ). */
        return Esys_PolicyPCR(u->t->esys, u->session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &d, &sel);
}

TSS2_RC ts_policy_or(ts_unsealer *u, const mb_policy *branches, size_t n) {
        TPML_DIGEST list = { .count = (UINT32) n };

        for (size_t i = 0; i < n && i < MB_POLICY_OR_MAX; i++) {
                list.digests[i].size = MB_POLICY_SIZE;
                memcpy(list.digests[i].buffer, branches[i].d, MB_POLICY_SIZE);
        }
        return Esys_PolicyOR(u->t->esys, u->session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &list);
}

TSS2_RC ts_load_verify_key(cli_tpm *t, const TPM2B_PUBLIC *pub, ESYS_TR *ret_key) {
        /* The owner hierarchy, not the null one: VerifySignature with a key
         * of the null hierarchy returns a NULL ticket (§20.1), which
         * PolicyAuthorize rejects. A public key alone needs no authorization
         * to load anywhere (§12.3). */
        return Esys_LoadExternal(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, NULL, pub, ESYS_TR_RH_OWNER, ret_key);
}

TSS2_RC ts_policy_authorize(ts_unsealer *u, ESYS_TR key, const TPM2B_NAME *key_name, const mb_policy *approved,
                            const uint8_t *sig_r, const uint8_t *sig_s, size_t sig_size) {
        TPMT_SIGNATURE sig = { .sigAlg = TPM2_ALG_ECDSA, .signature.ecdsa.hash = TPM2_ALG_SHA256 };
        TPM2B_DIGEST ahash = { .size = MB_POLICY_SIZE }, pol = { .size = MB_POLICY_SIZE };
        TPM2B_NONCE ref = { 0 };
        TPMT_TK_VERIFIED *ticket = NULL;
        TSS2_RC rc;

        if (sig_size > sizeof(sig.signature.ecdsa.signatureR.buffer))
                return TSS2_ESYS_RC_BAD_VALUE;
        memcpy(sig.signature.ecdsa.signatureR.buffer, sig_r, sig_size);
        memcpy(sig.signature.ecdsa.signatureS.buffer, sig_s, sig_size);
        sig.signature.ecdsa.signatureR.size = sig.signature.ecdsa.signatureS.size = (UINT16) sig_size;
        mb_policy_authorize_ahash(approved, NULL, 0, ahash.buffer);
        memcpy(pol.buffer, approved->d, MB_POLICY_SIZE);
        /* §20.1: the ticket says the key signed aHash; §23.16 checks it. */
        rc = Esys_VerifySignature(u->t->esys, key, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &ahash, &sig, &ticket);
        if (rc == TSS2_RC_SUCCESS)
                rc = Esys_PolicyAuthorize(u->t->esys, u->session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &pol, &ref,
                                          key_name, ticket);
        Esys_Free(ticket);
        return rc;
}

TSS2_RC ts_unseal_now(ts_unsealer *u, uint8_t *ret_secret, size_t *ret_size) {
        TPM2B_SENSITIVE_DATA *out = NULL;
        TSS2_RC rc = TSS2_RC_SUCCESS;

        if (u->pin)
                rc = Esys_PolicyAuthValue(u->t->esys, u->session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE);
        /* The response (the secret) encrypted; the session ends here. */
        if (rc == TSS2_RC_SUCCESS)
                rc = Esys_TRSess_SetAttributes(u->t->esys, u->session, TPMA_SESSION_ENCRYPT,
                                               TPMA_SESSION_ENCRYPT | TPMA_SESSION_CONTINUESESSION);
        if (rc == TSS2_RC_SUCCESS)
                rc = Esys_Unseal(u->t->esys, u->obj, u->session, ESYS_TR_NONE, ESYS_TR_NONE, &out);
        if (rc != TSS2_RC_SUCCESS)
                return rc;
        u->session = ESYS_TR_NONE;      /* flushed by the TPM, closed by ESAPI */
        memcpy(ret_secret, out->buffer, out->size);
        *ret_size = out->size;
        OPENSSL_cleanse(out->buffer, out->size);
        Esys_Free(out);
        return TSS2_RC_SUCCESS;
}

void ts_session_end(ts_unsealer *u) {
        ts_flush(u->t, &u->session);
}

void ts_unsealer_done(ts_unsealer *u) {
        ts_session_end(u);
        ts_flush(u->t, &u->obj);
}
