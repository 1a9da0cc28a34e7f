/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim attest init | activate | quote: the machine's side of remote
 * attestation (docs/ATTESTATION.md) on tpm2-tss ESAPI. init makes the
 * endorsement keys (TCG EK Credential Profile templates), reads their
 * certificates and makes the attestation key persistent; activate answers a
 * verifier's challenge (TPM2_ActivateCredential with the AK and the EK);
 * quote has the AK sign the PCRs and writes them with the event log as one
 * evidence document. Section numbers
 * are TPM 2.0 Part 3 (commands) unless said otherwise.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <openssl/crypto.h>
#include <openssl/x509.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include "attest.h"
#include "safeio.h"
#include "tpmseal.h"

#define LOG_DEFAULT "/sys/kernel/security/tpm0/binary_bios_measurements"
#define IMA_LOG_DEFAULT "/sys/kernel/security/ima/binary_runtime_measurements"
/* The IMA list inside the evidence: base64 makes it 4/3 as large, and the
 * evidence is at most ATT_EVIDENCE_MAX_MIB. About 400,000 entries;
 * `mshim verify ima` takes larger lists as files. */
#define IMA_LOG_MAX_MIB 40u
/* Default PCRs: 0-9 and 11-15. PCR 10 is IMA's, whose log is not in the
 * evidence yet; 16-23 are debug and locality PCRs no boot measures. */
#define QUOTE_MASK_DEFAULT 0xFBFFu

static int tpm_fail(const char *what, TSS2_RC rc) {
        cli_error("%s failed: %s", what, Tss2_RC_Decode(rc));
        return EXIT_BAD_INPUT;
}

/* ---- the keys' templates ---------------------------------------------- */

/* TCG EK Credential Profile 2.0 §B.3.3: the low-range templates' authPolicy,
 * PolicySecret(TPM_RH_ENDORSEMENT) (the EK is used only in a session that
 * proves the endorsement hierarchy's authorization). */
static const uint8_t ek_policy[32] = {
        0x83, 0x71, 0x97, 0x67, 0x44, 0x84, 0xb3, 0xf8, 0x1a, 0x90, 0xcc, 0x8d, 0x46, 0xa5, 0xd7, 0x24,
        0xfd, 0x52, 0xd7, 0x6e, 0x06, 0x52, 0x0b, 0x64, 0xf2, 0xa1, 0xda, 0x1b, 0x33, 0x14, 0x69, 0xaa,
};
#define EK_ATTRS (TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN | \
                  TPMA_OBJECT_ADMINWITHPOLICY | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT)

typedef struct ek_kind {
        const char *label;      /* in messages and file names */
        const char *file;       /* DIR/FILE.pub, .pem, .crt */
        TPM2_HANDLE cert_index; /* §2.2.1.4: the low-range certificate NV indices */
} ek_kind;
static const ek_kind ek_kinds[2] = {
        { "RSA 2048", "ek-rsa", 0x01C00002u },
        { "ECC P-256", "ek-ecc", 0x01C0000Au },
};

/* §B.3.3 Template L-1 (RSA 2048) and §B.3.4 Template L-2 (ECC NIST P-256):
 * AES-128-CFB, no scheme, unique zero-filled to the key's size. */
static void ek_template(int rsa, TPM2B_PUBLIC *t) {
        memset(t, 0, sizeof(*t));
        t->publicArea.nameAlg = TPM2_ALG_SHA256;
        t->publicArea.objectAttributes = EK_ATTRS;
        t->publicArea.authPolicy.size = sizeof(ek_policy);
        memcpy(t->publicArea.authPolicy.buffer, ek_policy, sizeof(ek_policy));
        if (rsa) {
                TPMS_RSA_PARMS *r = &t->publicArea.parameters.rsaDetail;
                t->publicArea.type = TPM2_ALG_RSA;
                r->symmetric = (TPMT_SYM_DEF_OBJECT) { .algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB };
                r->scheme.scheme = TPM2_ALG_NULL;
                r->keyBits = 2048;
                t->publicArea.unique.rsa.size = 256;
        } else {
                TPMS_ECC_PARMS *e = &t->publicArea.parameters.eccDetail;
                t->publicArea.type = TPM2_ALG_ECC;
                e->symmetric = (TPMT_SYM_DEF_OBJECT) { .algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB };
                e->scheme.scheme = TPM2_ALG_NULL;
                e->curveID = TPM2_ECC_NIST_P256;
                e->kdf.scheme = TPM2_ALG_NULL;
                t->publicArea.unique.ecc.x.size = 32;
                t->publicArea.unique.ecc.y.size = 32;
        }
}

/* The AK: a restricted signing key that only the TPM holds (fixedTPM,
 * fixedParent, sensitiveDataOrigin), used with an empty authValue
 * (userWithAuth). ECDSA P-256 or RSASSA 2048, both with SHA-256. */
#define AK_ATTRS (TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN | \
                  TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT)

static void ak_template(int rsa, TPM2B_PUBLIC *t) {
        memset(t, 0, sizeof(*t));
        t->publicArea.nameAlg = TPM2_ALG_SHA256;
        t->publicArea.objectAttributes = AK_ATTRS;
        if (rsa) {
                TPMS_RSA_PARMS *r = &t->publicArea.parameters.rsaDetail;
                t->publicArea.type = TPM2_ALG_RSA;
                r->symmetric.algorithm = TPM2_ALG_NULL;
                r->scheme.scheme = TPM2_ALG_RSASSA;
                r->scheme.details.rsassa.hashAlg = TPM2_ALG_SHA256;
                r->keyBits = 2048;
        } else {
                TPMS_ECC_PARMS *e = &t->publicArea.parameters.eccDetail;
                t->publicArea.type = TPM2_ALG_ECC;
                e->symmetric.algorithm = TPM2_ALG_NULL;
                e->scheme.scheme = TPM2_ALG_ECDSA;
                e->scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256;
                e->curveID = TPM2_ECC_NIST_P256;
                e->kdf.scheme = TPM2_ALG_NULL;
        }
}

