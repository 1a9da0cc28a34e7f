/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim unseal: the secret of a sealed file, on standard output, when the
 * TPM's PCRs hold an approved boot state (docs/SEALING.md "Unsealing").
 * Exit 0; 1 the TPM refused the policy (the message names the PCRs that
 * differ from the closest approval and the log's events that extended
 * them); 2 anything else.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <tss2/tss2_rc.h>
#include "luks2.h"
#include "safeio.h"
#include "sealcmd.h"

/* TPM_RC_PCR_CHANGED between PolicyPCR and Unseal: tried again this often. */
#define PCR_CHANGED_TRIES 3

typedef struct unseal_opts {
        const char *esp, *approvals, *pin_file, *log, *file;
        const char *luks;       /* --luks-token DEVICE: the sealed key is its mshim-tpm2 token's */
} unseal_opts;

/* A boot state the secret may open for: an approval, or a literal state. */
typedef struct candidate {
        const char *name;       /* for messages */
        uint32_t pcrs;
        const uint8_t *values;
        const approval *a;      /* signed */
        size_t state;           /* literal: its index */
} candidate;

typedef struct unseal_run {
        unseal_opts *o;
        seal_file f;
        approval_entry *ap;
        size_t n_ap;
        candidate *c;
        size_t n_c;
        mb_pcr_values *now;
        cli_tpm t;
        bool connected;
        ESYS_TR srk, nv, key;
        TPM2B_NAME nv_name, key_name;
        ts_unsealer u;
        bool loaded;
        TPM2B_AUTH auth;
        mb_policy *leaves;      /* literal */
        uint8_t secret[TS_SECRET_MAX];
        size_t secret_size;
        bool revoked_seen;      /* a state that matched failed PolicyNV */
        bool pcr_changed_seen;  /* a state failed PCR_CHANGED_TRIES times over */
        bool bad_sig_seen;      /* a state's approval failed VerifySignature */
        bool fence_seen;        /* the TPM refused the unseal fence's PolicyPCR */
        bool nv_failed;         /* PolicyNV failed other than by its comparison */
        bool from_log;          /* now: the event log's replay, not the TPM's */
} unseal_run;

/* ---- the refusal message ------------------------------------------------- */

static size_t differing(const candidate *c, const mb_pcr_values *now, uint32_t *ret_mask) {
        return seal_state_differs(c->pcrs, c->values, now, ret_mask);
}

static void hex_err(const uint8_t *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                fprintf(stderr, "%02x", p[i]);
}

/* The log's events for each differing PCR, as `mshim log --pcrs` lists
 * them (captured: standard output is the secret's). */
static void explain_events(const unseal_run *r, uint32_t mask) {
        const char *path = r->o->log ? r->o->log : SEAL_LOG;
        out_capture cap = { 0 };
        cli_file f;

        if (access(path, R_OK) < 0 && !r->o->log) {
                fprintf(stderr, "  (no event log at %s to name the events: give --log FILE)\n", path);
                return;
        }
        if (cli_file_load(path, &f) < 0)
                return;
        for (uint32_t i = 0; i < MB_PCR_COUNT; i++) {
                if (!(mask & (1u << i)))
                        continue;
                fprintf(stderr, "  PCR %u, in %s:\n", i, path);
                out_capture_begin(&cap);
                cli_log_pcr_events(f.data, f.size, i, MB_ALG_SHA256);
                out_capture_end(&cap);
                fwrite(cap.buf, 1, cap.len, stderr);
        }
        out_capture_free(&cap);
        cli_file_free(&f);
}

