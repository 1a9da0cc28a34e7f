/* SPDX-License-Identifier: BSD-2-Clause */
/* What mshim seal, unseal and policy share (tools/lib/sealcmd.c). */
#ifndef MB_SEALCMD_H
#define MB_SEALCMD_H

#include "policykey.h"
#include "predjson.h"
#include "sealdata.h"

#define SEAL_STATE_DIR "/var/lib/mshim"
#define SEAL_ESP "/boot/efi"
#define SEAL_APPROVALS "loader/mshim/approvals"
/* The TOTP enrolment the loader reads (docs/CONFIG.md); its approvals are
 * in MB_TOTP_APPROVALS_DIR. */
#define SEAL_TOTP_FILE "loader/mshim/totp"
/* The trusted copy of that file, in the state directory: what every host
 * command that signs for the TOTP key reads (the ESP is the attacker's). */
#define SEAL_TOTP_TRUSTED "totp"
#define SEAL_LOG "/sys/kernel/security/tpm0/binary_bios_measurements"
/* docs/SEALING.md "The default PCR set": 4, 5, 7, 9, 12. */
#define SEAL_DEFAULT_PCRS ((1u << 4) | (1u << 5) | (1u << 7) | (1u << 9) | (1u << 12))
/* mshim totp enroll's PCRs without --select: those final at the TOTP point
 * (docs/CONFIG.md "totp"; 9 is not). */
#define SEAL_TOTP_DEFAULT_PCRS ((1u << 4) | (1u << 5) | (1u << 7) | (1u << 12))

/* The unseal fence every disk key gets (docs/SEALING.md "The unseal fence"). */
#define SEAL_FENCE_PCRS (1u << MB_UNSEAL_FENCE_PCR)

/* dir "/" name, malloc()ed (a message and NULL when out of memory). */
char *seal_path(const char *dir, const char *name);
/* The SRK's public area as mshim first used it (docs/SEALING.md "The SRK
 * record"), marshalled TPM2B_PUBLIC, in the state directory. */
#define SEAL_SRK_RECORD "srk.public"
/* The SRK for a command that makes something under it or for it (policy
 * init, seal, totp enroll): with state_dir/srk.public, the key at
 * 0x81000001 must be that one (never made); without it, the SRK is made
 * or checked against the template (ts_srk_provision) and recorded. */
int seal_srk(cli_tpm *t, const char *state_dir, ESYS_TR *ret_srk, TPM2B_PUBLIC *ret_pub);
/* policy init --reset (docs/RECOVERY.md): the SRK made again when it is
 * gone. *ret_what: 0 the recorded one is there, 1 made again and the same
 * key (the owner seed is the same), 2 another key (the TPM was cleared or
 * is another): the old record kept as srk.public.replaced-TIME, the new
 * one written. Another key at the handle is refused (not mshim's). */
int seal_srk_reset(cli_tpm *t, const char *state_dir, int *ret_what);
/* Rename path to path.replaced-YYYYmmddTHHMMSS (never over a file); the
 * new name in *ret_to (malloc()ed). 0, or -1 with a message. */
int seal_move_aside(const char *path, char **ret_to);
/* DIR/policy.key and DIR/policy.pub. */
char *seal_key_path(const char *state_dir, bool pub);

/* approvedPolicy: PolicyNV(counter <= epoch) then PolicyPCR(sha256, mask,
 * values). */
int seal_approved_policy(const TPM2B_NAME *nv_name, uint64_t epoch, uint32_t mask, const uint8_t *values,
                         mb_policy *ret);
/* What a signed policy and its approvals are for: the policyRef of the
 * PolicyAuthorize, and so of every approval's signature (aHash =
 * SHA-256(approvedPolicy || policyRef)): empty for disk keys;
 * "mshim-totp" and the approval's own PCR selection for the TOTP key
 * (mb_totp_policy_ref, docs/SEALING.md "The TOTP key"), so an approval of
 * one kind never authorizes the other, and a TOTP approval only a key
 * enrolled with its very selection. */
typedef enum seal_kind {
        SEAL_DISK,
        SEAL_TOTP,
} seal_kind;

/* A signed disk key's authPolicy: PolicyAuthorize(policy key, empty
 * policyRef), the unseal fence, [then PolicyAuthValue]. */
int seal_signed_policy(const TPM2B_PUBLIC *key, bool pin, mb_policy *ret);
/* The signed TOTP key's authPolicy for the selection mask
 * (mb_totp_signed_policy: PolicyAuthorize with the TOTP policyRef, then
 * PolicyPCR of PCR 13 all zeros). */
int seal_totp_policy(const TPM2B_PUBLIC *key, uint32_t mask, mb_policy *ret);
/* A literal state's leaf: PolicyPCR(sha256, mask, values). */
int seal_state_leaf(uint32_t mask, const uint8_t *values, mb_policy *ret);
/* The literal object's authPolicy over all states: the OR tree, [then
 * the fence f->fence,] [then PolicyAuthValue]. */
int seal_literal_policy(const seal_file *f, mb_policy *ret);

/* The selected PCRs' sha256 values, in order (32 bytes each): from
 * pcrs_file, or with pcrs_file NULL from the TPM t. */