/* The marshalled TPM2B_PUBLIC and its parse (for the PEM and checks). */
typedef struct att_pub {
        uint8_t buf[sizeof(TPM2B_PUBLIC)];
        size_t size;
        mb_attest_public p;
} att_pub;

static int pub_marshal(const TPM2B_PUBLIC *pub, att_pub *ret, const char *what) {
        ret->size = 0;
        if (Tss2_MU_TPM2B_PUBLIC_Marshal(pub, ret->buf, sizeof(ret->buf), &ret->size) != TSS2_RC_SUCCESS ||
            mb_attest_public_parse(ret->buf, ret->size, &ret->p) != MB_OK) {
                cli_error("%s: the TPM returned a public area mshim cannot read", what);
                return EXIT_BAD_INPUT;
        }
        return 0;
}

/* ---- writing the outputs ---------------------------------------------- */

typedef struct outdir {
        const char *dir;
        char path[4096];
} outdir;

static const char *out_path(outdir *o, const char *name, const char *ext) {
        snprintf(o->path, sizeof(o->path), "%s/%s%s", o->dir, name, ext);
        return o->path;
}

static int write_out(outdir *o, const char *name, const char *ext, const void *p, size_t n) {
        if (cli_write_file(out_path(o, name, ext), CLI_MODE_PUBLIC, p, n) < 0)
                return EXIT_BAD_INPUT;
        printf("  wrote %s\n", o->path);
        return 0;
}

/* NAME.pub (TPM2B_PUBLIC) and NAME.pem (SubjectPublicKeyInfo); the key for
 * comparisons in *ret_key (caller frees) when asked. */
static int write_public(outdir *o, const char *name, const att_pub *pub, EVP_PKEY **ret_key) {
        EVP_PKEY *k = att_pkey(&pub->p, name);
        size_t n = 0;
        char *pem = k ? att_pem(k, &n) : NULL;
        int r = pem ? 0 : EXIT_BAD_INPUT;

        if (!r)
                r = write_out(o, name, ".pub", pub->buf, pub->size);
        if (!r)
                r = write_out(o, name, ".pem", pem, n);
        free(pem);
        if (ret_key && !r)
                *ret_key = k;
        else
                EVP_PKEY_free(k);
        return r;
}

/* ---- the endorsement keys ------------------------------------------- */

/* The certificate in NV index idx: 1 when the index is not defined, 0
 * with *ret (malloc()ed) and *ret_n, or an exit status. Read with the
 * index's own (empty) authorization, §2.2.1.5: AUTHREAD is set. */
static int nv_cert(cli_tpm *t, TPM2_HANDLE idx, uint8_t **ret, size_t *ret_n) {
        ESYS_TR nv = ESYS_TR_NONE;
        TPM2B_NV_PUBLIC *pub = NULL;
        uint8_t *buf = NULL;
        uint16_t size, off = 0;
        TSS2_RC rc = Esys_TR_FromTPMPublic(t->esys, idx, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &nv);
        int r = 0;

        if (ts_rc_base(rc) == TPM2_RC_HANDLE)
                return 1;
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail("reading an EK certificate's NV index (NV_ReadPublic)", rc);
        rc = Esys_NV_ReadPublic(t->esys, nv, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &pub, NULL);
        if (rc != TSS2_RC_SUCCESS) {
                r = tpm_fail("reading an EK certificate's NV index (NV_ReadPublic)", rc);
                goto out;
        }
        size = pub->nvPublic.dataSize;
        buf = malloc(size ? size : 1);
        if (!buf) {
                cli_error("out of memory");
                r = EXIT_BAD_INPUT;
                goto out;
        }
        /* NV_Read returns at most TPM_PT_NV_BUFFER_MAX bytes (§31.13);
         * every TPM allows 512. */
        while (off < size) {
                TPM2B_MAX_NV_BUFFER *chunk = NULL;
                uint16_t n = size - off > 512 ? 512 : (uint16_t) (size - off);

                rc = Esys_NV_Read(t->esys, nv, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, n, off, &chunk);
                if (rc != TSS2_RC_SUCCESS || chunk->size != n) {
                        Esys_Free(chunk);
                        r = tpm_fail("reading an EK certificate (NV_Read)", rc ? rc : TPM2_RC_SIZE);
                        goto out;
                }
                memcpy(buf + off, chunk->buffer, n);
                off += n;
                Esys_Free(chunk);
        }
        *ret = buf;
        *ret_n = size;
        buf = NULL;
out:
        free(buf);
        Esys_Free(pub);
        Esys_TR_Close(t->esys, &nv);
        return r;
}

/* Does the certificate (DER) certify key? TCG EK certificates are DER
 * X.509; anything else is reported, not written. */
static bool cert_matches(const uint8_t *der, size_t n, EVP_PKEY *key) {
        const unsigned char *p = der;
        X509 *x = d2i_X509(NULL, &p, (long) n);
        EVP_PKEY *ck = x ? X509_get0_pubkey(x) : NULL;
        bool ok = ck && p == der + n && EVP_PKEY_eq(ck, key) == 1;

        X509_free(x);
        return ok;
}