static int refuse(const unseal_run *r) {
        const candidate *best = NULL;
        size_t best_n = SIZE_MAX;
        uint32_t mask = 0, m;
        char list[CLI_PCR_LIST_MAX];
        size_t k = 0;

        for (size_t i = 0; i < r->n_c; i++) {
                size_t n = differing(&r->c[i], r->now, &m);
                if (n < best_n) {
                        best = &r->c[i];
                        best_n = n;
                        mask = m;
                }
        }
        if (!best) {
                cli_error("no boot state to try for %s", r->o->file);
                return EXIT_BAD_INPUT;
        }
        /* First: an approval got as far as the fence's PolicyPCR (its
         * signature and epoch held), so the fence is why, whatever older or
         * forged approvals of the same state also say. */
        if (!best_n && r->fence_seen) {
                const uint8_t *v = mb_pcrs_get(r->now, MB_ALG_SHA256, MB_UNSEAL_FENCE_PCR);
                cli_error("unseal refused: PCR %u, the unseal fence, is no longer zero: earlier in this boot the "
                          "initramfs used this key or gave up on it and asked for a passphrase, and nothing after "
                          "that may unseal it (docs/SEALING.md \"The unseal fence\"); it opens again on the next boot",
                          MB_UNSEAL_FENCE_PCR);
                if (v && !r->from_log) {
                        fprintf(stderr, "  PCR %u: expected ", MB_UNSEAL_FENCE_PCR);
                        hex_err((const uint8_t[SEAL_PCR_VALUE]) { 0 }, SEAL_PCR_VALUE);
                        fprintf(stderr, "\n         TPM      ");
                        hex_err(v, SEAL_PCR_VALUE);
                        fputc('\n', stderr);
                }
                return EXIT_CHECK_FAILED;
        }
        /* An approval of this state by another key before revoked ones:
         * after 'policy init --reset --new-key' both are on the ESP, and
         * only sealing again under the new key helps (docs/RECOVERY.md). */
        if (!best_n && r->bad_sig_seen) {
                cli_error("unseal refused: the approvals for this boot state are not signed by this secret's "
                          "policy key (forged, or made with another policy key: was it replaced, 'mshim policy "
                          "init --reset --new-key'?): after this passphrase boot enrol again under the new key, "
                          "'mshim luks remove DEVICE; mshim luks enroll DEVICE' or 'mshim seal' (docs/RECOVERY.md "
                          "\"Policy key lost or stolen\")");
                return EXIT_CHECK_FAILED;
        }
        if (!best_n && r->revoked_seen) {
                cli_error("unseal refused: the boot state is approved only by revoked approvals (older than the "
                          "epoch counter: 'mshim policy revoke' ended them): after this passphrase boot run 'mshim "
                          "policy approve --current' (docs/RECOVERY.md \"NV counter gone\": 'mshim policy init "
                          "--reset' ends them too)");
                return EXIT_CHECK_FAILED;
        }
        if (!best_n && r->pcr_changed_seen) {
                cli_error("unseal refused: a PCR changed during each of %d tries (TPM_RC_PCR_CHANGED): something "
                          "extends PCRs while mshim unseals", PCR_CHANGED_TRIES);
                return EXIT_CHECK_FAILED;
        }
        if (!best_n) {
                cli_error("unseal refused: the TPM refused the policy of %s although its PCR values match", best->name);
                return EXIT_CHECK_FAILED;
        }
        cli_pcr_select_print(mask, list);
        cli_error("unseal refused: PCR%s %s differ%s from the closest %s (%s)%s: after this passphrase boot check "
                  "'mshim log --pcrs %s', then %s (docs/RECOVERY.md \"Firmware update outside the policy\")",
                  best_n > 1 ? "s" : "", list, best_n > 1 ? "" : "s", best->a ? "approval" : "sealed state",
                  best->name, seal_pcr_cause(mask), list,
                  best->a ? "approve it: 'mshim policy approve --current'" : "seal again ('mshim seal')");
        for (uint32_t i = 0; i < MB_PCR_COUNT; i++) {
                const uint8_t *v;
                if (!(best->pcrs & (1u << i)))
                        continue;
                if (mask & (1u << i)) {
                        v = mb_pcrs_get(r->now, MB_ALG_SHA256, i);
                        fprintf(stderr, "  PCR %u: expected ", i);
                        hex_err(best->values + SEAL_PCR_VALUE * k, SEAL_PCR_VALUE);
                        fprintf(stderr, "\n         TPM      ");
                        if (v)
                                hex_err(v, SEAL_PCR_VALUE);
                        fputc('\n', stderr);
                }
                k++;
        }
        explain_events(r, mask);
        return EXIT_CHECK_FAILED;
}

