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
#include "mb/facts.h"
#include "mb/varstore.h"
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

/* ---- the firmware part: Keylime's example policy's fields ---------------------
 * keylime/mba/elchecking/example.py (its comment lists them): has_secureboot,
 * scrtm_and_bios (PCR 0's EV_S_CRTM_VERSION and EV_EFI_PLATFORM_FIRMWARE_BLOB(2)
 * SHA-256 digests), pk, kek, db, dbx (Secure Boot's variables as PCR 7 measured
 * them: {SignatureOwner, SignatureData} of every EFI_SIGNATURE_DATA, UEFI 2.10
 * 32.4.1) and mokdig, mokxdig (PCR 14's EV_IPL "MokList"/"MokListX" digests,
 * shim's). Digests as Keylime writes them: {"sha256": "0x<hex>"}. A firmware
 * update changes them, as it changes PCR 0 for a sealed disk. */

static void kl_hex(FILE *f, const uint8_t *p, size_t n) {
        fputs("\"0x", f);
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%02x", p[i]);
        fputc('"', f);
}

/* libefivar's efi_guid_to_str() text, which Keylime's parser gives owners. */
static void kl_guid(FILE *f, const uint8_t *g) {
        fprintf(f, "\"%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\"", g[3], g[2], g[1], g[0],
                g[5], g[4], g[7], g[6], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
}

static const uint8_t *kl_sha256(const mb_tcglog_event *ev) {
        for (uint32_t i = 0; i < ev->n_digests; i++)
                if (ev->digests[i].alg == MB_ALG_SHA256 && ev->digests[i].size == 32)
                        return ev->digests[i].bytes;
        return NULL;
}

/* EV_IPL data that is name, with or without its NUL (shim logs "MokList\0"). */
static bool kl_ipl_is(const mb_tcglog_event *ev, const char *name) {
        size_t n = strlen(name);

        return (ev->data_size == n || (ev->data_size == n + 1 && !ev->data[n])) && !memcmp(ev->data, name, n);
}

/* "name": the EFI_SIGNATURE_DATA of the variable's lists; a variable that
 * is not an EFI_SIGNATURE_LIST array is an error (why set). */
static int kl_keys(FILE *f, const char *name, const mb_facts_bytes *v, const char **why) {
        mb_siglist l;
        size_t off = 0;
        bool any = false;
        mb_err e;

        fprintf(f, ",\n  \"%s\": [", name);
        while ((e = mb_siglist_next_why(v->p, v->size, &off, &l, why)) == MB_OK)
                for (uint32_t i = 0; l.sig_size >= 16 && i < l.n_sigs; i++) {
                        const uint8_t *s = l.sigs + (size_t) i * l.sig_size;
                        fprintf(f, "%s\n    {\"SignatureOwner\": ", any ? "," : "");
                        kl_guid(f, s);
                        fputs(", \"SignatureData\": ", f);
                        kl_hex(f, s + 16, l.sig_size - 16);
                        fputc('}', f);
                        any = true;
                }
        fprintf(f, "%s]", any ? "\n  " : "");
        return e == MB_END ? 0 : -1;
}

/* The PCR 0, 7 and 14 facts Keylime's example checks, from the log: only
 * digests, and PCR 7's variables only from events whose digests cover
 * their data (mb_facts_bound: a log's unbound data is the attacker's). */
static int kl_scan(const uint8_t *log, size_t size, const char *path, FILE *f) {
        static const char *const mok[2] = { "MokList", "MokListX" };
        mb_tcglog l;
        mb_tcglog_event ev;
        size_t n_scrtm = 0, n_blob = 0, n_mok[2] = { 0, 0 };
        bool sep7 = false;
        char *m[2] = { NULL, NULL };
        size_t mn[2];
        FILE *mf[2] = { NULL, NULL };
        int r = -1;

        if (mb_tcglog_open(&l, log, size) != MB_OK) {
                cli_error("%s: not a readable event log", path);
                return -1;
        }
        for (int k = 0; k < 2; k++)
                if (!(mf[k] = open_memstream(&m[k], &mn[k])))
                        goto done;
        fputs(",\n  \"scrtm_and_bios\": [{", f);
        while (mb_tcglog_next(&l, &ev) == MB_OK) {
                const uint8_t *d = kl_sha256(&ev);
                bool scrtm = ev.pcr == 0 && ev.type == MB_EV_S_CRTM_VERSION;
                bool blob = ev.pcr == 0 && (ev.type == MB_EV_EFI_PLATFORM_FIRMWARE_BLOB ||
                                            ev.type == MB_EV_EFI_PLATFORM_FIRMWARE_BLOB2);
                int k = ev.pcr == 14 && ev.type == MB_EV_IPL ? kl_ipl_is(&ev, mok[0]) ? 0 : kl_ipl_is(&ev, mok[1]) ? 1 : -1 : -1;

                if ((scrtm || blob || k >= 0) && !d) {
                        cli_error("%s: event %u in PCR %u has no SHA-256 digest", path, ev.number, ev.pcr);
                        goto done;
                }
                if (scrtm && n_scrtm++ == 0) {
                        fputs("\n    \"scrtm\": {\"sha256\": ", f);
                        kl_hex(f, d, 32);
                        fputs("},\n    \"platform_firmware\": [", f);
                }
                if (blob) {
                        if (!n_scrtm)
                                break;  /* Keylime lists the blobs after the S-CRTM version: refused below */
                        fprintf(f, "%s{\"sha256\": ", n_blob++ ? ", " : "");
                        kl_hex(f, d, 32);
                        fputc('}', f);
                }
                if (k >= 0) {
                        fprintf(mf[k], "%s{\"sha256\": ", n_mok[k]++ ? ", " : "");
                        kl_hex(mf[k], d, 32);
                        fputc('}', mf[k]);
                }
                /* PC Client PFP 3.3.4.8: Secure Boot's configuration, before PCR 7's separator */
                if (ev.pcr == 7 && ev.type == MB_EV_EFI_VARIABLE_DRIVER_CONFIG && !sep7 && !mb_facts_bound(&ev)) {
                        cli_error("%s: event %u in PCR 7 (Secure Boot's configuration): its data is not what its "
                                  "digest covers; refusing to read Secure Boot's keys from it", path, ev.number);
                        goto done;
                }
                sep7 |= ev.pcr == 7 && ev.type == MB_EV_SEPARATOR;
        }
        if (n_scrtm != 1) {
                /* example.py: exactly one S-CRTM version (a TupleTest of one) */
                cli_error("%s: %zu EV_S_CRTM_VERSION events in PCR 0 before the firmware blobs; Keylime's firmware check "
                          "(scrtm_and_bios) needs exactly one", path, n_scrtm);
                goto done;
        }
        fputs("]\n  }]", f);
        for (int k = 0; k < 2; k++) {
                if (fclose(mf[k]) != 0) {
                        mf[k] = NULL;
                        goto done;
                }
                mf[k] = NULL;
                fprintf(f, ",\n  \"%s\": [%s]", k ? "mokxdig" : "mokdig", m[k]);
        }
        r = 0;
done:
        for (int k = 0; k < 2; k++) {
                if (mf[k])
                        fclose(mf[k]);
                free(m[k]);
        }
        return r;
}

static int keylime_firmware(const char *path, FILE *f) {
        static const char *const names[MB_FACTS_KEYS] = { "pk", "kek", "db", "dbx" };
        mb_facts *facts = calloc(1, sizeof(*facts));
        cli_file lf;
        const char *why = NULL;
        int r = -1;

        if (!facts) {
                cli_error("out of memory");
                return -1;
        }
        if (cli_file_load(path, &lf) < 0) {
                free(facts);
                return -1;
        }
        /* kl_scan first: it names an unbound PCR 7 event (and has opened
         * the log, so mb_facts_collect cannot fail on it) */
        if (kl_scan(lf.data, lf.size, path, f) < 0)
                r = -1;
        else if (mb_facts_collect(lf.data, lf.size, 1u << 7, facts) != MB_OK || facts->secure_boot < 0)
                cli_error("%s: no SecureBoot event in PCR 7 whose digest covers its data: Keylime's firmware check "
                          "needs Secure Boot's state", path);
        else {
                fprintf(f, ",\n  \"has_secureboot\": %s", facts->secure_boot ? "true" : "false");
                r = 0;
        }
        for (size_t k = 0; !r && k < MB_FACTS_KEYS; k++) {
                mb_facts_bytes none = { NULL, 0 };
                if (kl_keys(f, names[k], facts->have_key[k] ? &facts->key[k] : &none, &why) < 0) {
                        cli_error("%s: PCR 7's %s is not an EFI_SIGNATURE_LIST array (%s)", path,
                                  k == MB_FACTS_DB || k == MB_FACTS_DBX ? names[k] : k ? "KEK" : "PK",
                                  why ? why : "bad sizes");
                        r = -1;
                }
        }
        cli_file_free(&lf);
        free(facts);
        return r;
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
        bool no_log = false;    /* --no-log: the --state boots alone (an upgrade allowed, not this boot);
                                 * the firmware part still from the log */
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
        if (no_log && !n_states) {
                r = cli_usage_error("verify", "--no-log writes the --state boots alone: give at least one");
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
        fprintf(f, "{\n  \"schema\": \"%s\",\n  \"mshim_version\": \"%s\"", KEYLIME_SCHEMA, MB_VERSION);
        /* The firmware is this machine's for every boot listed, predictions
         * too (predict changes what mshim loads, not the firmware). */
        if (keylime_firmware(log ? log : SEAL_LOG, f) < 0) {
                fclose(f);
                f = NULL;
                goto done;
        }
        fprintf(f, ",\n  \"boots\": [");
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