static int ek_one(cli_tpm *t, outdir *o, int rsa) {
        const ek_kind *kind = &ek_kinds[rsa ? 0 : 1];
        TPM2B_PUBLIC tmpl, *pub = NULL;
        TPML_PCR_SELECTION none = { 0 };
        TPM2B_SENSITIVE_CREATE in = { 0 };
        ESYS_TR ek = ESYS_TR_NONE;
        EVP_PKEY *key = NULL;
        att_pub ap;
        uint8_t *cert = NULL;
        size_t cert_n = 0;
        TSS2_RC rc;
        int r;

        ek_template(rsa, &tmpl);
        /* A primary key is a function of the hierarchy's seed and the
         * template: the same EK every time, nothing to keep. */
        rc = Esys_CreatePrimary(t->esys, ESYS_TR_RH_ENDORSEMENT, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &in,
                                &tmpl, NULL, &none, &ek, &pub, NULL, NULL, NULL);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(rsa ? "creating the RSA endorsement key (CreatePrimary)"
                                    : "creating the ECC endorsement key (CreatePrimary)", rc);
        ts_flush(t, &ek);
        r = pub_marshal(pub, &ap, kind->file);
        Esys_Free(pub);
        printf("endorsement key (%s, TCG EK Credential Profile template):\n", kind->label);
        if (!r)
                r = write_public(o, kind->file, &ap, &key);
        if (!r)
                r = nv_cert(t, kind->cert_index, &cert, &cert_n);
        if (r == 1) {
                printf("  no certificate at NV 0x%08X\n", kind->cert_index);
                r = 0;
        } else if (!r && !cert_matches(cert, cert_n, key)) {
                printf("  the certificate at NV 0x%08X (%zu bytes) does not certify this key: not written\n",
                       kind->cert_index, cert_n);
        } else if (!r) {
                printf("  certificate at NV 0x%08X (%zu bytes), certifies this key\n", kind->cert_index, cert_n);
                r = write_out(o, kind->file, ".crt", cert, cert_n);
        }
        free(cert);
        EVP_PKEY_free(key);
        return r;
}

/* ---- the attestation key -------------------------------------------- */

/* The key at ATT_AK_HANDLE: 1 when there is none, 0 with its handle and
 * public area, or an exit status. */
static int ak_lookup(cli_tpm *t, ESYS_TR *ret, TPM2B_PUBLIC **ret_pub) {
        TSS2_RC rc = Esys_TR_FromTPMPublic(t->esys, ATT_AK_HANDLE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ret);

        if (ts_rc_base(rc) == TPM2_RC_HANDLE)
                return 1;
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail("reading the attestation key at 0x81014D41 (ReadPublic)", rc);
        rc = Esys_ReadPublic(t->esys, *ret, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ret_pub, NULL, NULL);
        if (rc != TSS2_RC_SUCCESS) {
                Esys_TR_Close(t->esys, ret);
                return tpm_fail("reading the attestation key at 0x81014D41 (ReadPublic)", rc);
        }
        return 0;
}

/* The AK must be a restricted signing key the TPM alone holds: a key
 * without `restricted` would sign a forged TPMS_ATTEST (Part 1 §19.2.4). */
static bool ak_usable(const TPMT_PUBLIC *p) {
        return (p->objectAttributes & AK_ATTRS) == AK_ATTRS && !(p->objectAttributes & TPMA_OBJECT_DECRYPT);
}

static bool same_name(const TPM2B_PUBLIC *a, const TPM2B_PUBLIC *b) {
        TPM2B_NAME x, y;
        return ts_public_name(a, &x) == 0 && ts_public_name(b, &y) == 0 && x.size == y.size &&
               memcmp(x.name, y.name, x.size) == 0;
}

/* Create the AK in the endorsement hierarchy (a primary key: the
 * endorsement hierarchy's resetCount and restartCount are not obfuscated in
 * its quotes, Part 1 §36.7) and compare with what is persistent. */
static int ak_provision(cli_tpm *t, int rsa, TPM2B_PUBLIC *ret_pub, bool *ret_created) {
        TPM2B_PUBLIC tmpl, *made = NULL, *have = NULL;
        TPML_PCR_SELECTION none = { 0 };
        TPM2B_SENSITIVE_CREATE in = { 0 };
        ESYS_TR obj = ESYS_TR_NONE, per = ESYS_TR_NONE;
        TSS2_RC rc;
        int r = ak_lookup(t, &per, &have);

        if (r > 1)
                return r;
        ak_template(rsa, &tmpl);
        rc = Esys_CreatePrimary(t->esys, ESYS_TR_RH_ENDORSEMENT, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &in,
                                &tmpl, NULL, &none, &obj, &made, NULL, NULL, NULL);
        if (rc != TSS2_RC_SUCCESS) {
                r = tpm_fail("creating the attestation key (CreatePrimary in the endorsement hierarchy)", rc);
                goto out;
        }
        if (r == 0) {
                /* The same template and seed give the same key: a key at the
                 * handle that is not it was not made by mshim attest init
                 * with these options (or the endorsement seed changed). */
                if (!same_name(have, made)) {
                        cli_error("the key at 0x81014D41 is not the %s attestation key mshim makes (another key, "
                                  "the other type, or the TPM's endorsement seed changed); remove it with "
                                  "'tpm2_evictcontrol -C o -c 0x81014D41' to make a new one",
                                  rsa ? "RSA" : "ECC");
                        r = EXIT_BAD_INPUT;
                        goto out;
                }
                *ret_created = false;
        } else {
                ESYS_TR tr = ESYS_TR_NONE;
                rc = Esys_EvictControl(t->esys, ESYS_TR_RH_OWNER, obj, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                                       ATT_AK_HANDLE, &tr);
                if (rc != TSS2_RC_SUCCESS) {
                        r = tpm_fail("making the attestation key persistent at 0x81014D41 (EvictControl)", rc);
                        goto out;
                }
                Esys_TR_Close(t->esys, &tr);
                *ret_created = true;
                r = 0;
        }
        *ret_pub = *made;
out:
        ts_flush(t, &obj);
        if (per != ESYS_TR_NONE)
                Esys_TR_Close(t->esys, &per);
        Esys_Free(made);
        Esys_Free(have);
        return r;
}

