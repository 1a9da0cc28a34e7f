/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The TOTP code at boot (issue 12, docs/CONFIG.md "TOTP"): the TPM computes
 * HMAC-SHA1 over the current time step with the key `mshim totp enroll`
 * made persistent, authorized by a policy session that only the enrolled
 * PCR values satisfy; mshim truncates it to 6 digits (RFC 4226) and shows
 * it. Then the fence: a constant event in PCR 12 so nothing later in this
 * boot can satisfy the policy again.
 *
 * TPM commands (docs/MEASUREMENTS.md "TPM commands at the TOTP point"),
 * bytes from src/tpm2.c, sent through EFI_TCG2_PROTOCOL.SubmitCommand:
 * literal mode, one state: StartAuthSession, PolicyPCR (with the state's
 * digest: the TPM refuses at once when the PCRs differ), PolicyOR (the
 * leaf with itself: the enrolled policy is always a tree), HMAC with
 * continueSession clear (the TPM closes the session), so 4; FlushContext
 * of the session only when something failed after StartAuthSession (3 for
 * a refusal at PolicyPCR). Several states: one PolicyPCR per state tried
 * until one holds, then that leaf's PolicyOR path (at most
 * MB_POLICY_TREE_MAX_DEPTH).
 * Signed mode, the first approval holding: StartAuthSession, PolicyNV (the
 * epoch counter), PolicyPCR (the approval's values), LoadExternal (the
 * policy key, once per code), VerifySignature, PolicyAuthorize (policyRef
 * "mshim-totp" and the enrolment's PCR selection), PolicyPCR (PCR 13 all
 * zeros: the lock the fence closes), HMAC, FlushContext of the key: 9; an
 * approval that does not hold costs its session's commands and a
 * FlushContext before the next is tried.
 */
#include "mshim.h"
#include "mb/policy.h"
#include "mb/sealfile.h"
#include "mb/sha.h"
#include "mb/totp.h"
#include "mb/tpm2.h"

/* The enrolment file is a few kilobytes (512 states of 4 PCRs: 130 KiB). */
#define TOTP_FILE_MAX (1024u * 1024)
/* The TOTP approvals read at most: more are reported and ignored. An
 * approval file is under 2 KiB (24 PCRs of SHA-256 in hex). */
#define TOTP_APPROVALS_MAX 32u
#define TOTP_APPROVAL_FILE_MAX 8192u
/* Polling the keyboard and the clock this often while the code is shown. */
#define TOTP_POLL_US 100000u
#define TOTP_POLLS_PER_S (1000000u / TOTP_POLL_US)
/* The session's nonceCaller. The session is unsalted and unbound and its
 * commands carry no HMAC (a policy session authorizes through its policy
 * digest alone, Part 1 §19.7), so the nonce protects nothing: any 16 bytes
 * the TPM accepts will do, and a constant keeps the loader free of an RNG. */
static const uint8_t totp_nonce[16] = "mshim TOTP nonce";

typedef enum totp_result {
        TOTP_CODE,      /* *code made */
        TOTP_REFUSED,   /* the TPM refused the policy: not the enrolled boot */
        TOTP_ERROR,     /* no code could be made for another reason (said why) */
} totp_result;

typedef struct totp_tpm {
        MSHIM_TCG2_PROTOCOL *tcg2;
        UINT32 max_command;     /* the firmware's limits (mshim_tpm), 0: none reported */
        UINT32 max_response;
        uint8_t cmd[MB_TPM2_MAX_COMMAND];
        size_t cmd_size;
        uint8_t rsp[MB_TPM2_MAX_COMMAND];
        size_t rsp_size;
} totp_tpm;

typedef struct totp_job {
        const mb_loader_conf *conf;
        totp_tpm *tpm;
        mb_totp_enrolment en;
        mb_policy *leaves;      /* the states' PolicyPCR digests, literal mode */
        mb_approval *approvals; /* signed mode: the approvals read */
        size_t n_approvals;
        uint32_t key;           /* signed mode: the loaded policy key, 0 when none */
        mb_tpm2_name key_name;
} totp_job;

/* Why no approval gave a code, for the warning. */
typedef struct totp_tally {
        unsigned pcrs, revoked, forged, locked, policy;
} totp_tally;

/* ---- one command ------------------------------------------------------- */

/* Send t->cmd, receive t->rsp: t->rsp_size is the size the response's own
 * header gives, refused when it is shorter than a header or longer than
 * the buffer the firmware was given (Part 1 §18.2: the size field counts
 * the whole response). */
