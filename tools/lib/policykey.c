/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The policy key (docs/SEALING.md): an ECDSA P-256 key pair made by
 * `mshim policy init` with OpenSSL 3; its public part as the TPM sees it
 * (TPM2B_PUBLIC for LoadExternal, its Name for PolicyAuthorize), and
 * signatures over aHash for TPM2_VerifySignature.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include "policykey.h"
#include "safeio.h"
#include "sigs.h"

int seal_write_new(const char *path, mode_t mode, const void *p, size_t n) {
        struct stat st;

        /* Never over an existing file: a sealed secret, an approval or a
         * key lost to a typo cannot be had back. */
        if (lstat(path, &st) == 0) {
                cli_error("%s exists; not overwriting it", path);
                return -1;
        }
        if (errno != ENOENT) {
                cli_error("%s: %s", path, strerror(errno));
                return -1;
        }
        return cli_write_file(path, mode, p, n);
}

/* PEM text of key (private or public part) in a memory BIO. */
static int write_pem(EVP_PKEY *key, bool private, const char *path) {
        BIO *b = BIO_new(BIO_s_mem());
        char *p = NULL;
        long n;
        int r = -1;

        if (b && (private ? PEM_write_bio_PrivateKey(b, key, NULL, NULL, 0, NULL, NULL) : PEM_write_bio_PUBKEY(b, key))) {
                n = BIO_get_mem_data(b, &p);
                r = seal_write_new(path, private ? CLI_MODE_SECRET : CLI_MODE_PUBLIC, p, (size_t) n);
        } else
                cli_error("cannot encode the policy key: %s", ERR_reason_error_string(ERR_get_error()));
        BIO_free(b);
        return r;
}

int pk_generate(const char *key_path, const char *pub_path) {
        EVP_PKEY *key;
        struct stat st;
        int r = -1;

        if (lstat(key_path, &st) == 0 || lstat(pub_path, &st) == 0) {
                cli_error("%s exists: the policy key is made once (every approval and signed sealed file "
                          "depends on it); not overwriting it", lstat(key_path, &st) == 0 ? key_path : pub_path);
                return -1;
        }
        key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
        if (!key) {
                cli_error("cannot generate an ECDSA P-256 key: %s", ERR_reason_error_string(ERR_get_error()));
                return -1;
        }
        if (write_pem(key, true, key_path) == 0 && write_pem(key, false, pub_path) == 0)
                r = 0;
        EVP_PKEY_free(key);
        return r;
}

/* x and y of a P-256 key, 32 bytes each. */
static int ec_point(EVP_PKEY *key, const char *path, uint8_t x[32], uint8_t y[32]) {
        char curve[32] = "";
        BIGNUM *bx = NULL, *by = NULL;
        int r = -1;

        if (EVP_PKEY_get_base_id(key) != EVP_PKEY_EC ||
            !EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, curve, sizeof(curve), NULL) ||
            strcmp(curve, SN_X9_62_prime256v1)) {
                cli_error("%s: not an ECDSA P-256 key (the policy key mshim policy init makes)", path);
                return -1;
        }
        if (EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_EC_PUB_X, &bx) &&
            EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_EC_PUB_Y, &by) && BN_bn2binpad(bx, x, 32) == 32 &&
            BN_bn2binpad(by, y, 32) == 32)
                r = 0;
        else
                cli_error("%s: cannot read the key's point", path);
        BN_free(bx);
        BN_free(by);
        return r;
}

/* The public area mshim loads the key with (LoadExternal, null
 * hierarchy): an unrestricted ECDSA-SHA256 signing key. Its Name is what
 * the sealed object's PolicyAuthorize names. */
static void tpm_public(const uint8_t x[32], const uint8_t y[32], TPM2B_PUBLIC *ret) {
        memset(ret, 0, sizeof(*ret));
        ret->publicArea.type = TPM2_ALG_ECC;
        ret->publicArea.nameAlg = TPM2_ALG_SHA256;
        ret->publicArea.objectAttributes = TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_USERWITHAUTH;
        ret->publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
        ret->publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_ECDSA;
        ret->publicArea.parameters.eccDetail.scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256;
        ret->publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
        ret->publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
        ret->publicArea.unique.ecc.x.size = 32;
        ret->publicArea.unique.ecc.y.size = 32;
        memcpy(ret->publicArea.unique.ecc.x.buffer, x, 32);
        memcpy(ret->publicArea.unique.ecc.y.buffer, y, 32);
}