/* ---- mshim attest init ---------------------------------------------- */

static int attest_init(int argc, char **argv) {
        static const struct option longopts[] = {
                { "rsa", no_argument, NULL, 'r' },
                { "out-dir", required_argument, NULL, 'd' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        const char *dir = NULL;
        int rsa = 0, c, r;
        outdir o;
        cli_tpm t;
        TPM2B_PUBLIC ak;
        TPM2B_NAME name;
        att_pub ap;
        bool created = false;
        struct stat st;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "h", longopts, "attest")) != -1) {
                switch (c) {
                case 'r': rsa = 1; break;
                case 'd':
                        if (cli_opt_once(&dir, "--out-dir", optarg) < 0)
                                return EXIT_BAD_INPUT;
                        break;
                case 'h': cli_help(stdout, "attest"); return 0;
                default: return EXIT_BAD_INPUT;
                }
        }
        if (optind < argc)
                return cli_usage_error("attest", "attest init takes no arguments ('%s')", argv[optind]);
        o.dir = dir ? dir : ".";
        if (stat(o.dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
                cli_error("%s: not a directory", o.dir);
                return EXIT_BAD_INPUT;
        }
        if (cli_tpm_connect(&t) < 0)
                return EXIT_BAD_INPUT;
        r = ak_provision(&t, rsa, &ak, &created);
        for (int i = 1; !r && i >= 0; i--)
                r = ek_one(&t, &o, i);
        cli_tpm_disconnect(&t);
        if (r)
                return r;
        if (ts_public_name(&ak, &name) < 0 || pub_marshal(&ak, &ap, "the attestation key"))
                return EXIT_BAD_INPUT;
        printf("attestation key (%s): persistent at 0x%08X, %s\n", rsa ? "RSA 2048, RSASSA-SHA256" : "ECC P-256, ECDSA-SHA256",
               ATT_AK_HANDLE, created ? "created" : "already there, reused");
        printf("  name: ");
        for (uint16_t i = 0; i < name.size; i++)
                printf("%02x", name.name[i]);
        printf("\n");
        r = write_public(&o, "ak", &ap, NULL);
        if (!r)
                r = write_out(&o, "ak", ".name", name.name, name.size);
        return r;
}

/* ---- mshim attest activate ------------------------------------------ */

_Static_assert(sizeof(((TPM2B_ID_OBJECT *) 0)->credential) >= MB_ATTEST_ID_OBJECT_MAX, "TPM2B_ID_OBJECT");
_Static_assert(sizeof(((TPM2B_ENCRYPTED_SECRET *) 0)->secret) >= MB_ATTEST_SECRET_MAX, "TPM2B_ENCRYPTED_SECRET");

/* The EK's authorization: a policy session that has run
 * PolicySecret(TPM_RH_ENDORSEMENT) with the endorsement hierarchy's (empty)
 * authValue, which is the EK templates' authPolicy (EK Credential Profile
 * §B.3.3; Part 3 §23.4). */
static int ek_policy_session(cli_tpm *t, ESYS_TR *ret) {
        TPMT_SYM_DEF none = { .algorithm = TPM2_ALG_NULL };
        TSS2_RC rc = Esys_StartAuthSession(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                           NULL, TPM2_SE_POLICY, &none, TPM2_ALG_SHA256, ret);

        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail("starting the EK's policy session (StartAuthSession)", rc);
        rc = Esys_PolicySecret(t->esys, ESYS_TR_RH_ENDORSEMENT, *ret, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, NULL,
                               NULL, NULL, 0, NULL, NULL);
        if (rc != TSS2_RC_SUCCESS) {
                ts_flush(t, ret);
                return tpm_fail("PolicySecret(TPM_RH_ENDORSEMENT) for the EK", rc);
        }
        return 0;
}

/* TPM2_ActivateCredential (Part 3 §12.5): the AK (activateHandle, its
 * empty authValue) and the EK (keyHandle, the policy session). The TPM
 * recovers the seed with the EK, checks the integrity HMAC over the
 * identity and the AK's Name, and only then decrypts the secret. */
