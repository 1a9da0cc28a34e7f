/* SPDX-License-Identifier: BSD-2-Clause */
/* What mshim seal, unseal and policy share: policies, PCR values, PINs,
 * the approvals directory (docs/SEALING.md). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <tss2/tss2_mu.h>
#include "predjson.h"
#include "safeio.h"
#include "sealcmd.h"
#include "mb/sha.h"
#include "mb/totp.h"

char *seal_path(const char *dir, const char *name) {
        size_t n = strlen(dir) + strlen(name) + 2;
        char *s = malloc(n);

        if (!s) {
                cli_error("out of memory");
                return NULL;
        }
        snprintf(s, n, "%s/%s", dir, name);
        return s;
}

char *seal_key_path(const char *state_dir, bool pub) {
        return seal_path(state_dir, pub ? "policy.pub" : "policy.key");
}

/* ---- policies ---------------------------------------------------------- */

static mb_err pcr_step(mb_policy *p, uint32_t mask, const uint8_t *values) {
        uint8_t digest[MB_POLICY_SIZE];
        mb_err e = mb_policy_pcr_digest(values, seal_pcr_count(mask), SEAL_PCR_VALUE, digest);

        return e == MB_OK ? mb_policy_pcr(p, MB_ALG_SHA256, mask, digest) : e;
}

static int policy_error(mb_err e) {
        cli_error("cannot compute the policy: %s", mb_strerror(e));
        return -1;
}

/* The fence after the mode's part: PolicyAuthorize replaces the digest
 * (Part 3 §23.16), so only steps after it bind every approval; after the
 * OR tree's root for the same order in both modes. */
static mb_err fence_step(mb_policy *p, uint32_t fence) {
        return fence ? mb_policy_pcrs_zero(p, fence) : MB_OK;
}

int seal_approved_policy(const TPM2B_NAME *nv_name, uint64_t epoch, uint32_t mask, const uint8_t *values,
                         mb_policy *ret) {
        mb_err e = mb_policy_approved(nv_name->name, nv_name->size, epoch, MB_ALG_SHA256, mask, values, SEAL_PCR_VALUE, ret);

        return e == MB_OK ? 0 : policy_error(e);
}

/* The policyRef of kind for the selection mask: empty for a disk key;
 * "mshim-totp" and mask's TPML_PCR_SELECTION for the TOTP key, so a TOTP
 * approval's signature always names the selection its approvedPolicy's
 * PolicyPCR has (*ret_size 0 and -1 when mask makes no selection). */
static int kind_ref(seal_kind kind, uint32_t mask, uint8_t ret_ref[MB_TOTP_POLICY_REF_SIZE], size_t *ret_size) {
        *ret_size = 0;
        if (kind != SEAL_TOTP)
                return 0;
        if (mb_totp_policy_ref(MB_ALG_SHA256, mask, ret_ref) != MB_OK)
                return policy_error(MB_ERR_INVALID);
        *ret_size = MB_TOTP_POLICY_REF_SIZE;
        return 0;
}

static int key_name(const TPM2B_PUBLIC *key, TPM2B_NAME *ret) {
        if (ts_public_name(key, ret) < 0) {
                cli_error("cannot compute the policy key's Name");
                return -1;
        }
        return 0;
}

int seal_signed_policy(const TPM2B_PUBLIC *key, bool pin, mb_policy *ret) {
        TPM2B_NAME name;
        mb_policy p;
        mb_err e;

        if (key_name(key, &name) < 0)
                return -1;
        mb_policy_reset(&p);
        e = mb_policy_authorize(&p, name.name, name.size, NULL, 0);
        if (e == MB_OK)
                e = fence_step(&p, SEAL_FENCE_PCRS);
        if (e != MB_OK)
                return policy_error(e);
        if (pin)
                mb_policy_auth_value(&p);
        *ret = p;
        return 0;
}