/* The PEM public key at path, or NULL with a message. */
static EVP_PKEY *read_public(const char *path) {
        cli_file f;
        BIO *b;
        EVP_PKEY *key = NULL;

        if (cli_file_load_max(path, (size_t) 1 << 20, "a public key", &f) < 0)
                return NULL;
        b = BIO_new_mem_buf(f.data, (int) f.size);
        if (b)
                key = PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);
        BIO_free(b);
        cli_file_free(&f);
        ERR_clear_error();
        if (!key)
                cli_error("%s: not a PEM public key (mshim policy init writes it)", path);
        return key;
}

int pk_load_public(const char *path, TPM2B_PUBLIC *ret) {
        EVP_PKEY *key = read_public(path);
        uint8_t x[32], y[32];
        int r = -1;

        if (key && ec_point(key, path, x, y) == 0) {
                tpm_public(x, y, ret);
                r = 0;
        }
        EVP_PKEY_free(key);
        return r;
}

int pk_sign(pk_signer *s, const TPM2B_PUBLIC *expect, const uint8_t digest[32], uint8_t *ret_sig, size_t max,
            size_t *ret_size) {
        EVP_PKEY_CTX *c = NULL;
        TPM2B_PUBLIC pub;
        uint8_t x[32], y[32];
        size_t n = max;
        int r = -1;

        if (!s->key && !(s->key = cred_load_key(s->key_path, s->pass_file)))
                return -1;
        if (ec_point(s->key, s->key_path, x, y) < 0)
                goto out;
        tpm_public(x, y, &pub);
        if (expect && memcmp(&pub.publicArea.unique.ecc, &expect->publicArea.unique.ecc, sizeof(pub.publicArea.unique.ecc))) {
                cli_error("%s is not the policy key the public key names", s->key_path);
                goto out;
        }
        /* aHash is already a digest: ECDSA over it as given (no hashing
         * again, as EVP_DigestSign would); OpenSSL writes DER. */
        c = EVP_PKEY_CTX_new(s->key, NULL);
        if (!c || EVP_PKEY_sign_init(c) <= 0 || EVP_PKEY_sign(c, ret_sig, &n, digest, 32) <= 0) {
                cli_error("signing with %s failed: %s", s->key_path, ERR_reason_error_string(ERR_get_error()));
                goto out;
        }
        *ret_size = n;
        r = 0;
out:
        EVP_PKEY_CTX_free(c);
        return r;
}

int pk_signer_public(pk_signer *s, TPM2B_PUBLIC *ret) {
        uint8_t x[32], y[32];

        if (!s->key && !(s->key = cred_load_key(s->key_path, s->pass_file)))
                return -1;
        if (ec_point(s->key, s->key_path, x, y) < 0)
                return -1;
        tpm_public(x, y, ret);
        return 0;
}

void pk_signer_done(pk_signer *s) {
        EVP_PKEY_free(s->key);
        s->key = NULL;
}

int pk_verify(const char *pub_path, const uint8_t digest[32], const uint8_t *sig, size_t sig_size) {
        EVP_PKEY *key = read_public(pub_path);
        EVP_PKEY_CTX *c = NULL;
        uint8_t x[32], y[32];
        int k, r = -1;

        if (!key || ec_point(key, pub_path, x, y) < 0)
                goto out;
        /* The digest as given, as pk_sign signed it and as the TPM's
         * VerifySignature checks it. OpenSSL refuses a DER encoding that
         * is not the canonical one. */
        c = EVP_PKEY_CTX_new(key, NULL);
        if (!c || EVP_PKEY_verify_init(c) <= 0) {
                cli_error("cannot verify with %s: %s", pub_path, ERR_reason_error_string(ERR_get_error()));
                goto out;
        }
        k = EVP_PKEY_verify(c, sig, sig_size, digest, 32);
        ERR_clear_error();
        r = k == 1 ? 0 : 1;
out:
        EVP_PKEY_CTX_free(c);
        EVP_PKEY_free(key);
        return r;
}