static int activate(cli_tpm *t, const mb_attest_cred *c, TPM2B_DIGEST **ret) {
        TPM2B_PUBLIC tmpl, *pub = NULL;
        TPML_PCR_SELECTION none = { 0 };
        TPM2B_SENSITIVE_CREATE in = { 0 };
        TPM2B_ID_OBJECT blob = { .size = c->id_object.size };
        TPM2B_ENCRYPTED_SECRET sec = { .size = c->secret.size };
        ESYS_TR ek = ESYS_TR_NONE, ak = ESYS_TR_NONE, sess = ESYS_TR_NONE;
        TPM2B_PUBLIC *akpub = NULL;
        bool rsa = !c->ecc_x.size;      /* an ECC EK's seed is a point */
        TSS2_RC rc;
        int r = ak_lookup(t, &ak, &akpub);

        if (r == 1)
                cli_error("no attestation key at 0x81014D41: run 'mshim attest init' first");
        if (r)
                return EXIT_BAD_INPUT;
        Esys_Free(akpub);
        memcpy(blob.credential, c->id_object.p, c->id_object.size);
        memcpy(sec.secret, c->secret.p, c->secret.size);
        ek_template(rsa, &tmpl);
        rc = Esys_CreatePrimary(t->esys, ESYS_TR_RH_ENDORSEMENT, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &in,
                                &tmpl, NULL, &none, &ek, &pub, NULL, NULL, NULL);
        Esys_Free(pub);
        if (rc != TSS2_RC_SUCCESS)
                r = tpm_fail(rsa ? "creating the RSA endorsement key (CreatePrimary)"
                                 : "creating the ECC endorsement key (CreatePrimary)", rc);
        if (!r)
                r = ek_policy_session(t, &sess);
        if (!r) {
                rc = Esys_ActivateCredential(t->esys, ak, ek, ESYS_TR_PASSWORD, sess, ESYS_TR_NONE, &blob, &sec, ret);
                /* A response of the TPM itself is its refusal of this
                 * challenge: TPM_RC_INTEGRITY for an HMAC that does not
                 * verify, TPM_RC_VALUE or TPM_RC_ECC_POINT for a seed that
                 * does not decrypt (Part 3 §12.5.2), and libtpms (swtpm)
                 * answers an RSA seed OAEP refuses with TPM_RC_FAILURE, a
                 * format-zero code. An error of the TSS or the transport
                 * is not a refusal. */
                if (rc != TSS2_RC_SUCCESS && (rc & TSS2_RC_LAYER_MASK) == TSS2_TPM_RC_LAYER) {
                        cli_error("refused: the TPM does not activate this challenge (%s): it was made for another "
                                  "TPM's %s EK or for another attestation key, or it was altered", Tss2_RC_Decode(rc),
                                  rsa ? "RSA" : "ECC");
                        r = EXIT_CHECK_FAILED;
                } else if (rc != TSS2_RC_SUCCESS)
                        r = tpm_fail("TPM2_ActivateCredential", rc);
        }
        ts_flush(t, &sess);
        ts_flush(t, &ek);
        Esys_TR_Close(t->esys, &ak);
        return r;
}

static int attest_activate(int argc, char **argv) {
        static const struct option longopts[] = {
                { "output", required_argument, NULL, 'o' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        const char *out = NULL;
        cli_file f;
        mb_attest_cred cred;
        TPM2B_DIGEST *secret = NULL;
        cli_tpm t;
        mb_err e;
        int c, r;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "ho:", longopts, "attest")) != -1) {
                if (c == 'h') {
                        cli_help(stdout, "attest");
                        return 0;
                }
                if (c != 'o' || cli_opt_once(&out, "-o", optarg) < 0)
                        return EXIT_BAD_INPUT;
        }
        if (argc - optind != 1)
                return cli_usage_error("attest", "attest activate takes one CHALLENGE file");
        if (out && cli_same_file(out, argv[optind])) {
                cli_error("%s: -o is the challenge itself; refusing to overwrite it", out);
                return EXIT_BAD_INPUT;
        }
        if (cli_file_load_max(argv[optind], (size_t) 1 << 20, "a challenge", &f) < 0)
                return EXIT_BAD_INPUT;
        e = mb_attest_cred_parse(f.data, f.size, &cred);
        if (e != MB_OK) {
                cli_error("%s: not a challenge (a tpm2-tools credential file, as 'mshim verify challenge' and "
                          "tpm2_makecredential write): %s", argv[optind], mb_strerror(e));
                cli_file_free(&f);
                return EXIT_BAD_INPUT;
        }
        r = cli_tpm_connect(&t) < 0 ? EXIT_BAD_INPUT : 0;
        if (!r) {
                r = activate(&t, &cred, &secret);
                cli_tpm_disconnect(&t);
        }
        cli_file_free(&f);
        if (!r && out)
                r = cli_write_file(out, CLI_MODE_SECRET, secret->buffer, secret->size) < 0 ? EXIT_BAD_INPUT : 0;
        else if (!r) {
                for (uint16_t i = 0; i < secret->size; i++)
                        printf("%02x", secret->buffer[i]);
                printf("\n");
        }
        if (secret)
                OPENSSL_cleanse(secret->buffer, secret->size);
        Esys_Free(secret);
        return r;
}

/* ---- mshim attest quote ------------------------------------------------ */

typedef struct quote_opts {
        const char *nonce_hex, *out, *log, *tools_dir, *keylime, *ima_log;
        bool ima;
        uint32_t mask;
        uint8_t nonce[ATT_NONCE_MAX];
        size_t nonce_n;
} quote_opts;

