/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim policy init | approve | list | prune | revoke: the policy key, the
 * epoch counter and the approvals of boot states (docs/SEALING.md).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "predjson.h"
#include "request.h"
#include "safeio.h"
#include "sealcmd.h"
#include "mb/totp.h"

typedef struct policy_opts {
        const char *state_dir, *esp, *approvals, *predicted, *pcrs_file, *label, *entry_id, *log;
        const char *pass_file;  /* --pass-file: the policy key's passphrase */
        const char *request;    /* approve --request OUT: what to sign elsewhere */
        const char *signature;  /* approve --signature SIG: install a signed request */
        const char *key, *output; /* sign --key KEY -o SIG */
        const char *public_only; /* init --public-only PUB */
        bool reset, new_key;    /* init --reset [--new-key] */
        const char *arg;        /* approve --signature's and sign's REQUEST */
        bool current, tpm, json, totp;
        bool others;            /* revoke --others: all but this boot's (mshim bless --revoke) */
        uint32_t select;
        const char *keep[64];
        size_t n_keep;
} policy_opts;

/* Where the approvals of kind are on the ESP. */
static char *kind_dir(const policy_opts *o, seal_kind kind) {
        return seal_path(o->esp ? o->esp : SEAL_ESP, kind == SEAL_TOTP ? MB_TOTP_APPROVALS_DIR : SEAL_APPROVALS);
}

/* --totp: the TOTP key's approvals (docs/SEALING.md "The TOTP key"). */
static char *approvals_dir(const policy_opts *o) {
        return kind_dir(o, o->totp ? SEAL_TOTP : SEAL_DISK);
}

#define STATE(o) ((o)->state_dir ? (o)->state_dir : SEAL_STATE_DIR)

/* ---- init ------------------------------------------------------------------ */

/* --public-only PUB: the key's public part only, checked to be a P-256
 * key (*ret: its bytes, as given). */
static int public_only_load(const char *path, cli_file *ret) {
        TPM2B_PUBLIC k;

        if (pk_load_public(path, &k) < 0)
                return -1;
        return cli_file_load_max(path, (size_t) 1 << 20, "a public key", ret);
}

static int policy_reset(const policy_opts *o);

static int policy_init(const policy_opts *o) {
        const char *dir = o->state_dir ? o->state_dir : SEAL_STATE_DIR;
        char *key = seal_key_path(dir, false), *pub = seal_key_path(dir, true);
        TPM2B_PUBLIC srk_pub;
        ESYS_TR srk = ESYS_TR_NONE;
        struct stat st;
        uint64_t epoch = 0;
        cli_file pf = { 0 };
        cli_tpm t;
        int r = EXIT_BAD_INPUT;

        if (o->reset) {
                free(key);
                free(pub);
                return policy_reset(o);
        }
        if (!key || !pub || (o->public_only && public_only_load(o->public_only, &pf) < 0))
                goto out;
        /* Before anything changes in the TPM: an existing key is kept. */
        if (lstat(key, &st) == 0 || lstat(pub, &st) == 0) {
                cli_error("%s exists: the policy key is made once (every approval and signed sealed file "
                          "depends on it); not overwriting it (a cleared TPM, a lost key: 'mshim policy init "
                          "--reset', docs/RECOVERY.md)", lstat(key, &st) == 0 ? key : pub);
                goto out;
        }
        if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
                cli_error("cannot create %s: %s", dir, strerror(errno));
                goto out;
        }
        if (cli_tpm_connect(&t) < 0)
                goto out;
        r = seal_srk(&t, dir, &srk, &srk_pub);
        if (r == 0)
                r = ts_counter_provision(&t, &epoch);
        if (srk != ESYS_TR_NONE)
                Esys_TR_Close(t.esys, &srk);
        cli_tpm_disconnect(&t);
        /* --public-only: this machine never holds the private part; its
         * approvals are signed elsewhere (policy approve --request). */
        if (r == 0 && (o->public_only ? seal_write_new(pub, CLI_MODE_PUBLIC, pf.data, pf.size) : pk_generate(key, pub)) < 0)
                r = EXIT_BAD_INPUT;
        if (r == 0)
                printf("storage root key: 0x81000001\nepoch counter: 0x01804D53 = %llu\npolicy key: %s\npublic key: %s\n",
                       (unsigned long long) epoch, o->public_only ? "none here (signed elsewhere)" : key, pub);
out:
        if (o->public_only)
                cli_file_free(&pf);
        free(key);
        free(pub);
        return r;
}

/* ---- approve --------------------------------------------------------------- */

/* The PCRs of the signed TOTP enrolment: what every TOTP approval must
 * select (the loader's PolicyPCR is over them, and the key's policyRef
 * names them). From the state directory's trusted copy, never from the
 * ESP's alone: an ESP copy that differs is refused (seal_totp_trusted). */
static int totp_enrolment_pcrs(const policy_opts *o, uint32_t *ret_mask) {
        mb_totp_enrolment e;

        if (seal_totp_trusted(o->state_dir ? o->state_dir : SEAL_STATE_DIR, o->esp ? o->esp : SEAL_ESP, &e) < 0)
                return -1;
        if (e.mode != MB_SEAL_SIGNED) {
                cli_error("the TOTP enrolment is literal: re-enrol with --signed to use approvals");
                return -1;
        }
        *ret_mask = e.pcrs;
        return 0;
}

/* --totp: the enrolment's PCRs, and --select (if given) must be them. */
static int totp_mask(const policy_opts *o, uint32_t *ret_mask) {
        char want[CLI_PCR_LIST_MAX], got[CLI_PCR_LIST_MAX];

        if (totp_enrolment_pcrs(o, ret_mask) < 0)
                return -1;
        if (o->select && o->select != *ret_mask) {
                cli_pcr_select_print(*ret_mask, want);
                cli_pcr_select_print(o->select, got);
                cli_error("--select %s: the TOTP enrolment's PCRs are %s (a TOTP approval selects exactly those)", got,
                          want);
                return -1;
        }
        return 0;
}

/* ---- signing elsewhere (docs/SEALING.md "Signing elsewhere") ---------------- */

/* approve --request OUT: the approval without its signature, to OUT and
 * to this machine's copy STATE/requests/NAME.request, which --signature
 * takes as the only truth of what was asked. */
static int approve_request(const policy_opts *o, cli_tpm *t, uint32_t mask, const uint8_t *values) {
        char *pub = seal_key_path(STATE(o), true), *rdir = seal_path(STATE(o), "requests"), *pending = NULL, *text = NULL;
        approval_request *q = calloc(1, sizeof(*q));
        ESYS_TR nv = ESYS_TR_NONE;
        TPM2B_PUBLIC key;
        int r = EXIT_BAD_INPUT;

        if (!pub || !rdir || !q || pk_load_public(pub, &key) < 0 ||
            seal_approval_init(&q->a, mask, values, o->label ? o->label : "", o->entry_id ? o->entry_id : "") < 0 ||
            ts_counter_open(t, &nv, &q->nv_name, &q->a.epoch))
                goto out;
        Esys_TR_Close(t->esys, &nv);
        q->kind = o->totp ? SEAL_TOTP : SEAL_DISK;
        if (ts_public_name(&key, &q->key_name) < 0) {
                cli_error("%s: cannot compute the policy key's Name", pub);
                goto out;
        }
        if (seal_ahash(&q->nv_name, q->kind, &q->a, q->ahash) < 0 || !(text = request_format(q)) ||
            !(pending = request_pending_path(STATE(o), &q->a)))
                goto out;
        if (mkdir(rdir, 0700) < 0 && errno != EEXIST) {
                cli_error("cannot create %s: %s", rdir, strerror(errno));
                goto out;
        }
        if (seal_write_new(pending, CLI_MODE_PUBLIC, text, strlen(text)) < 0)
                goto out;
        if (seal_write_new(o->request, CLI_MODE_PUBLIC, text, strlen(text)) < 0) {
                unlink(pending);
                goto out;
        }
        printf("%s\n", o->request);
        fprintf(stderr, "mshim: the request is %s (this machine keeps %s); sign it where the policy key is "
                "(mshim policy sign --key policy.key %s -o SIG), then here: mshim policy approve --signature SIG %s\n",
                o->request, pending, o->request, o->request);
        r = 0;
out:
        free(q);
        free(text);
        free(pending);
        free(rdir);
        free(pub);
        return r;
}