static EFI_STATUS totp_submit(totp_tpm *t, const CHAR16 *what) {
        /* The answer buffer offered is at most the TPM's maximum response:
         * the firmware refuses a larger one (mshim_tpm_init). */
        UINT32 out = (UINT32) sizeof(t->rsp);
        EFI_STATUS st;

        if (t->max_response && t->max_response < out)
                out = t->max_response;
        if (t->max_command && t->cmd_size > t->max_command)
                return mshim_log(EFI_BAD_BUFFER_SIZE, L"TOTP: %s is %d bytes, the TPM takes at most %d", what,
                                 (UINT32) t->cmd_size, t->max_command);
        mb_memset(t->rsp, 0, sizeof(t->rsp));
        st = t->tcg2->SubmitCommand(t->tcg2, (UINT32) t->cmd_size, t->cmd, out, t->rsp);
        if (EFI_ERROR(st))
                return mshim_log(st, L"TOTP: the TPM did not take %s (%r)", what, st);
        if (mb_tpm2_response_size(t->rsp, out, &t->rsp_size) != MB_OK)
                return mshim_log(EFI_PROTOCOL_ERROR, L"TOTP: the TPM's answer to %s has a bad size (%d)", what,
                                 (UINT32) t->rsp[2] << 24 | (UINT32) t->rsp[3] << 16 | (UINT32) t->rsp[4] << 8 |
                                 t->rsp[5]);
        return EFI_SUCCESS;
}

/* A response that does not parse is an error like a failed transport. */
static EFI_STATUS totp_parsed(mb_err e, const CHAR16 *what) {
        if (e != MB_OK)
                return mshim_log(EFI_PROTOCOL_ERROR, L"TOTP: the TPM's answer to %s is malformed: %a", what,
                                 mb_strerror(e));
        return EFI_SUCCESS;
}

static EFI_STATUS totp_rc_error(const CHAR16 *what, uint32_t rc) {
        const char *name = mb_tpm2_rc_name(rc);

        return mshim_log(EFI_DEVICE_ERROR, L"TOTP: the TPM refused %s: TPM_RC_%a (0x%x)", what,
                         name ? name : "?", rc);
}

/* A command whose answer is empty (PolicyPCR, PolicyOR, FlushContext):
 * *ret_rc is the TPM's code. */
static EFI_STATUS totp_empty(totp_tpm *t, const CHAR16 *what, mb_err built, uint32_t *ret_rc) {
        EFI_STATUS st;

        if (built != MB_OK)
                return mshim_log(mb_efi_status(built), L"TOTP: cannot build %s: %a", what, mb_strerror(built));
        st = totp_submit(t, what);
        if (EFI_ERROR(st))
                return st;
        return totp_parsed(mb_tpm2_parse_empty(t->rsp, t->rsp_size, ret_rc), what);
}

/* ---- the policy session ------------------------------------------------ */

static EFI_STATUS totp_start_session(totp_tpm *t, uint32_t *ret_session) {
        mb_tpm2_digest nonce_tpm;
        uint32_t rc = 0;
        mb_err e;
        EFI_STATUS st;

        e = mb_tpm2_build_start_auth_session(t->cmd, sizeof(t->cmd), totp_nonce, sizeof(totp_nonce), &t->cmd_size);
        if (e != MB_OK)
                return mshim_log(mb_efi_status(e), L"TOTP: cannot build StartAuthSession: %a", mb_strerror(e));
        st = totp_submit(t, L"StartAuthSession");
        if (!EFI_ERROR(st))
                st = totp_parsed(mb_tpm2_parse_start_auth_session(t->rsp, t->rsp_size, &rc, ret_session, &nonce_tpm),
                                 L"StartAuthSession");
        if (!EFI_ERROR(st) && rc != 0)
                st = totp_rc_error(L"StartAuthSession", rc);
        return st;
}

static void totp_flush(totp_tpm *t, uint32_t handle) {
        uint32_t rc = 0;
        EFI_STATUS st;

        st = totp_empty(t, L"FlushContext",
                        mb_tpm2_build_flush_context(t->cmd, sizeof(t->cmd), handle, &t->cmd_size), &rc);
        /* Nothing depends on it: a session left open is gone at the next
         * TPM reset, and the kernel's resource manager flushes it. */
        if (!EFI_ERROR(st) && rc != 0)
                totp_rc_error(L"FlushContext", rc);
}

/* PolicyPCR of (bank, pcrs) with pcrDigest `digest` (built: its
 * computation's result): TPM_RC_VALUE (the PCRs hold other values, Part 3
 * §23.7) is *ret_match false, not an error. */
static EFI_STATUS totp_policy_pcr_digest(totp_tpm *t, uint32_t session, uint16_t bank, uint32_t pcrs,
                                         const uint8_t digest[MB_POLICY_SIZE], mb_err built, bool *ret_match) {
        uint32_t rc = 0;
        mb_err e = built;
        EFI_STATUS st;

        if (e == MB_OK)
                e = mb_tpm2_build_policy_pcr(t->cmd, sizeof(t->cmd), session, bank, pcrs, digest, MB_POLICY_SIZE,
                                             &t->cmd_size);
        st = totp_empty(t, L"PolicyPCR", e, &rc);
        if (EFI_ERROR(st))
                return st;
        if (rc != 0 && mb_tpm2_rc_base(rc) != MB_TPM2_RC_VALUE)
                return totp_rc_error(L"PolicyPCR", rc);
        *ret_match = rc == 0;
        return EFI_SUCCESS;
}

/* PolicyPCR with the digest of `values` (the enrolment's PCRs, in order). */
static EFI_STATUS totp_policy_pcr(totp_tpm *t, uint32_t session, const mb_totp_enrolment *en, const uint8_t *values,
                                  bool *ret_match) {
        size_t state_size = mb_sealed_state_size(en->bank, en->pcrs);
        uint8_t digest[MB_POLICY_SIZE];
        mb_err e = mb_policy_pcr_digest(values, state_size / mb_hash_size(en->bank), mb_hash_size(en->bank), digest);

        return totp_policy_pcr_digest(t, session, en->bank, en->pcrs, digest, e, ret_match);
}

