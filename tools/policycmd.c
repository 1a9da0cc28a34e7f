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

/* --totp: the TOTP key's approvals (docs/SEALING.md "The TOTP key"). */
static char *approvals_dir(const policy_opts *o) {
        return seal_path(o->esp ? o->esp : SEAL_ESP, o->totp ? MB_TOTP_APPROVALS_DIR : SEAL_APPROVALS);
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
        r = ts_srk_provision(&t, &srk, &srk_pub);
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
        if (o->predicted) {
                p = calloc(1, sizeof(*p));
                if (!p || pred_json_load(o->predicted, p) < 0 || pred_json_values(o->predicted, p, mask, values) < 0)
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
 * matching approvals' entries created before them. */
static void prune_mark(const approval_entry *e, size_t n, uint64_t counter, const mb_pcr_values *now, bool *drop,
                       bool *any_match) {
        *any_match = false;
        for (size_t i = 0; i < n; i++)
                drop[i] = e[i].a.epoch < counter;
        for (size_t m = 0; now && m < n; m++) {
                if (drop[m] || !approval_matches(&e[m].a, now))
                        continue;
                *any_match = true;
                for (size_t i = 0; i < n; i++)
                        if (i != m && !approval_matches(&e[i].a, now) && !strcmp(e[i].a.entry_id, e[m].a.entry_id) &&
                            strcmp(e[i].a.created, e[m].a.created) < 0)
                                drop[i] = true;
        }
}

static int policy_prune(const policy_opts *o) {
        char *dir = approvals_dir(o);
        approval_entry *e = NULL;
        mb_pcr_values *now = calloc(1, sizeof(*now));
        bool *drop = NULL, any_match;
        size_t n = 0;
        uint64_t counter;
        ESYS_TR nv = ESYS_TR_NONE;
        TPM2B_NAME name;
        cli_tpm t;
        int r = EXIT_BAD_INPUT;

        if (!dir || !now || approvals_load_dir(dir, &e, &n, NULL) < 0)
                goto out;
        if (cli_tpm_connect(&t) < 0)
                goto out;
        /* TOTP approvals are of the TOTP point: the PCRs now are past the
         * fence, no approval matches them. Only revoked ones go. */
        if (ts_counter_open(&t, &nv, &name, &counter) == 0 && (o->totp || prune_values(o, &t, now) == 0))
                r = 0;
        if (nv != ESYS_TR_NONE)
                Esys_TR_Close(t.esys, &nv);
        cli_tpm_disconnect(&t);
        if (r)
                goto out;
        drop = calloc(n ? n : 1, sizeof(*drop));
        if (!drop)
                goto out;
        prune_mark(e, n, counter, o->totp ? NULL : now, drop, &any_match);
        if (!any_match && !o->totp)
                cli_error("warning: no approval matches the current boot; only revoked ones are dropped");
        for (size_t i = 0; i < n; i++) {
                if (!drop[i])
                        continue;
                if (unlink(e[i].path) < 0) {
                        cli_error("cannot remove %s: %s", e[i].path, strerror(errno));
                        r = EXIT_BAD_INPUT;
                        continue;
                }
                printf("removed %s (%s)\n", e[i].path, e[i].a.epoch < counter ? "revoked" : "superseded");
        }
out:
        free(drop);
        free(now);
        approvals_free(e, n);
        free(dir);
        return r;
}

/* ---- revoke ----------------------------------------------------------------- */

/* A kept approval in a directory named totp-approvals (its real path's)
 * is a TOTP one: re-signed with the TOTP policyRef into the ESP's TOTP
 * approvals. */
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
        policy_opts totp_o = *o;
        char *dir = approvals_dir(o), *key = seal_key_path(state, false), *totp_dir;
        approval *keep = calloc(o->n_keep ? o->n_keep : 1, sizeof(*keep));
        uint64_t epoch = 0;
        cli_tpm t;
        int r = EXIT_BAD_INPUT;

        totp_o.totp = true;
        totp_dir = approvals_dir(&totp_o);
        if (!dir || !key || !keep || !totp_dir)
                goto out;
        /* Everything that can fail without the TPM first: the kept
         * approvals must parse and the key must be readable. */
        for (size_t i = 0; i < o->n_keep; i++)
                if (approval_load(o->keep[i], &keep[i]) < 0)
                        goto out;
        if (o->n_keep && access(key, R_OK) < 0) {
                cli_error("%s: %s (needed to re-sign the kept approvals)", key, strerror(errno));
                goto out;
        }
        if (cli_tpm_connect(&t) < 0)
                goto out;
        r = ts_counter_increment(&t, &epoch);
        if (r == 0)
                printf("epoch counter: %llu; approvals of earlier epochs no longer unseal\n", (unsigned long long) epoch);
        for (size_t i = 0; r == 0 && i < o->n_keep; i++) {
                bool totp = is_totp_approval(o->keep[i]);
                if (seal_approve(&t, state, totp ? totp_dir : dir, keep[i].pcrs, keep[i].values, keep[i].label,
                                 keep[i].entry_id, totp ? SEAL_TOTP : SEAL_DISK, NULL) < 0)
                        r = EXIT_BAD_INPUT;
                else if (unlink(o->keep[i]) < 0)
                        cli_error("warning: cannot remove %s (revoked): %s", o->keep[i], strerror(errno));
        }
        cli_tpm_disconnect(&t);
out:
        free(keep);
        free(key);
        free(totp_dir);
        free(dir);
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
        if (k == 3 && (!!o.tpm + !!o.pcrs_file + !!o.log) > 1)
                return cli_usage_error("policy", "policy prune takes one of --tpm, --pcrs FILE, --log FILE");
        return subs[k].fn(&o);
}