int seal_totp_policy(const TPM2B_PUBLIC *key, uint32_t mask, mb_policy *ret) {
        TPM2B_NAME name;
        mb_err e;

        if (key_name(key, &name) < 0)
                return -1;
        e = mb_totp_signed_policy(name.name, name.size, MB_ALG_SHA256, mask, ret);
        return e == MB_OK ? 0 : policy_error(e);
}

int seal_state_leaf(uint32_t mask, const uint8_t *values, mb_policy *ret) {
        mb_policy p;
        mb_err e;

        mb_policy_reset(&p);
        e = pcr_step(&p, mask, values);
        if (e != MB_OK)
                return policy_error(e);
        *ret = p;
        return 0;
}

int seal_literal_policy(const seal_file *f, mb_policy *ret) {
        mb_policy *leaves = calloc(f->n_states ? f->n_states : 1, sizeof(*leaves)), root;
        mb_err e = MB_ERR_NOSPACE;
        int r = -1;

        for (size_t i = 0; leaves && i < f->n_states; i++)
                if (seal_state_leaf(f->pcrs, f->states[i], &leaves[i]) < 0)
                        goto out;
        if (leaves)
                e = mb_policy_tree_root(leaves, f->n_states, &root);
        if (e == MB_OK)
                e = fence_step(&root, f->fence);
        if (e != MB_OK) {
                policy_error(e);
                goto out;
        }
        if (f->pin)
                mb_policy_auth_value(&root);
        *ret = root;
        r = 0;
out:
        free(leaves);
        return r;
}

/* ---- PCR values -------------------------------------------------------- */

int seal_pred_states(char *const *preds, size_t n, pred_point want, uint32_t mask, uint8_t (*states)[SEAL_STATE_MAX]) {
        pred_json *p = calloc(1, sizeof(*p));
        int r = p ? 0 : -1;

        if (!p)
                cli_error("out of memory");
        for (size_t i = 0; r == 0 && i < n; i++)
                if (pred_json_load(preds[i], p) < 0 || pred_json_values(preds[i], p, want, mask, states[i]) < 0)
                        r = -1;
        free(p);
        return r;
}

int seal_signed_setup(cli_tpm *t, const char *state_dir, seal_file *f) {
        char *pub = seal_key_path(state_dir ? state_dir : SEAL_STATE_DIR, true);
        ESYS_TR nv = ESYS_TR_NONE;
        int r = -1;

        if (pub && pk_load_public(pub, &f->policy_key) == 0 && ts_counter_open(t, &nv, &f->nv_name, NULL) == 0) {
                f->nv_index = TS_COUNTER_INDEX;
                Esys_TR_Close(t->esys, &nv);
                r = 0;
        }
        if (r < 0 && pub && access(pub, F_OK) < 0)
                cli_error("(run 'mshim policy init' first, or use --literal)");
        free(pub);
        return r;
}

size_t seal_state_differs(uint32_t mask, const uint8_t *values, const mb_pcr_values *now, uint32_t *ret_mask) {
        size_t k = 0, n = 0;

        *ret_mask = 0;
        for (uint32_t i = 0; i < MB_PCR_COUNT; i++) {
                const uint8_t *v;
                if (!(mask & (1u << i)))
                        continue;
                v = mb_pcrs_get(now, MB_ALG_SHA256, i);
                if (!v || memcmp(v, values + SEAL_PCR_VALUE * k, SEAL_PCR_VALUE)) {
                        *ret_mask |= 1u << i;
                        n++;
                }
                k++;
        }
        return n;
}

const char *seal_pcr_cause(uint32_t mask) {
        if (mask & 0x0fu)
                return ", the firmware or its configuration changed (a firmware update?)";
        if (mask & (1u << 7))
                return ", Secure Boot's state or keys changed";
        return "";
}

int seal_values_from(const mb_pcr_values *v, const char *what, uint32_t mask, uint8_t *values) {
        size_t k = 0;

        for (uint32_t i = 0; i < MB_PCR_COUNT; i++) {
                const uint8_t *x;
                if (!(mask & (1u << i)))
                        continue;
                x = mb_pcrs_get(v, MB_ALG_SHA256, i);
                if (!x) {
                        cli_error("%s: no sha256 value for PCR %u", what, i);
                        return -1;
                }
                memcpy(values + SEAL_PCR_VALUE * k++, x, SEAL_PCR_VALUE);
        }
        return 0;
}