/* The PolicyOR steps from leaf `index` up to the root (mb_policy_tree_path). */
static EFI_STATUS totp_policy_or_path(totp_tpm *t, uint32_t session, const mb_policy *leaves, size_t n,
                                      size_t index) {
        mb_policy steps[MB_POLICY_TREE_MAX_DEPTH][MB_POLICY_OR_MAX];
        size_t counts[MB_POLICY_TREE_MAX_DEPTH], n_steps = 0;
        uint32_t rc = 0;
        mb_err e = mb_policy_tree_path(leaves, n, index, steps, counts, &n_steps);

        if (e != MB_OK)
                return mshim_log(mb_efi_status(e), L"TOTP: no PolicyOR path for state %ld: %a", (UINT64) index,
                                 mb_strerror(e));
        for (size_t k = 0; k < n_steps; k++) {
                EFI_STATUS st = totp_empty(t, L"PolicyOR",
                                mb_tpm2_build_policy_or(t->cmd, sizeof(t->cmd), session, steps[k]->d, counts[k],
                                                        MB_POLICY_SIZE, &t->cmd_size), &rc);
                if (EFI_ERROR(st))
                        return st;
                if (rc != 0)
                        return totp_rc_error(L"PolicyOR", rc);
        }
        return EFI_SUCCESS;
}

/* The literal policy in the session: the first state whose PolicyPCR the
 * TPM accepts, then its OR path. *ret_match false: no state holds. */
static EFI_STATUS totp_literal(totp_tpm *t, uint32_t session, const mb_totp_enrolment *en, const mb_policy *leaves,
                               bool *ret_match) {
        *ret_match = false;
        for (size_t i = 0; i < en->n_states; i++) {
                EFI_STATUS st = totp_policy_pcr(t, session, en,
                                                en->states + i * mb_sealed_state_size(en->bank, en->pcrs), ret_match);
                if (EFI_ERROR(st))
                        return st;
                /* Always the OR path, also for one state (PolicyOR of the
                 * leaf with itself): the policy mshim seal and mshim totp
                 * enroll build (mb_policy_tree_root). */
                if (*ret_match)
                        return totp_policy_or_path(t, session, leaves, en->n_states, i);
        }
        return EFI_SUCCESS;
}

/* TPM2_HMAC over the step's counter; the session closes with it.
 * TPM_RC_POLICY_FAIL: the session's digest is not the key's authPolicy. */
static EFI_STATUS totp_hmac(totp_tpm *t, uint32_t session, const mb_totp_enrolment *en, uint64_t step,
                            totp_result *ret, uint32_t *ret_code) {
        uint8_t msg[MB_TOTP_COUNTER_SIZE];
        mb_tpm2_digest mac;
        uint32_t rc = 0;
        mb_err e;
        EFI_STATUS st;

        mb_totp_counter(step, 1, msg);
        e = mb_tpm2_build_hmac(t->cmd, sizeof(t->cmd), en->handle, session, 0, msg, sizeof(msg), MB_ALG_SHA1,
                               &t->cmd_size);
        if (e != MB_OK)
                return mshim_log(mb_efi_status(e), L"TOTP: cannot build HMAC: %a", mb_strerror(e));
        st = totp_submit(t, L"HMAC");
        if (!EFI_ERROR(st))
                st = totp_parsed(mb_tpm2_parse_hmac(t->rsp, t->rsp_size, MB_ALG_SHA1, &rc, &mac), L"HMAC");
        if (EFI_ERROR(st))
                return st;
        if (mb_tpm2_rc_base(rc) == MB_TPM2_RC_POLICY_FAIL) {
                *ret = TOTP_REFUSED;
                return EFI_SUCCESS;
        }
        if (rc != 0)
                return totp_rc_error(L"HMAC", rc);
        e = mb_totp_truncate(mac.b, mac.size, MB_TOTP_DIGITS, ret_code);
        if (e != MB_OK)
                return mshim_log(mb_efi_status(e), L"TOTP: the TPM's HMAC cannot be truncated: %a", mb_strerror(e));
        *ret = TOTP_CODE;
        return EFI_SUCCESS;
}

/* One code, literal mode: a session, the policy, the HMAC. */
static totp_result totp_make_literal(totp_job *j, uint64_t step, uint32_t *ret_code) {
        totp_result r = TOTP_REFUSED;
        uint32_t session = 0;
        bool match = false;
        EFI_STATUS st;

        st = totp_start_session(j->tpm, &session);
        if (EFI_ERROR(st))
                return TOTP_ERROR;
        st = totp_literal(j->tpm, session, &j->en, j->leaves, &match);
        if (!EFI_ERROR(st) && match)
                st = totp_hmac(j->tpm, session, &j->en, step, &r, ret_code);
        /* A successful HMAC closed the session (continueSession clear). */
        if (EFI_ERROR(st) || r != TOTP_CODE)
                totp_flush(j->tpm, session);
        return EFI_ERROR(st) ? TOTP_ERROR : r;
}

