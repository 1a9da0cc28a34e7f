/* SPDX-License-Identifier: BSD-2-Clause */
/* The policy key (tools/lib/policykey.c) and writing sealing files. */
#ifndef MB_POLICYKEY_H
#define MB_POLICYKEY_H

#include <sys/types.h>
#include <openssl/types.h>
#include "tpmseal.h"

/* cli_write_file, refusing an existing path. 0, or -1 with a message. */
int seal_write_new(const char *path, mode_t mode, const void *p, size_t n);

/* A new ECDSA P-256 pair: key_path (PEM, 0600), pub_path (PEM). Refuses
 * when either exists. */
int pk_generate(const char *key_path, const char *pub_path);
/* A PEM public key as the TPM2B_PUBLIC mshim loads it with. */
int pk_load_public(const char *path, TPM2B_PUBLIC *ret);
/* A policy key's private part, read at its first signature and kept, so a
 * command that signs many approvals (revoke, prune) asks for an encrypted
 * key's passphrase once: from pass_file (--pass-file, its first line) or
 * on /dev/tty (tools/lib/cred.c). */
typedef struct pk_signer {
        const char *key_path;
        const char *pass_file;  /* NULL: asked on the terminal */
        EVP_PKEY *key;          /* NULL until the first signature */
} pk_signer;
/* ECDSA over digest (32 bytes, not hashed again) with s's key, which must
 * be expect's (NULL: any): a DER ECDSA-Sig-Value of at most max bytes. */
int pk_sign(pk_signer *s, const TPM2B_PUBLIC *expect, const uint8_t digest[32], uint8_t *ret_sig, size_t max,
            size_t *ret_size);
/* The public area of s's key (read now if it was not), as
 * pk_load_public gives it. */
int pk_signer_public(pk_signer *s, TPM2B_PUBLIC *ret);
void pk_signer_done(pk_signer *s);
/* Whether sig (DER ECDSA-Sig-Value) is the key at pub_path's (PEM) over
 * digest (32 bytes, not hashed again): 0 yes, 1 no, -1 (a message) the
 * key cannot be read. */
int pk_verify(const char *pub_path, const uint8_t digest[32], const uint8_t *sig, size_t sig_size);

#endif
