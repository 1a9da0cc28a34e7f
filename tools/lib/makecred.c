/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TPM2_MakeCredential in software (tools/lib/makecred.h), as TPM 2.0 Part 1
 * §24 "Credential Protection" specifies it, with OpenSSL 3's EVP:
 *
 *   seed        random, the nameAlg's digest size; to the EK as RSA-OAEP
 *               (hash nameAlg, label "IDENTITY\0", §24.4 and Annex B.10.3)
 *               or, for an ECC EK, KDFe(Z, "IDENTITY", ephemeral x, EK x)
 *               with Z the x of an ephemeral key times the EK (Annex C.6.4)
 *   symKey      KDFa(nameAlg, seed, "STORAGE", Name, -, EK's AES bits) §24.4
 *   encIdentity AES-CFB(symKey, IV 0, TPM2B_DIGEST(secret))         §24.4
 *   HMACkey     KDFa(nameAlg, seed, "INTEGRITY", -, -, digest bits)  §24.5
 *   outerHMAC   HMAC(HMACkey, encIdentity || Name)                   §24.5
 *   blob        TPM2B_DIGEST(outerHMAC) || encIdentity               Part 2 §12.4.3
 *
 * The TPM's labels are TPM2B strings with their terminating zero byte
 * (the "\0" above); KDFa and KDFe add the zero after the label themselves.
 */
#include <stdlib.h>
#include <string.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include "makecred.h"
#include "mb/sha.h"

#define LABEL_IDENTITY  "IDENTITY"
#define LABEL_STORAGE   "STORAGE"
#define LABEL_INTEGRITY "INTEGRITY"

static const char *md_name(uint16_t alg) {
        switch (alg) {
        case MB_ALG_SHA256: return "SHA256";
        case MB_ALG_SHA384: return "SHA384";
        case MB_ALG_SHA512: return "SHA512";
        default: return NULL;
        }
}

static void put16(uint8_t *p, size_t v) {
        p[0] = (uint8_t) (v >> 8);
        p[1] = (uint8_t) v;
}

static void put32(uint8_t *p, uint32_t v) {
        put16(p, v >> 16);
        put16(p + 2, v & 0xffffu);
}

/* ---- the key derivation functions (Part 1 §11.4.10) -------------------- */

/* Counter-mode KDFs over fixed-size parts: the input of each round is
 * counter || parts[0] || parts[1] ..., HMAC-keyed (KDFa) or plain (KDFe). */
typedef struct kdf_part {
        const void *p;
        size_t n;
} kdf_part;

static int kdf(uint16_t hash, const uint8_t *hmac_key, size_t key_n, const kdf_part *parts, size_t n_parts,
               uint32_t bits, uint8_t *out) {
        const char *md = md_name(hash);
        size_t ds = mb_hash_size(hash), want = bits / 8, in_n = 4, done = 0;
        uint8_t *in, block[EVP_MAX_MD_SIZE];
        int r = 0;

        for (size_t i = 0; i < n_parts; i++)
                in_n += parts[i].n;
        in = malloc(in_n);
        if (!md || !in || bits % 8) {
                free(in);
                return -1;
        }
        for (size_t i = 0, off = 4; i < n_parts; off += parts[i].n, i++)
                if (parts[i].n)         /* an absent context is NULL, 0 */
                        memcpy(in + off, parts[i].p, parts[i].n);
        for (uint32_t counter = 1; done < want && !r; counter++) {
                size_t got = 0;
                unsigned int dn = 0;
                put32(in, counter);
                if (hmac_key)
                        r = EVP_Q_mac(NULL, "HMAC", NULL, md, NULL, hmac_key, key_n, in, in_n, block, sizeof(block), &got)
                                    ? 0 : -1;
                else {
                        r = EVP_Digest(in, in_n, block, &dn, EVP_get_digestbyname(md), NULL) ? 0 : -1;
                        got = dn;
                }
                if (!r && got != ds)
                        r = -1;
                if (!r) {
                        size_t n = want - done < ds ? want - done : ds;
                        memcpy(out + done, block, n);
                        done += n;
                }
        }
        OPENSSL_cleanse(block, sizeof(block));
        OPENSSL_clear_free(in, in_n);
        return r;
}

/* KDFa: HMAC(key, counter || label || 0x00 || contextU || contextV || bits). */
static int kdfa(uint16_t hash, const uint8_t *key, size_t key_n, const char *label, const uint8_t *u, size_t u_n,
                uint32_t bits, uint8_t *out) {
        uint8_t be_bits[4];
        kdf_part parts[] = { { label, strlen(label) + 1 }, { u, u_n }, { be_bits, 4 } };

        put32(be_bits, bits);
        return kdf(hash, key, key_n, parts, 3, bits, out);
}

/* KDFe: H(counter || Z || label || 0x00 || PartyUInfo || PartyVInfo). */
static int kdfe(uint16_t hash, const uint8_t *z, size_t z_n, const char *label, const uint8_t *u, size_t u_n,
                const uint8_t *v, size_t v_n, uint32_t bits, uint8_t *out) {
        kdf_part parts[] = { { z, z_n }, { label, strlen(label) + 1 }, { u, u_n }, { v, v_n } };

        return kdf(hash, NULL, 0, parts, 4, bits, out);
}

/* ---- the endorsement key ------------------------------------------------ */

/* x of an EC key's public point, padded to the field size. */
static int ec_x(EVP_PKEY *k, uint8_t *x, uint16_t *ret_n) {
        BIGNUM *bx = NULL;
        int fs = (EVP_PKEY_get_bits(k) + 7) / 8;
        int r = -1;

        if (fs > 0 && fs <= (int) MB_ATTEST_ECC_MAX && EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_EC_PUB_X, &bx) &&
            BN_bn2binpad(bx, x, fs) == fs) {
                *ret_n = (uint16_t) fs;
                r = 0;
        }
        BN_free(bx);
        return r;
}