/* ---- TPM errors -------------------------------------------------------------- */

/* How many more wrong PINs the TPM takes (TPM_PT_MAX_AUTH_FAIL less
 * TPM_PT_LOCKOUT_COUNTER), or -1 when it does not say. */
static long tries_left(cli_tpm *t) {
        TPMS_CAPABILITY_DATA *cap = NULL;
        TPMI_YES_NO more;
        long max = -1, count = -1;

        if (Esys_GetCapability(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_TPM_PROPERTIES,
                               TPM2_PT_LOCKOUT_COUNTER, 2, &more, &cap) != TSS2_RC_SUCCESS)
                return -1;
        for (uint32_t i = 0; i < cap->data.tpmProperties.count; i++) {
                if (cap->data.tpmProperties.tpmProperty[i].property == TPM2_PT_LOCKOUT_COUNTER)
                        count = cap->data.tpmProperties.tpmProperty[i].value;
                if (cap->data.tpmProperties.tpmProperty[i].property == TPM2_PT_MAX_AUTH_FAIL)
                        max = cap->data.tpmProperties.tpmProperty[i].value;
        }
        Esys_Free(cap);
        return max >= 0 && count >= 0 && max >= count ? max - count : -1;
}

static int lockout(void) {
        cli_error("the TPM is in dictionary-attack lockout: it refuses PIN-protected objects until its "
                  "lockout time passes (or the owner resets it with the lockout authorization, "
                  "e.g. tpm2_dictionarylockout --clear-lockout)");
        return EXIT_BAD_INPUT;
}

/* An error that ends the attempts: wrong PIN, lockout, anything not the
 * policy's. */
static int fatal(unseal_run *r, TSS2_RC rc, const char *what) {
        TSS2_RC b = ts_rc_base(rc);

        if (b == TPM2_RC_LOCKOUT)
                return lockout();
        if (b == TPM2_RC_AUTH_FAIL || b == TPM2_RC_BAD_AUTH) {
                long left = tries_left(&r->t);
                if (left >= 0)
                        cli_error("wrong PIN (the TPM counts it: %ld more wrong PIN%s before dictionary-attack lockout)",
                                  left, left == 1 ? "" : "s");
                else
                        cli_error("wrong PIN (the TPM counts failures toward its dictionary-attack lockout)");
                return EXIT_BAD_INPUT;
        }
        cli_error("%s failed: %s", what, Tss2_RC_Decode(rc));
        return EXIT_BAD_INPUT;
}

/* ---- one attempt ----------------------------------------------------------- */

static TSS2_RC signed_steps(unseal_run *r, const candidate *c, const char **what) {
        uint8_t digest[MB_POLICY_SIZE], sig_r[32], sig_s[32];
        mb_policy approved;
        TSS2_RC rc;

        *what = "PolicyNV (the epoch counter)";
        rc = ts_policy_nv(&r->u, r->nv, c->a->epoch);
        if (ts_rc_is_policy(rc))
                r->revoked_seen = true;
        else if (rc)
                r->nv_failed = true;
        if (rc)
                return rc;
        *what = "PolicyPCR";
        if (mb_policy_pcr_digest(c->values, seal_pcr_count(c->pcrs), SEAL_PCR_VALUE, digest) != MB_OK)
                return TSS2_ESYS_RC_BAD_VALUE;
        rc = ts_policy_pcr(&r->u, c->pcrs, digest);
        if (rc)
                return rc;
        if (r->key == ESYS_TR_NONE) {
                *what = "loading the policy key (LoadExternal)";
                rc = ts_load_verify_key(&r->t, &r->f.policy_key, &r->key);
                if (rc)
                        return rc;
        }
        *what = "PolicyAuthorize (the approval's signature)";
        memcpy(approved.d, c->a->policy, MB_POLICY_SIZE);
        if (mb_approval_sig_rs(c->a->signature, c->a->signature_size, sig_r, sig_s) != MB_OK)
                return TSS2_ESYS_RC_BAD_VALUE;
        return ts_policy_authorize(&r->u, r->key, &r->key_name, &approved, sig_r, sig_s, sizeof(sig_r));
}

