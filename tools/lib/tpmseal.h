/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The TPM side of mshim seal/unseal/policy (docs/SEALING.md), on tpm2-tss
 * ESAPI: the storage root key, the epoch counter, sealing an object under
 * the SRK through a salted session and unsealing it through a salted
 * policy session. Every function prints its own error ("mshim: ...") and
 * returns 0, or an exit status (EXIT_CHECK_FAILED: the TPM refused the
 * policy; EXIT_BAD_INPUT: anything else).
 */
#ifndef MB_TPMSEAL_H
#define MB_TPMSEAL_H

#include <tss2/tss2_esys.h>
#include "cli.h"
#include "mb/policy.h"

/* A connection to the TPM of the usual TCTI environment (tools/lib/tpm.c),
 * under the MSHIM_TPM_TIMEOUT watchdog until cli_tpm_disconnect. */
typedef struct cli_tpm {
        TSS2_TCTI_CONTEXT *tcti;
        ESYS_CONTEXT *esys;
} cli_tpm;
int cli_tpm_connect(cli_tpm *t);
void cli_tpm_disconnect(cli_tpm *t);
/* cli_tpm_read_pcrs on an open connection. */
int cli_tpm_pcr_read(cli_tpm *t, const uint16_t *algs, uint32_t n_algs, uint32_t mask, mb_pcr_values *ret);
/* One bank, without asking which banks are active first (one command
 * fewer); an inactive bank is an error. */
int cli_tpm_pcr_read_bank(cli_tpm *t, uint16_t alg, uint32_t mask, mb_pcr_values *ret);

/* TCG "TPM 2.0 Provisioning Guidance" §7.8: the SRK's persistent handle. */
#define TS_SRK_HANDLE 0x81000001u
/* The epoch counter, an owner-range NV index ("MS"). */
#define TS_COUNTER_INDEX 0x01804D53u
#define TS_COUNTER_SIZE 8u

/* The SRK: created and made persistent if absent; if present, it must
 * have the guidance's template (any unique). ret_pub: its public area. */
int ts_srk_provision(cli_tpm *t, ESYS_TR *ret_srk, TPM2B_PUBLIC *ret_pub);
/* The SRK a sealed file names (recorded: its public area at seal time):
 * the key at TS_SRK_HANDLE must be that one. Never creates it. */
int ts_srk_open(cli_tpm *t, const TPM2B_PUBLIC *recorded, ESYS_TR *ret_srk);
/* The same for the SRK recorded in the state directory (the file record)
 * at mshim's first use, with a message naming both keys' Names. */
int ts_srk_recorded(cli_tpm *t, const TPM2B_PUBLIC *recorded, const char *record, ESYS_TR *ret_srk);

/* The key at TS_SRK_HANDLE against recorded, said nothing: 0 the same, 1
 * none there, 2 another, or an exit status (a message). */
int ts_srk_match(cli_tpm *t, const TPM2B_PUBLIC *recorded);
/* Whether the epoch counter is defined: 0 yes, 1 no, or an exit status. */
int ts_counter_present(cli_tpm *t);

/* The epoch counter: defined and incremented once if absent. */
int ts_counter_provision(cli_tpm *t, uint64_t *ret_value);
/* Its handle (NV_ReadPublic) and Name; ret_value (NULL: not read) its value. */
int ts_counter_open(cli_tpm *t, ESYS_TR *ret_nv, TPM2B_NAME *ret_name, uint64_t *ret_value);
/* The Name of the epoch counter as mshim defines it, once written (the
 * Name every approval's PolicyNV names), computed without a TPM: 0 or -1. */
int ts_counter_name(TPM2B_NAME *ret);
/* Its handle from the Name a sealed file recorded, without a TPM command
 * when that Name is the counter's as mshim defines it (else NV_ReadPublic). */
