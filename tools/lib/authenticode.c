/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Authenticode signatures of PE images (tools/lib/sigs.h), read and checked
 * as firmware checks them: `mshim sigs` lists and verifies them, `mshim
 * predict` applies Secure Boot's rules with sig_verify_with. The
 * certificate table is read with the core's PE code (src/pe.c); the PKCS#7
 * is OpenSSL's.
 */
#include <string.h>
#include <openssl/asn1.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include "cli.h"
#include "sigs.h"
#include "mb/sha.h"

/* ---- reading a signature ------------------------------------------------- */

/* The contents of the SpcIndirectDataContent SEQUENCE (without its tag and
 * length): what the signature's messageDigest attribute covers (Authenticode
 * PE, "Authenticode-Specific Structures"; EDK2's AuthenticodeVerify hashes
 * the same bytes). OpenSSL keeps that content as an opaque SEQUENCE. */
static int spc_content(PKCS7 *p7, const unsigned char **ret, long *ret_len) {
        const unsigned char *q;
        ASN1_TYPE *t;
        long l;
        int tag, cls;

        if (!PKCS7_type_is_signed(p7) || !p7->d.sign->contents || !(t = p7->d.sign->contents->d.other) ||
            t->type != V_ASN1_SEQUENCE)
                return -1;
        q = t->value.sequence->data;
        if ((ASN1_get_object(&q, &l, &tag, &cls, t->value.sequence->length) & 0x80) || tag != V_ASN1_SEQUENCE)
                return -1;
        *ret = q;
        *ret_len = l;
        return 0;
}

/* SpcIndirectDataContent ::= SEQUENCE { SpcAttributeTypeAndOptionalValue,
 * DigestInfo { algorithm, OCTET STRING } }. */
int sig_spc_digest(PKCS7 *p7, int *ret_nid, uint8_t *ret, size_t *ret_len) {
        const unsigned char *q, *end;
        X509_ALGOR *alg;
        long l;
        int tag, cls, nid;

        if (spc_content(p7, &q, &l) < 0)
                return -1;
        end = q + l;
        if (ASN1_get_object(&q, &l, &tag, &cls, end - q) & 0x80)
                return -1;
        q += l; /* skip SpcAttributeTypeAndOptionalValue */
        if ((ASN1_get_object(&q, &l, &tag, &cls, end - q) & 0x80) || tag != V_ASN1_SEQUENCE)
                return -1;
        alg = d2i_X509_ALGOR(NULL, &q, end - q);
        if (!alg)
                return -1;
        nid = OBJ_obj2nid(alg->algorithm);
        X509_ALGOR_free(alg);
        if ((ASN1_get_object(&q, &l, &tag, &cls, end - q) & 0x80) || tag != V_ASN1_OCTET_STRING ||
            l > MB_HASH_MAX)
                return -1;
        memcpy(ret, q, (size_t) l);
        *ret_len = (size_t) l;
        *ret_nid = nid;
        return 0;
}

uint16_t sig_alg_of_nid(int nid) {
        switch (nid) {
        case NID_sha1: return MB_ALG_SHA1;
        case NID_sha256: return MB_ALG_SHA256;
        case NID_sha384: return MB_ALG_SHA384;
        case NID_sha512: return MB_ALG_SHA512;
        }
        return 0;
}

void sig_decode(const mb_pe *pe, const mb_pe_cert *c, size_t index, sig_entry *ret) {
        uint8_t want[MB_HASH_MAX], got[MB_HASH_MAX];
        const unsigned char *p = c->data;
        sig_entry s = { .index = index, .wc = *c, .match = -1 };
        size_t dlen = 0;
        uint16_t alg;

        if (c->type == MB_PE_WIN_CERT_TYPE_PKCS_SIGNED && c->size <= INT32_MAX)
                s.p7 = d2i_PKCS7(NULL, &p, (long) c->size);
        if (s.p7 && sig_spc_digest(s.p7, &s.nid, want, &dlen) < 0) {
                PKCS7_free(s.p7);
                s.p7 = NULL;
        }
        ERR_clear_error();
        alg = sig_alg_of_nid(s.nid);
        if (s.p7 && alg && mb_hash_size(alg) == dlen && mb_pe_authenticode_parsed(pe, alg, got) == MB_OK)
                s.match = memcmp(want, got, dlen) == 0;
        *ret = s;
}