static TSS2_RC literal_steps(unseal_run *r, const candidate *c, const char **what) {
        mb_policy steps[MB_POLICY_TREE_MAX_DEPTH][MB_POLICY_OR_MAX];
        size_t counts[MB_POLICY_TREE_MAX_DEPTH], n_steps = 0;
        uint8_t digest[MB_POLICY_SIZE];
        TSS2_RC rc;

        *what = "PolicyPCR";
        if (mb_policy_pcr_digest(c->values, seal_pcr_count(c->pcrs), SEAL_PCR_VALUE, digest) != MB_OK ||
            mb_policy_tree_path(r->leaves, r->f.n_states, c->state, steps, counts, &n_steps) != MB_OK)
                return TSS2_ESYS_RC_BAD_VALUE;
        rc = ts_policy_pcr(&r->u, c->pcrs, digest);
        *what = "PolicyOR";
        for (size_t i = 0; rc == TSS2_RC_SUCCESS && i < n_steps; i++)
                rc = ts_policy_or(&r->u, steps[i], counts[i]);
        return rc;
}

/* The unseal fence, after the mode's steps as in the object's policy
 * (docs/SEALING.md "The unseal fence"): its PCRs still at zero. */
static TSS2_RC fence_step(unseal_run *r, const char **what) {
        static const uint8_t zero[MB_PCR_COUNT * SEAL_PCR_VALUE];
        uint8_t digest[MB_POLICY_SIZE];
        TSS2_RC rc;

        if (!r->f.fence)
                return TSS2_RC_SUCCESS;
        *what = "PolicyPCR (the unseal fence)";
        if (mb_policy_pcr_digest(zero, seal_pcr_count(r->f.fence), SEAL_PCR_VALUE, digest) != MB_OK)
                return TSS2_ESYS_RC_BAD_VALUE;
        rc = ts_policy_pcr(&r->u, r->f.fence, digest);
        r->fence_seen |= ts_rc_is_policy(rc);
        return rc;
}

/* 0: unsealed; 1: the policy failed (try the next state); else an exit
 * status. */
static int attempt(unseal_run *r, const candidate *c) {
        for (int tries = 0;; tries++) {
                const char *what = "starting a policy session salted to the SRK";
                TSS2_RC rc = ts_session_start(&r->u);

                if (rc == TSS2_RC_SUCCESS)
                        rc = r->f.literal ? literal_steps(r, c, &what) : signed_steps(r, c, &what);
                if (rc == TSS2_RC_SUCCESS)
                        rc = fence_step(r, &what);
                if (rc == TSS2_RC_SUCCESS) {
                        what = "Unseal";
                        rc = ts_unseal_now(&r->u, r->secret, &r->secret_size);
                }
                ts_session_end(&r->u);
                if (rc == TSS2_RC_SUCCESS)
                        return 0;
                /* Part 3 §23.7: a PCR changed between PolicyPCR and its use. */
                if (ts_rc_base(rc) == TPM2_RC_PCR_CHANGED && tries + 1 < PCR_CHANGED_TRIES)
                        continue;
                r->pcr_changed_seen |= ts_rc_base(rc) == TPM2_RC_PCR_CHANGED;
                /* Part 3 §20.1: VerifySignature's TPM_RC_SIGNATURE. Anyone who
                 * can write to the ESP can drop an approval there; a forged
                 * one must not stop the real ones from being tried. */
                if (c->a && ts_rc_base(rc) == TPM2_RC_SIGNATURE) {
                        cli_error("warning: %s: not signed by this secret's policy key; skipped", c->name);
                        r->bad_sig_seen = true;
                        return 1;
                }
                if (ts_rc_is_policy(rc) || ts_rc_base(rc) == TPM2_RC_PCR_CHANGED)
                        return 1;
                if (r->nv_failed && ts_counter_present(&r->t) == 1) {
                        cli_error("the TPM has no epoch counter (NV index 0x01804D53: undefined, or the TPM's NV "
                                  "was cleaned): after this passphrase boot run 'mshim policy init --reset' and "
                                  "approve this boot again, 'mshim policy approve --current' (docs/RECOVERY.md \"NV "
                                  "counter gone\")");
                        return EXIT_BAD_INPUT;
                }
                return fatal(r, rc, what);
        }
}

