/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TPM2_MakeCredential in software, for `mshim verify challenge`
 * (tools/cmd/verify_cred.c): the verifier encrypts a secret that only the
 * TPM holding a given endorsement key can recover, and only for a key whose
 * Name it was made for (TPM 2.0 Part 1 §24 "Credential Protection", Part 3
 * §12.6). OpenSSL 3's EVP interfaces, no TPM. docs/ATTESTATION.md
 * "Proving the AK" describes the protocol and the challenge file.
 */
#ifndef MB_MAKECRED_H
#define MB_MAKECRED_H

#include <openssl/evp.h>
#include "attest.h"

/* An endorsement key as MakeCredential needs it: the public key, the
 * nameAlg (the hash of every KDF and of the integrity HMAC) and the size
 * of its AES-CFB key (the symmetric algorithm the TPM uses to decrypt the
 * identity). */
typedef struct att_ek {
        EVP_PKEY *key;
        uint16_t name_alg;
        uint16_t sym_bits;
        bool ecc;
        /* ECC: the public point's x as the TPM holds it (unique.ecc.x),
         * which KDFe takes as PartyVInfo (Part 1 §11.4.10.3). */
        uint8_t x[MB_ATTEST_ECC_MAX];
        uint16_t x_size;
} att_ek;

/* The EK of a TPM2B_PUBLIC: a restricted decryption key fixed to its TPM
 * (an EK's attributes), RSA or ECC, AES-CFB, nameAlg SHA-256, -384 or
 * -512. 0, or EXIT_BAD_INPUT with a message naming what. */
int att_ek_from_public(const mb_attest_public *pub, att_ek *ret, const char *what);
/* The EK of a certificate's key: the TCG EK Credential Profile's low-range
 * template (RSA 2048 or ECC NIST P-256, nameAlg SHA-256, AES-128-CFB), the
 * only thing a certificate does not say. Takes a reference to key. */
int att_ek_from_key(EVP_PKEY *key, att_ek *ret, const char *what);
void att_ek_free(att_ek *ek);

/* The challenge file (include/mb/attest.h, MB_ATTEST_CRED_MAGIC) that lets
 * the TPM holding ek recover secret only by TPM2_ActivateCredential with
 * the object whose Name is name loaded: a malloc()ed buffer and its size,
 * or NULL (an OpenSSL failure, with a message). secret is at most the
 * nameAlg's digest size (Part 3 §12.6.1: TPM_RC_SIZE otherwise). */
uint8_t *att_make_credential(const att_ek *ek, const uint8_t *name, size_t name_size, const uint8_t *secret,
                             size_t secret_size, size_t *ret_size);

#endif
