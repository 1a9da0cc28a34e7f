/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim verify --state FILE...: the quoted PCRs against reference states
 * (docs/ATTESTATION.md "Reference states"): `mshim predict --json`
 * outputs (the verifier's own, made before the boot) and signed approvals
 * (the files `mshim policy approve` writes, which come from the machine's
 * ESP and count only once they verify with the policy key, as unseal
 * checks them). The quote is accepted when its SHA-256 PCRs are one of
 * them; a refusal names the closest one, the PCRs that differ and the
 * log's events that extended them, as unseal's does.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "safeio.h"
#include "sealcmd.h"
#include "verify.h"

static bool is_json(const char *path) {
        cli_file f;
        bool j = false;

        if (cli_file_load_max(path, PREDJSON_MAX_SIZE, "a reference state", &f) < 0)
                return false;
        for (size_t i = 0; i < f.size; i++)
                if (!isspace(f.data[i])) {
                        j = f.data[i] == '{';
                        break;
                }
        cli_file_free(&f);
        return j;
}

/* A prediction of the end of the boot: its SHA-256 PCRs, less those it
 * cannot predict. */
static int load_prediction(vs_ref *r) {
        pred_json p;
        uint32_t k = 0;

        if (pred_json_load(r->path, &p) < 0)
                return EXIT_BAD_INPUT;
        if (p.refused || p.point != PRED_POINT_BOOT) {
                cli_error("%s: %s", r->path, p.refused ? "predicts a boot mshim refuses: not a state to accept"
                                                       : "not a prediction of the end of the boot ('point': 'boot')");
                return EXIT_BAD_INPUT;
        }
        for (uint32_t b = 0; b < p.pcrs.n_banks; b++)
                if (p.pcrs.banks[b].alg == MB_ALG_SHA256)
                        r->mask = p.pcrs.banks[b].present & ~p.unpredictable;
        if (!r->mask) {
                cli_error("%s: predicts no SHA-256 PCR", r->path);
                return EXIT_BAD_INPUT;
        }
        for (uint32_t i = 0; i < MB_PCR_COUNT; i++)
                if (r->mask & (1u << i))
                        memcpy(r->values + SEAL_PCR_VALUE * k++, mb_pcrs_get(&p.pcrs, MB_ALG_SHA256, i), SEAL_PCR_VALUE);
        return 0;
}

/* An approval, verified as unseal verifies it: its policy the digest of
 * its own fields with mshim's epoch counter's Name, signed by the policy
 * key over the disk policyRef, and its epoch (which that signature covers)
 * not below the counter's: unseal's PolicyNV (counter <= epoch,
 * docs/SEALING.md) refuses exactly those. One that does not verify or is
 * revoked is kept, marked. */
static int load_approval(vs_ref *r, const char *policy_pub, const TPM2B_NAME *nv_name, uint64_t epoch) {
        approval a;
        int k;

        if (approval_load(r->path, &a) < 0)
                return EXIT_BAD_INPUT;
        k = seal_approval_verify(policy_pub, nv_name, SEAL_DISK, &a, &r->bad);
        if (k < 0)
                return EXIT_BAD_INPUT;
        if (k == 0)
                r->bad = NULL;
        if (k == 0 && a.epoch < epoch) {
                snprintf(r->why, sizeof(r->why), "approved at epoch %llu, and the machine's epoch counter is at %llu "
                         "(--epoch): unseal refuses it too", (unsigned long long) a.epoch, (unsigned long long) epoch);
                r->bad = r->why;
                r->revoked = true;
        }
        r->approval = true;
        r->mask = a.pcrs;
        memcpy(r->values, a.values, SEAL_PCR_VALUE * seal_pcr_count(a.pcrs));
        snprintf(r->label, sizeof(r->label), "%s", a.label[0] ? a.label : "approval");
        return 0;
}

int verify_parse_epoch(const char *s, uint64_t *ret) {
        char *end;
        unsigned long long v;

        errno = 0;
        v = strtoull(s, &end, 10);
        if (*s < '0' || *s > '9' || *end || errno) {
                cli_error("--epoch wants the machine's epoch counter, a decimal number (`mshim policy list --json` "
                          "on the machine: its \"counter\"), not '%s'", s);
                return -1;
        }
        *ret = v;
        return 0;
}

vs_ref *verify_states_load(char *const *paths, size_t n, const char *policy_pub, const uint64_t *epoch,
                           int *ret_err) {
        vs_ref *refs = calloc(n ? n : 1, sizeof(*refs));
        TPM2B_NAME nv_name;
        int r = refs ? 0 : EXIT_BAD_INPUT;

        if (!refs)
                cli_error("out of memory");
        if (!r && ts_counter_name(&nv_name) < 0) {
                cli_error("cannot compute the epoch counter's Name");
                r = EXIT_BAD_INPUT;
        }
        for (size_t i = 0; !r && i < n; i++) {
                refs[i].path = paths[i];
                if (is_json(paths[i]))
                        r = load_prediction(&refs[i]);
                else if (!policy_pub) {
                        cli_error("%s: an approval is checked with the machine's policy key: give --policy-key "
                                  "POLICY.pub (its /var/lib/mshim/policy.pub)", paths[i]);
                        r = EXIT_BAD_INPUT;
                } else if (!epoch) {
                        /* Without it a revoked approval would be accepted:
                         * only the machine's counter says which are. */
                        cli_error("%s: an approval counts only at the machine's current epoch: give --epoch N, its "
                                  "epoch counter (`mshim policy list --json` on the machine: its \"counter\"; `mshim policy "
                                  "revoke` moves it)", paths[i]);
                        r = EXIT_BAD_INPUT;
                } else
                        r = load_approval(&refs[i], policy_pub, &nv_name, *epoch);
        }
        if (r) {
                free(refs);
                refs = NULL;
        }
        *ret_err = r;
        return refs;
}

void verify_states_free(vs_ref *refs) {
        free(refs);
}

int verify_states_match(const vs_ref *refs, size_t n, const mb_pcr_values *quoted, vs_result *ret) {
        size_t best_n = SIZE_MAX;
        uint32_t m;

        memset(ret, 0, sizeof(*ret));
        for (size_t i = 0; i < n; i++) {
                size_t d = seal_state_differs(refs[i].mask, refs[i].values, quoted, &m);
                /* A forged approval is never the one that matches; when it
                 * alone would, that is the refusal's reason. */
                if (!d && !refs[i].bad) {
                        ret->matched = &refs[i];
                        return 1;
                }
                if (!d)
                        ret->forged = &refs[i];
                else if (d < best_n && !refs[i].bad) {
                        best_n = d;
                        ret->closest = &refs[i];
                        ret->differ = m;
                }
        }
        return 0;
}

const uint8_t *vs_value(const vs_ref *r, uint32_t i) {
        size_t k = 0;

        if (!(r->mask & (1u << i)))
                return NULL;
        for (uint32_t j = 0; j < i; j++)
                k += !!(r->mask & (1u << j));
        return r->values + SEAL_PCR_VALUE * k;
}

/* ---- mshim verify keylime-refstate ------------------------------------------ */

/* The PCRs Keylime's "mshim" policy compares (keylime/mshim_policy.py). */
#define KEYLIME_PCRS ((1u << 4) | (1u << 5) | (1u << 7) | (1u << 9) | (1u << 12))
#define KEYLIME_SCHEMA "mshim-keylime-refstate/1"

/* One boot of the refstate: label and the PCRs of mask that values (32
 * bytes each, ascending over all_mask) has. */
static void keylime_boot(FILE *f, bool first, const char *label, uint32_t all_mask, const uint8_t *values) {
        size_t k = 0;
        bool any = false;

        fprintf(f, "%s\n    {\"label\": ", first ? "" : ",");
        for (fputc('"', f); *label; label++)
                fprintf(f, *label == '"' || *label == '\\' ? "\\%c" : (unsigned char) *label < 0x20 ? "?" : "%c", *label);
        fprintf(f, "\", \"pcrs\": {");
        for (uint32_t i = 0; i < MB_PCR_COUNT; i++) {
                if (!(all_mask & (1u << i)))
                        continue;
                if (KEYLIME_PCRS & (1u << i)) {
                        fprintf(f, "%s\"%u\": \"", any ? ", " : "", i);
                        for (size_t j = 0; j < SEAL_PCR_VALUE; j++)
                                fprintf(f, "%02x", values[SEAL_PCR_VALUE * k + j]);
                        fputc('"', f);
                        any = true;
                }
                k++;
        }
        fprintf(f, "}}");
}

int verify_keylime_refstate(int argc, char **argv) {
        static const struct option longopts[] = {
                { "log", required_argument, NULL, 'l' },        { "state", required_argument, NULL, 's' },
                { "policy-key", required_argument, NULL, 'k' }, { "output", required_argument, NULL, 'o' },
                { "no-log", no_argument, NULL, 'N' },           { "help", no_argument, NULL, 'h' },
                { "epoch", required_argument, NULL, 'E' },      { 0 },
        };
        const char *log = NULL, *key = NULL, *out = NULL, *epoch_arg = NULL;
        uint64_t epoch;
        bool no_log = false;    /* --no-log: the --state boots alone (an upgrade allowed, not this boot) */
        char *states[64];
        size_t n_states = 0, n = 0;
        vs_ref *refs = NULL;
        mb_pcr_values *now = calloc(1, sizeof(*now));
        uint8_t values[SEAL_STATE_MAX];
        char *doc = NULL;
        FILE *f = NULL;
        int c, r = EXIT_BAD_INPUT;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "ho:", longopts, "verify")) != -1) {
                const char **slot = c == 'l' ? &log : c == 'k' ? &key : c == 'o' ? &out : c == 'E' ? &epoch_arg : NULL;
                if (c == 'h') {
                        cli_help(stdout, "verify");
                        free(now);
                        return 0;
                }
                if (c == 'N') {
                        no_log = true;
                        continue;
                }
                if (c == 's') {
                        if (n_states == 64) {
                                r = cli_usage_error("verify", "at most 64 --state files");
                                goto done;
                        }
                        states[n_states++] = optarg;
                        continue;
                }
                if (!slot || cli_opt_once_for(longopts, c, slot, optarg) < 0)
                        goto done;
        }
        if (optind < argc || !out) {
                r = cli_usage_error("verify", "verify keylime-refstate takes [--log LOG] [--state FILE]... "
                                    "[--policy-key PUB --epoch N] -o REFSTATE");
                goto done;
        }
        if (no_log && (log || !n_states)) {
                r = cli_usage_error("verify", "--no-log writes the --state boots alone: give at least one, and no --log");
                goto done;
        }
        for (size_t i = 0; i < n_states; i++)
                if (!strcmp(states[i], out) || (log && !strcmp(log, out))) {
                        cli_error("refusing to overwrite an input with -o %s", out);
                        goto done;
                }
        if (epoch_arg && verify_parse_epoch(epoch_arg, &epoch) < 0)
                goto done;
        if (!now || (n_states && !(refs = verify_states_load(states, n_states, key, epoch_arg ? &epoch : NULL, &r))))
                goto done;
        /* This boot: the PCR values its event log replays to. */
        r = EXIT_BAD_INPUT;
        if (!no_log && (seal_log_values(log ? log : SEAL_LOG, now) < 0 ||
                        seal_values_from(now, log ? log : SEAL_LOG, KEYLIME_PCRS, values) < 0))
                goto done;
        for (size_t i = 0; i < n_states; i++)
                if (refs[i].bad) {
                        cli_error("refused: %s: the approval %s: %s", refs[i].path,
                                  refs[i].revoked ? "is revoked" : "does not verify", refs[i].bad);
                        r = EXIT_CHECK_FAILED;
                        goto done;
                }
        f = open_memstream(&doc, &n);
        if (!f)
                goto done;
        fprintf(f, "{\n  \"schema\": \"%s\",\n  \"mshim_version\": \"%s\",\n  \"boots\": [", KEYLIME_SCHEMA, MB_VERSION);
        if (!no_log)
                keylime_boot(f, true, "this boot", KEYLIME_PCRS, values);
        for (size_t i = 0; i < n_states; i++)
                keylime_boot(f, no_log && i == 0, refs[i].approval ? refs[i].label : refs[i].path, refs[i].mask,
                             refs[i].values);
        fprintf(f, "\n  ]\n}\n");
        if (fclose(f) == 0 && cli_write_file(out, CLI_MODE_PUBLIC, doc, n) == 0) {
                printf("%s: %s%zu reference state%s\n", out, no_log ? "" : "this boot and ", n_states,
                       n_states == 1 ? "" : "s");
                r = 0;
        }
done:
        free(doc);
        free(now);
        verify_states_free(refs);
        return r;
}