int seal_current_values(cli_tpm *t, const char *pcrs_file, uint32_t mask, uint8_t *values) {
        mb_pcr_values *v = calloc(1, sizeof(*v));
        cli_file f;
        int r = -1;

        if (!v) {
                cli_error("out of memory");
                return -1;
        }
        if (!pcrs_file) {
                if (cli_tpm_pcr_read_bank(t, MB_ALG_SHA256, mask, v) == 0)
                        r = seal_values_from(v, "the TPM", mask, values);
        } else if (cli_file_load_max(pcrs_file, (size_t) 1 << 20, "a PCR values file", &f) == 0) {
                if (mb_pcrs_parse((const char *) f.data, f.size, v) != MB_OK)
                        cli_error("%s: not PCR values (tpm2_pcrread YAML or \"sha256:7=<hex>\" lines)", pcrs_file);
                else
                        r = seal_values_from(v, pcrs_file, mask, values);
                cli_file_free(&f);
        }
        free(v);
        return r;
}

/* ---- PINs ------------------------------------------------------------------ */

#define PIN_MAX 256

static char *pin_file_read(const char *path) {
        cli_file f;
        size_t n = 0;
        char *s = NULL;

        if (cli_file_load_max(path, (size_t) 1 << 20, "a PIN file", &f) < 0)
                return NULL;
        while (n < f.size && f.data[n] != '\n')
                n++;
        if (n > 0 && f.data[n - 1] == '\r')
                n--;
        if (n == 0 || n > PIN_MAX || memchr(f.data, 0, n))
                cli_error("%s: the PIN (its first line) must be 1 to %d bytes, no NUL", path, PIN_MAX);
        else if ((s = malloc(n + 1))) {
                memcpy(s, f.data, n);
                s[n] = 0;
        } else
                cli_error("out of memory");
        cli_file_free(&f);
        return s;
}

static char *pin_ask(const char *prompt) {
        int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
        char *s;

        if (fd < 0) {
                cli_error("there is no terminal to ask the PIN on; give --pin-file FILE");
                return NULL;
        }
        s = cli_tty_secret(fd, prompt);
        close(fd);
        if (s && (!*s || strlen(s) > PIN_MAX)) {
                cli_error("the PIN must be 1 to %d bytes", PIN_MAX);
                cli_secret_free(s);
                s = NULL;
        }
        return s;
}

char *seal_pin_read(const char *pin_file, bool confirm) {
        char *a, *b;

        if (pin_file)
                return pin_file_read(pin_file);
        a = pin_ask("PIN: ");
        if (!a || !confirm)
                return a;
        b = pin_ask("PIN again: ");
        if (b && strcmp(a, b) == 0) {
                cli_secret_free(b);
                return a;
        }
        if (b)
                cli_error("the PINs differ");
        cli_secret_free(a);
        cli_secret_free(b);
        return NULL;
}

/* ---- approvals ------------------------------------------------------------- */

static int by_name(const void *a, const void *b) {
        return strcmp(((const approval_entry *) a)->name, ((const approval_entry *) b)->name);
}

static bool is_approval_name(const char *n) {
        size_t l = strlen(n);
        return l > 9 && n[0] != '.' && strcmp(n + l - 9, ".approval") == 0;
}