/* ---- the signed policy (docs/SEALING.md "The TOTP key") ----------------- */

/* LoadExternal of the enrolment's policy key, its public part only, in the
 * owner hierarchy: VerifySignature with a key in TPM_RH_NULL gives a NULL
 * ticket, which PolicyAuthorize refuses (Part 3 §20.1, §23.16). */
static EFI_STATUS totp_load_key(totp_job *j) {
        const mb_totp_enrolment *en = &j->en;
        totp_tpm *t = j->tpm;
        uint32_t rc = 0, handle = 0;
        mb_err e;
        EFI_STATUS st;

        /* A TPM2B_PUBLIC: its size, then the TPMT_PUBLIC LoadExternal takes. */
        if (en->policy_key_size < 2 || ((size_t) en->policy_key[0] << 8 | en->policy_key[1]) != en->policy_key_size - 2)
                return mshim_log(EFI_VOLUME_CORRUPTED, L"TOTP: %s: the policy key is not a TPM2B_PUBLIC",
                                 MSHIM_TOTP_PATH);
        e = mb_tpm2_build_load_external(t->cmd, sizeof(t->cmd), en->policy_key + 2, en->policy_key_size - 2,
                                        MB_TPM2_RH_OWNER, &t->cmd_size);
        if (e != MB_OK)
                return mshim_log(mb_efi_status(e), L"TOTP: cannot build LoadExternal: %a", mb_strerror(e));
        st = totp_submit(t, L"LoadExternal");
        if (!EFI_ERROR(st))
                st = totp_parsed(mb_tpm2_parse_load_external(t->rsp, t->rsp_size, &rc, &handle, &j->key_name),
                                 L"LoadExternal");
        if (!EFI_ERROR(st) && rc != 0)
                st = totp_rc_error(L"LoadExternal", rc);
        if (!EFI_ERROR(st))
                j->key = handle;
        return st;
}

/* PolicyNV: the epoch counter <= the approval's epoch, as
 * mb_policy_approved builds it. TPM_RC_POLICY (the comparison is false,
 * Part 3 §23.9): the counter has passed the epoch, the approval is revoked. */
static EFI_STATUS totp_policy_nv(totp_tpm *t, uint32_t session, const mb_totp_enrolment *en, uint64_t epoch,
                                 bool *ret_ok) {
        uint8_t operand[8];
        uint32_t rc = 0;
        mb_err e;
        EFI_STATUS st;

        for (unsigned i = 0; i < sizeof(operand); i++)
                operand[i] = (uint8_t) (epoch >> (56 - 8 * i));
        e = mb_tpm2_build_policy_nv(t->cmd, sizeof(t->cmd), session, en->nv_index, NULL, 0, operand, sizeof(operand),
                                    0, MB_TPM_EO_UNSIGNED_LE, &t->cmd_size);
        if (e != MB_OK)
                return mshim_log(mb_efi_status(e), L"TOTP: cannot build PolicyNV: %a", mb_strerror(e));
        st = totp_submit(t, L"PolicyNV");
        if (!EFI_ERROR(st))
                st = totp_parsed(mb_tpm2_parse_policy_nv(t->rsp, t->rsp_size, &rc), L"PolicyNV");
        if (EFI_ERROR(st))
                return st;
        if (rc != 0 && mb_tpm2_rc_base(rc) != MB_TPM2_RC_POLICY)
                return totp_rc_error(L"PolicyNV", rc);
        *ret_ok = rc == 0;
        return EFI_SUCCESS;
}

/* VerifySignature of the approval's signature over aHash = H(approvedPolicy
 * || policyRef) (Part 3 §23.16), then PolicyAuthorize with the ticket. The
 * policyRef is "mshim-totp" and the enrolment's PCR selection
 * (mb_totp_policy_ref): an enrolment file edited to other PCRs gives
 * another policyRef, and the key's authPolicy then refuses the session at
 * HMAC. TPM_RC_SIGNATURE: not made with the policy key for this policyRef
 * (forged, another key, another selection, or a disk approval, whose
 * policyRef is empty): *ret_ok false. */