/* REQUEST must be byte for byte the copy this machine kept when it wrote
 * it: whatever came back from the other machine is the attacker's until
 * then. 0, or an exit status. */
static int request_is_ours(const policy_opts *o, const cli_file *req, const char *pending) {
        cli_file mine;
        int r = EXIT_CHECK_FAILED;

        if (access(pending, F_OK) < 0 && errno == ENOENT) {
                cli_error("%s: not a request this machine has open (no %s: never made here, or installed "
                          "already): refusing it, nothing installed", o->arg, pending);
                return r;
        }
        if (cli_file_load_max(pending, (size_t) 64 << 10, "an approval request", &mine) < 0)
                return EXIT_BAD_INPUT;
        if (mine.size == req->size && memcmp(mine.data, req->data, req->size) == 0)
                r = 0;
        else
                cli_error("%s differs from the request this machine wrote (%s): changed on the way; refusing it, "
                          "nothing installed", o->arg, pending);
        cli_file_free(&mine);
        return r;
}

/* SIG: a DER ECDSA-Sig-Value (as openssl pkeyutl -sign writes it) in
 * a's signature. */
static int signature_load(const char *path, approval *a) {
        uint8_t r_[32], s_[32];
        cli_file f;
        int r = -1;

        if (cli_file_load_max(path, 4096, "a signature", &f) < 0)
                return -1;
        if (f.size == 0 || f.size > sizeof(a->signature) || mb_approval_sig_rs(f.data, f.size, r_, s_) != MB_OK) {
                cli_error("%s: not a DER ECDSA P-256 signature (what mshim policy sign and openssl pkeyutl -sign "
                          "write)", path);
        } else {
                memcpy(a->signature, f.data, f.size);
                a->signature_size = f.size;
                r = 0;
        }
        cli_file_free(&f);
        return r;
}

/* The signed request against the TPM now: the same counter, still at the
 * request's epoch, and the policy key's signature over its aHash. */
static int signature_check(const policy_opts *o, cli_tpm *t, const approval_request *q) {
        char *pub = seal_key_path(STATE(o), true);
        ESYS_TR nv = ESYS_TR_NONE;
        TPM2B_NAME nv_name;
        uint64_t counter;
        const char *why;
        int k, r = EXIT_BAD_INPUT;

        if (!pub || ts_counter_open(t, &nv, &nv_name, &counter))
                goto out;
        Esys_TR_Close(t->esys, &nv);
        r = EXIT_CHECK_FAILED;
        if (nv_name.size != q->nv_name.size || memcmp(nv_name.name, q->nv_name.name, nv_name.size)) {
                cli_error("%s: made for another epoch counter than this TPM's (re-created since?): refusing it, "
                          "nothing installed; request again", o->arg);
        } else if (q->a.epoch != counter) {
                cli_error("%s: epoch %llu, the counter is %llu now: %s; refusing it, nothing installed; request again",
                          o->arg, (unsigned long long) q->a.epoch, (unsigned long long) counter,
                          q->a.epoch < counter ? "revoked since it was written" : "not an epoch this counter has reached");
        } else if ((k = seal_approval_verify(pub, &nv_name, q->kind, &q->a, &why)) != 0) {
                if (k > 0)
                        cli_error("%s over %s: %s: refusing it, nothing installed", o->signature, o->arg, why);
                r = k > 0 ? EXIT_CHECK_FAILED : EXIT_BAD_INPUT;
        } else {
                r = 0;
        }
out:
        free(pub);
        return r;
}

/* approve --signature SIG REQUEST: install the approval signed elsewhere. */
static int approve_signature(const policy_opts *o) {
        approval_request *q = calloc(1, sizeof(*q));
        char *pending = NULL, *dir = NULL, *path = NULL;
        cli_file req = { 0 };
        bool loaded = false;
        cli_tpm t;
        int r = EXIT_BAD_INPUT;

        if (!q || request_load(o->arg, q, &req) < 0)
                goto out;
        loaded = true;
        if (!(pending = request_pending_path(STATE(o), &q->a)) || (r = request_is_ours(o, &req, pending)) != 0 ||
            (r = EXIT_BAD_INPUT, signature_load(o->signature, &q->a) < 0) || cli_tpm_connect(&t) < 0)
                goto out;
        r = signature_check(o, &t, q);
        cli_tpm_disconnect(&t);
        if (r != 0)
                goto out;
        r = EXIT_BAD_INPUT;
        if (!(dir = kind_dir(o, q->kind)) || !(path = seal_approval_path(dir, &q->a)) ||
            seal_approval_store(dir, path, &q->a) < 0)
                goto out;
        unlink(pending);
        printf("%s\n", path);
        r = 0;
out:
        if (loaded)
                cli_file_free(&req);
        free(path);
        free(dir);
        free(pending);
        free(q);
        return r;
}

/* What policy sign is about to sign, for the person at the other machine. */
static void request_show(const approval_request *q) {
        char pcrs[CLI_PCR_LIST_MAX];
        size_t k = 0;

        cli_pcr_select_print(q->a.pcrs, pcrs);
        fprintf(stderr, "signing a %s approval: epoch %llu, PCRs %s, created %s", q->kind == SEAL_TOTP ? "TOTP" : "disk",
                (unsigned long long) q->a.epoch, pcrs, q->a.created);
        if (q->a.entry_id[0])
                fprintf(stderr, ", entry %s", q->a.entry_id);
        if (q->a.label[0])
                fprintf(stderr, ", label \"%s\"", q->a.label);
        fputc('\n', stderr);
        for (uint32_t i = 0; i < MB_PCR_COUNT; i++)
                if (q->a.pcrs & (1u << i)) {
                        fprintf(stderr, "  PCR %2u: ", i);
                        for (size_t j = 0; j < SEAL_PCR_VALUE; j++)
                                fprintf(stderr, "%02x", q->a.values[SEAL_PCR_VALUE * k + j]);
                        fputc('\n', stderr);
                        k++;
                }
}

/* sign --key KEY REQUEST -o SIG: on the machine that holds the key, no
 * TPM needed. Only a consistent request for this very key is signed. */
static int policy_sign(const policy_opts *o) {
        approval_request *q = calloc(1, sizeof(*q));
        pk_signer s = { .key_path = o->key, .pass_file = o->pass_file };
        uint8_t sig[MB_APPROVAL_SIG_MAX];
        TPM2B_PUBLIC pub;
        TPM2B_NAME name;
        size_t n = 0;
        int r = EXIT_BAD_INPUT;

        if (!q || request_load(o->arg, q, NULL) < 0 || request_check(o->arg, q) < 0 || pk_signer_public(&s, &pub) < 0)
                goto out;
        if (ts_public_name(&pub, &name) < 0 || name.size != q->key_name.size ||
            memcmp(name.name, q->key_name.name, name.size)) {
                cli_error("%s: the request names another policy key than %s (the machine that asked holds another "
                          "policy.pub): not signing it", o->arg, o->key);
                goto out;
        }
        request_show(q);
        if (pk_sign(&s, &pub, q->ahash, sig, sizeof(sig), &n) < 0 ||
            seal_write_new(o->output, CLI_MODE_PUBLIC, sig, n) < 0)
                goto out;
        printf("%s\n", o->output);
        r = 0;
out:
        pk_signer_done(&s);
        free(q);
        return r;
}