static int quote_parse(int argc, char **argv, quote_opts *q) {
        static const struct option longopts[] = {
                { "nonce", required_argument, NULL, 'n' },
                { "select", required_argument, NULL, 's' },
                { "output", required_argument, NULL, 'o' },
                { "log", required_argument, NULL, 'l' },
                { "tpm2-tools", required_argument, NULL, 't' },
                { "keylime", required_argument, NULL, 'k' },
                { "ima", no_argument, NULL, 'I' },
                { "ima-log", required_argument, NULL, 'i' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        const char *sel = NULL;
        int c;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "ho:", longopts, "attest")) != -1) {
                const char **slot = c == 'n' ? &q->nonce_hex : c == 's' ? &sel : c == 'o' ? &q->out : c == 'l' ? &q->log
                                  : c == 't' ? &q->tools_dir : c == 'k' ? &q->keylime : c == 'i' ? &q->ima_log : NULL;
                if (c == 'I') {
                        q->ima = true;
                        continue;
                }
                if (c == 'h') {
                        cli_help(stdout, "attest");
                        return -1;
                }
                if (!slot)
                        return EXIT_BAD_INPUT;
                if (cli_opt_once_for(longopts, c, slot, optarg) < 0)
                        return EXIT_BAD_INPUT;
        }
        if (optind < argc)
                return cli_usage_error("attest", "attest quote takes no arguments ('%s')", argv[optind]);
        if (!q->nonce_hex || !q->out)
                return cli_usage_error("attest", "attest quote needs --nonce HEX and -o EVIDENCE");
        if (att_nonce_parse(q->nonce_hex, q->nonce, &q->nonce_n) < 0)
                return cli_usage_error("attest", "--nonce wants %u to %u bytes in hex, not '%s'", ATT_NONCE_MIN,
                                       ATT_NONCE_MAX, q->nonce_hex);
        q->mask = QUOTE_MASK_DEFAULT;
        if (sel && (cli_pcr_select_parse(sel, &q->mask) < 0 || !q->mask))
                return cli_usage_error("attest", "--select wants PCR numbers 0-23 and ranges, as 0-9,11-15, not '%s'", sel);
        /* The IMA list is judged against PCR 10 (docs/ATTESTATION.md "IMA"). */
        q->ima = q->ima || q->ima_log;
        if (q->ima)
                q->mask |= 1u << 10;
        return 0;
}

static void selection_of(const mb_pcr_values *v, uint32_t mask, TPML_PCR_SELECTION *sel) {
        memset(sel, 0, sizeof(*sel));
        sel->count = v->n_banks;
        for (uint32_t b = 0; b < v->n_banks; b++) {
                sel->pcrSelections[b].hash = v->banks[b].alg;
                sel->pcrSelections[b].sizeofSelect = 3;
                for (int k = 0; k < 3; k++)
                        sel->pcrSelections[b].pcrSelect[k] = (uint8_t) (mask >> (8 * k));
        }
}

/* Part 3 §18.4: pcrDigest is the signing scheme's hash over the selected
 * PCRs' values, bank by bank in selection order, PCRs ascending. */
static bool digest_matches(const mb_pcr_values *v, uint32_t mask, uint16_t hash, const mb_attest_quote *q) {
        uint8_t d[MB_HASH_MAX];
        mb_hash h;

        if (mb_hash_init(&h, hash) != MB_OK)
                return false;
        for (uint32_t b = 0; b < v->n_banks; b++)
                for (uint32_t i = 0; i < MB_PCR_COUNT; i++)
                        if (mask & (1u << i))
                                mb_hash_update(&h, v->banks[b].pcr[i], v->banks[b].size);
        mb_hash_final(&h, d);
        return q->digest.size == mb_hash_size(hash) && !memcmp(q->digest.p, d, q->digest.size);
}

/* tpm2-tools' "serialized" PCR file, which tpm2_checkquote -f and Keylime
 * (keylime/tpm/tpm_util.py, __get_pcrs_from_blob) read: the
 * TPML_PCR_SELECTION and then a UINT32 count of TPML_DIGESTs of up to 8
 * values each, all as the C structures lie in memory (little-endian,
 * padded: TPMS_PCR_SELECTION 8 bytes, TPM2B_DIGEST 66). */
static uint8_t *pcr_blob(const TPML_PCR_SELECTION *sel, const mb_pcr_values *v, uint32_t mask, size_t *ret_n) {
        uint32_t total = 0, n_lists, k = 0;
        TPML_DIGEST *lists;
        uint8_t *blob;
        size_t off;

        for (uint32_t b = 0; b < v->n_banks; b++)
                total += (uint32_t) __builtin_popcount(mask);
        n_lists = (total + 7) / 8;
        lists = calloc(n_lists ? n_lists : 1, sizeof(*lists));
        blob = malloc(sizeof(*sel) + 4 + n_lists * sizeof(*lists));
        if (!lists || !blob) {
                free(lists);
                free(blob);
                return NULL;
        }
        for (uint32_t b = 0; b < v->n_banks; b++)
                for (uint32_t i = 0; i < MB_PCR_COUNT; i++)
                        if (mask & (1u << i)) {
                                TPM2B_DIGEST *d = &lists[k / 8].digests[lists[k / 8].count++];
                                d->size = v->banks[b].size;
                                memcpy(d->buffer, v->banks[b].pcr[i], d->size);
                                k++;
                        }
        memcpy(blob, sel, sizeof(*sel));
        off = sizeof(*sel);
        memcpy(blob + off, &n_lists, 4);
        off += 4;
        memcpy(blob + off, lists, n_lists * sizeof(*lists));
        *ret_n = off + n_lists * sizeof(*lists);
        free(lists);
        return blob;
}

typedef struct quote_result {
        uint8_t msg[sizeof(TPMS_ATTEST)];
        size_t msg_n;
        uint8_t sig[sizeof(TPMT_SIGNATURE)];
        size_t sig_n;
        mb_attest_quote q;
        mb_pcr_values v;
        TPML_PCR_SELECTION sel;
        TPM2B_NAME ak_name;
} quote_result;

/* Quote, then read the PCRs it covered; a PCR extended between the two
 * shows as a digest that does not match: quote again (three times). */