int approvals_load_dir(const char *dir, approval_entry **ret, size_t *ret_n, size_t *ret_bad) {
        DIR *d = opendir(dir);
        struct dirent *de;
        approval_entry *e = NULL;
        size_t n = 0, bad = 0;

        if (!d) {
                cli_error("%s: cannot list the approvals: %s", dir, strerror(errno));
                return -1;
        }
        while ((de = readdir(d))) {
                approval_entry x = { 0 };
                void *ne;

                if (!is_approval_name(de->d_name))
                        continue;
                x.path = seal_path(dir, de->d_name);
                x.name = strdup(de->d_name);
                ne = x.path && x.name ? realloc(e, (n + 1) * sizeof(*e)) : NULL;
                if (!ne) {
                        free(x.path);
                        free(x.name);
                        approvals_free(e, n);
                        closedir(d);
                        cli_error("out of memory");
                        return -1;
                }
                e = ne;
                if (approval_load(x.path, &x.a) < 0) {
                        cli_error("warning: %s skipped", x.path);
                        free(x.path);
                        free(x.name);
                        bad++;
                        continue;
                }
                e[n++] = x;
        }
        closedir(d);
        if (n)
                qsort(e, n, sizeof(*e), by_name);
        *ret = e;
        *ret_n = n;
        if (ret_bad)
                *ret_bad = bad;
        return 0;
}

void approvals_free(approval_entry *e, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(e[i].path);
                free(e[i].name);
        }
        free(e);
}

/* mkdir -p, 0755 (the ESP's directories are public). */
static int make_dirs(const char *path) {
        char *s = strdup(path);
        int r = 0;

        if (!s) {
                cli_error("out of memory");
                return -1;
        }
        for (char *p = s + 1; r == 0; p++) {
                if (*p && *p != '/')
                        continue;
                char c = *p;
                *p = 0;
                if (mkdir(s, 0755) < 0 && errno != EEXIST) {
                        cli_error("cannot create %s: %s", s, strerror(errno));
                        r = -1;
                }
                *p = c;
                if (!c)
                        break;
        }
        free(s);
        return r;
}

/* NAME.approval: the entry id (or label, or "boot") in file-name-safe
 * characters, the epoch and the start of approvedPolicy, so approvals of
 * different states or epochs never share a name. */
static char *approval_name(const approval *a) {
        const char *id = a->entry_id[0] ? a->entry_id : a->label[0] ? a->label : "boot";
        char safe[MB_APPROVAL_ID_MAX + 1], *s;
        size_t k = 0, n;

        for (; *id && k < 64; id++) {
                bool ok = (*id && strchr("._-", *id)) || (*id >= '0' && *id <= '9') || (*id >= 'a' && *id <= 'z') ||
                          (*id >= 'A' && *id <= 'Z');
                safe[k] = ok && !(k == 0 && *id == '.') ? *id : '_';
                k++;
        }
        safe[k] = 0;
        n = sizeof(safe) + 64;
        s = malloc(n);
        if (s)
                snprintf(s, n, "%s-e%llu-%02x%02x%02x%02x.approval", safe, (unsigned long long) a->epoch, a->policy[0],
                         a->policy[1], a->policy[2], a->policy[3]);
        return s;
}

/* The codec's rules for --label and --entry-id, said before anything is
 * signed (docs/SEALING.md "Approval"). */
