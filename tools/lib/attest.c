/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What mshim attest and mshim verify share (tools/lib/attest.h): the key as
 * OpenSSL sees it, base64 and hex, the nonce. The evidence document, which
 * comes from the machine being judged, is read with the strict JSON reader
 * (tools/lib/jsonread.c) before anything in it is trusted.
 */
#include <stdlib.h>
#include <string.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include "attest.h"

int att_nonce_parse(const char *hex, uint8_t *ret, size_t *ret_size) {
        size_t n = strlen(hex);

        if (n % 2 || n / 2 < ATT_NONCE_MIN || n / 2 > ATT_NONCE_MAX)
                return -1;
        for (size_t i = 0; i < n; i += 2) {
                int hi = mb_hexval(hex[i]), lo = mb_hexval(hex[i + 1]);
                if (hi < 0 || lo < 0)
                        return -1;
                ret[i / 2] = (uint8_t) (hi << 4 | lo);
        }
        *ret_size = n / 2;
        return 0;
}

char *att_hex(const uint8_t *p, size_t n) {
        char *s = malloc(2 * n + 1);

        if (!s)
                return NULL;
        for (size_t i = 0; i < n; i++)
                snprintf(s + 2 * i, 3, "%02x", p[i]);
        s[2 * n] = 0;
        return s;
}

char *att_b64(const uint8_t *p, size_t n) {
        char *s = malloc(4 * ((n + 2) / 3) + 1);

        if (s)
                EVP_EncodeBlock((unsigned char *) s, p, (int) n);
        return s;
}

uint8_t *att_unb64(const char *s, size_t len, size_t *ret_n) {
        uint8_t *out;
        int n;

        /* EVP_DecodeBlock skips surrounding whitespace and takes padding
         * as zero bytes: refuse the first, subtract the second. */
        if (len % 4 || len > (size_t) INT32_MAX || strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                           "0123456789+/=") != len)
                return NULL;
        out = malloc(len / 4 * 3 + 1);
        if (!out)
                return NULL;
        n = EVP_DecodeBlock(out, (const unsigned char *) s, (int) len);
        if (n < 0) {
                free(out);
                return NULL;
        }
        for (size_t i = len; i > 0 && i > len - 2 && s[i - 1] == '='; i--)
                n--;
        /* '=' anywhere but the last two places is not base64. */
        if (memchr(s, '=', len - (len >= 2 ? 2 : len)) || (len >= 2 && s[len - 2] == '=' && s[len - 1] != '=')) {
                free(out);
                return NULL;
        }
        *ret_n = (size_t) n;
        return out;
}

/* ---- keys ----------------------------------------------------------- */

static EVP_PKEY *fromdata(const char *type, OSSL_PARAM_BLD *b) {
        OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(b);
        EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
        EVP_PKEY *k = NULL;

        if (!params || !ctx || EVP_PKEY_fromdata_init(ctx) <= 0 ||
            EVP_PKEY_fromdata(ctx, &k, EVP_PKEY_PUBLIC_KEY, params) <= 0)
                k = NULL;
        OSSL_PARAM_free(params);
        EVP_PKEY_CTX_free(ctx);
        return k;
}

static EVP_PKEY *rsa_pkey(const mb_attest_public *pub) {
        OSSL_PARAM_BLD *b = OSSL_PARAM_BLD_new();
        /* §12.2.3.5: an exponent of 0 is the default, 2^16 + 1. */
        BIGNUM *n = BN_bin2bn(pub->rsa_n.p, pub->rsa_n.size, NULL);
        BIGNUM *e = BN_new();
        EVP_PKEY *k = NULL;

        if (b && n && e && BN_set_word(e, pub->rsa_exponent ? pub->rsa_exponent : 65537) &&
            OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_N, n) && OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_E, e))
                k = fromdata("RSA", b);
        BN_free(n);
        BN_free(e);
        OSSL_PARAM_BLD_free(b);
        return k;
}

static EVP_PKEY *ecc_pkey(const mb_attest_public *pub) {
        const char *group = pub->curve == MB_ATTEST_ECC_NIST_P256 ? "prime256v1" : "secp384r1";
        size_t fs = pub->curve == MB_ATTEST_ECC_NIST_P256 ? 32 : 48;
        uint8_t point[1 + 2 * 48] = { 4 };      /* SEC 1 §2.3.3: uncompressed */
        OSSL_PARAM_BLD *b;
        EVP_PKEY *k = NULL;

        if (pub->x.size > fs || pub->y.size > fs)
                return NULL;
        /* TPM coordinates may come without their leading zero bytes. */
        memcpy(point + 1 + fs - pub->x.size, pub->x.p, pub->x.size);
        memcpy(point + 1 + 2 * fs - pub->y.size, pub->y.p, pub->y.size);
        b = OSSL_PARAM_BLD_new();
        if (b && OSSL_PARAM_BLD_push_utf8_string(b, OSSL_PKEY_PARAM_GROUP_NAME, group, 0) &&
            OSSL_PARAM_BLD_push_octet_string(b, OSSL_PKEY_PARAM_PUB_KEY, point, 1 + 2 * fs))
                k = fromdata("EC", b);
        OSSL_PARAM_BLD_free(b);
        return k;
}

EVP_PKEY *att_pkey(const mb_attest_public *pub, const char *what) {
        EVP_PKEY *k = NULL;

        if (pub->type == MB_ATTEST_ALG_RSA)
                k = rsa_pkey(pub);
        else if (pub->curve == MB_ATTEST_ECC_NIST_P256 || pub->curve == MB_ATTEST_ECC_NIST_P384)
                k = ecc_pkey(pub);
        else {
                cli_error("%s: an ECC key on curve 0x%04x; mshim knows NIST P-256 and P-384", what, pub->curve);
                return NULL;
        }
        if (!k)
                cli_error("%s: not a valid %s public key", what, pub->type == MB_ATTEST_ALG_RSA ? "RSA" : "ECC");
        return k;
}

char *att_pem(EVP_PKEY *k, size_t *ret_n) {
        BIO *bio = BIO_new(BIO_s_mem());
        char *p = NULL, *s = NULL;
        long n;

        if (bio && PEM_write_bio_PUBKEY(bio, k) && (n = BIO_get_mem_data(bio, &p)) > 0 && (s = malloc((size_t) n + 1))) {
                memcpy(s, p, (size_t) n);
                s[n] = 0;
                *ret_n = (size_t) n;
        }
        BIO_free(bio);
        return s;
}