#define EK_NEEDS (MB_ATTEST_OBJ_FIXED_TPM | MB_ATTEST_OBJ_FIXED_PARENT | MB_ATTEST_OBJ_RESTRICTED | MB_ATTEST_OBJ_DECRYPT)
#define ALG_AES 0x0006u
#define ALG_CFB 0x0043u

int att_ek_from_public(const mb_attest_public *pub, att_ek *ret, const char *what) {
        att_ek ek = { 0 };

        /* A storage key of the TPM: ActivateCredential decrypts the seed with
         * it (Part 3 §12.5.1: keyHandle must be a restricted decryption
         * key), and only fixedTPM says it cannot be somewhere else. */
        if ((pub->attrs & EK_NEEDS) != EK_NEEDS || (pub->attrs & MB_ATTEST_OBJ_SIGN)) {
                cli_error("%s: not an endorsement key: not a restricted decryption key fixed to its TPM "
                          "(objectAttributes 0x%08x)", what, pub->attrs);
                return EXIT_BAD_INPUT;
        }
        if (pub->sym != ALG_AES || pub->sym_mode != ALG_CFB ||
            (pub->sym_bits != 128 && pub->sym_bits != 192 && pub->sym_bits != 256) || !md_name(pub->name_alg)) {
                cli_error("%s: an EK with symmetric algorithm 0x%04x mode 0x%04x and nameAlg 0x%04x; mshim makes "
                          "credentials for AES-CFB with SHA-256, -384 or -512", what, pub->sym, pub->sym_mode,
                          pub->name_alg);
                return EXIT_BAD_INPUT;
        }
        ek.key = att_pkey(pub, what);
        if (!ek.key)
                return EXIT_BAD_INPUT;
        ek.name_alg = pub->name_alg;
        ek.sym_bits = pub->sym_bits;
        ek.ecc = pub->type == MB_ATTEST_ALG_ECC;
        if (ek.ecc) {
                memcpy(ek.x, pub->x.p, pub->x.size);
                ek.x_size = pub->x.size;
        }
        *ret = ek;
        return 0;
}

int att_ek_from_key(EVP_PKEY *key, att_ek *ret, const char *what) {
        att_ek ek = { .name_alg = MB_ALG_SHA256, .sym_bits = 128 };
        char group[32] = "";
        int bits = EVP_PKEY_get_bits(key);

        ek.ecc = EVP_PKEY_is_a(key, "EC");
        if (ek.ecc && (!EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group), NULL) ||
                       strcmp(group, "prime256v1") || ec_x(key, ek.x, &ek.x_size) < 0)) {
                cli_error("%s: an ECC key on curve '%s'; the EK template of a certificate alone is ECC NIST P-256 "
                          "(give the EK's TPM2B_PUBLIC with --ek-pub for another)", what, group);
                return EXIT_BAD_INPUT;
        }
        if (!ek.ecc && (!EVP_PKEY_is_a(key, "RSA") || bits != 2048)) {
                cli_error("%s: a %d-bit %s key; the EK template of a certificate alone is RSA 2048 or ECC NIST P-256 "
                          "(give the EK's TPM2B_PUBLIC with --ek-pub for another)", what, bits, EVP_PKEY_get0_type_name(key));
                return EXIT_BAD_INPUT;
        }
        if (!EVP_PKEY_up_ref(key))
                return EXIT_BAD_INPUT;
        ek.key = key;
        *ret = ek;
        return 0;
}

