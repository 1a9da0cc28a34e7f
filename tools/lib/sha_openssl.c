/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The host CLI's engine behind include/mb/sha.h: libcrypto's SHA code, which
 * picks the CPU's SHA extensions or vector units at run time. The portable
 * src/sha.c serves the loader and the sanitized tests (and is checked
 * against this library there). The low-level SHA*_Init API is used, not
 * EVP: it needs no allocation, so the context lives in mb_hash itself, and
 * it avoids EVP's per-digest set-up, which dominates for 32-128-byte PCR
 * extends. SM3 has no such API (only EVP, which allocates), so SM3 banks
 * are hashed by the portable engine (src/sha.c, src/sm3.c), which
 * test_sha checks against OpenSSL's EVP SM3.
 */
#define OPENSSL_API_COMPAT 0x10101000L  /* SHA*_Init: deprecated in 3.0, still supported */
#include <openssl/sha.h>
#include "mb/sha.h"

typedef union {
        SHA_CTX sha1;
        SHA256_CTX sha256;
        SHA512_CTX sha512;      /* SHA-384 uses the same context */
} ossl_ctx;

_Static_assert(sizeof(ossl_ctx) <= sizeof(((mb_hash *) 0)->u.backend), "mb_hash.u.backend too small for OpenSSL's context");

mb_err mb_hash_init(mb_hash *h, uint16_t alg) {
        ossl_ctx *c = (ossl_ctx *) h->u.backend;
        int ok;

        switch (alg) {
        case MB_ALG_SHA1: ok = SHA1_Init(&c->sha1); break;
        case MB_ALG_SHA256: ok = SHA256_Init(&c->sha256); break;
        case MB_ALG_SHA384: ok = SHA384_Init(&c->sha512); break;
        case MB_ALG_SHA512: ok = SHA512_Init(&c->sha512); break;
        case MB_ALG_SM3_256: return mb_hash_soft_init(h, alg);
        default: return MB_ERR_UNSUPPORTED;
        }
        if (!ok)
                return MB_ERR_UNSUPPORTED;
        h->alg = alg;
        return MB_OK;
}

void mb_hash_update(mb_hash *h, const void *data, size_t n) {
        ossl_ctx *c = (ossl_ctx *) h->u.backend;

        if (n == 0)
                return;
        switch (h->alg) {
        case MB_ALG_SHA1: SHA1_Update(&c->sha1, data, n); break;
        case MB_ALG_SHA256: SHA256_Update(&c->sha256, data, n); break;
        case MB_ALG_SHA384: SHA384_Update(&c->sha512, data, n); break;
        case MB_ALG_SHA512: SHA512_Update(&c->sha512, data, n); break;
        default: mb_hash_soft_update(h, data, n); break;
        }
}

void mb_hash_final(mb_hash *h, uint8_t *ret_digest) {
        ossl_ctx *c = (ossl_ctx *) h->u.backend;

        switch (h->alg) {
        case MB_ALG_SHA1: SHA1_Final(ret_digest, &c->sha1); break;
        case MB_ALG_SHA256: SHA256_Final(ret_digest, &c->sha256); break;
        case MB_ALG_SHA384: SHA384_Final(ret_digest, &c->sha512); break;
        case MB_ALG_SHA512: SHA512_Final(ret_digest, &c->sha512); break;
        default: mb_hash_soft_final(h, ret_digest); break;
        }
}