static EFI_STATUS totp_authorize(totp_job *j, uint32_t session, const mb_approval *a, bool *ret_ok) {
        uint8_t ref[MB_TOTP_POLICY_REF_SIZE];
        totp_tpm *t = j->tpm;
        uint8_t ahash[MB_POLICY_SIZE], sig_r[32], sig_s[32];
        mb_tpm2_ticket ticket;
        mb_policy approved;
        uint32_t rc = 0;
        mb_err e;
        EFI_STATUS st;

        *ret_ok = false;
        /* The parser checked the selection; what does not make a policyRef
         * authorizes nothing. */
        if (mb_totp_policy_ref(j->en.bank, j->en.pcrs, ref) != MB_OK)
                return EFI_SUCCESS;
        mb_memcpy(approved.d, a->policy, MB_POLICY_SIZE);
        mb_policy_authorize_ahash(&approved, ref, sizeof(ref), ahash);
        /* The codec checked the DER; what does not convert is no signature. */
        if (mb_approval_sig_rs(a->signature, a->signature_size, sig_r, sig_s) != MB_OK)
                return EFI_SUCCESS;
        e = mb_tpm2_build_verify_signature(t->cmd, sizeof(t->cmd), j->key, ahash, sizeof(ahash), sig_r, sizeof(sig_r),
                                           sig_s, sizeof(sig_s), &t->cmd_size);
        if (e != MB_OK)
                return mshim_log(mb_efi_status(e), L"TOTP: cannot build VerifySignature: %a", mb_strerror(e));
        st = totp_submit(t, L"VerifySignature");
        if (!EFI_ERROR(st))
                st = totp_parsed(mb_tpm2_parse_verify_signature(t->rsp, t->rsp_size, &rc, &ticket), L"VerifySignature");
        if (EFI_ERROR(st) || mb_tpm2_rc_base(rc) == MB_TPM2_RC_SIGNATURE)
                return st;
        if (rc != 0)
                return totp_rc_error(L"VerifySignature", rc);
        st = totp_empty(t, L"PolicyAuthorize",
                        mb_tpm2_build_policy_authorize(t->cmd, sizeof(t->cmd), session, a->policy, MB_POLICY_SIZE, ref,
                                                       sizeof(ref), j->key_name.b, j->key_name.size, &ticket,
                                                       &t->cmd_size), &rc);
        if (!EFI_ERROR(st) && rc != 0)
                st = totp_rc_error(L"PolicyAuthorize", rc);
        *ret_ok = !EFI_ERROR(st);
        return st;
}

/* The lock, after PolicyAuthorize (which resets the session's digest, so
 * it cannot come first): PolicyPCR(sha256 PCR 13 == all zeros), part of the
 * key's authPolicy outside what the policy key approves. TPM_RC_VALUE: PCR
 * 13 holds the fence (or something else extended it), so no approval can
 * give a code in this boot any more. */
static EFI_STATUS totp_lock(totp_tpm *t, uint32_t session, totp_tally *tally, bool *ret_ok) {
        uint8_t lock[MB_POLICY_SIZE];
        EFI_STATUS st;

        mb_totp_lock_digest(lock);
        st = totp_policy_pcr_digest(t, session, MB_ALG_SHA256, 1u << MB_TOTP_LOCK_PCR, lock, MB_OK, ret_ok);
        tally->locked += !EFI_ERROR(st) && !*ret_ok;
        return st;
}

/* Approval a in the session: PolicyNV, PolicyPCR, the key if not loaded
 * yet, the signature. *ret_ok false: it does not hold for this boot (the
 * reason counted in *tally); the session is spent. */
static EFI_STATUS totp_approval(totp_job *j, uint32_t session, const mb_approval *a, totp_tally *tally,
                                bool *ret_ok) {
        EFI_STATUS st;

        *ret_ok = false;
        st = totp_policy_nv(j->tpm, session, &j->en, a->epoch, ret_ok);
        if (EFI_ERROR(st) || !*ret_ok) {
                tally->revoked += !EFI_ERROR(st);
                return st;
        }
        st = totp_policy_pcr(j->tpm, session, &j->en, a->values, ret_ok);
        if (EFI_ERROR(st) || !*ret_ok) {
                tally->pcrs += !EFI_ERROR(st);
                return st;
        }
        if (!j->key) {
                st = totp_load_key(j);
                if (EFI_ERROR(st))
                        return st;
        }
        st = totp_authorize(j, session, a, ret_ok);
        if (EFI_ERROR(st) || !*ret_ok) {
                tally->forged += !EFI_ERROR(st);
                return st;
        }
        return totp_lock(j->tpm, session, tally, ret_ok);
}

/* Say why no approval gave a code. */
static void totp_say_why(const totp_job *j, const totp_tally *tally) {
        if (!j->n_approvals) {
                mshim_log(EFI_SUCCESS, L"TOTP: no approvals in %s (mshim policy approve --totp)",
                          MSHIM_TOTP_APPROVALS_DIR);
                return;
        }
        mshim_log(EFI_SUCCESS, L"TOTP: none of the %ld approvals holds for this boot: %d for other PCR values, "
                  L"%d revoked, %d not signed by the policy key, %d refused by the key's policy",
                  (UINT64) j->n_approvals, tally->pcrs, tally->revoked, tally->forged, tally->policy);
        if (tally->locked)
                mshim_log(EFI_SUCCESS, L"TOTP: PCR %d is not zero (the fence is already in it): no code until the "
                          L"TPM is reset", MB_TOTP_LOCK_PCR);
}

/* One code, signed mode: each approval in its own session until one
 * holds, then the HMAC; the policy key is flushed at the end. */