static int policy_approve(const policy_opts *o) {
        uint32_t mask = o->select ? o->select : SEAL_DEFAULT_PCRS;
        uint8_t values[MB_PCR_COUNT * SEAL_PCR_VALUE];
        char *dir = approvals_dir(o);
        pred_json *p = NULL;
        seal_signer s;
        cli_tpm t;
        int r = EXIT_BAD_INPUT;

        if (o->signature) {
                free(dir);
                return approve_signature(o);
        }
        if (seal_signer_init(&s, o->state_dir ? o->state_dir : SEAL_STATE_DIR, o->pass_file) < 0 || !dir ||
            (o->totp && totp_mask(o, &mask) < 0))
                goto out;
        /* A disk approval of PCR 15 could only ever match before the fence
         * (docs/SEALING.md "The unseal fence"), which the key's policy
         * checks itself. */
        if (!o->totp && (mask & SEAL_FENCE_PCRS)) {
                cli_error("--select: PCR %u is the unseal fence: every disk key requires it at zero already; "
                          "leave it out", MB_UNSEAL_FENCE_PCR);
                goto out;
        }
        if (o->predicted) {
                p = calloc(1, sizeof(*p));
                if (!p || pred_json_load(o->predicted, p) < 0 || pred_json_values(o->predicted, p, o->totp ? PRED_POINT_TOTP : PRED_POINT_BOOT, mask, values) < 0)
                        goto out;
        }
        if (cli_tpm_connect(&t) < 0)
                goto out;
        if (o->request) {
                if (o->predicted || seal_current_values(&t, o->pcrs_file, mask, values) == 0)
                        r = approve_request(o, &t, mask, values);
        } else if ((o->predicted || seal_current_values(&t, o->pcrs_file, mask, values) == 0) &&
            seal_approve(&t, &s, dir, mask, values, o->label ? o->label : "", o->entry_id ? o->entry_id : "",
                         o->totp ? SEAL_TOTP : SEAL_DISK, NULL) == 0)
                r = 0;
        cli_tpm_disconnect(&t);
out:
        seal_signer_done(&s);
        free(p);
        free(dir);
        return r;
}

/* ---- list ------------------------------------------------------------------- */

static void json_str(const char *s) {
        putchar('"');
        for (; *s; s++)
                if (*s == '"' || *s == '\\')
                        printf("\\%c", *s);
                else if ((unsigned char) *s < 0x20)
                        printf("\\u%04x", *s);
                else
                        putchar(*s);
        putchar('"');
}

static void hexs(const uint8_t *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                printf("%02x", p[i]);
}

/* What an approval is worth now (docs/SEALING.md "Removing approvals"). */
typedef struct list_status {
        const char *status;     /* live, revoked, future, invalid, unverified, unknown */
        char why[256];
} list_status;

/* Each approval's status against the counter (have_counter) and, for
 * those of its epoch, the policy key's signature (pub NULL: not checked). */
static int list_statuses(const approval_entry *e, size_t n, seal_kind kind, bool have_counter, uint64_t counter,
                         const TPM2B_NAME *nv_name, const char *pub, list_status *st) {
        for (size_t i = 0; i < n; i++) {
                const approval *a = &e[i].a;
                const char *why = "";
                int k;

                st[i].why[0] = 0;
                if (!have_counter) {
                        st[i].status = "unknown";
                        snprintf(st[i].why, sizeof(st[i].why), "the epoch counter could not be read");
                } else if (a->epoch < counter) {
                        st[i].status = "revoked";
                        snprintf(st[i].why, sizeof(st[i].why), "epoch %llu, the counter is %llu (revoke, prune or "
                                 "remove moved it since): unseals nothing", (unsigned long long) a->epoch,
                                 (unsigned long long) counter);
                } else if (a->epoch > counter) {
                        st[i].status = "future";
                        snprintf(st[i].why, sizeof(st[i].why), "epoch %llu, the counter is %llu: not an epoch this "
                                 "TPM's counter has reached", (unsigned long long) a->epoch, (unsigned long long) counter);
                } else if (!pub) {
                        st[i].status = "unverified";
                        snprintf(st[i].why, sizeof(st[i].why), "of the current epoch; no policy.pub to check its "
                                 "signature with (--state-dir)");
                } else if ((k = seal_approval_verify(pub, nv_name, kind, a, &why)) < 0) {
                        return -1;
                } else {
                        st[i].status = k ? "invalid" : "live";
                        snprintf(st[i].why, sizeof(st[i].why), "%s", k ? why : "");
                }
        }
        return 0;
}

static void list_json(const approval_entry *e, size_t n, const list_status *st, bool have_counter, uint64_t counter) {
        printf("{\"schema\":\"mshim-approvals/1\",\"mshim_version\":\"%s\",", MB_VERSION);
        if (have_counter)
                printf("\"counter\":%llu,", (unsigned long long) counter);
        printf("\"approvals\":[");
        for (size_t i = 0; i < n; i++) {
                const approval *a = &e[i].a;
                size_t k = 0;
                printf("%s{\"file\":", i ? "," : "");
                json_str(e[i].path);
                printf(",\"epoch\":%llu,\"label\":", (unsigned long long) a->epoch);
                json_str(a->label);
                printf(",\"entry_id\":");
                json_str(a->entry_id);
                printf(",\"created\":");
                json_str(a->created);
                printf(",\"status\":");
                json_str(st[i].status);
                if (st[i].why[0]) {
                        printf(",\"why\":");
                        json_str(st[i].why);
                }
                printf(",\"policy\":\"");
                hexs(a->policy, MB_POLICY_SIZE);
                printf("\",\"pcrs\":{");
                for (uint32_t pcr = 0; pcr < MB_PCR_COUNT; pcr++)
                        if (a->pcrs & (1u << pcr)) {
                                printf("%s\"%u\":\"", k ? "," : "", pcr);
                                hexs(a->values + SEAL_PCR_VALUE * k++, SEAL_PCR_VALUE);
                                putchar('"');
                        }
                printf("}}");
        }
        printf("]}\n");
}

static void list_text(const approval_entry *e, size_t n, const list_status *st) {
        char pcrs[CLI_PCR_LIST_MAX];

        for (size_t i = 0; i < n; i++) {
                const approval *a = &e[i].a;
                cli_pcr_select_print(a->pcrs, pcrs);
                printf("%s\n  epoch %llu, PCRs %s, created %s", e[i].name, (unsigned long long) a->epoch, pcrs,
                       a->created);
                if (a->entry_id[0])
                        printf(", entry %s", a->entry_id);
                if (a->label[0])
                        printf(", label \"%s\"", a->label);
                printf("\n  %s%s%s\n", st[i].status, st[i].why[0] ? ": " : "", st[i].why);
        }
        if (!n)
                printf("no approvals\n");
}

/* The counter's value and Name, when a TPM answers: else a warning, and
 * the approvals are listed without their status. */
