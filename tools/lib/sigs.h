/* SPDX-License-Identifier: BSD-2-Clause */
/* Authenticode signatures (tools/lib/authenticode.c), certificates and keys
 * (tools/lib/cred.c), shared by `mshim sign`, `sigs`, `vars`, `predict` and
 * the policy key. */
#ifndef MB_SIGS_H
#define MB_SIGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>
#include "mb/pe.h"

/* ---- tools/lib/authenticode.c ---- */

/* The digest an Authenticode signature vouches for (the messageDigest of
 * its SpcIndirectDataContent) and its OpenSSL NID: 0, or -1 when p7 is
 * not an Authenticode SignedData. ret holds MB_HASH_MAX bytes. */
int sig_spc_digest(PKCS7 *p7, int *ret_nid, uint8_t *ret, size_t *ret_len);
/* The TPM_ALG_ID of a digest NID mshim can compute, else 0. */
uint16_t sig_alg_of_nid(int nid);

/* One WIN_CERTIFICATE of an image, decoded. */
typedef struct sig_entry {
        size_t index;
        mb_pe_cert wc;
        PKCS7 *p7;              /* NULL when not an Authenticode SignedData (the caller frees it) */
        int nid;                /* the SpcIndirectDataContent digest algorithm */
        int match;              /* its digest is the image's: 1 yes, 0 no, -1 cannot tell */
} sig_entry;
/* Decode certificate c, the index'th of image pe. */
void sig_decode(const mb_pe *pe, const mb_pe_cert *c, size_t index, sig_entry *ret);

/* A store trusting cert as firmware trusts a db entry (X509_V_FLAG_PARTIAL_CHAIN,
 * no dates, any purpose), or NULL (out of memory). */
X509_STORE *sig_firmware_store(X509 *cert);
/* Why s does not verify against store as firmware checks it, or NULL when
 * it does (buf, cap: room for OpenSSL's reason). */
const char *sig_verify_why(const sig_entry *s, X509_STORE *store, char *buf, size_t cap);

/* Does the PKCS#7 SignedData pkcs7 (a WIN_CERTIFICATE of the PE image)
 * verify with cert_der as its one trusted certificate, as firmware checks
 * it (EDK2 Pkcs7Verify: chain to that certificate, no dates, any purpose,
 * and the signed digest is the image's Authenticode digest)? 1 yes, 0 no.
 * ctx is unused (mb_predict_input.sb_verify's shape). */
int sig_verify_with(void *ctx, const void *image, size_t size, const uint8_t *pkcs7, size_t pkcs7_len,
                    const uint8_t *cert_der, size_t cert_len);

/* ---- tools/lib/cred.c ---- */

/* A PEM or DER X.509 certificate; NULL after printing why. */
X509 *cred_load_cert(const char *path);
/* A private key, PEM or DER, PKCS#8 or traditional, encrypted or not.
 * The passphrase of an encrypted one is the first line of pass_file when
 * given, else asked on the terminal (/dev/tty) without echo. NULL after
 * printing why. */
EVP_PKEY *cred_load_key(const char *path, const char *pass_file);

#endif