static totp_result totp_make_signed(totp_job *j, uint64_t step, uint32_t *ret_code) {
        totp_tally tally = { 0 };
        totp_result r = TOTP_REFUSED;
        EFI_STATUS st = EFI_SUCCESS;

        for (size_t i = 0; i < j->n_approvals && r != TOTP_CODE && !EFI_ERROR(st); i++) {
                uint32_t session = 0;
                bool ok = false;

                st = totp_start_session(j->tpm, &session);
                if (EFI_ERROR(st))
                        break;
                st = totp_approval(j, session, &j->approvals[i], &tally, &ok);
                if (!EFI_ERROR(st) && ok) {
                        st = totp_hmac(j->tpm, session, &j->en, step, &r, ret_code);
                        /* The signature and the lock held but the key's
                         * authPolicy is not PolicyAuthorize(this key, this
                         * policyRef) then the lock: an enrolment file that
                         * is not the key's (its PCRs edited, or made before
                         * the policyRef named them). */
                        tally.policy += !EFI_ERROR(st) && r != TOTP_CODE;
                }
                if (EFI_ERROR(st) || r != TOTP_CODE)
                        totp_flush(j->tpm, session);
        }
        if (j->key) {
                totp_flush(j->tpm, j->key);
                j->key = 0;
        }
        if (EFI_ERROR(st))
                return TOTP_ERROR;
        if (r != TOTP_CODE)
                totp_say_why(j, &tally);
        return r;
}

static totp_result totp_make(totp_job *j, uint64_t step, uint32_t *ret_code) {
        return j->en.mode == MB_SEAL_SIGNED ? totp_make_signed(j, step, ret_code) : totp_make_literal(j, step, ret_code);
}

/* ---- the clock ----------------------------------------------------------- */

/* Unix time from the RTC: UTC unless loader.conf says local, with its
 * offset or the firmware's (UEFI §8.3: Localtime = UTC - TimeZone). */
static EFI_STATUS totp_now(const mb_loader_conf *conf, uint64_t *ret_unix) {
        EFI_TIME tm;
        mb_civil_time ct;
        int32_t offset = 0;
        EFI_STATUS st;

        mb_memset(&tm, 0, sizeof(tm));
        st = RT->GetTime(&tm, NULL);
        if (EFI_ERROR(st))
                return mshim_log(st, L"TOTP: cannot read the clock (%r)", st);
        if (conf->rtc_offset_set) {
                offset = conf->rtc_offset_min;
        } else if (conf->rtc_local) {
                if (tm.TimeZone == EFI_UNSPECIFIED_TIMEZONE)
                        return mshim_log(EFI_NOT_READY, L"TOTP: the clock keeps local time and the firmware "
                                         L"does not know its offset: set rtc-offset in loader.conf");
                offset = -tm.TimeZone;
        }
        ct = (mb_civil_time) { tm.Year, tm.Month, tm.Day, tm.Hour, tm.Minute, tm.Second };
        if (mb_totp_unix_time(&ct, offset, ret_unix) != MB_OK)
                return mshim_log(EFI_DEVICE_ERROR, L"TOTP: the clock says %d-%d-%d %d:%d:%d, not a usable time",
                                 tm.Year, tm.Month, tm.Day, tm.Hour, tm.Minute, tm.Second);
        return EFI_SUCCESS;
}

/* ---- the display ----------------------------------------------------------- */

/* 5x7 digits, one bit per column (bit 4 leftmost), seven rows. */
static const uint8_t totp_font[10][7] = {
        { 0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e }, { 0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e },
        { 0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f }, { 0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e },
        { 0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02 }, { 0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e },
        { 0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e }, { 0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08 },
        { 0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e }, { 0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c },
};

/* The code in big digits (two characters per dot, a gap in the middle
 * like an authenticator app's "123 456"), then the line scripts read. */
static void totp_show(uint32_t code, uint64_t step) {
        char digits[MB_TOTP_DIGITS], when[MB_TOTP_TIME_TEXT_SIZE];
        CHAR16 line[MB_TOTP_DIGITS * 12 + 8];
        uint32_t v = code;

        for (int i = MB_TOTP_DIGITS - 1; i >= 0; i--, v /= 10)
                digits[i] = (char) ('0' + v % 10);
        Print(L"\n");
        for (unsigned row = 0; row < 7; row++) {
                UINTN k = 0;

                line[k++] = L' ';
                for (unsigned d = 0; d < MB_TOTP_DIGITS; d++) {
                        for (int col = 4; col >= 0; col--) {
                                CHAR16 ch = totp_font[digits[d] - '0'][row] >> col & 1 ? L'#' : L' ';
                                line[k++] = ch;
                                line[k++] = ch;
                        }
                        line[k++] = L' ';
                        line[k++] = L' ';
                        if (d == MB_TOTP_DIGITS / 2 - 1) {
                                line[k++] = L' ';
                                line[k++] = L' ';
                        }
                }
                line[k] = 0;
                Print(L"%s\n", line);
        }
        if (mb_totp_time_text(step * MB_TOTP_PERIOD, when) != MB_OK)
                mb_memcpy(when, "(time out of range)", sizeof("(time out of range)"));
        mshim_log(EFI_SUCCESS, L"TOTP %06d for %a", code, when);
}

/* A key waiting? It is read (and dropped), so it does not reach the kernel. */
static bool totp_key_pressed(void) {
        EFI_INPUT_KEY key;

        return ST->ConIn && ST->ConIn->ReadKeyStroke(ST->ConIn, &key) == EFI_SUCCESS;
}

/* ---- the whole ------------------------------------------------------------- */

/* Show the code of each step until a key or the timeout; returns the first
 * result that is not a code (the TPM stopped agreeing), else TOTP_CODE. */