/* ---- the run ------------------------------------------------------------------ */

static int matches(const candidate *c, const mb_pcr_values *now) {
        uint32_t m;
        return differing(c, now, &m) == 0;
}

/* Approvals whose approvedPolicy is what their fields and this TPM's
 * counter make: anything else cannot pass PolicyAuthorize. */
static int signed_candidates(unseal_run *r) {
        for (size_t i = 0; i < r->n_ap; i++) {
                const approval *a = &r->ap[i].a;
                mb_policy p;
                if (seal_approved_policy(&r->nv_name, a->epoch, a->pcrs, a->values, &p) < 0)
                        return -1;
                if (memcmp(p.d, a->policy, MB_POLICY_SIZE) || mb_approval_sig_rs(a->signature, a->signature_size,
                                                                                  (uint8_t[32]) { 0 }, (uint8_t[32]) { 0 }) != MB_OK) {
                        cli_error("warning: %s: its policy is not its own fields' (damaged, or for another TPM); skipped",
                                  r->ap[i].path);
                        continue;
                }
                r->c[r->n_c++] = (candidate) { r->ap[i].name, a->pcrs, a->values, a, 0 };
        }
        if (!r->n_c)
                cli_error("no usable approval for %s", r->o->file);
        return r->n_c ? 0 : -1;
}

static int literal_candidates(unseal_run *r) {
        static char names[SEAL_MAX_STATES][32];

        r->leaves = calloc(r->f.n_states, sizeof(*r->leaves));
        if (!r->leaves) {
                cli_error("out of memory");
                return -1;
        }
        for (size_t i = 0; i < r->f.n_states; i++) {
                if (seal_state_leaf(r->f.pcrs, r->f.states[i], &r->leaves[i]) < 0)
                        return -1;
                snprintf(names[i], sizeof(names[i]), "state %zu", i + 1);
                r->c[r->n_c++] = (candidate) { names[i], r->f.pcrs, r->f.states[i], NULL, i };
        }
        return 0;
}

static int load_approvals(unseal_run *r) {
        char *dir = r->o->approvals ? strdup(r->o->approvals) : seal_path(r->o->esp ? r->o->esp : SEAL_ESP, SEAL_APPROVALS);
        size_t bad = 0;
        int ret = -1;

        if (dir && approvals_load_dir(dir, &r->ap, &r->n_ap, &bad) == 0) {
                if (!r->n_ap)
                        cli_error("no approvals in %s: approve a boot state with 'mshim policy approve'", dir);
                ret = r->n_ap ? 0 : -1;
        }
        free(dir);
        return ret;
}

static uint32_t pcrs_needed(const unseal_run *r) {
        uint32_t m = r->f.pcrs | r->f.fence;

        for (size_t i = 0; !r->f.literal && i < r->n_ap; i++)
                m |= r->ap[i].a.pcrs;
        return m;
}

/* The PCRs that pick the states to try. The event log's replay when
 * there is one: it costs no TPM command (a signed unseal is then 11). A
 * log that does not tell the truth (a PCR extended outside it) costs
 * nothing either: the TPM refuses the policy, and run() reads the TPM's
 * own values before trying again or explaining the refusal. */