static bool list_counter(uint64_t *ret, TPM2B_NAME *ret_name) {
        ESYS_TR nv = ESYS_TR_NONE;
        bool ok = false;
        cli_tpm t;

        if (cli_tpm_connect(&t) == 0) {
                ok = ts_counter_open(&t, &nv, ret_name, ret) == 0;
                if (ok)
                        Esys_TR_Close(t.esys, &nv);
                cli_tpm_disconnect(&t);
        }
        if (!ok)
                cli_error("warning: the epoch counter cannot be read: revoked approvals are not marked");
        return ok;
}

static int policy_list(const policy_opts *o) {
        char *dir = approvals_dir(o), *pub = seal_key_path(STATE(o), true);
        approval_entry *e = NULL;
        list_status *st = NULL;
        size_t n = 0, bad = 0;
        uint64_t counter = 0;
        TPM2B_NAME nv_name;
        bool have;
        int r = EXIT_BAD_INPUT;

        if (!dir || !pub || approvals_load_dir(dir, &e, &n, &bad) < 0)
                goto out;
        have = list_counter(&counter, &nv_name);
        st = calloc(n + 1, sizeof(*st));
        if (st && list_statuses(e, n, o->totp ? SEAL_TOTP : SEAL_DISK, have, counter, &nv_name,
                                access(pub, F_OK) == 0 ? pub : NULL, st) == 0) {
                if (o->json)
                        list_json(e, n, st, have, counter);
                else
                        list_text(e, n, st);
                r = bad ? EXIT_CHECK_FAILED : 0;
        }
out:
        approvals_free(e, n);
        free(st);
        free(pub);
        free(dir);
        return r;
}

/* ---- prune ------------------------------------------------------------------ */

static bool approval_matches(const approval *a, const mb_pcr_values *now) {
        size_t k = 0;

        for (uint32_t i = 0; i < MB_PCR_COUNT; i++) {
                const uint8_t *v;
                if (!(a->pcrs & (1u << i)))
                        continue;
                v = mb_pcrs_get(now, MB_ALG_SHA256, i);
                if (!v || memcmp(v, a->values + SEAL_PCR_VALUE * k++, SEAL_PCR_VALUE))
                        return false;
        }
        return true;
}

/* The current boot's PCR values: the TPM's, a file's, or a log's replay. */
static int prune_values(const policy_opts *o, cli_tpm *t, mb_pcr_values *ret) {
        cli_file f;
        int r = -1;

        if (!o->pcrs_file && !o->log)
                return cli_tpm_pcr_read_bank(t, MB_ALG_SHA256, MB_PCR_ALL, ret);
        if (o->pcrs_file) {
                if (cli_file_load_max(o->pcrs_file, (size_t) 1 << 20, "a PCR values file", &f) < 0)
                        return -1;
                if (mb_pcrs_parse((const char *) f.data, f.size, ret) == MB_OK)
                        r = 0;
                else
                        cli_error("%s: not PCR values (tpm2_pcrread YAML or \"sha256:7=<hex>\" lines)", o->pcrs_file);
                cli_file_free(&f);
                return r;
        }
        return seal_log_values(o->log, ret);
}

/* What to drop: revoked approvals, and (now not NULL) those of the
 * matching approvals' entries created before them. Only a verified
 * approval (ok[i]) can match: a file anyone could have written on the ESP
 * must not decide what goes. */
static void prune_mark(const approval_entry *e, size_t n, uint64_t counter, const mb_pcr_values *now, const bool *ok,
                       bool *drop, bool *any_match) {
        *any_match = false;
        for (size_t i = 0; i < n; i++)
                drop[i] = e[i].a.epoch < counter;
        for (size_t m = 0; now && m < n; m++) {
                if (drop[m] || !ok[m] || !approval_matches(&e[m].a, now))
                        continue;
                *any_match = true;
                for (size_t i = 0; i < n; i++)
                        if (i != m && !approval_matches(&e[i].a, now) && !strcmp(e[i].a.entry_id, e[m].a.entry_id) &&
                            strcmp(e[i].a.created, e[m].a.created) < 0)
                                drop[i] = true;
        }
}

/* ---- removing approvals for good: revoke, prune, remove ------------------------
 *
 * Deleting an approval's file does not end it: whoever kept a copy can put
 * it back on the ESP. Only the epoch counter ends approvals, all of one
 * epoch at once. So when an approval of the current epoch goes, the
 * counter is incremented and every approval that stays is re-signed at the
 * new epoch, each verified first (docs/SEALING.md "Removing approvals"). */

/* One approval file a rotation handles. */
typedef struct rot_item {
        const char *path;
        const approval *a;
        seal_kind kind;
        bool keep;              /* re-signed at the new epoch (when the counter moves), its file replaced */
        bool drop;              /* its file removed */
        const char *why;        /* said with its removal */
} rot_item;

/* A kept approval is re-signed only if it is of the current epoch and
 * verifies: 0, 1 (*ret_why), -1 (a message). */
static int keep_check(const char *pub, const TPM2B_NAME *nv_name, uint64_t counter, const rot_item *it,
                      const char **ret_why) {
        static char why[160];

        if (it->a->epoch != counter) {
                snprintf(why, sizeof(why), "epoch %llu, the counter is %llu: %s", (unsigned long long) it->a->epoch,
                         (unsigned long long) counter,
                         it->a->epoch < counter ? "revoked already (approve its state again)"
                                                : "not an epoch this TPM's counter has reached");
                *ret_why = why;
                return 1;
        }
        return seal_approval_verify(pub, nv_name, it->kind, it->a, ret_why);
}

/* The kept approvals at counter + 1, signed before the counter moves, so
 * that nothing is left half done by a key that cannot sign or a name
 * taken: ret_new[i] and ret_to[i] (NULL: a duplicate of an earlier one, or
 * not kept). */
static int rotate_sign(const policy_opts *o, seal_signer *s, const TPM2B_NAME *nv_name, uint64_t counter,
                       const rot_item *it, size_t n, approval *ret_new, char **ret_to) {
        struct stat st;

        for (size_t i = 0; i < n; i++) {
                char *dir;
                if (!it[i].keep)
                        continue;
                ret_new[i] = *it[i].a;
                ret_new[i].epoch = counter + 1;
                if (seal_sign(s, nv_name, it[i].kind, &ret_new[i]) < 0 || !(dir = kind_dir(o, it[i].kind)))
                        return -1;
                ret_to[i] = seal_approval_path(dir, &ret_new[i]);
                free(dir);
                if (!ret_to[i])
                        return -1;
                for (size_t j = 0; j < i; j++)
                        if (ret_to[j] && !strcmp(ret_to[j], ret_to[i])) {
                                free(ret_to[i]);
                                ret_to[i] = NULL;
                                break;
                        }
                if (ret_to[i] && lstat(ret_to[i], &st) == 0) {
                        cli_error("%s exists (left by an earlier run?); nothing re-signed, the epoch counter unchanged",
                                  ret_to[i]);
                        return -1;
                }
        }
        return 0;
}

static void remove_file(const char *path, const char *why) {
        if (unlink(path) == 0) {
                if (why)
                        printf("removed %s (%s)\n", path, why);
        } else if (errno != ENOENT) {
                cli_error("warning: cannot remove %s: %s", path, strerror(errno));
        }
}

/* Verify every kept item: one that does not verify is named and no longer
 * kept (strict: as a refusal, else as a warning). The number of those, or
 * -1 (a message). */
static ssize_t rotate_verify(const char *pub, const TPM2B_NAME *nv_name, uint64_t counter, rot_item *it, size_t n,
                             bool strict) {
        const char *why;
        ssize_t bad = 0;
        int k;

        for (size_t i = 0; i < n; i++) {
                if (!it[i].keep)
                        continue;
                k = keep_check(pub, nv_name, counter, &it[i], &why);
                if (k < 0)
                        return -1;
                if (k == 0)
                        continue;
                bad++;
                it[i].keep = false;
                if (strict)
                        cli_error("%s: %s; refusing to re-sign it", it[i].path, why);
                else
                        cli_error("warning: %s: %s; not re-signed (it unseals nothing after this), left as it is",
                                  it[i].path, why);
        }
        return bad;
}