static int take_quote(cli_tpm *t, const quote_opts *o, quote_result *res) {
        ESYS_TR ak = ESYS_TR_NONE;
        TPM2B_PUBLIC *pub = NULL;
        TPM2B_NAME *name = NULL;
        TPM2B_DATA qual = { .size = (UINT16) o->nonce_n };
        TPMT_SIG_SCHEME scheme = { .scheme = TPM2_ALG_NULL };   /* the key's own */
        int r = ak_lookup(t, &ak, &pub);

        if (r == 1) {
                cli_error("no attestation key at 0x81014D41: run 'mshim attest init' first");
                return EXIT_BAD_INPUT;
        }
        if (r)
                return r;
        if (!ak_usable(&pub->publicArea)) {
                cli_error("the key at 0x81014D41 is not a restricted signing key fixed to this TPM; refusing to quote with it");
                r = EXIT_BAD_INPUT;
                goto out;
        }
        if (Esys_TR_GetName(t->esys, ak, &name) != TSS2_RC_SUCCESS) {
                r = tpm_fail("the attestation key's Name", TSS2_ESYS_RC_BAD_REFERENCE);
                goto out;
        }
        res->ak_name = *name;
        memcpy(qual.buffer, o->nonce, o->nonce_n);
        r = EXIT_BAD_INPUT;
        for (int attempt = 0; attempt < 3 && r; attempt++) {
                TPM2B_ATTEST *att = NULL;
                TPMT_SIGNATURE *sig = NULL;
                TSS2_RC rc;

                if (cli_tpm_pcr_read(t, NULL, 0, o->mask, &res->v) < 0)
                        goto out;
                selection_of(&res->v, o->mask, &res->sel);
                rc = Esys_Quote(t->esys, ak, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &qual, &scheme, &res->sel, &att,
                                &sig);
                if (rc != TSS2_RC_SUCCESS) {
                        r = tpm_fail("TPM2_Quote with the attestation key", rc);
                        goto out;
                }
                res->sig_n = 0;
                memcpy(res->msg, att->attestationData, att->size);
                res->msg_n = att->size;
                if (Tss2_MU_TPMT_SIGNATURE_Marshal(sig, res->sig, sizeof(res->sig), &res->sig_n) != TSS2_RC_SUCCESS ||
                    mb_attest_quote_parse(res->msg, res->msg_n, &res->q) != MB_OK) {
                        cli_error("the TPM returned a quote mshim cannot read");
                        Esys_Free(att);
                        Esys_Free(sig);
                        goto out;
                }
                if (cli_tpm_pcr_read(t, NULL, 0, o->mask, &res->v) < 0) {
                        Esys_Free(att);
                        Esys_Free(sig);
                        goto out;
                }
                if (digest_matches(&res->v, o->mask, sig->signature.any.hashAlg, &res->q))
                        r = 0;
                Esys_Free(att);
                Esys_Free(sig);
        }
        if (r)
                cli_error("the PCRs kept changing while being quoted; try again");
out:
        Esys_Free(name);
        Esys_Free(pub);
        Esys_TR_Close(t->esys, &ak);
        return r;
}

/* The evidence document (docs/schema/mshim-evidence-1.schema.json). */
/* A "source" path as a JSON string's contents. */
static void json_path(FILE *f, const char *p) {
        for (; *p; p++)
                fprintf(f, *p == '"' || *p == '\\' ? "\\%c" : (unsigned char) *p < 0x20 ? "?" : "%c", *p);
}

static char *evidence_json(const quote_opts *o, const quote_result *res, const cli_file *log, const char *log_name,
                           const cli_file *ima, size_t *ret_n) {
        char *doc = NULL, *msg = att_b64(res->msg, res->msg_n), *sig = att_b64(res->sig, res->sig_n);
        char *lg = att_b64(log->data, log->size), *name = att_hex(res->ak_name.name, res->ak_name.size);
        char *il = o->ima ? att_b64(ima->data, ima->size) : NULL;
        size_t n = 0;
        char lb[16];
        FILE *f = open_memstream(&doc, &n);

        if (!f || !msg || !sig || !lg || !name || (o->ima && !il))
                goto out;
        fprintf(f, "{\n  \"schema\": \"%s\",\n  \"mshim_version\": \"%s\",\n", ATT_EVIDENCE_SCHEMA, MB_VERSION);
        fprintf(f, "  \"ak\": {\"handle\": \"0x%08x\", \"name\": \"%s\"},\n  \"nonce\": \"", ATT_AK_HANDLE, name);
        for (size_t i = 0; i < o->nonce_n; i++)
                fprintf(f, "%02x", o->nonce[i]);
        fprintf(f, "\",\n  \"quote\": {\"message\": \"%s\", \"signature\": \"%s\"},\n  \"pcrs\": {", msg, sig);
        for (uint32_t b = 0; b < res->v.n_banks; b++) {
                const char *sep = "";
                fprintf(f, "%s\n    \"%s\": {", b ? "," : "", cli_alg_label(res->v.banks[b].alg, lb));
                for (uint32_t i = 0; i < MB_PCR_COUNT; i++) {
                        if (!(o->mask & (1u << i)))
                                continue;
                        fprintf(f, "%s\"%u\": \"", sep, i);
                        for (uint32_t k = 0; k < res->v.banks[b].size; k++)
                                fprintf(f, "%02x", res->v.banks[b].pcr[i][k]);
                        fputc('"', f);
                        sep = ", ";
                }
                fputc('}', f);
        }
        fprintf(f, "\n  },\n  \"clock\": {\"clock\": %llu, \"reset_count\": %u, \"restart_count\": %u, \"safe\": %s},\n",
                (unsigned long long) res->q.clock, res->q.reset_count, res->q.restart_count, res->q.safe ? "true" : "false");
        fprintf(f, "  \"event_log\": {\"source\": \"");
        json_path(f, log_name);
        fprintf(f, "\", \"data\": \"%s\"}", lg);
        if (o->ima) {
                fprintf(f, ",\n  \"ima_log\": {\"source\": \"");
                json_path(f, o->ima_log ? o->ima_log : IMA_LOG_DEFAULT);
                fprintf(f, "\", \"data\": \"%s\"}", il);
        }
        fprintf(f, "\n}\n");
out:
        if (f && fclose(f) == 0 && doc && msg && sig && lg && name && (!o->ima || il))
                *ret_n = n;
        else {
                free(doc);
                doc = NULL;
        }
        free(msg);
        free(sig);
        free(lg);
        free(il);
        free(name);
        return doc;
}