void att_ek_free(att_ek *ek) {
        EVP_PKEY_free(ek->key);
        ek->key = NULL;
}

/* ---- the seed (Part 1 §24.4, Annex B.10.3 and C.6.4) -------------------- */

/* RSA: the seed, OAEP-encrypted with the nameAlg and label "IDENTITY\0". */
static int seed_rsa(const att_ek *ek, uint8_t *seed, size_t seed_n, uint8_t *out, size_t *ret_n) {
        EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, ek->key, NULL);
        const EVP_MD *md = EVP_get_digestbyname(md_name(ek->name_alg));
        unsigned char *label = OPENSSL_memdup(LABEL_IDENTITY, sizeof(LABEL_IDENTITY));
        size_t n = MB_ATTEST_SECRET_MAX;
        int r = -1;

        if (ctx && md && label && RAND_bytes(seed, (int) seed_n) == 1 && EVP_PKEY_encrypt_init(ctx) > 0 &&
            EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) > 0 && EVP_PKEY_CTX_set_rsa_oaep_md(ctx, md) > 0 &&
            EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, md) > 0 &&
            EVP_PKEY_CTX_set0_rsa_oaep_label(ctx, label, sizeof(LABEL_IDENTITY)) > 0) {
                label = NULL;   /* the context owns it now */
                if (EVP_PKEY_encrypt(ctx, out, &n, seed, seed_n) > 0) {
                        *ret_n = n;
                        r = 0;
                }
        }
        OPENSSL_free(label);
        EVP_PKEY_CTX_free(ctx);
        return r;
}

/* ECC: an ephemeral key on the EK's curve; Z is the x of its product with
 * the EK, seed = KDFe(Z, "IDENTITY", ephemeral x, EK x); what the TPM gets
 * is the ephemeral public point, a TPMS_ECC_POINT. */
static int seed_ecc(const att_ek *ek, uint8_t *seed, size_t seed_n, uint8_t *out, size_t *ret_n) {
        char group[32];
        EVP_PKEY *eph = NULL;
        EVP_PKEY_CTX *ctx = NULL;
        BIGNUM *by = NULL;
        uint8_t z[MB_ATTEST_ECC_MAX], ex[MB_ATTEST_ECC_MAX];
        uint16_t exn = 0;
        size_t zn = sizeof(z);
        int r = -1;

        if (!EVP_PKEY_get_utf8_string_param(ek->key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group), NULL) ||
            !(eph = EVP_PKEY_Q_keygen(NULL, NULL, "EC", group)) || ec_x(eph, ex, &exn) < 0 ||
            !EVP_PKEY_get_bn_param(eph, OSSL_PKEY_PARAM_EC_PUB_Y, &by) || !(ctx = EVP_PKEY_CTX_new_from_pkey(NULL, eph, NULL)) ||
            EVP_PKEY_derive_init(ctx) <= 0 || EVP_PKEY_derive_set_peer(ctx, ek->key) <= 0 ||
            EVP_PKEY_derive(ctx, z, &zn) <= 0 ||
            kdfe(ek->name_alg, z, zn, LABEL_IDENTITY, ex, exn, ek->x, ek->x_size, (uint32_t) seed_n * 8, seed) < 0)
                goto out;
        /* §11.2.5.2 TPMS_ECC_POINT: x and y, each a TPM2B of the field size. */
        put16(out, exn);
        memcpy(out + 2, ex, exn);
        put16(out + 2 + exn, exn);
        if (BN_bn2binpad(by, out + 4 + exn, exn) != exn)
                goto out;
        *ret_n = 4u + 2u * exn;
        r = 0;
out:
        OPENSSL_cleanse(z, sizeof(z));
        BN_free(by);
        EVP_PKEY_CTX_free(ctx);
        EVP_PKEY_free(eph);
        return r;
}

/* ---- the credential (Part 1 §24.4, §24.5) -------------------------------- */