/* After the counter moved: the new approvals written (na, to), the old
 * files of the kept ones removed, the dropped ones removed. */
static int rotate_write(const policy_opts *o, rot_item *it, size_t n, const approval *na, char *const *to, bool bump) {
        int r = 0;

        for (size_t i = 0; bump && i < n; i++) {
                char *dir;
                if (!it[i].keep)
                        continue;
                if (to[i]) {
                        dir = kind_dir(o, it[i].kind);
                        if (!dir || seal_approval_store(dir, to[i], &na[i]) < 0) {
                                free(dir);
                                r = EXIT_BAD_INPUT;
                                continue;       /* the old file stays: it is all there is of this state */
                        }
                        free(dir);
                        printf("%s\n", to[i]);
                }
                remove_file(it[i].path, NULL);
        }
        for (size_t i = 0; i < n; i++)
                if (it[i].drop)
                        remove_file(it[i].path, it[i].why);
        return r;
}

/* Verify every kept item (strict: any refusal refuses all, before
 * anything changes; else a refused one is named, left as it is and not
 * re-signed); with bump, increment the counter and re-sign the kept ones;
 * then remove the old files of those and the dropped ones. 0, or
 * EXIT_CHECK_FAILED (something refused), EXIT_BAD_INPUT. */
static int rotate(const policy_opts *o, cli_tpm *t, const TPM2B_NAME *nv_name, uint64_t counter, rot_item *it,
                  size_t n, bool bump, bool strict) {
        char *pub = seal_key_path(o->state_dir ? o->state_dir : SEAL_STATE_DIR, true), **to = NULL;
        approval *na = NULL;
        uint64_t epoch = 0;
        ssize_t bad = 0;
        seal_signer s;
        int r = EXIT_BAD_INPUT;

        to = calloc(n ? n : 1, sizeof(*to));
        na = calloc(n ? n : 1, sizeof(*na));
        if (seal_signer_init(&s, o->state_dir ? o->state_dir : SEAL_STATE_DIR, o->pass_file) < 0 || !pub || !to || !na || (bump && (bad = rotate_verify(pub, nv_name, counter, it, n, strict)) < 0))
                goto out;
        if (strict && bad) {
                cli_error("nothing re-signed, the epoch counter unchanged");
                r = EXIT_CHECK_FAILED;
                goto out;
        }
        if (bump) {
                if (rotate_sign(o, &s, nv_name, counter, it, n, na, to) < 0 || ts_counter_increment(t, &epoch))
                        goto out;
                if (epoch != counter + 1) {
                        /* TPM2_NV_Increment adds one: another run moved it too. */
                        cli_error("the epoch counter is %llu, not %llu: another mshim policy ran at the same time; "
                                  "nothing re-signed (run this again)", (unsigned long long) epoch,
                                  (unsigned long long) counter + 1);
                        goto out;
                }
                printf("epoch counter: %llu; approvals of earlier epochs no longer unseal\n", (unsigned long long) epoch);
        }
        r = rotate_write(o, it, n, na, to, bump);
        r = r == 0 && bad ? EXIT_CHECK_FAILED : r;
out:
        seal_signer_done(&s);
        for (size_t i = 0; to && i < n; i++)
                free(to[i]);
        free(to);
        free(na);
        free(pub);
        return r;
}

/* The approvals of kind in --esp; none when the directory is absent. */
static int load_kind(const policy_opts *o, seal_kind kind, approval_entry **ret, size_t *ret_n) {
        char *dir = kind_dir(o, kind);
        int r = -1;

        *ret = NULL;
        *ret_n = 0;
        if (dir && access(dir, F_OK) < 0 && errno == ENOENT)
                r = 0;
        else if (dir)
                r = approvals_load_dir(dir, ret, ret_n, NULL);
        free(dir);
        return r;
}

/* The approvals of both kinds, and the counter. */
typedef struct all_approvals {
        approval_entry *e[2];
        size_t n[2];
        bool *ok[2];            /* live and verified */
        size_t bad;             /* live ones that do not verify */
        TPM2B_NAME nv_name;
        uint64_t counter;
        rot_item *it;
        size_t n_it;
} all_approvals;

static void all_free(all_approvals *x) {
        for (int k = 0; k < 2; k++) {
                approvals_free(x->e[k], x->n[k]);
                free(x->ok[k]);
        }
        free(x->it);
}

/* Load both kinds, read the counter (t), and verify each live approval:
 * one that does not verify is named and left out of everything. */
static int all_load(const policy_opts *o, cli_tpm *t, all_approvals *x) {
        char *pub = seal_key_path(o->state_dir ? o->state_dir : SEAL_STATE_DIR, true);
        ESYS_TR nv = ESYS_TR_NONE;
        const char *why;
        int r = -1;

        if (!pub || load_kind(o, SEAL_DISK, &x->e[0], &x->n[0]) < 0 || load_kind(o, SEAL_TOTP, &x->e[1], &x->n[1]) < 0 ||
            ts_counter_open(t, &nv, &x->nv_name, &x->counter))
                goto out;
        Esys_TR_Close(t->esys, &nv);
        x->it = calloc(x->n[0] + x->n[1] + 1, sizeof(*x->it));
        for (int k = 0; k < 2; k++)
                x->ok[k] = calloc(x->n[k] + 1, sizeof(bool));
        if (!x->it || !x->ok[0] || !x->ok[1]) {
                cli_error("out of memory");
                goto out;
        }
        for (int k = 0; k < 2; k++)
                for (size_t i = 0; i < x->n[k]; i++) {
                        const approval_entry *e = &x->e[k][i];
                        int v = 1;
                        if (e->a.epoch < x->counter)
                                continue;
                        if (e->a.epoch > x->counter)
                                why = "an epoch this TPM's counter has not reached";
                        else
                                v = seal_approval_verify(pub, &x->nv_name, k ? SEAL_TOTP : SEAL_DISK, &e->a, &why);
                        if (v < 0)
                                goto out;
                        x->ok[k][i] = v == 0;
                        x->bad += v != 0;
                        if (v)
                                cli_error("warning: %s: %s; it unseals nothing, left as it is", e->path, why);
                }
        r = 0;
out:
        free(pub);
        return r;
}

/* Into x->it: kind k's approval i, dropped (why) or kept (if verified). */
static void all_add(all_approvals *x, int k, size_t i, const char *drop_why) {
        if (!drop_why && !x->ok[k][i])
                return;
        x->it[x->n_it++] = (rot_item) { .path = x->e[k][i].path, .a = &x->e[k][i].a, .kind = k ? SEAL_TOTP : SEAL_DISK,
                                        .keep = !drop_why, .drop = !!drop_why, .why = drop_why };
}

/* The counter moves only when an approval of the current epoch is
 * dropped: revoked ones unseal nothing already. */
static bool all_bump(const all_approvals *x) {
        for (size_t i = 0; i < x->n_it; i++)
                if (x->it[i].drop && x->it[i].a->epoch >= x->counter)
                        return true;
        return false;
}