static int current_pcrs(unseal_run *r) {
        const char *path = r->o->log ? r->o->log : SEAL_LOG;

        if ((r->o->log || access(path, R_OK) == 0) && seal_log_values(path, r->now) == 0) {
                r->from_log = true;
                return 0;
        }
        return cli_tpm_pcr_read_bank(&r->t, MB_ALG_SHA256, pcrs_needed(r), r->now);
}

/* The sealed key from the volume's header (docs/SEALING.md "mshim luks"):
 * as untrusted as a sealed file on the ESP, and checked the same way; its
 * name in messages is "DEVICE, token N". */
static int sealed_from_token(unseal_run *r) {
        static char name[4200];
        luks2_hdr h;
        int e, id;

        if ((e = luks2_read(r->o->luks, &h)))
                return e;
        e = luks2_sealed(&h, &r->f, &id);
        luks2_free(&h);
        if (e == 0) {
                snprintf(name, sizeof(name), "%s, token %d", r->o->luks, id);
                r->o->file = name;
        }
        return e;
}

/* Everything up to the first attempt: files, PIN, TPM objects. */
static int prepare(unseal_run *r) {
        char *pin = NULL;
        int e;

        if (r->o->luks) {
                if ((e = sealed_from_token(r)))
                        return e;
        } else if (seal_file_load(r->o->file, &r->f) < 0)
                return EXIT_BAD_INPUT;
        /* Its policy is the TPM's to enforce, not this command's: an older
         * file still unseals, with the risk said (docs/SEALING.md). */
        if (!r->f.fence)
                cli_error("warning: %s has no unseal fence (sealed by an older mshim): after a passphrase "
                          "fallback, whatever that boot runs can still unseal it; seal the key again "
                          "(docs/SEALING.md \"The unseal fence\")", r->o->file);
        if (!r->f.literal && load_approvals(r) < 0)
                return EXIT_BAD_INPUT;
        r->c = calloc(r->f.literal ? r->f.n_states : r->n_ap, sizeof(*r->c));
        r->now = calloc(1, sizeof(*r->now));
        if (!r->c || !r->now) {
                cli_error("out of memory");
                return EXIT_BAD_INPUT;
        }
        if (r->f.pin) {
                if (!(pin = seal_pin_read(r->o->pin_file, false)))
                        return EXIT_BAD_INPUT;
                ts_pin_auth(pin, &r->auth);
                cli_secret_free(pin);
        }
        if (cli_tpm_connect(&r->t) < 0)
                return EXIT_BAD_INPUT;
        r->connected = true;
        if (current_pcrs(r) < 0)
                return EXIT_BAD_INPUT;
        if ((e = ts_srk_open(&r->t, &r->f.srk, &r->srk)))
                return e;
        if (!r->f.literal) {
                if ((e = ts_counter_from_name(&r->t, r->f.nv_index, &r->f.nv_name, &r->nv, &r->nv_name)))
                        return e;
                if (ts_public_name(&r->f.policy_key, &r->key_name) < 0) {
                        cli_error("%s: the policy key is not one the TPM can load", r->o->file);
                        return EXIT_BAD_INPUT;
                }
        }
        if (r->f.literal ? literal_candidates(r) < 0 : signed_candidates(r) < 0)
                return EXIT_BAD_INPUT;
        if ((e = ts_unsealer_load(&r->u, &r->t, r->srk, &r->f.pub, &r->f.priv, r->f.pin ? &r->auth : NULL)))
                return e;
        r->loaded = true;
        return 0;
}

/* Try every state the values in r->now match and that tried[] does not
 * mark: 0 unsealed, 1 none opened, else an exit status. */
static int try_states(unseal_run *r, bool *tried) {
        for (size_t i = 0; i < r->n_c; i++) {
                int e;

                if (tried[i] || !matches(&r->c[i], r->now))
                        continue;
                tried[i] = true;
                e = attempt(r, &r->c[i]);
                if (e == 0) {
                        /* Flushed now: the secret is written after the TPM is done. */
                        ts_flush(&r->t, &r->key);
                        ts_unsealer_done(&r->u);
                        r->loaded = false;
                }
                /* PCRs that keep changing fail every state alike. */
                if (e != 1 || r->pcr_changed_seen)
                        return e;
        }
        return 1;
}