/* AES-CFB with a zero IV (§24.4: "the IV is zero"). */
static int aes_cfb(const uint8_t *key, uint16_t bits, const uint8_t *in, size_t n, uint8_t *out) {
        const EVP_CIPHER *c = bits == 128 ? EVP_aes_128_cfb128() : bits == 192 ? EVP_aes_192_cfb128() : EVP_aes_256_cfb128();
        static const uint8_t iv[16];
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
        int a = 0, b = 0, ok = ctx && EVP_EncryptInit_ex(ctx, c, NULL, key, iv) &&
                             EVP_EncryptUpdate(ctx, out, &a, in, (int) n) && EVP_EncryptFinal_ex(ctx, out + a, &b) &&
                             (size_t) (a + b) == n;

        EVP_CIPHER_CTX_free(ctx);
        return ok ? 0 : -1;
}

/* The file: magic, version, TPM2B_ID_OBJECT, TPM2B_ENCRYPTED_SECRET. */
static uint8_t *cred_file(const uint8_t *hmac, size_t ds, const uint8_t *enc, size_t enc_n, const uint8_t *sec,
                          size_t sec_n, size_t *ret_n) {
        size_t id_n = 2 + ds + enc_n, n = 8 + 2 + id_n + 2 + sec_n;
        uint8_t *f = malloc(n), *p = f;

        if (!f)
                return NULL;
        put32(p, MB_ATTEST_CRED_MAGIC);
        put32(p + 4, MB_ATTEST_CRED_VERSION);
        put16(p + 8, id_n);
        put16(p + 10, ds);
        memcpy(p + 12, hmac, ds);
        memcpy(p + 12 + ds, enc, enc_n);
        p += 10 + id_n;
        put16(p, sec_n);
        memcpy(p + 2, sec, sec_n);
        *ret_n = n;
        return f;
}

/* outerHMAC = HMAC(HMACkey, encIdentity || Name), §24.5. */
static int outer_hmac(uint16_t hash, const uint8_t *key, const uint8_t *enc, size_t enc_n, const uint8_t *name,
                      size_t name_n, uint8_t *out) {
        uint8_t in[2 + MB_ATTEST_DIGEST_MAX + MB_ATTEST_NAME_MAX];
        size_t ds = mb_hash_size(hash), n = 0;

        memcpy(in, enc, enc_n);
        memcpy(in + enc_n, name, name_n);
        return EVP_Q_mac(NULL, "HMAC", NULL, md_name(hash), NULL, key, ds, in, enc_n + name_n, out, EVP_MAX_MD_SIZE, &n) &&
               n == ds ? 0 : -1;
}

uint8_t *att_make_credential(const att_ek *ek, const uint8_t *name, size_t name_size, const uint8_t *secret,
                             size_t secret_size, size_t *ret_size) {
        size_t ds = mb_hash_size(ek->name_alg), sec_n = 0, plain_n = 2 + secret_size;
        uint8_t seed[MB_ATTEST_DIGEST_MAX], sym[32], hkey[MB_ATTEST_DIGEST_MAX], hmac[EVP_MAX_MD_SIZE];
        uint8_t plain[2 + MB_ATTEST_DIGEST_MAX], enc[2 + MB_ATTEST_DIGEST_MAX], sec[MB_ATTEST_SECRET_MAX];
        uint8_t *out = NULL;

        if (!ds || secret_size > ds || name_size > MB_ATTEST_NAME_MAX) {
                cli_error("a credential of %zu bytes for a Name of %zu bytes: too large", secret_size, name_size);
                return NULL;
        }
        /* encIdentity encrypts the secret as a TPM2B_DIGEST. */
        put16(plain, secret_size);
        memcpy(plain + 2, secret, secret_size);
        if ((ek->ecc ? seed_ecc(ek, seed, ds, sec, &sec_n) : seed_rsa(ek, seed, ds, sec, &sec_n)) < 0 ||
            kdfa(ek->name_alg, seed, ds, LABEL_STORAGE, name, name_size, ek->sym_bits, sym) < 0 ||
            aes_cfb(sym, ek->sym_bits, plain, plain_n, enc) < 0 ||
            kdfa(ek->name_alg, seed, ds, LABEL_INTEGRITY, NULL, 0, (uint32_t) ds * 8, hkey) < 0 ||
            outer_hmac(ek->name_alg, hkey, enc, plain_n, name, name_size, hmac) < 0)
                cli_error("making the credential failed (OpenSSL)");
        else if (!(out = cred_file(hmac, ds, enc, plain_n, sec, sec_n, ret_size)))
                cli_error("out of memory");
        OPENSSL_cleanse(seed, sizeof(seed));
        OPENSSL_cleanse(sym, sizeof(sym));
        OPENSSL_cleanse(hkey, sizeof(hkey));
        OPENSSL_cleanse(plain, sizeof(plain));
        return out;
}