static int policy_prune(const policy_opts *o) {
        mb_pcr_values *now = calloc(1, sizeof(*now));
        all_approvals x = { 0 };
        bool *drop = NULL, any_match = false;
        int k = o->totp ? 1 : 0, r = EXIT_BAD_INPUT;
        cli_tpm t;

        if (!now || cli_tpm_connect(&t) < 0)
                goto out;
        /* TOTP approvals are of the TOTP point: the PCRs now are past the
         * fence, no approval matches them. Only revoked ones go. */
        if (all_load(o, &t, &x) < 0 || (!o->totp && prune_values(o, &t, now) < 0))
                goto done;
        drop = calloc(x.n[k] + 1, sizeof(*drop));
        if (!drop)
                goto done;
        prune_mark(x.e[k], x.n[k], x.counter, o->totp ? NULL : now, x.ok[k], drop, &any_match);
        if (!any_match && !o->totp)
                cli_error("warning: no approval matches the current boot; only revoked ones are dropped");
        for (size_t i = 0; i < x.n[k]; i++)
                if (drop[i] || x.e[k][i].a.epoch >= x.counter)
                        all_add(&x, k, i, !drop[i] ? NULL : x.e[k][i].a.epoch < x.counter ? "revoked" : "superseded");
        /* The counter is both kinds': the other kind's live approvals are
         * re-signed too when it moves. */
        for (size_t i = 0; i < x.n[!k]; i++)
                if (x.e[!k][i].a.epoch >= x.counter)
                        all_add(&x, !k, i, NULL);
        r = rotate(o, &t, &x.nv_name, x.counter, x.it, x.n_it, all_bump(&x), false);
        r = r == 0 && x.bad ? EXIT_CHECK_FAILED : r;
done:
        cli_tpm_disconnect(&t);
out:
        free(drop);
        free(now);
        all_free(&x);
        return r;
}

/* Whether any approval (either kind) names entry id: 1, 0, -1 (a message). */
static int entry_has_approvals(const policy_opts *o, const char *id) {
        approval_entry *e;
        size_t n;
        int r = 0;

        for (int k = 0; k < 2 && r == 0; k++) {
                if (load_kind(o, k ? SEAL_TOTP : SEAL_DISK, &e, &n) < 0)
                        return -1;
                for (size_t i = 0; i < n && r == 0; i++)
                        r = !strcmp(e[i].a.entry_id, id);
                approvals_free(e, n);
        }
        return r;
}

/* remove --entry-id ID: the approvals of a boot entry that is gone (the
 * kernel hook's removal), both kinds. */
static int policy_remove(const policy_opts *o) {
        all_approvals x = { 0 };
        char why[MB_APPROVAL_ID_MAX + 16];
        int r = entry_has_approvals(o, o->entry_id);
        cli_tpm t;

        /* Nothing to remove needs no TPM (a kernel mshim never approved). */
        if (r <= 0)
                return r < 0 ? EXIT_BAD_INPUT : 0;
        r = EXIT_BAD_INPUT;
        snprintf(why, sizeof(why), "entry %s", o->entry_id);
        if (cli_tpm_connect(&t) < 0)
                goto out;
        if (all_load(o, &t, &x) == 0) {
                for (int k = 0; k < 2; k++)
                        for (size_t i = 0; i < x.n[k]; i++)
                                if (!strcmp(x.e[k][i].a.entry_id, o->entry_id))
                                        all_add(&x, k, i, why);
                                else if (x.e[k][i].a.epoch >= x.counter)
                                        all_add(&x, k, i, NULL);
                r = rotate(o, &t, &x.nv_name, x.counter, x.it, x.n_it, all_bump(&x), false);
                r = r == 0 && x.bad ? EXIT_CHECK_FAILED : r;
        }
        cli_tpm_disconnect(&t);
out:
        all_free(&x);
        return r;
}

/* A kept approval in a directory named totp-approvals (its real path's)
 * is a TOTP one: verified and re-signed with the TOTP policyRef into the
 * ESP's TOTP approvals. */
static bool is_totp_approval(const char *path) {
        const char *base = strrchr(MB_TOTP_APPROVALS_DIR, '/');
        char *real = realpath(path, NULL), *slash = real ? strrchr(real, '/') : NULL, *dir;
        bool r = false;

        if (slash) {
                *slash = 0;
                dir = strrchr(real, '/');
                r = dir && !strcmp(dir, base);
        }
        free(real);
        return r;
}

static int policy_revoke_others(const policy_opts *op);
static int policy_revoke(const policy_opts *o) {
        const char *state = o->state_dir ? o->state_dir : SEAL_STATE_DIR;
        char *key = seal_key_path(state, false);
        approval *keep = calloc(o->n_keep ? o->n_keep : 1, sizeof(*keep));
        rot_item *it = calloc(o->n_keep ? o->n_keep : 1, sizeof(*it));
        ESYS_TR nv = ESYS_TR_NONE;
        TPM2B_NAME nv_name;
        uint64_t counter;
        cli_tpm t;
        int r = EXIT_BAD_INPUT;

        if (o->others) {
                r = policy_revoke_others(o);
                goto out;
        }
        if (!key || !keep || !it)
                goto out;
        /* Everything that can fail without the TPM first: the kept
         * approvals must parse and the key must be readable. */
        for (size_t i = 0; i < o->n_keep; i++) {
                if (approval_load(o->keep[i], &keep[i]) < 0)
                        goto out;
                it[i] = (rot_item) { .path = o->keep[i], .a = &keep[i], .keep = true,
                                     .kind = is_totp_approval(o->keep[i]) ? SEAL_TOTP : SEAL_DISK };
        }
        if (o->n_keep && access(key, R_OK) < 0) {
                cli_error("%s: %s (needed to re-sign the kept approvals)", key, strerror(errno));
                goto out;
        }
        if (cli_tpm_connect(&t) < 0)
                goto out;
        if (ts_counter_open(&t, &nv, &nv_name, &counter) == 0) {
                Esys_TR_Close(t.esys, &nv);
                r = rotate(o, &t, &nv_name, counter, it, o->n_keep, true, true);
        }
        cli_tpm_disconnect(&t);
out:
        free(it);
        free(keep);
        free(key);
        return r;
}

/* ---- revoking what came before a blessed boot ----------------------------------
 *
 * After `mshim bless` marked this boot good (docs/SEALING.md "Revoking
 * after bless"): the approvals of this boot stay, every other approval
 * is ended by the counter. What is kept is decided by the TPM's PCRs
 * alone: an approval's label, entry id and creation time are not signed
 * (anyone with the ESP edits them), so none of them may keep an approval. */

/* A TOTP approval is of the TOTP point, before PCRs 5, 9, 12 and 13 reach
 * their end-of-boot values (docs/SEALING.md "The TOTP key"): it is this
 * boot's when every other PCR it selects is this boot's, and it selects
 * at least one such PCR. */
#define TOTP_POINT_PCRS ((1u << 5) | (1u << 9) | (1u << 12) | (1u << 13))
static bool totp_matches(const approval *a, const mb_pcr_values *now) {
        size_t k = 0;
        bool any = false;

        for (uint32_t i = 0; i < MB_PCR_COUNT; i++) {
                const uint8_t *v;
                if (!(a->pcrs & (1u << i)))
                        continue;
                v = mb_pcrs_get(now, MB_ALG_SHA256, i);
                if (!(TOTP_POINT_PCRS & (1u << i))) {
                        if (!v || memcmp(v, a->values + SEAL_PCR_VALUE * k, SEAL_PCR_VALUE))
                                return false;
                        any = true;
                }
                k++;
        }
        return any;
}