int ts_counter_from_name(cli_tpm *t, uint32_t index, const TPM2B_NAME *name, ESYS_TR *ret_nv, TPM2B_NAME *ret_name);
/* Its value, on an open handle. */
int ts_counter_value(cli_tpm *t, ESYS_TR nv, uint64_t *ret_value);
/* Increment it (revoke); ret_value: the new value. */
int ts_counter_increment(cli_tpm *t, uint64_t *ret_value);

/* Seal secret (1..128 bytes) under srk: authPolicy policy; with a PIN
 * (pin non-NULL) the object's authValue is SHA-256(pin) and it is
 * DA-protected. The sensitive part crosses the bus encrypted (a session
 * salted to the SRK, decrypt attribute). */
#define TS_SECRET_MAX 128u
int ts_seal(cli_tpm *t, ESYS_TR srk, const mb_policy *policy, const char *pin, const uint8_t *secret, size_t n,
            TPM2B_PUBLIC *ret_pub, TPM2B_PRIVATE *ret_priv);

/* Create an object of template tmpl under srk with the sensitive data in
 * (wiped afterwards), which crosses the bus encrypted (the session above).
 * ts_seal's Create, shared with mshim totp enroll's HMAC key. */
int ts_create(cli_tpm *t, ESYS_TR srk, const TPM2B_PUBLIC *tmpl, TPM2B_SENSITIVE_CREATE *in, TPM2B_PUBLIC *ret_pub,
              TPM2B_PRIVATE *ret_priv);

/* The PIN as the object's authValue. */
void ts_pin_auth(const char *pin, TPM2B_AUTH *ret);

/* Unsealing: a loaded object and one policy attempt at a time. */
typedef struct ts_unsealer {
        cli_tpm *t;
        ESYS_TR srk, obj, session;
        bool pin;       /* the object's policy ends with PolicyAuthValue */
} ts_unsealer;
/* Load the sealed object (public, private) under srk; auth: its authValue
 * (the PIN's) or NULL. */
int ts_unsealer_load(ts_unsealer *u, cli_tpm *t, ESYS_TR srk, const TPM2B_PUBLIC *pub, const TPM2B_PRIVATE *priv,
                     const TPM2B_AUTH *auth);
/* A policy session salted to the SRK. */
TSS2_RC ts_session_start(ts_unsealer *u);
/* The steps of one policy, run in u->session. */
TSS2_RC ts_policy_nv(ts_unsealer *u, ESYS_TR nv, uint64_t epoch);
TSS2_RC ts_policy_pcr(ts_unsealer *u, uint32_t mask, const uint8_t digest[MB_POLICY_SIZE]);
TSS2_RC ts_policy_or(ts_unsealer *u, const mb_policy *branches, size_t n);
TSS2_RC ts_policy_authorize(ts_unsealer *u, ESYS_TR key, const TPM2B_NAME *key_name, const mb_policy *approved,
                            const uint8_t *sig_r, const uint8_t *sig_s, size_t sig_size);
/* PolicyAuthValue when the object has a PIN, then Unseal with the response
 * encrypted; the session ends with it (continueSession clear). */
TSS2_RC ts_unseal_now(ts_unsealer *u, uint8_t *ret_secret, size_t *ret_size);
/* Flush the session if a failed attempt left it. */
void ts_session_end(ts_unsealer *u);
void ts_unsealer_done(ts_unsealer *u);

/* LoadExternal of a policy key's public area (owner hierarchy). */
TSS2_RC ts_load_verify_key(cli_tpm *t, const TPM2B_PUBLIC *pub, ESYS_TR *ret_key);
void ts_flush(cli_tpm *t, ESYS_TR *h);

/* A TPM response code without its handle, session or parameter number. */
TSS2_RC ts_rc_base(TSS2_RC rc);
/* The TPM refused a policy step (not an error of the TPM or the file). */
bool ts_rc_is_policy(TSS2_RC rc);

/* The Name of a public area: nameAlg || H(TPMT_PUBLIC). */
int ts_public_name(const TPM2B_PUBLIC *pub, TPM2B_NAME *ret);

#endif