/* The PCR values the event log at path replays to; prints its own error. */
int seal_log_values(const char *path, mb_pcr_values *ret);
int seal_current_values(cli_tpm *t, const char *pcrs_file, uint32_t mask, uint8_t *values);
/* Each PRED.json's (`mshim predict --json`) values of mask into states;
 * each must be a prediction of the point want (pred_json_values). */
int seal_pred_states(char *const *preds, size_t n, pred_point want, uint32_t mask, uint8_t (*states)[SEAL_STATE_MAX]);
/* The signed mode's data: the policy key (state_dir/policy.pub, NULL: the
 * default directory) and the epoch counter's index and Name. */
int seal_signed_setup(cli_tpm *t, const char *state_dir, seal_file *f);
/* The same from PCR values already read. */
int seal_values_from(const mb_pcr_values *v, const char *what, uint32_t mask, uint8_t *values);

/* How many PCRs of mask (values: 32 bytes each, ascending PCR order)
 * differ from now's sha256 bank (a PCR now lacks differs); bit i of
 * *ret_mask for PCR i. What unseal and verify say of the closest state. */
size_t seal_state_differs(uint32_t mask, const uint8_t *values, const mb_pcr_values *now, uint32_t *ret_mask);
/* What changed, from which PCRs differ (TCG PC Client PFP §3.3.4): ""
 * or ", the firmware ..." to append to a sentence. */
const char *seal_pcr_cause(uint32_t mask);

/* A PIN from the first line of pin_file, or asked on the terminal
 * (twice when confirm). malloc()ed; cli_secret_free it. */
char *seal_pin_read(const char *pin_file, bool confirm);

/* The approvals in a directory, in name order. */
typedef struct approval_entry {
        char *path, *name;
        approval a;
} approval_entry;
/* -1 (message) when dir cannot be read; a file that does not parse is
 * skipped with a warning (counted in *ret_bad). */
int approvals_load_dir(const char *dir, approval_entry **ret, size_t *ret_n, size_t *ret_bad);
void approvals_free(approval_entry *e, size_t n);

/* Who signs approvals: the policy key DIR/policy.key of state_dir
 * (checked against DIR/policy.pub), its passphrase from pass_file
 * (--pass-file; NULL: asked on /dev/tty when the key is encrypted), read
 * once for all the signatures of a command. seal_signer_done frees it. */
typedef struct seal_signer {
        const char *state_dir;
        char *pub_path;
        char *key_path;
        pk_signer pk;
} seal_signer;
int seal_signer_init(seal_signer *s, const char *state_dir, const char *pass_file);
void seal_signer_done(seal_signer *s);

/* Sign a: its policy (approvedPolicy of its epoch, PCRs and values, with
 * the counter's Name nv_name) and signature by s's key over kind's aHash.
 * A state directory that holds policy.pub alone (policy init --public-only)
 * is refused with what to do instead (policy approve --request). */
int seal_sign(seal_signer *s, const TPM2B_NAME *nv_name, seal_kind kind, approval *a);
/* a's policy (approvedPolicy, with the counter's Name nv_name) and kind's
 * aHash over it: what seal_sign signs. */
int seal_ahash(const TPM2B_NAME *nv_name, seal_kind kind, approval *a, uint8_t ret_ahash[MB_POLICY_SIZE]);
/* An approval read from the ESP, before anything trusts it: its policy
 * must be the digest of its own fields (epoch, PCRs, values, nv_name) and
 * its signature the key's at pub_path over kind's aHash. 0 yes; 1 no,
 * *ret_why says what is wrong; -1 (a message) the key cannot be read. */
int seal_approval_verify(const char *pub_path, const TPM2B_NAME *nv_name, seal_kind kind, const approval *a,
                         const char **ret_why);
/* Where a goes in dir (its name: entry id, epoch, policy), malloc()ed. */
char *seal_approval_path(const char *dir, const approval *a);
/* Write a to path (in dir, made if absent), never over a file. */
int seal_approval_store(const char *dir, const char *path, const approval *a);

/* A new approval's fields (no epoch, policy or signature yet): -1 with a
 * message when label or entry_id break the codec's rules. */
int seal_approval_init(approval *a, uint32_t mask, const uint8_t *values, const char *label, const char *entry_id);
/* A new approval of (mask, values) at the counter's epoch, signed by s
 * over kind's aHash, written into approvals_dir. ret_path NULL: its path
 * printed on stdout; else the path, malloc()ed, in *ret_path. */
int seal_approve(cli_tpm *t, seal_signer *s, const char *approvals_dir, uint32_t mask, const uint8_t *values,
                 const char *label, const char *entry_id, seal_kind kind, char **ret_path);

/* The TOTP enrolment as the state directory keeps it (state_dir/totp,
 * written by mshim totp enroll), checked: the ESP's copy
 * (esp/loader/mshim/totp) has the same bytes, and a signed one's policy
 * binds its PCR selection and the lock (mb_totp_signed_policy). 0, or -1
 * with a message naming both files (a missing trusted copy: re-enrol). */
int seal_totp_trusted(const char *state_dir, const char *esp, mb_totp_enrolment *ret);
/* 0 when esp_file has trusted's bytes; -1 with a message naming both. */
int seal_totp_esp_check(const char *trusted, const char *esp_file);

#endif