static int policy_revoke_others(const policy_opts *op) {
        policy_opts o = *op;
        mb_pcr_values *now = calloc(1, sizeof(*now));
        all_approvals x = { 0 };
        size_t n_match = 0;
        int r = EXIT_BAD_INPUT;
        cli_tpm t;

        if (!now || cli_tpm_connect(&t) < 0)
                goto out;
        if (all_load(&o, &t, &x) < 0 || prune_values(&o, &t, now) < 0)
                goto done;
        for (size_t i = 0; i < x.n[0]; i++)
                n_match += x.ok[0][i] && approval_matches(&x.e[0][i].a, now);
        if (!n_match) {
                /* Revoking everything would leave this good boot unapproved. */
                cli_error("no live approval matches this boot's PCRs: nothing revoked (approve this boot first: "
                          "mshim policy approve --current)");
                r = EXIT_CHECK_FAILED;
                goto done;
        }
        for (int k = 0; k < 2; k++)
                for (size_t i = 0; i < x.n[k]; i++) {
                        const approval *a = &x.e[k][i].a;
                        bool mine = x.ok[k][i] && (k ? totp_matches(a, now) : approval_matches(a, now));
                        if (a->epoch < x.counter)
                                all_add(&x, k, i, "revoked");
                        else if (x.ok[k][i])
                                all_add(&x, k, i, mine ? NULL : "not of the blessed boot");
                }
        if (!all_bump(&x))
                printf("no approval of another boot is live: nothing to revoke\n");
        r = rotate(&o, &t, &x.nv_name, x.counter, x.it, x.n_it, all_bump(&x), false);
        r = r == 0 && x.bad ? EXIT_CHECK_FAILED : r;
done:
        cli_tpm_disconnect(&t);
out:
        free(now);
        all_free(&x);
        return r;
}

/* ---- init --reset: a way back after a cleared TPM or a lost key ----------------
 * (docs/RECOVERY.md). Run after a passphrase boot; re-creates only what is
 * gone, keeps every file it replaces under another name, and says what
 * must be sealed or approved again. */

/* The highest epoch of an approval on the ESP (either kind) that the
 * policy key signed for a counter of this Name: what a counter made again
 * must pass, so that no approval it signed before unseals again. Approvals
 * that do not verify do not count (anyone can write the ESP). */
static int signed_epoch_max(const policy_opts *o, const TPM2B_NAME *nv_name, uint64_t *ret) {
        char *pub = seal_key_path(STATE(o), true);
        approval_entry *e;
        const char *why;
        size_t n;
        int r = pub ? 0 : -1;

        *ret = 0;
        for (int k = 0; r == 0 && k < 2; k++) {
                if (load_kind(o, k ? SEAL_TOTP : SEAL_DISK, &e, &n) < 0) {
                        r = -1;
                        break;
                }
                for (size_t i = 0; r == 0 && i < n; i++) {
                        int v = seal_approval_verify(pub, nv_name, k ? SEAL_TOTP : SEAL_DISK, &e[i].a, &why);
                        if (v < 0)
                                r = -1;
                        else if (v == 0 && e[i].a.epoch > *ret)
                                *ret = e[i].a.epoch;
                }
                approvals_free(e, n);
        }
        free(pub);
        return r;
}

/* The counter made again (it was gone): defined, then moved past every
 * epoch the kept key signed that the ESP shows. */
#define RESET_MAX_STEPS 100000u
static int reset_counter(const policy_opts *o, cli_tpm *t, uint64_t *ret_value) {
        ESYS_TR nv = ESYS_TR_NONE;
        TPM2B_NAME nv_name;
        uint64_t v, max = 0;
        int r = ts_counter_provision(t, &v);

        if (r == 0 && !o->new_key && (r = ts_counter_open(t, &nv, &nv_name, NULL)) == 0) {
                Esys_TR_Close(t->esys, &nv);
                r = signed_epoch_max(o, &nv_name, &max) < 0 ? EXIT_BAD_INPUT : 0;
        }
        if (r == 0 && max >= v && max - v >= RESET_MAX_STEPS) {
                cli_error("the policy key signed approvals up to epoch %llu, the new counter is %llu: too far to "
                          "increment; use --new-key", (unsigned long long) max, (unsigned long long) v);
                return EXIT_BAD_INPUT;
        }
        while (r == 0 && v <= max)
                r = ts_counter_increment(t, &v);
        if (r == 0)
                *ret_value = v;
        return r;
}

/* --new-key: the old pair kept under other names, a new one made. */
static int reset_key(const char *key, const char *pub) {
        char *a = NULL, *b = NULL;
        struct stat st;
        int r = -1;

        if ((lstat(key, &st) == 0 && seal_move_aside(key, &a) < 0) || seal_move_aside(pub, &b) < 0)
                goto out;
        if (a)
                printf("kept the old policy key as %s\n", a);
        printf("kept the old public key as %s\n", b);
        r = pk_generate(key, pub);
out:
        free(a);
        free(b);
        return r;
}

static void reset_said(int srk, bool counter, uint64_t epoch, bool new_key, bool have_key) {
        printf("storage root key: %s\n", srk == 0 ? "the recorded one (unchanged)" : srk == 1 ?
               "made again: the same key (nothing sealed under it is lost)" :
               "made again: ANOTHER key (the TPM was cleared or is another one)");
        printf("epoch counter: %s = %llu\n", counter ? "made again" : "unchanged", (unsigned long long) epoch);
        printf("policy key: %s\n", new_key ? "NEW" : have_key ? "kept" : "kept (policy.pub only here)");
        printf("to do now:\n");
        if (srk == 2 || new_key)
                printf("  seal every secret again (mshim seal; a LUKS key: see docs/RECOVERY.md), the old sealed "
                       "files open nothing now\n  enrol TOTP again if you use it (mshim totp remove; mshim totp "
                       "enroll)\n");
        if (counter || new_key || srk == 2)
                printf("  approve this boot and the next: mshim policy approve --current; mshim predict --json > "
                       "next.json; mshim policy approve --predicted next.json (every earlier approval is %s)\n",
                       new_key ? "of the old key" : "revoked");
        if (srk != 2 && !counter && !new_key)
                printf("  nothing: nothing was lost\n");
}

static int policy_reset(const policy_opts *o) {
        const char *dir = STATE(o);
        char *key = seal_key_path(dir, false), *pub = seal_key_path(dir, true);
        struct stat st;
        uint64_t epoch = 0;
        bool have_key, counter = false;
        int srk = 0, k, r = EXIT_BAD_INPUT;
        cli_tpm t;

        if (!key || !pub)
                goto out;
        if (lstat(pub, &st) < 0) {
                cli_error("%s: absent: nothing to reset (mshim was not set up here: mshim policy init)", pub);
                goto out;
        }
        have_key = lstat(key, &st) == 0;
        if (!have_key && !o->new_key)
                fprintf(stderr, "mshim: %s: absent (a machine that holds policy.pub only, or the key is lost: then "
                        "add --new-key); keeping %s\n", key, pub);
        if (cli_tpm_connect(&t) < 0)
                goto out;
        r = seal_srk_reset(&t, dir, &srk);
        if (r == 0 && (k = ts_counter_present(&t)) > 1)
                r = k;
        else if (r == 0)
                counter = k == 1;
        /* The new key before the counter: its bump is for a kept key only. */
        if (r == 0 && o->new_key && reset_key(key, pub) < 0)
                r = EXIT_BAD_INPUT;
        if (r == 0)
                r = counter ? reset_counter(o, &t, &epoch) : ts_counter_provision(&t, &epoch);
        cli_tpm_disconnect(&t);
        if (r == 0)
                reset_said(srk, counter, epoch, o->new_key, have_key);
out:
        free(key);
        free(pub);
        return r;
}

/* ---- options ---------------------------------------------------------------- */