/* ---- checking a signature ------------------------------------------------ */

X509_STORE *sig_firmware_store(X509 *cert) {
        X509_STORE *store = X509_STORE_new();

        if (!store || !X509_STORE_add_cert(store, cert)) {
                X509_STORE_free(store);
                return NULL;
        }
        X509_STORE_set_flags(store, X509_V_FLAG_PARTIAL_CHAIN | X509_V_FLAG_NO_CHECK_TIME);
        X509_STORE_set_purpose(store, X509_PURPOSE_ANY);
        return store;
}

/* What firmware checks (EDK2 AuthenticodeVerify/Pkcs7Verify): the PKCS#7
 * signature over the SpcIndirectDataContent, its signer chaining to the
 * trusted certificate, that certificate trusted even when it is not a root
 * (X509_V_FLAG_PARTIAL_CHAIN), no validity dates (firmware has no trusted
 * clock: X509_V_FLAG_NO_CHECK_TIME), no key-usage purpose (X509_PURPOSE_ANY);
 * and the digest named inside equal to the image's Authenticode hash. */
const char *sig_verify_why(const sig_entry *s, X509_STORE *store, char *buf, size_t cap) {
        const unsigned char *content;
        const char *data = NULL;
        unsigned long err;
        BIO *bio;
        long len;
        int ok, flags = 0;

        if (!s->p7)
                return "not an Authenticode signature";
        if (s->match != 1)
                return s->match == 0 ? "its digest does not match the image (changed after signing)"
                                     : "its digest algorithm is not supported";
        if (spc_content(s->p7, &content, &len) < 0 || !(bio = BIO_new_mem_buf(content, (int) len)))
                return "unreadable signed content";
        ok = PKCS7_verify(s->p7, NULL, store, bio, NULL, PKCS7_BINARY) == 1;
        BIO_free(bio);
        if (ok)
                return NULL;
        /* PKCS7_verify's own error is the last one; its text names the
         * X.509 reason ("Verify error:unable to get local issuer ..."). */
        err = ERR_peek_last_error_all(NULL, NULL, NULL, &data, &flags);
        snprintf(buf, cap, "%s%s%s%s", ERR_reason_error_string(err) ? ERR_reason_error_string(err) : "PKCS#7 check failed",
                 data && (flags & ERR_TXT_STRING) ? " (" : "", data && (flags & ERR_TXT_STRING) ? data : "",
                 data && (flags & ERR_TXT_STRING) ? ")" : "");
        ERR_clear_error();
        return buf;
}

/* The firmware's check of one signature with one trusted certificate, for
 * mshim predict's Secure Boot rules (mb_predict_input.sb_verify). */
int sig_verify_with(void *ctx, const void *image, size_t size, const uint8_t *pkcs7, size_t pkcs7_len,
                    const uint8_t *cert_der, size_t cert_len) {
        const unsigned char *q = cert_der;
        X509 *cert = cert_len <= INT32_MAX ? d2i_X509(NULL, &q, (long) cert_len) : NULL;
        X509_STORE *store = NULL;
        mb_pe_cert c = { .type = MB_PE_WIN_CERT_TYPE_PKCS_SIGNED, .data = pkcs7, .size = pkcs7_len };
        sig_entry s = { 0 };
        char why[256];
        mb_pe pe;
        int ok = 0;

        (void) ctx;
        if (cert && (store = sig_firmware_store(cert)) && mb_pe_parse(image, size, &pe) == MB_OK) {
                sig_decode(&pe, &c, 0, &s);
                ok = sig_verify_why(&s, store, why, sizeof(why)) == NULL;
        }
        PKCS7_free(s.p7);
        X509_STORE_free(store);
        X509_free(cert);
        ERR_clear_error();
        return ok;
}
