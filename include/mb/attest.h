/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Remote attestation's TPM structures as bytes (docs/ATTESTATION.md): the
 * signed TPMS_ATTEST of a TPM2_Quote, the TPMT_SIGNATURE over it, and the
 * attestation key's TPM2B_PUBLIC, parsed from (buffer, length) with no
 * length trusted. A verifier reads them from evidence another machine
 * sent, so every byte is the attacker's until the signature is checked,
 * and the structure must be read before that (the signature's algorithm,
 * the key's parameters). Nothing here verifies a signature or talks to a
 * TPM; tools/cmd/verify.c does the cryptography with OpenSSL.
 *
 * References: TPM 2.0 Library Part 2 (Structures), rev. 1.59: §10.12
 * TPMS_ATTEST and its members, §11.3 TPMT_SIGNATURE, §12.2 TPMT_PUBLIC.
 *
 * Parsers: MB_OK when the bytes are exactly one well-formed structure
 * (no trailing bytes); else MB_ERR_TRUNCATED (the input ends inside it),
 * MB_ERR_INVALID (a size field above its type's maximum or past the end, a
 * selection wider than the TPM's 24 PCRs, trailing bytes) or
 * MB_ERR_UNSUPPORTED (well-formed, but of an algorithm or key type mshim
 * does not verify). ret_ outputs are written only on MB_OK; their
 * pointers are slices of the input.
 */
#ifndef MB_ATTEST_H
#define MB_ATTEST_H

#include "mb/base.h"

/* Part 2 §6.2 TPM_GENERATED_VALUE: the magic the TPM puts at the start of
 * every structure it signs, so a restricted key never signs a digest that
 * begins with it unless the TPM made it (Part 1 §19.2.4 "restricted"). */
#define MB_ATTEST_MAGIC        0xFF544347u
/* Part 2 §6.9 TPM_ST: the attestation structure types. */
#define MB_ATTEST_ST_QUOTE     0x8018u

/* TPM_ALG_ID (Part 2 §6.3). */
#define MB_ATTEST_ALG_RSA      0x0001u
#define MB_ATTEST_ALG_NULL     0x0010u
#define MB_ATTEST_ALG_RSASSA   0x0014u
#define MB_ATTEST_ALG_RSAPSS   0x0016u
#define MB_ATTEST_ALG_ECDSA    0x0018u
#define MB_ATTEST_ALG_ECC      0x0023u
/* TPM_ECC_CURVE (Part 2 §6.4). */
#define MB_ATTEST_ECC_NIST_P256 0x0003u
#define MB_ATTEST_ECC_NIST_P384 0x0004u

/* TPMA_OBJECT (Part 2 §8.3). */
#define MB_ATTEST_OBJ_FIXED_TPM        0x00000002u
#define MB_ATTEST_OBJ_FIXED_PARENT     0x00000010u
#define MB_ATTEST_OBJ_SENSITIVE_ORIGIN 0x00000020u
#define MB_ATTEST_OBJ_USER_WITH_AUTH   0x00000040u
#define MB_ATTEST_OBJ_ADMIN_WITH_POLICY 0x00000080u
#define MB_ATTEST_OBJ_RESTRICTED       0x00010000u
#define MB_ATTEST_OBJ_DECRYPT          0x00020000u
#define MB_ATTEST_OBJ_SIGN             0x00040000u

/* Part 2 §10.3.1: the largest digest (SHA-512); §10.5.1 a Name. */
#define MB_ATTEST_DIGEST_MAX   64u
#define MB_ATTEST_NAME_MAX     (2u + MB_ATTEST_DIGEST_MAX)
/* §10.4.3 TPM2B_DATA holds a TPMT_HA. */
#define MB_ATTEST_DATA_MAX     (2u + MB_ATTEST_DIGEST_MAX)
/* Part 2 §10.6.2: PCR_SELECT_MAX is 3 bytes on a PC Client TPM (24 PCRs);
 * §10.9.7 TPML_PCR_SELECTION holds at most HASH_COUNT selections. */
#define MB_ATTEST_PCR_SELECT_MAX 3u
#define MB_ATTEST_MAX_BANKS    16u
/* §11.2.4 TPM2B_PUBLIC_KEY_RSA: MAX_RSA_KEY_BYTES, 512 (RSA 4096). */
#define MB_ATTEST_RSA_MAX      512u
/* §11.2.5.1 TPM2B_ECC_PARAMETER: MAX_ECC_KEY_BYTES (P-521: 66). */
#define MB_ATTEST_ECC_MAX      66u

/* A size-prefixed byte string, as a slice of the input. */
typedef struct mb_attest_bytes {
        const uint8_t *p;
        uint16_t size;
} mb_attest_bytes;

/* One bank of a TPML_PCR_SELECTION: bit i of mask is PCR i. */
typedef struct mb_attest_pcr_sel {
        uint16_t alg;
        uint32_t mask;
} mb_attest_pcr_sel;

typedef struct mb_attest_quote {
        uint32_t magic;
        uint16_t type;
        mb_attest_bytes signer;         /* qualifiedSigner (TPM2B_NAME) */
        mb_attest_bytes extra;          /* extraData (TPM2B_DATA): the verifier's nonce */
        uint64_t clock;                 /* clockInfo (TPMS_CLOCK_INFO, §10.11.1) */
        uint32_t reset_count, restart_count;
        uint8_t safe;
        uint64_t firmware;              /* firmwareVersion */
        /* attested.quote (TPMS_QUOTE_INFO, §10.12.1); only for
         * type MB_ATTEST_ST_QUOTE (else n_sel 0, digest empty). */
        uint32_t n_sel;
        mb_attest_pcr_sel sel[MB_ATTEST_MAX_BANKS];
        mb_attest_bytes digest;         /* pcrDigest */
} mb_attest_quote;

/* A TPMS_ATTEST. The header (magic, type, signer, extraData, clock,
 * firmware) is read whatever the type; the quote part when type is
 * MB_ATTEST_ST_QUOTE, then nothing may follow. Another type is returned
 * MB_OK with its attested part unread (the verifier refuses it by type,
 * after its signature). Magic and type are not judged here. */
mb_err mb_attest_quote_parse(const uint8_t *buf, size_t size, mb_attest_quote *ret);

typedef struct mb_attest_sig {
        uint16_t alg;                   /* RSASSA, RSAPSS or ECDSA */
        uint16_t hash;                  /* the scheme's hash (TPM_ALG_ID) */
        mb_attest_bytes rsa;            /* RSA: the signature */
        mb_attest_bytes r, s;           /* ECDSA: the two integers, big-endian */
} mb_attest_sig;

/* A TPMT_SIGNATURE. Another algorithm (HMAC, ECSCHNORR, SM2...) is
 * MB_ERR_UNSUPPORTED. */
mb_err mb_attest_sig_parse(const uint8_t *buf, size_t size, mb_attest_sig *ret);

typedef struct mb_attest_public {
        uint16_t type;                  /* RSA or ECC */
        uint16_t name_alg;
        uint32_t attrs;                 /* objectAttributes */
        mb_attest_bytes policy;         /* authPolicy */
        uint16_t sym;                   /* symmetric.algorithm (NULL for a signing key) */
        uint16_t sym_bits, sym_mode;    /* its keyBits and mode (0 when NULL) */
        uint16_t scheme, scheme_hash;   /* scheme and its hash (0 when scheme is NULL) */
        /* RSA */
        uint16_t rsa_bits;
        uint32_t rsa_exponent;          /* 0 means 65537 (§12.2.3.5) */
        mb_attest_bytes rsa_n;
        /* ECC */
        uint16_t curve;
        uint16_t kdf;
        mb_attest_bytes x, y;
        /* The whole TPMT_PUBLIC, for its Name. */
        mb_attest_bytes area;
} mb_attest_public;

/* A TPM2B_PUBLIC (the size, then a TPMT_PUBLIC of exactly that size) of an
 * RSA or ECC key; KEYEDHASH and SYMCIPHER objects are MB_ERR_UNSUPPORTED. */
mb_err mb_attest_public_parse(const uint8_t *buf, size_t size, mb_attest_public *ret);

/* ---- credentials (TPM2_MakeCredential / TPM2_ActivateCredential) ----- */

/* The challenge file: tpm2-tools' credential file, so that
 * tpm2_makecredential's output and tpm2_activatecredential's input are the
 * same bytes as mshim's (docs/ATTESTATION.md "The challenge"): a UINT32
 * magic, a UINT32 version (1), a TPM2B_ID_OBJECT (Part 2 §12.4.3: the
 * integrity HMAC as a TPM2B_DIGEST, then the encrypted identity) and a
 * TPM2B_ENCRYPTED_SECRET (§11.4.33: the seed, RSA-OAEP encrypted or an
 * ephemeral TPMS_ECC_POINT), all big-endian. */
#define MB_ATTEST_CRED_MAGIC   0xBADCC0DEu
#define MB_ATTEST_CRED_VERSION 1u
/* §12.4.3: TPM2B_ID_OBJECT holds a TPMS_ID_OBJECT: a TPM2B_DIGEST and an
 * encrypted TPM2B_DIGEST. §11.4.33: TPM2B_ENCRYPTED_SECRET holds at most
 * a TPMU_ENCRYPTED_SECRET, the largest being an RSA 4096 ciphertext. */
#define MB_ATTEST_ID_OBJECT_MAX (2u * (2u + MB_ATTEST_DIGEST_MAX))
#define MB_ATTEST_SECRET_MAX   MB_ATTEST_RSA_MAX

typedef struct mb_attest_cred {
        mb_attest_bytes id_object;      /* the TPM2B_ID_OBJECT's contents */
        mb_attest_bytes secret;         /* the TPM2B_ENCRYPTED_SECRET's contents */
        /* When secret is exactly one TPMS_ECC_POINT (an ECC EK's seed:
         * Part 1 §24.4, ECDH with an ephemeral key), its coordinates;
         * else both empty (an RSA EK's OAEP ciphertext). */
        mb_attest_bytes ecc_x, ecc_y;
} mb_attest_cred;

/* A challenge file. The magic and version must be these; the ID object
 * must be a TPM2B_DIGEST followed by at least one byte. */
mb_err mb_attest_cred_parse(const uint8_t *buf, size_t size, mb_attest_cred *ret);

#endif
