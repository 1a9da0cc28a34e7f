/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim attest (the machine: tools/cmd/attest.c) and mshim verify (anyone:
 * tools/cmd/verify.c), docs/ATTESTATION.md. What both sides share: the
 * attestation key's handle and names, its public area as an OpenSSL key,
 * base64 (tools/lib/attest.c); verify reads the evidence with the CLI's
 * strict JSON reader (tools/lib/jsonread.h).
 */
#ifndef MB_ATTEST_TOOLS_H
#define MB_ATTEST_TOOLS_H

#include <openssl/evp.h>
#include "cli.h"
#include "jsonread.h"
#include "mb/attest.h"

/* The attestation key's persistent handle: in the TCG "TPM 2.0 Provisioning
 * Guidance" range for endorsement-hierarchy keys (0x81010000-0x8101FFFF),
 * clear of the EKs there (0x81010001 RSA, 0x81010002 ECC, and swtpm's
 * 0x81010016) and of mshim's owner keys (0x81000001 SRK, 0x81004D54 TOTP):
 * "MA", like the TOTP key's "MT". */
#define ATT_AK_HANDLE 0x81014D41u

/* The evidence document's schema and its size bound (an event log is
 * rarely above a MiB; the bound keeps a hostile file from filling memory). */
#define ATT_EVIDENCE_SCHEMA "mshim-evidence/1"
#define ATT_VERDICT_SCHEMA  "mshim-verdict/1"
#define ATT_EVIDENCE_MAX_MIB 64u

/* The nonce: 8 to 64 bytes (TPM2B_DATA holds a TPMT_HA; fewer than 8
 * bytes could be guessed ahead and a quote made for it kept). "--nonce"
 * as hex into ret (64 bytes); 0, or -1 (no message). */
#define ATT_NONCE_MIN 8u
#define ATT_NONCE_MAX 64u
int att_nonce_parse(const char *hex, uint8_t *ret, size_t *ret_size);

/* The OpenSSL public key of an RSA or ECC (P-256, P-384) public area, or
 * NULL with a message naming what. */
EVP_PKEY *att_pkey(const mb_attest_public *pub, const char *what);
/* Its SubjectPublicKeyInfo, PEM, as a malloc()ed string (size in *ret_n). */
char *att_pem(EVP_PKEY *k, size_t *ret_n);

/* Base64 (RFC 4648, padded) of n bytes: a malloc()ed string. */
char *att_b64(const uint8_t *p, size_t n);
/* Decode strict base64 (no whitespace): a malloc()ed buffer, or NULL. */
uint8_t *att_unb64(const char *s, size_t len, size_t *ret_n);

/* Hex of n bytes into a malloc()ed string. */
char *att_hex(const uint8_t *p, size_t n);

#endif