static int run(unseal_run *r) {
        bool *tried;
        int e = prepare(r);

        if (e)
                return e;
        tried = calloc(r->n_c ? r->n_c : 1, sizeof(*tried));
        if (!tried) {
                cli_error("out of memory");
                return EXIT_BAD_INPUT;
        }
        e = try_states(r, tried);
        /* The log's values opened nothing: the TPM's own, for the states
         * they match that the log's did not, and for the refusal. */
        if (e == 1 && r->from_log && !r->pcr_changed_seen) {
                r->from_log = false;
                e = cli_tpm_pcr_read_bank(&r->t, MB_ALG_SHA256, pcrs_needed(r), r->now) < 0 ? EXIT_BAD_INPUT
                                                                                           : try_states(r, tried);
        }
        free(tried);
        return e == 1 ? refuse(r) : e;
}

static int write_all(const uint8_t *p, size_t n) {
        while (n) {
                ssize_t k = write(STDOUT_FILENO, p, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        cli_error("cannot write the secret to standard output: %s", strerror(errno));
                        return -1;
                }
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

static void run_free(unseal_run *r) {
        if (r->connected) {
                ts_flush(&r->t, &r->key);
                if (r->loaded)
                        ts_unsealer_done(&r->u);
                if (r->srk != ESYS_TR_NONE)
                        Esys_TR_Close(r->t.esys, &r->srk);
                if (r->nv != ESYS_TR_NONE)
                        Esys_TR_Close(r->t.esys, &r->nv);
                cli_tpm_disconnect(&r->t);
        }
        OPENSSL_cleanse(r->secret, sizeof(r->secret));
        OPENSSL_cleanse(&r->auth, sizeof(r->auth));
        approvals_free(r->ap, r->n_ap);
        seal_file_free(&r->f);
        free(r->c);
        free(r->now);
        free(r->leaves);
}

int cmd_unseal(int argc, char **argv) {
        static const struct option longopts[] = {
                { "esp", required_argument, NULL, 'E' },
                { "approvals", required_argument, NULL, 'A' },
                { "pin-file", required_argument, NULL, 'F' },
                { "log", required_argument, NULL, 'l' },
                { "luks-token", required_argument, NULL, 'T' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        unseal_opts o = { 0 };
        unseal_run r = { .o = &o, .srk = ESYS_TR_NONE, .nv = ESYS_TR_NONE, .key = ESYS_TR_NONE };
        int c, e;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "h", longopts, "unseal")) != -1) {
                int once = 0;

                switch (c) {
                case 'E': once = cli_opt_once(&o.esp, "--esp", optarg); break;
                case 'A': once = cli_opt_once(&o.approvals, "--approvals", optarg); break;
                case 'F': once = cli_opt_once(&o.pin_file, "--pin-file", optarg); break;
                case 'l': once = cli_opt_once(&o.log, "--log", optarg); break;
                case 'T': once = cli_opt_once(&o.luks, "--luks-token", optarg); break;
                case 'h': cli_help(stdout, "unseal"); return 0;
                default: return EXIT_BAD_INPUT;
                }
                if (once < 0)
                        return EXIT_BAD_INPUT;
        }
        if (o.esp && o.approvals)
                return cli_usage_error("unseal", "--esp and --approvals cannot be used together");
        if (o.luks && argc - optind != 0)
                return cli_usage_error("unseal", "unexpected argument '%s' (--luks-token DEVICE is the sealed key)",
                                       argv[optind]);
        if (!o.luks && argc - optind != 1)
                return cli_usage_error("unseal", "unseal takes one FILE (the sealed file)");
        o.file = o.luks ? o.luks : argv[optind];
        e = run(&r);
        if (e == 0)
                e = write_all(r.secret, r.secret_size) < 0 ? EXIT_BAD_INPUT : 0;
        run_free(&r);
        return e;
}
