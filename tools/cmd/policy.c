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
#include "sealcmd.h"
#include "mb/totp.h"

typedef struct policy_opts {
        const char *state_dir, *esp, *approvals, *predicted, *pcrs_file, *label, *entry_id, *log;
        bool current, tpm, json, totp;
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

/* ---- init ------------------------------------------------------------------ */

static int policy_init(const policy_opts *o) {
        const char *dir = o->state_dir ? o->state_dir : SEAL_STATE_DIR;
        char *key = seal_key_path(dir, false), *pub = seal_key_path(dir, true);
        TPM2B_PUBLIC srk_pub;
        ESYS_TR srk = ESYS_TR_NONE;
        struct stat st;
        uint64_t epoch = 0;
        cli_tpm t;
        int r = EXIT_BAD_INPUT;

        if (!key || !pub)
                goto out;
        /* Before anything changes in the TPM: an existing key is kept. */
        if (lstat(key, &st) == 0 || lstat(pub, &st) == 0) {
                cli_error("%s exists: the policy key is made once (every approval and signed sealed file "
                          "depends on it); not overwriting it", lstat(key, &st) == 0 ? key : pub);
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
        if (r == 0 && pk_generate(key, pub) < 0)
                r = EXIT_BAD_INPUT;
        if (r == 0)
                printf("storage root key: 0x81000001\nepoch counter: 0x01804D53 = %llu\npolicy key: %s\npublic key: %s\n",
                       (unsigned long long) epoch, key, pub);
out:
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

static int policy_approve(const policy_opts *o) {
        uint32_t mask = o->select ? o->select : SEAL_DEFAULT_PCRS;
        uint8_t values[MB_PCR_COUNT * SEAL_PCR_VALUE];
        char *dir = approvals_dir(o);
        pred_json *p = NULL;
        cli_tpm t;
        int r = EXIT_BAD_INPUT;

        if (!dir || (o->totp && totp_mask(o, &mask) < 0))
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
        if ((o->predicted || seal_current_values(&t, o->pcrs_file, mask, values) == 0) &&
            seal_approve(&t, o->state_dir ? o->state_dir : SEAL_STATE_DIR, dir, mask, values, o->label ? o->label : "",
                         o->entry_id ? o->entry_id : "", o->totp ? SEAL_TOTP : SEAL_DISK, NULL) == 0)
                r = 0;
        cli_tpm_disconnect(&t);
out:
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

static void list_json(const approval_entry *e, size_t n) {
        printf("{\"schema\":\"mshim-approvals/1\",\"mshim_version\":\"%s\",\"approvals\":[", MB_VERSION);
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

static void list_text(const approval_entry *e, size_t n) {
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
                putchar('\n');
        }
        if (!n)
                printf("no approvals\n");
}

static int policy_list(const policy_opts *o) {
        char *dir = approvals_dir(o);
        approval_entry *e = NULL;
        size_t n = 0, bad = 0;
        int r = EXIT_BAD_INPUT;

        if (dir && approvals_load_dir(dir, &e, &n, &bad) == 0) {
                if (o->json)
                        list_json(e, n);
                else
                        list_text(e, n);
                r = bad ? EXIT_CHECK_FAILED : 0;
                approvals_free(e, n);
        }
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
static int rotate_sign(const policy_opts *o, const TPM2B_NAME *nv_name, uint64_t counter, const rot_item *it, size_t n,
                       approval *ret_new, char **ret_to) {
        const char *state = o->state_dir ? o->state_dir : SEAL_STATE_DIR;
        struct stat st;

        for (size_t i = 0; i < n; i++) {
                char *dir;
                if (!it[i].keep)
                        continue;
                ret_new[i] = *it[i].a;
                ret_new[i].epoch = counter + 1;
                if (seal_sign(state, nv_name, it[i].kind, &ret_new[i]) < 0 || !(dir = kind_dir(o, it[i].kind)))
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
        int r = EXIT_BAD_INPUT;

        to = calloc(n ? n : 1, sizeof(*to));
        na = calloc(n ? n : 1, sizeof(*na));
        if (!pub || !to || !na || (bump && (bad = rotate_verify(pub, nv_name, counter, it, n, strict)) < 0))
                goto out;
        if (strict && bad) {
                cli_error("nothing re-signed, the epoch counter unchanged");
                r = EXIT_CHECK_FAILED;
                goto out;
        }
        if (bump) {
                if (rotate_sign(o, nv_name, counter, it, n, na, to) < 0 || ts_counter_increment(t, &epoch))
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
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        static const struct {
                const char *name;
                int (*fn)(const policy_opts *);
                const char *opts;       /* the option letters it takes */
        } subs[] = {
                { "init", policy_init, "S" },
                { "approve", policy_approve, "SEsPCpLIT" },
                { "list", policy_list, "EjT" },
                { "prune", policy_prune, "SElptT" },
                { "revoke", policy_revoke, "SEK" },
                { "remove", policy_remove, "SEI" },
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
        while ((c = cli_getopt(argc - 1, argv + 1, "h", longopts, "policy")) != -1) {
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
                case 'C': o.current = true; break;
                case 'j': o.json = true; break;
                case 't': o.tpm = true; break;
                case 'T': o.totp = true; break;
                case 's':
                        if (cli_pcr_select_parse(optarg, &o.select) < 0 || !o.select)
                                return cli_usage_error("policy", "--select %s: want PCR numbers 0-23 and ranges, "
                                                       "e.g. 4,5,7,9,12", optarg);
                        break;
                case 'K':
                        if (o.n_keep == MB_ARRAY_SIZE(o.keep))
                                return cli_usage_error("policy", "at most %zu --keep files", MB_ARRAY_SIZE(o.keep));
                        o.keep[o.n_keep++] = optarg;
                        break;
                }
                if (once < 0)
                        return EXIT_BAD_INPUT;
        }
        if (optind < argc - 1)
                return cli_usage_error("policy", "unexpected argument '%s'", argv[optind + 1]);
        if (k == 1 && !!o.predicted == o.current)
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
