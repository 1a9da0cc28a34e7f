/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TPM 2.0 commands as bytes: the builders write one command into a caller's
 * buffer, the parsers read the TPM's response from (buffer, length). The
 * loader sends these bytes through EFI_TCG2_PROTOCOL.SubmitCommand, the
 * tests through a tpm2-tss TCTI to swtpm (tests/tpm/tpm2_swtpm.c); nothing
 * here talks to a TPM. Only what the TOTP code and unsealing need:
 * one unsalted, unbound SHA-256 POLICY session and the policy commands run
 * in it, TPM2_HMAC with that session, the policy key's signature check, and
 * ReadPublic/FlushContext/PolicyGetDigest. docs/DESIGN.md, "TPM commands".
 *
 * References: TPM 2.0 Library Part 1 (Architecture) §18 (command and
 * response structure), Part 2 (Structures), Part 3 (Commands). Section
 * numbers are rev. 1.59's; they move between revisions, so each comment
 * also names the structure or command it follows.
 *
 * Builders: write at most `cap` bytes to `buf` and the command's size to
 * *ret_size; MB_ERR_NOSPACE when it does not fit (then buf holds a partial
 * command and *ret_size is untouched), MB_ERR_INVALID for an argument the
 * TPM would refuse anyway (a PolicyOR of 1 digest, an over-long buffer).
 *
 * Parsers: MB_OK when `rsp` is a well-formed response: *ret_rc is the TPM's
 * response code (0: success), and only when it is 0 are the other ret_
 * outputs written. Any other mb_err means the bytes are not a well-formed
 * response to that command (truncated, a size field that disagrees with
 * the length received, a wrong tag, trailing bytes, a length field past the
 * end or above its type's maximum): *ret_rc and the outputs are untouched.
 * A parser never trusts a length it reads.
 */
#ifndef MB_TPM2_H
#define MB_TPM2_H

#include "mb/base.h"

/* Part 2 §6.9 TPM_ST: a command's and a response's tag. */
#define MB_TPM2_ST_RSP_COMMAND  0x00C4u  /* TPM 1.2 tag, only in a TPM_RC_BAD_TAG answer */
#define MB_TPM2_ST_NO_SESSIONS  0x8001u
#define MB_TPM2_ST_SESSIONS     0x8002u
#define MB_TPM2_ST_VERIFIED     0x8022u

/* Part 2 §7.4 TPM_RH and §7.5 TPM_HT: handles mshim names. */
#define MB_TPM2_RH_OWNER        0x40000001u
#define MB_TPM2_RS_PW           0x40000009u  /* the password "session" */
#define MB_TPM2_RH_NULL         0x40000007u
#define MB_TPM2_HT_HMAC_SESSION   0x02u
#define MB_TPM2_HT_POLICY_SESSION 0x03u
#define MB_TPM2_HT_TRANSIENT      0x80u

/* Part 2 §8.4 TPMA_SESSION: continueSession keeps the session after a
 * successful command (a failed one never closes it). */
#define MB_TPM2_SA_CONTINUE_SESSION 0x01u

/* Part 1 §18: the command/response header (tag, size, code). */
#define MB_TPM2_HEADER_SIZE 10u
/* The largest command any builder here writes (PolicyOR of 8 SHA-512
 * digests, or HMAC of a full TPM2B_MAX_BUFFER) fits in this; the TPM's
 * own limit (TPM_PT_MAX_COMMAND_SIZE) is at least this in practice. */
#define MB_TPM2_MAX_COMMAND 4096u
/* Part 2 §10.4.8: TPM2B_MAX_BUFFER holds MAX_DIGEST_BUFFER bytes, 1024 in
 * every reference profile. */
#define MB_TPM2_MAX_BUFFER 1024u
/* Part 2 §10.3.1 TPMU_HA: the largest digest (SHA-512). */
#define MB_TPM2_DIGEST_MAX 64u
/* Part 2 §10.5.1 TPMU_NAME: a TPMT_HA (alg + digest). */
#define MB_TPM2_NAME_MAX (2u + MB_TPM2_DIGEST_MAX)
/* Part 2 §11.2.5.1: a P-256 coordinate. */
#define MB_TPM2_P256_SIZE 32u
/* The marshalled TPMT_PUBLIC of mb_tpm2_ecc_public (88 bytes) and its Name
 * (SHA-256: 2 + 32). */
#define MB_TPM2_ECC_PUBLIC_SIZE 88u
#define MB_TPM2_ECC_NAME_SIZE   34u

/* A TPM2B_DIGEST or TPM2B_NONCE copied out of a response. */
typedef struct mb_tpm2_digest {
        uint16_t size;
        uint8_t b[MB_TPM2_DIGEST_MAX];
} mb_tpm2_digest;

/* A TPM2B_NAME. */
typedef struct mb_tpm2_name {
        uint16_t size;
        uint8_t b[MB_TPM2_NAME_MAX];
} mb_tpm2_name;

/* TPMT_TK_VERIFIED (Part 2 §10.7.4): the proof VerifySignature gives that
 * PolicyAuthorize takes. A NULL ticket (hierarchy TPM_RH_NULL, empty
 * digest) is parsed, and PolicyAuthorize refuses it (TPM_RC_VALUE). */
typedef struct mb_tpm2_ticket {
        uint32_t hierarchy;
        mb_tpm2_digest digest;
} mb_tpm2_ticket;

/* ---- response codes (Part 2 §6.6 TPM_RC) -------------------------------- */

/* The code without its handle, session or parameter number (format-one
 * codes) so it compares with the constants below; a format-zero code is
 * returned unchanged. */
uint32_t mb_tpm2_rc_base(uint32_t rc);
/* The base code's name without TPM_RC_ ("POLICY_FAIL", "PCR_CHANGED",
 * "LOCKOUT"...), or NULL for a code not listed here. */
const char *mb_tpm2_rc_name(uint32_t rc);
/* A short English description of the base code ("the policy session does
 * not satisfy the object's policy"), or NULL. */
const char *mb_tpm2_rc_text(uint32_t rc);
/* What a format-one code points at: 'H' handle, 'S' session, 'P'
 * parameter, with its 1-based number; '\0' and 0 when it names none. */
void mb_tpm2_rc_where(uint32_t rc, char *ret_kind, unsigned *ret_index);

#define MB_TPM2_RC_SUCCESS          0x000u
#define MB_TPM2_RC_BAD_TAG          0x01Eu
#define MB_TPM2_RC_INITIALIZE       0x100u
#define MB_TPM2_RC_FAILURE          0x101u
#define MB_TPM2_RC_POLICY           0x126u
#define MB_TPM2_RC_PCR              0x127u
#define MB_TPM2_RC_PCR_CHANGED      0x128u
#define MB_TPM2_RC_VALUE            0x084u
#define MB_TPM2_RC_HANDLE           0x08Bu
#define MB_TPM2_RC_AUTH_FAIL        0x08Eu
#define MB_TPM2_RC_SIGNATURE        0x09Bu
#define MB_TPM2_RC_POLICY_FAIL      0x09Du
#define MB_TPM2_RC_BAD_AUTH         0x0A2u
#define MB_TPM2_RC_LOCKOUT          0x921u
#define MB_TPM2_RC_RETRY            0x922u

/* ---- commands --------------------------------------------------------- */

/* TPM2_StartAuthSession (Part 3 §11.1): tpmKey and bind TPM_RH_NULL (no
 * salt, no bind), sessionType TPM_SE_POLICY, symmetric TPM_ALG_NULL,
 * authHash SHA-256. nonce_caller: 16 to 32 bytes (§11.1: at least 16,
 * at most the authHash's digest size). */
mb_err mb_tpm2_build_start_auth_session(uint8_t *buf, size_t cap, const uint8_t *nonce_caller, size_t nonce_size,
                                        size_t *ret_size);
/* Response: the session's handle (checked to be a policy session's) and
 * nonceTPM. */
mb_err mb_tpm2_parse_start_auth_session(const uint8_t *rsp, size_t n, uint32_t *ret_rc, uint32_t *ret_session,
                                        mb_tpm2_digest *ret_nonce_tpm);

/* TPM2_PolicyPCR (Part 3 §23.7): one bank (TPMI_ALG_HASH), PCRs 0-23 as a
 * bit mask (bit i: PCR i), and pcrDigest: empty (the TPM takes the current
 * values; a later use of the session fails with POLICY_FAIL if they are
 * not the policy's) or the expected digest (the TPM refuses at once with
 * TPM_RC_VALUE when the PCRs differ). */
mb_err mb_tpm2_build_policy_pcr(uint8_t *buf, size_t cap, uint32_t session, uint16_t bank, uint32_t pcr_mask,
                                const uint8_t *pcr_digest, size_t digest_size, size_t *ret_size);

/* TPM2_PolicyOR (Part 3 §23.6): 2 to 8 digests of digest_size bytes each,
 * contiguous in `digests`. */
mb_err mb_tpm2_build_policy_or(uint8_t *buf, size_t cap, uint32_t session, const uint8_t *digests, size_t n,
                               size_t digest_size, size_t *ret_size);

/* TPM2_PolicyNV (Part 3 §23.9) with the NV index as its own authHandle and
 * a password authorization (auth: the index's authValue, may be empty):
 * operandB compared at `offset` with the index's data by `operation`
 * (TPM_EO). */
mb_err mb_tpm2_build_policy_nv(uint8_t *buf, size_t cap, uint32_t session, uint32_t nv_index, const uint8_t *auth,
                               size_t auth_size, const uint8_t *operand_b, size_t operand_size, uint16_t offset,
                               uint16_t operation, size_t *ret_size);
/* The response of PolicyNV (one session in the response's auth area). */
mb_err mb_tpm2_parse_policy_nv(const uint8_t *rsp, size_t n, uint32_t *ret_rc);

/* TPM2_LoadExternal (Part 3 §12.3), public part only: `pub` is a
 * marshalled TPMT_PUBLIC (mb_tpm2_ecc_public). hierarchy: TPM_RH_OWNER for
 * a key whose VerifySignature ticket PolicyAuthorize must accept (a key
 * in TPM_RH_NULL gets a NULL ticket, Part 3 §20.1), TPM_RH_NULL otherwise. */
mb_err mb_tpm2_build_load_external(uint8_t *buf, size_t cap, const uint8_t *pub, size_t pub_size,
                                   uint32_t hierarchy, size_t *ret_size);
/* Response: the transient object's handle and its Name. */
mb_err mb_tpm2_parse_load_external(const uint8_t *rsp, size_t n, uint32_t *ret_rc, uint32_t *ret_handle,
                                   mb_tpm2_name *ret_name);

/* TPM2_VerifySignature (Part 3 §20.1): an ECDSA-SHA256 signature (r, s,
 * each 1 to 32 bytes, big-endian) over digest (32 bytes). */
mb_err mb_tpm2_build_verify_signature(uint8_t *buf, size_t cap, uint32_t key, const uint8_t *digest,
                                      size_t digest_size, const uint8_t *r, size_t r_size, const uint8_t *s,
                                      size_t s_size, size_t *ret_size);
/* Response: the TPMT_TK_VERIFIED ticket (its tag checked). */
mb_err mb_tpm2_parse_verify_signature(const uint8_t *rsp, size_t n, uint32_t *ret_rc, mb_tpm2_ticket *ret_ticket);

/* TPM2_PolicyAuthorize (Part 3 §23.16): approvedPolicy, policyRef (may be
 * empty), the signing key's Name and VerifySignature's ticket. */
mb_err mb_tpm2_build_policy_authorize(uint8_t *buf, size_t cap, uint32_t session, const uint8_t *approved,
                                      size_t approved_size, const uint8_t *ref, size_t ref_size,
                                      const uint8_t *key_name, size_t key_name_size, const mb_tpm2_ticket *ticket,
                                      size_t *ret_size);

/* TPM2_HMAC (Part 3 §15.5) with `key` authorized by the policy session
 * `session` (empty hmac: the policy carries the authorization); attrs:
 * TPMA_SESSION bits (MB_TPM2_SA_CONTINUE_SESSION or 0, which closes the
 * session when the command succeeds). data: at most MB_TPM2_MAX_BUFFER. */
mb_err mb_tpm2_build_hmac(uint8_t *buf, size_t cap, uint32_t key, uint32_t session, uint8_t attrs,
                          const uint8_t *data, size_t data_size, uint16_t hash_alg, size_t *ret_size);
/* Response: outHMAC, which must have hash_alg's digest size. */
mb_err mb_tpm2_parse_hmac(const uint8_t *rsp, size_t n, uint16_t hash_alg, uint32_t *ret_rc,
                          mb_tpm2_digest *ret_hmac);

/* TPM2_FlushContext (Part 3 §28.4). */
mb_err mb_tpm2_build_flush_context(uint8_t *buf, size_t cap, uint32_t handle, size_t *ret_size);

/* TPM2_ReadPublic (Part 3 §12.4). */
mb_err mb_tpm2_build_read_public(uint8_t *buf, size_t cap, uint32_t object, size_t *ret_size);
/* Response: the TPMT_PUBLIC (inside outPublic's TPM2B) and the Name, both
 * slices of rsp; qualifiedName is checked and skipped. The public area
 * must be at least its fixed header (type, nameAlg, attributes). */
mb_err mb_tpm2_parse_read_public(const uint8_t *rsp, size_t n, uint32_t *ret_rc, const uint8_t **ret_pub,
                                 size_t *ret_pub_size, const uint8_t **ret_name, size_t *ret_name_size);

/* TPM2_PolicyGetDigest (Part 3 §23.19). */
mb_err mb_tpm2_build_policy_get_digest(uint8_t *buf, size_t cap, uint32_t session, size_t *ret_size);
mb_err mb_tpm2_parse_policy_get_digest(const uint8_t *rsp, size_t n, uint32_t *ret_rc, mb_tpm2_digest *ret_digest);

/* The length of the response in rsp (cap bytes received into): the size
 * its header gives (Part 1 §18.2: the whole response), for a transport
 * that returns no length of its own (EFI_TCG2_PROTOCOL.SubmitCommand).
 * MB_ERR_TRUNCATED when cap cannot hold a header, MB_ERR_INVALID when the
 * size is below a header's or above cap; *ret_size untouched then. */
mb_err mb_tpm2_response_size(const uint8_t *rsp_buf, size_t cap, size_t *ret_size);

/* The answer of a command whose response has no handles and no
 * parameters (PolicyPCR, PolicyOR, PolicyAuthorize, FlushContext). */
mb_err mb_tpm2_parse_empty(const uint8_t *rsp, size_t n, uint32_t *ret_rc);

/* ---- keys and Names -------------------------------------------------- */

/* The TPMT_PUBLIC (Part 2 §12.2.4) mshim loads a policy key as: ECC
 * NIST P-256, nameAlg SHA-256, objectAttributes sign|userWithAuth, no
 * authPolicy, symmetric NULL, scheme ECDSA with SHA-256, kdf NULL, unique
 * (x, y). Always MB_TPM2_ECC_PUBLIC_SIZE bytes. */
void mb_tpm2_ecc_public(const uint8_t x[MB_TPM2_P256_SIZE], const uint8_t y[MB_TPM2_P256_SIZE],
                        uint8_t ret_pub[MB_TPM2_ECC_PUBLIC_SIZE]);
/* An object's Name (Part 1 §16): nameAlg (the TPMT_PUBLIC's own, bytes 2-3)
 * || nameAlg-digest of the marshalled TPMT_PUBLIC. MB_ERR_UNSUPPORTED for
 * a nameAlg mb_hash does not have, MB_ERR_TRUNCATED for fewer than 4
 * bytes. */
mb_err mb_tpm2_object_name(const uint8_t *pub, size_t pub_size, mb_tpm2_name *ret_name);
/* The Name of mb_tpm2_ecc_public(x, y): 0x000B || SHA-256(TPMT_PUBLIC). */
void mb_tpm2_ecc_name(const uint8_t x[MB_TPM2_P256_SIZE], const uint8_t y[MB_TPM2_P256_SIZE],
                      uint8_t ret_name[MB_TPM2_ECC_NAME_SIZE]);

#endif