int cmd_policy(int argc, char **argv) {
        static const struct option longopts[] = {
                { "state-dir", required_argument, NULL, 'S' },
                { "esp", required_argument, NULL, 'E' },
                { "select", required_argument, NULL, 's' },
                { "predicted", required_argument, NULL, 'P' },
                { "current", no_argument, NULL, 'C' },
                { "pcrs", required_argument, NULL, 'p' },
                { "label", required_argument, NULL, 'L' },
                { "entry-id", required_argument, NULL, 'I' },
                { "json", no_argument, NULL, 'j' },
                { "log", required_argument, NULL, 'l' },
                { "tpm", no_argument, NULL, 't' },
                { "keep", required_argument, NULL, 'K' },
                { "totp", no_argument, NULL, 'T' },
                { "pass-file", required_argument, NULL, 'F' },
                { "request", required_argument, NULL, 'R' },
                { "signature", required_argument, NULL, 'G' },
                { "key", required_argument, NULL, 'k' },
                { "output", required_argument, NULL, 'o' },
                { "public-only", required_argument, NULL, 'U' },
                { "reset", no_argument, NULL, 'X' },
                { "new-key", no_argument, NULL, 'N' },
                { "others", no_argument, NULL, 'O' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        static const struct {
                const char *name;
                int (*fn)(const policy_opts *);
                const char *opts;       /* the option letters it takes */
        } subs[] = {
                { "init", policy_init, "SUXNE" },
                { "approve", policy_approve, "SEsPCpLITFRG" },
                { "list", policy_list, "SEjT" },
                { "prune", policy_prune, "SElptTF" },
                { "revoke", policy_revoke, "SEKFO" },
                { "remove", policy_remove, "SEIF" },
                { "sign", policy_sign, "kFo" },
        };
        policy_opts o = { 0 };
        const char *sub = argc > 1 ? argv[1] : NULL;
        size_t k;
        int c;

        if (sub && (!strcmp(sub, "-h") || !strcmp(sub, "--help"))) {
                cli_help(stdout, "policy");
                return 0;
        }
        for (k = 0; sub && k < MB_ARRAY_SIZE(subs) && strcmp(sub, subs[k].name); k++)
                ;
        if (!sub || k == MB_ARRAY_SIZE(subs))
                return cli_usage_error("policy", sub ? "unknown sub-command '%s'" : "no sub-command given%s", sub ? sub : "");
        optind = 1;
        while ((c = cli_getopt(argc - 1, argv + 1, "ho:", longopts, "policy")) != -1) {
                int once = 0;

                if (c == 'h') {
                        cli_help(stdout, "policy");
                        return 0;
                }
                if (c == '?')
                        return EXIT_BAD_INPUT;
                if (!strchr(subs[k].opts, c)) {
                        const struct option *lo = longopts;
                        while (lo->val != c)
                                lo++;
                        return cli_usage_error("policy", "policy %s does not take --%s", sub, lo->name);
                }
                switch (c) {
                case 'S': once = cli_opt_once(&o.state_dir, "--state-dir", optarg); break;
                case 'E': once = cli_opt_once(&o.esp, "--esp", optarg); break;
                case 'P': once = cli_opt_once(&o.predicted, "--predicted", optarg); break;
                case 'p': once = cli_opt_once(&o.pcrs_file, "--pcrs", optarg); break;
                case 'L': once = cli_opt_once(&o.label, "--label", optarg); break;
                case 'I': once = cli_opt_once(&o.entry_id, "--entry-id", optarg); break;
                case 'l': once = cli_opt_once(&o.log, "--log", optarg); break;
                case 'F': once = cli_opt_once(&o.pass_file, "--pass-file", optarg); break;
                case 'R': once = cli_opt_once(&o.request, "--request", optarg); break;
                case 'G': once = cli_opt_once(&o.signature, "--signature", optarg); break;
                case 'k': once = cli_opt_once(&o.key, "--key", optarg); break;
                case 'o': once = cli_opt_once(&o.output, "--output", optarg); break;
                case 'U': once = cli_opt_once(&o.public_only, "--public-only", optarg); break;
                case 'X': o.reset = true; break;
                case 'N': o.new_key = true; break;
                case 'C': o.current = true; break;
                case 'j': o.json = true; break;
                case 't': o.tpm = true; break;
                case 'T': o.totp = true; break;
                case 's':
                        if (cli_pcr_select_parse(optarg, &o.select) < 0 || !o.select)
                                return cli_usage_error("policy", "--select %s: want PCR numbers 0-23 and ranges, "
                                                       "e.g. 4,5,7,9,12", optarg);
                        break;
                case 'O': o.others = true; break;
                case 'K':
                        if (o.n_keep == MB_ARRAY_SIZE(o.keep))
                                return cli_usage_error("policy", "at most %zu --keep files", MB_ARRAY_SIZE(o.keep));
                        o.keep[o.n_keep++] = optarg;
                        break;
                }
                if (once < 0)
                        return EXIT_BAD_INPUT;
        }
        /* approve --signature SIG REQUEST and sign REQUEST: one argument. */
        if ((o.signature || k == 6) && optind == argc - 2)
                o.arg = argv[optind + 1];
        else if (o.signature || k == 6)
                return cli_usage_error("policy", "policy %s takes one REQUEST (the file policy approve --request "
                                       "wrote)", sub);
        else if (optind < argc - 1)
                return cli_usage_error("policy", "unexpected argument '%s'", argv[optind + 1]);
        if (k == 0 && (o.new_key || o.esp) && !o.reset)
                return cli_usage_error("policy", "--new-key and --esp go with policy init --reset");
        if (k == 0 && o.reset && o.public_only)
                return cli_usage_error("policy", "--reset keeps the key there is (or makes one with --new-key): "
                                       "not --public-only");
        if (o.others && o.n_keep)
                return cli_usage_error("policy", "--others keeps this boot's approvals: no --keep with it");
        if (k == 6 && (!o.key || !o.output))
                return cli_usage_error("policy", "policy sign needs --key KEY (the policy key) and -o SIG");
        if (k == 1 && o.signature && (o.request || o.predicted || o.current || o.pcrs_file || o.select || o.label ||
                                      o.entry_id || o.totp))
                return cli_usage_error("policy", "policy approve --signature SIG REQUEST takes everything else from "
                                       "the request (--state-dir and --esp only)");
        if (k == 1 && o.request && o.pass_file)
                return cli_usage_error("policy", "--request signs nothing here: --pass-file goes to mshim policy sign");
        if (k == 1 && !o.signature && !!o.predicted == o.current)
                return cli_usage_error("policy", "policy approve takes --predicted PRED.json or --current");
        if (k == 1 && o.predicted && o.pcrs_file)
                return cli_usage_error("policy", "--pcrs goes with --current, not --predicted");
        if (k == 1 && o.totp && o.current && !o.pcrs_file)
                return cli_usage_error("policy", "policy approve --totp --current needs --pcrs FILE: the TPM's PCRs "
                                       "now are past the TOTP fence (PCR 12), not the TOTP point; use --predicted "
                                       "PRED.json from mshim predict --totp-point");
        if (k == 3 && o.totp && (o.tpm || o.pcrs_file || o.log))
                return cli_usage_error("policy", "policy prune --totp drops revoked approvals only: it reads no "
                                       "PCRs (the TPM's are past the TOTP fence)");
        if (k == 5 && !o.entry_id)
                return cli_usage_error("policy", "policy remove needs --entry-id ID (the boot entry whose approvals go)");
        if (k == 3 && (!!o.tpm + !!o.pcrs_file + !!o.log) > 1)
                return cli_usage_error("policy", "policy prune takes one of --tpm, --pcrs FILE, --log FILE");
        return subs[k].fn(&o);
}