static totp_result totp_loop(totp_job *j) {
        uint64_t polls = (uint64_t) j->conf->totp_timeout * TOTP_POLLS_PER_S, step = 0, now = 0;
        bool shown = false;
        uint32_t code;
        totp_result r;

        mshim_log(EFI_SUCCESS, L"TOTP: compare this code with your authenticator before typing any secret; "
                  L"press a key to go on");
        for (uint64_t i = 0; j->conf->totp_timeout == 0 || i < polls; i++) {
                if (EFI_ERROR(totp_now(j->conf, &now)))
                        return TOTP_ERROR;
                if (!shown || now / MB_TOTP_PERIOD != step) {
                        step = now / MB_TOTP_PERIOD;
                        r = totp_make(j, step, &code);
                        if (r != TOTP_CODE)
                                return r;
                        totp_show(code, step);
                        shown = true;
                }
                if (totp_key_pressed())
                        break;
                BS->Stall(TOTP_POLL_US);
        }
        return TOTP_CODE;
}

/* Not the enrolled boot, or no code: say so and give the user the time to
 * read it. */
static void totp_wait(const mb_loader_conf *conf) {
        for (uint64_t i = 0; conf->totp_timeout == 0 || i < (uint64_t) conf->totp_timeout * TOTP_POLLS_PER_S; i++) {
                if (totp_key_pressed())
                        return;
                BS->Stall(TOTP_POLL_US);
        }
}

/* The literal mode's leaves: each state's PolicyPCR. */
static EFI_STATUS totp_leaves(totp_job *j) {
        size_t ss = mb_sealed_state_size(j->en.bank, j->en.pcrs), hs = mb_hash_size(j->en.bank);

        j->leaves = AllocatePool(j->en.n_states * sizeof(mb_policy));
        if (!j->leaves)
                return mshim_log(EFI_OUT_OF_RESOURCES, L"TOTP: out of memory");
        for (size_t i = 0; i < j->en.n_states; i++) {
                uint8_t digest[MB_POLICY_SIZE];
                mb_err e;

                mb_policy_reset(&j->leaves[i]);
                e = mb_policy_pcr_digest(j->en.states + i * ss, ss / hs, hs, digest);
                if (e == MB_OK)
                        e = mb_policy_pcr(&j->leaves[i], j->en.bank, j->en.pcrs, digest);
                if (e != MB_OK)
                        return mshim_log(mb_efi_status(e), L"TOTP: state %ld: %a", (UINT64) i, mb_strerror(e));
        }
        return EFI_SUCCESS;
}

/* One approval file into j->approvals[j->n_approvals]: one that cannot be
 * read, does not parse or is not for the enrolled PCRs is skipped with a
 * message (an approval only ever adds a way in; dropping one is safe). */
static void totp_approval_load(EFI_FILE_HANDLE root, totp_job *j, const CHAR16 *name) {
        UINTN dir = MB_ARRAY_SIZE(MSHIM_TOTP_APPROVALS_DIR) - 1, n = StrLen((CHAR16 *) name), size = 0;
        CHAR16 path[MB_ARRAY_SIZE(MSHIM_TOTP_APPROVALS_DIR) + 256];
        mb_approval *a = &j->approvals[j->n_approvals];
        void *buf = NULL;
        size_t line = 0;
        mb_err e;

        if (n > MB_ARRAY_SIZE(path) - dir - 2) {
                mshim_log(EFI_SUCCESS, L"TOTP: %s: name too long; skipped", name);
                return;
        }
        CopyMem(path, MSHIM_TOTP_APPROVALS_DIR, dir * sizeof(CHAR16));
        path[dir] = L'\\';
        CopyMem(path + dir + 1, (void *) name, (n + 1) * sizeof(CHAR16));
        if (EFI_ERROR(mshim_file_load(root, path, TOTP_APPROVAL_FILE_MAX, &buf, &size))) {
                mshim_log(EFI_SUCCESS, L"TOTP: %s: cannot read it; skipped", path);
                return;
        }
        e = mb_approval_parse(buf, size, a, &line);
        FreePool(buf);
        if (e != MB_OK)
                mshim_log(EFI_SUCCESS, L"TOTP: %s: %a at line %ld; skipped", path, mb_strerror(e), (UINT64) line);
        else if (a->bank != j->en.bank || a->pcrs != j->en.pcrs)
                mshim_log(EFI_SUCCESS, L"TOTP: %s: not for the enrolled PCRs; skipped", path);
        else
                j->n_approvals++;
}

/* The signed mode's approvals, at most TOTP_APPROVALS_MAX. None (or no
 * directory) is not an error here: the code is then refused, saying so. */
