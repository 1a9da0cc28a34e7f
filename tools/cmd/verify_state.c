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
#include <stdlib.h>
#include <string.h>
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
 * key over the disk policyRef. One that does not verify is kept, marked. */
static int load_approval(vs_ref *r, const char *policy_pub, const TPM2B_NAME *nv_name) {
        approval a;
        int k;

        if (approval_load(r->path, &a) < 0)
                return EXIT_BAD_INPUT;
        k = seal_approval_verify(policy_pub, nv_name, SEAL_DISK, &a, &r->bad);
        if (k < 0)
                return EXIT_BAD_INPUT;
        if (k == 0)
                r->bad = NULL;
        r->approval = true;
        r->mask = a.pcrs;
        memcpy(r->values, a.values, SEAL_PCR_VALUE * seal_pcr_count(a.pcrs));
        snprintf(r->label, sizeof(r->label), "%s", a.label[0] ? a.label : "approval");
        return 0;
}

vs_ref *verify_states_load(char *const *paths, size_t n, const char *policy_pub, int *ret_err) {
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
                } else
                        r = load_approval(&refs[i], policy_pub, &nv_name);
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