static int write_tools_dir(const char *dir, const quote_result *res, const uint8_t *blob, size_t blob_n) {
        char p[4096];
        struct stat st;

        if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
                cli_error("%s: not a directory", dir);
                return EXIT_BAD_INPUT;
        }
        snprintf(p, sizeof(p), "%s/message", dir);
        if (cli_write_file(p, CLI_MODE_PUBLIC, res->msg, res->msg_n) < 0)
                return EXIT_BAD_INPUT;
        snprintf(p, sizeof(p), "%s/signature", dir);
        if (cli_write_file(p, CLI_MODE_PUBLIC, res->sig, res->sig_n) < 0)
                return EXIT_BAD_INPUT;
        snprintf(p, sizeof(p), "%s/pcrs", dir);
        return cli_write_file(p, CLI_MODE_PUBLIC, blob, blob_n) < 0 ? EXIT_BAD_INPUT : 0;
}

/* Keylime's agent quote: "r" then base64 of TPMS_ATTEST, TPMT_SIGNATURE
 * and the PCR blob, ':'-separated (keylime/tpm/tpm_main.py,
 * _get_quote_parameters). */
static int write_keylime(const char *path, const quote_result *res, const uint8_t *blob, size_t blob_n) {
        char *a = att_b64(res->msg, res->msg_n), *s = att_b64(res->sig, res->sig_n), *p = att_b64(blob, blob_n);
        size_t n = a && s && p ? strlen(a) + strlen(s) + strlen(p) + 4 : 0;
        char *line = n ? malloc(n + 1) : NULL;
        int r = EXIT_BAD_INPUT;

        if (line) {
                snprintf(line, n + 1, "r%s:%s:%s\n", a, s, p);
                r = cli_write_file(path, CLI_MODE_PUBLIC, line, strlen(line)) < 0 ? EXIT_BAD_INPUT : 0;
        }
        free(a);
        free(s);
        free(p);
        free(line);
        return r;
}

static int attest_quote(int argc, char **argv) {
        quote_opts o = { 0 };
        quote_result *res = NULL;
        cli_file log = { 0 }, ima = { 0 };
        bool ima_loaded = false;
        cli_tpm t;
        char *doc = NULL;
        uint8_t *blob = NULL;
        size_t doc_n = 0, blob_n = 0;
        const cli_input inputs[] = { { "the event log", NULL }, { "the IMA list", NULL } };
        cli_input in[2];
        int r = quote_parse(argc, argv, &o);

        if (r)
                return r < 0 ? 0 : r;
        in[0] = inputs[0];
        in[0].path = o.log ? o.log : LOG_DEFAULT;
        in[1] = inputs[1];
        in[1].path = o.ima ? (o.ima_log ? o.ima_log : IMA_LOG_DEFAULT) : NULL;
        if (cli_out_not_input(o.out, in, 2) < 0 || (o.keylime && cli_out_not_input(o.keylime, in, 2) < 0))
                return EXIT_BAD_INPUT;
        if (cli_file_load_max(in[0].path, (size_t) ATT_EVIDENCE_MAX_MIB / 2 << 20, "an event log", &log) < 0)
                return EXIT_BAD_INPUT;
        res = calloc(1, sizeof(*res));
        if (!res || cli_tpm_connect(&t) < 0) {
                r = EXIT_BAD_INPUT;
                goto out;
        }
        r = take_quote(&t, &o, res);
        cli_tpm_disconnect(&t);
        if (r)
                goto out;
        r = EXIT_BAD_INPUT;
        /* After the quote: IMA only appends, so the list read now holds
         * every entry PCR 10 covers (and maybe more, which the verifier
         * counts and does not judge). Read before, it could miss some. */
        if (o.ima) {
                if (cli_file_load_max(in[1].path, (size_t) IMA_LOG_MAX_MIB << 20, "an IMA measurement list", &ima) < 0)
                        goto out;
                ima_loaded = true;
        }
        doc = evidence_json(&o, res, &log, in[0].path, &ima, &doc_n);
        blob = pcr_blob(&res->sel, &res->v, o.mask, &blob_n);
        if (!doc || !blob) {
                cli_error("out of memory");
                goto out;
        }
        if (cli_write_file(o.out, CLI_MODE_PUBLIC, doc, doc_n) < 0)
                goto out;
        if (o.tools_dir && write_tools_dir(o.tools_dir, res, blob, blob_n))
                goto out;
        if (o.keylime && write_keylime(o.keylime, res, blob, blob_n))
                goto out;
        r = 0;
out:
        free(doc);
        free(blob);
        free(res);
        cli_file_free(&log);
        if (ima_loaded)
                cli_file_free(&ima);
        return r;
}

int cmd_attest(int argc, char **argv) {
        if (argc < 2)
                return cli_usage_error("attest", "attest needs a command: init, activate or quote");
        if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
                cli_help(stdout, "attest");
                return 0;
        }
        if (!strcmp(argv[1], "init"))
                return attest_init(argc - 1, argv + 1);
        if (!strcmp(argv[1], "activate"))
                return attest_activate(argc - 1, argv + 1);
        if (!strcmp(argv[1], "quote"))
                return attest_quote(argc - 1, argv + 1);
        return cli_usage_error("attest", "unknown attest command '%s' (init, activate, quote)", argv[1]);
}