static EFI_STATUS totp_approvals_load(EFI_FILE_HANDLE root, totp_job *j) {
        EFI_FILE_HANDLE dir = NULL;
        EFI_FILE_INFO *info = NULL;
        EFI_STATUS st;

        j->approvals = AllocatePool(TOTP_APPROVALS_MAX * sizeof(*j->approvals));
        info = AllocatePool(MSHIM_DIR_INFO_SIZE);
        if (!j->approvals || !info) {
                st = mshim_log(EFI_OUT_OF_RESOURCES, L"TOTP: out of memory");
                goto out;
        }
        st = root->Open(root, &dir, MSHIM_TOTP_APPROVALS_DIR, EFI_FILE_MODE_READ, 0);
        if (st == EFI_NOT_FOUND) {
                st = EFI_SUCCESS;
                goto out;
        }
        if (EFI_ERROR(st)) {
                st = mshim_log(st, L"TOTP: cannot open %s: %r", MSHIM_TOTP_APPROVALS_DIR, st);
                goto out;
        }
        while (mshim_dir_next(dir, MSHIM_TOTP_APPROVALS_DIR, L".approval", info, MSHIM_DIR_INFO_SIZE) == EFI_SUCCESS) {
                if (j->n_approvals == TOTP_APPROVALS_MAX) {
                        mshim_log(EFI_SUCCESS, L"TOTP: more than %d approvals; ignoring %s and the rest",
                                  TOTP_APPROVALS_MAX, info->FileName);
                        break;
                }
                totp_approval_load(root, j, info->FileName);
        }
out:
        if (dir)
                dir->Close(dir);
        if (info)
                FreePool(info);
        return st;
}

/* Read and parse the enrolment file, then the literal mode's leaves or the
 * signed mode's approvals. */
static EFI_STATUS totp_load(EFI_FILE_HANDLE root, totp_job *j, void **ret_file, uint8_t **ret_states) {
        UINTN size = 0, cap;
        size_t line = 0;
        mb_err e;
        EFI_STATUS st;

        st = mshim_file_load(root, MSHIM_TOTP_PATH, TOTP_FILE_MAX, ret_file, &size);
        if (st == EFI_NOT_FOUND)
                return mshim_log(st, L"TOTP: no enrolment (%s): run mshim totp enroll", MSHIM_TOTP_PATH);
        if (EFI_ERROR(st))
                return st;
        /* Hex: two characters per state byte, so size / 2 always holds them. */
        cap = size / 2 + 1;
        *ret_states = AllocatePool(cap);
        if (!*ret_states)
                return mshim_log(EFI_OUT_OF_RESOURCES, L"TOTP: out of memory");
        e = mb_totp_enrolment_parse(*ret_file, size, *ret_states, cap, &j->en, &line);
        if (e != MB_OK)
                return mshim_log(mb_efi_status(e), L"TOTP: %s: %a at line %ld", MSHIM_TOTP_PATH, mb_strerror(e),
                                 (UINT64) line);
        return j->en.mode == MB_SEAL_SIGNED ? totp_approvals_load(root, j) : totp_leaves(j);
}

static totp_result totp_attempt(mshim_ctx *c, totp_job *j) {
        void *file = NULL;
        uint8_t *states = NULL;
        totp_result r = TOTP_ERROR;

        if (!c->tpm.tcg2) {
                mshim_log(EFI_NOT_FOUND, L"TOTP: no usable TPM");
                return TOTP_ERROR;
        }
        j->tpm = AllocatePool(sizeof(*j->tpm));
        if (!j->tpm) {
                mshim_log(EFI_OUT_OF_RESOURCES, L"TOTP: out of memory");
                return TOTP_ERROR;
        }
        j->tpm->tcg2 = c->tpm.tcg2;
        j->tpm->max_command = c->tpm.max_command;
        j->tpm->max_response = c->tpm.max_response;
        if (!EFI_ERROR(totp_load(c->root, j, &file, &states)))
                r = totp_loop(j);
        FreePool(j->tpm);
        if (j->leaves)
                FreePool(j->leaves);
        if (j->approvals)
                FreePool(j->approvals);
        if (states)
                FreePool(states);
        if (file)
                FreePool(file);
        return r;
}

bool mshim_totp_on(const mshim_ctx *c) {
        return c->plan && c->plan->totp != MB_TOTP_NO;
}

EFI_STATUS mshim_totp_run(mshim_ctx *c, const CHAR16 *next_stage) {
        totp_job j = { .conf = c->conf };
        totp_result r = TOTP_ERROR;
        EFI_STATUS st;

        if (!mshim_totp_on(c))
                return EFI_SUCCESS;
        /* A code here would seem to vouch for the kernel and initrd that
         * program loads later, which no PCR holds yet (issue 20). */
        if (next_stage)
                mshim_log(EFI_SUCCESS, L"TOTP: %s starts an EFI program: it loads what it likes after the code, "
                          L"which cannot vouch for that; no code is made for it", next_stage);
        else
                r = totp_attempt(c, &j);
        if (r == TOTP_REFUSED)
                mshim_log(EFI_SECURITY_VIOLATION, L"this boot is not the enrolled one: do not type secrets");
        else if (r == TOTP_ERROR)
                mshim_log(EFI_SECURITY_VIOLATION, L"no TOTP code could be made: do not type secrets");
        if (r != TOTP_CODE && c->plan->totp == MB_TOTP_SHOW)
                totp_wait(c->conf);
        /* The door closes whatever happened: no code is made after this. */
        st = mshim_tpm_measure_totp_fence(&c->tpm);
        if (EFI_ERROR(st))
                return st;
        if (r != TOTP_CODE && c->plan->totp == MB_TOTP_REQUIRE) {
                /* Nothing else may be tried either: another entry would
                 * start without the code the user expects. */
                c->tpm.failed = true;
                return mshim_log(EFI_SECURITY_VIOLATION, L"totp require: refusing to boot");
        }
        return EFI_SUCCESS;
}