static int text_ok(const char *what, const char *s, size_t max, const char *extra) {
        if (strlen(s) > max) {
                cli_error("%s is longer than %zu characters", what, max);
                return -1;
        }
        for (const char *c = s; *c; c++) {
                bool ok = extra ? (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                                          strchr(extra, *c)
                                : *c >= 0x20 && *c < 0x7f;
                if (!ok) {
                        cli_error("%s '%s': %s only", what, s, extra ? "letters, digits and ._+~@:-" : "printable ASCII");
                        return -1;
                }
        }
        return 0;
}

int seal_signer_init(seal_signer *s, const char *state_dir, const char *pass_file) {
        *s = (seal_signer) { .state_dir = state_dir };
        s->pub_path = seal_key_path(state_dir, true);
        s->key_path = seal_key_path(state_dir, false);
        s->pk = (pk_signer) { .key_path = s->key_path, .pass_file = pass_file };
        return s->pub_path && s->key_path ? 0 : -1;
}

void seal_signer_done(seal_signer *s) {
        pk_signer_done(&s->pk);
        free(s->pub_path);
        free(s->key_path);
        s->pub_path = s->key_path = NULL;
}

int seal_ahash(const TPM2B_NAME *nv_name, seal_kind kind, approval *a, uint8_t ret_ahash[MB_POLICY_SIZE]) {
        uint8_t ref[MB_TOTP_POLICY_REF_SIZE];
        size_t ref_size;
        mb_policy policy;

        if (seal_approved_policy(nv_name, a->epoch, a->pcrs, a->values, &policy) < 0 ||
            kind_ref(kind, a->pcrs, ref, &ref_size) < 0)
                return -1;
        memcpy(a->policy, policy.d, MB_POLICY_SIZE);
        mb_policy_authorize_ahash(&policy, ref, ref_size, ret_ahash);
        return 0;
}

int seal_sign(seal_signer *s, const TPM2B_NAME *nv_name, seal_kind kind, approval *a) {
        uint8_t ahash[MB_POLICY_SIZE];
        TPM2B_PUBLIC pub;
        struct stat st;

        if (pk_load_public(s->pub_path, &pub) < 0)
                return -1;
        /* A machine that holds the public key alone signs nothing: said
         * before any prompt, with the way that works there. */
        if (!s->pk.key && lstat(s->key_path, &st) < 0 && errno == ENOENT) {
                cli_error("%s: absent: this machine holds the policy key's public part only (%s); write what to "
                          "sign with 'mshim policy approve --request OUT', sign it where the key is ('mshim policy "
                          "sign'), and install it with 'mshim policy approve --signature SIG OUT' (docs/SEALING.md "
                          "\"Signing elsewhere\")", s->key_path, s->pub_path);
                return -1;
        }
        if (seal_ahash(nv_name, kind, a, ahash) < 0)
                return -1;
        return pk_sign(&s->pk, &pub, ahash, a->signature, sizeof(a->signature), &a->signature_size);
}

int seal_approval_verify(const char *pub_path, const TPM2B_NAME *nv_name, seal_kind kind, const approval *a,
                         const char **ret_why) {
        uint8_t ref[MB_TOTP_POLICY_REF_SIZE];
        size_t ref_size;
        uint8_t ahash[MB_POLICY_SIZE];
        mb_policy policy;
        int k;

        /* The fields first: only the policy is signed (docs/SEALING.md
         * "Approval"), so a file whose epoch, PCRs or values were edited
         * still carries a good signature over its old policy. */
        if (mb_policy_approved(nv_name->name, nv_name->size, a->epoch, MB_ALG_SHA256, a->pcrs, a->values,
                               SEAL_PCR_VALUE, &policy) != MB_OK ||
            CRYPTO_memcmp(policy.d, a->policy, MB_POLICY_SIZE)) {
                *ret_why = "its policy is not the digest of its own epoch, PCRs and values (edited after it was signed)";
                return 1;
        }
        /* A TOTP approval's policyRef names its own selection (the signer
         * signs no other). */
        if (kind_ref(kind, a->pcrs, ref, &ref_size) < 0) {
                *ret_why = "its PCRs make no TOTP policyRef";
                return 1;
        }
        mb_policy_authorize_ahash(&policy, ref, ref_size, ahash);
        k = pk_verify(pub_path, ahash, a->signature, a->signature_size);
        if (k == 1)
                *ret_why = kind == SEAL_TOTP ? "its signature is not the policy key's over its policy and the TOTP "
                                               "policyRef of its PCRs (forged, or not a TOTP approval)"
                                             : "its signature is not the policy key's over its policy (forged, or "
                                               "not a disk approval)";
        return k;
}

static int sign_approval(cli_tpm *t, seal_signer *s, seal_kind kind, approval *a) {
        TPM2B_NAME nv_name;
        ESYS_TR nv = ESYS_TR_NONE;

        if (ts_counter_open(t, &nv, &nv_name, &a->epoch))
                return -1;
        Esys_TR_Close(t->esys, &nv);
        return seal_sign(s, &nv_name, kind, a);
}

char *seal_approval_path(const char *dir, const approval *a) {
        char *name = approval_name(a), *path = name ? seal_path(dir, name) : NULL;

        if (!name)
                cli_error("out of memory");
        free(name);
        return path;
}

int seal_approval_store(const char *dir, const char *path, const approval *a) {
        char *text = approval_format(a);
        int r = -1;

        if (text && make_dirs(dir) == 0 && seal_write_new(path, CLI_MODE_PUBLIC, text, strlen(text)) == 0)
                r = 0;
        free(text);
        return r;
}

int seal_approval_init(approval *a, uint32_t mask, const uint8_t *values, const char *label, const char *entry_id) {
        time_t now = time(NULL);

        memset(a, 0, sizeof(*a));
        if (text_ok("--label", label, MB_APPROVAL_LABEL_MAX, NULL) < 0 ||
            text_ok("--entry-id", entry_id, MB_APPROVAL_ID_MAX, "._+~@:-") < 0)
                return -1;
        a->bank = MB_ALG_SHA256;
        a->pcrs = mask;
        memcpy(a->values, values, seal_pcr_count(mask) * SEAL_PCR_VALUE);
        strcpy(a->label, label);
        strcpy(a->entry_id, entry_id);
        strftime(a->created, sizeof(a->created), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
        return 0;
}

int seal_approve(cli_tpm *t, seal_signer *s, const char *approvals_dir, uint32_t mask, const uint8_t *values,
                 const char *label, const char *entry_id, seal_kind kind, char **ret_path) {
        approval a;
        char *path = NULL;
        int r = -1;

        if (seal_approval_init(&a, mask, values, label, entry_id) < 0)
                return -1;
        if (sign_approval(t, s, kind, &a) < 0 || !(path = seal_approval_path(approvals_dir, &a)) ||
            seal_approval_store(approvals_dir, path, &a) < 0)
                goto out;
        if (ret_path) {
                *ret_path = path;
                path = NULL;
        } else {
                printf("%s\n", path);
        }
        r = 0;
out:
        free(path);
        return r;
}

/* ---- the SRK record -------------------------------------------------------- */

/* DIR/srk.public: 0 (ret set), 1 absent, -1 (a message) unreadable or
 * not a marshalled TPM2B_PUBLIC, exactly. */
static int srk_record_load(const char *path, TPM2B_PUBLIC *ret) {
        TPM2B_PUBLIC pub = { 0 };
        size_t off = 0;
        cli_file f;
        int r = -1;

        if (access(path, F_OK) < 0 && errno == ENOENT)
                return 1;
        if (cli_file_load_max(path, sizeof(TPM2B_PUBLIC) + 2, "the SRK record", &f) < 0)
                return -1;
        if (Tss2_MU_TPM2B_PUBLIC_Unmarshal(f.data, f.size, &off, &pub) == TSS2_RC_SUCCESS && off == f.size) {
                *ret = pub;
                r = 0;
        } else {
                cli_error("%s: not a storage root key's public area (damaged; docs/SEALING.md \"The SRK record\")",
                          path);
        }
        cli_file_free(&f);
        return r;
}

static int srk_record_write(const char *state_dir, const char *path, const TPM2B_PUBLIC *pub) {
        uint8_t buf[sizeof(TPM2B_PUBLIC) + 2];
        size_t off = 0;

        if (mkdir(state_dir, 0700) < 0 && errno != EEXIST) {
                cli_error("cannot create %s: %s", state_dir, strerror(errno));
                return -1;
        }
        if (Tss2_MU_TPM2B_PUBLIC_Marshal(pub, buf, sizeof(buf), &off) != TSS2_RC_SUCCESS) {
                cli_error("cannot marshal the storage root key's public area");
                return -1;
        }
        return seal_write_new(path, CLI_MODE_PUBLIC, buf, off);
}

int seal_srk(cli_tpm *t, const char *state_dir, ESYS_TR *ret_srk, TPM2B_PUBLIC *ret_pub) {
        char *path = seal_path(state_dir, SEAL_SRK_RECORD);
        TPM2B_PUBLIC rec;
        int k, r = EXIT_BAD_INPUT;

        if (!path)
                return r;
        k = srk_record_load(path, &rec);
        if (k == 0 && (r = ts_srk_recorded(t, &rec, path, ret_srk)) == 0) {
                *ret_pub = rec;
        } else if (k == 1 && (r = ts_srk_provision(t, ret_srk, ret_pub)) == 0 &&
                   srk_record_write(state_dir, path, ret_pub) < 0) {
                Esys_TR_Close(t->esys, ret_srk);
                r = EXIT_BAD_INPUT;
        }
        free(path);
        return r;
}

int seal_move_aside(const char *path, char **ret_to) {
        time_t now = time(NULL);
        char stamp[32], *to;
        size_t n = strlen(path) + 48;
        struct stat st;

        strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", gmtime(&now));
        if (!(to = malloc(n))) {
                cli_error("out of memory");
                return -1;
        }
        snprintf(to, n, "%s.replaced-%s", path, stamp);
        if (lstat(to, &st) == 0 || errno != ENOENT || rename(path, to) < 0) {
                cli_error("cannot keep %s as %s: %s", path, to, lstat(to, &st) == 0 ? "it exists" : strerror(errno));
                free(to);
                return -1;
        }
        *ret_to = to;
        return 0;
}

int seal_srk_reset(cli_tpm *t, const char *state_dir, int *ret_what) {
        char *path = seal_path(state_dir, SEAL_SRK_RECORD), *aside = NULL;
        TPM2B_PUBLIC rec, pub;
        TPM2B_NAME a, b;
        ESYS_TR srk = ESYS_TR_NONE;
        int k, m = 1, r = EXIT_BAD_INPUT;

        if (!path || (k = srk_record_load(path, &rec)) < 0)
                goto out;
        if (k == 0 && (m = ts_srk_match(t, &rec)) == 2) {
                /* Someone else's key at mshim's handle: said with both
                 * Names; removing it is the owner's decision. */
                ts_srk_recorded(t, &rec, path, &srk);
                cli_error("not replacing it: if that key is yours, evict it (tpm2_evictcontrol -C o -c 0x81000001) "
                          "and run this again (docs/RECOVERY.md \"SRK replaced\")");
                goto out;
        }
        if (m == 0) {
                *ret_what = 0;
                r = 0;
                goto out;
        }
        if (m != 1) {
                r = m;
                goto out;
        }
        if ((r = ts_srk_provision(t, &srk, &pub)) != 0)
                goto out;
        Esys_TR_Close(t->esys, &srk);
        /* The template and the owner seed make the key: the same Name, the
         * same key, and every file sealed under it still opens. */
        if (k == 0 && ts_public_name(&rec, &a) == 0 && ts_public_name(&pub, &b) == 0 && a.size == b.size &&
            memcmp(a.name, b.name, a.size) == 0) {
                *ret_what = 1;
                goto out;
        }
        r = EXIT_BAD_INPUT;
        if ((k == 0 && seal_move_aside(path, &aside) < 0) || srk_record_write(state_dir, path, &pub) < 0)
                goto out;
        if (aside)
                printf("kept the old SRK record as %s\n", aside);
        *ret_what = 2;
        r = 0;
out:
        free(aside);
        free(path);
        return r;
}

/* The PCR values an event log replays to (every bank mshim can hash), as
 * the TPM should hold them if nothing outside the log extended a PCR. */
int seal_log_values(const char *path, mb_pcr_values *ret) {
        cli_file f;
        mb_tcglog log;
        mb_tcglog_event ev;
        mb_replay *rp;
        mb_err e = MB_ERR_INVALID;
        int r = -1;

        if (cli_file_load(path, &f) < 0)
                return -1;
        rp = calloc(1, sizeof(*rp));
        if (rp && mb_tcglog_open(&log, f.data, f.size) == MB_OK) {
                mb_replay_init(rp, &log);
                while ((e = mb_tcglog_next(&log, &ev)) == MB_OK)
                        mb_replay_event(rp, &ev);
        }
        if (e == MB_END) {
                memset(ret, 0, sizeof(*ret));
                for (uint32_t b = 0; b < rp->n_banks; b++)
                        for (uint32_t i = 0; rp->banks[b].computable && i < MB_PCR_COUNT; i++)
                                mb_pcrs_set(ret, rp->banks[b].alg, i, rp->banks[b].pcr[i], rp->banks[b].size);
                r = 0;
        } else {
                cli_error("%s: not a readable event log", path);
        }
        free(rp);
        cli_file_free(&f);
        return r;
}

/* ---- the TOTP enrolment: the state directory's copy ------------------------- */

int seal_totp_esp_check(const char *trusted, const char *esp_file) {
        cli_file a, b;
        int r = -1;

        if (access(esp_file, F_OK) < 0 && errno == ENOENT) {
                cli_error("%s is missing; the trusted TOTP enrolment is %s: refusing (if you did not remove it, "
                          "put the trusted one back: cp %s %s)", esp_file, trusted, trusted, esp_file);
                return -1;
        }
        if (cli_file_load_max(trusted, SEAL_MAX_FILE, "a TOTP enrolment", &a) < 0)
                return -1;
        if (cli_file_load_max(esp_file, SEAL_MAX_FILE, "a TOTP enrolment", &b) == 0) {
                if (a.size == b.size && memcmp(a.data, b.data, a.size) == 0)
                        r = 0;
                else
                        cli_error("%s differs from the trusted TOTP enrolment %s: refusing to use it (anyone with "
                                  "the disk can write the ESP; if you did not change it, put the trusted one back: "
                                  "cp %s %s)", esp_file, trusted, trusted, esp_file);
                cli_file_free(&b);
        }
        cli_file_free(&a);
        return r;
}

/* A signed enrolment's policy must be mb_totp_signed_policy of its own
 * policy key and PCRs: one made before the policyRef named the selection
 * and PCR 13 locked it has another, and approvals made for it now would
 * never give a code. */
static int totp_policy_current(const char *path, const mb_totp_enrolment *e) {
        uint8_t name[MB_POLICY_NAME_MAX];
        size_t name_size = 0;
        mb_policy want;

        if (e->mode != MB_SEAL_SIGNED)
                return 0;
        if (mb_policy_name(e->policy_key, e->policy_key_size, false, name, &name_size) != MB_OK ||
            mb_totp_signed_policy(name, name_size, e->bank, e->pcrs, &want) != MB_OK ||
            memcmp(want.d, e->policy, MB_POLICY_SIZE) != 0) {
                cli_error("%s: the TOTP key's policy does not bind its PCR selection and the fence in PCR 13 "
                          "(enrolled by an older mshim): re-enrol (mshim totp remove; mshim totp enroll)", path);
                return -1;
        }
        return 0;
}

int seal_totp_trusted(const char *state_dir, const char *esp, mb_totp_enrolment *ret) {
        char *trusted = seal_path(state_dir, SEAL_TOTP_TRUSTED), *esp_file = seal_path(esp, SEAL_TOTP_FILE);
        mb_totp_enrolment e;
        int k, r = -1;

        if (!trusted || !esp_file)
                goto out;
        k = totp_enrolment_load(trusted, &e);
        if (k == 1 && access(esp_file, F_OK) == 0)
                cli_error("%s: no trusted copy of the TOTP enrolment %s (enrolments made by an older mshim have "
                          "none, and their key's policy does not bind its PCRs): re-enrol (mshim totp remove; "
                          "mshim totp enroll)", trusted, esp_file);
        else if (k == 1)
                cli_error("%s: no TOTP enrolment (mshim totp enroll first)", trusted);
        if (k == 0 && seal_totp_esp_check(trusted, esp_file) == 0 && totp_policy_current(trusted, &e) == 0) {
                *ret = e;
                r = 0;
        }
out:
        free(trusted);
        free(esp_file);
        return r;
}
