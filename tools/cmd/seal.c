/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim seal: a secret (standard input) sealed by the TPM to a signed
 * policy (the default: any boot state the policy key approves) or to a
 * literal set of boot states (docs/SEALING.md).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include "safeio.h"
#include "sealcmd.h"

typedef struct seal_opts {
        const char *state_dir, *pcrs_file, *pin_file, *out;
        bool literal, signed_mode, pin;
        uint32_t select;
        char **preds;
        size_t n_preds;
} seal_opts;

/* The secret: 1..TS_SECRET_MAX bytes, any bytes (NUL too). */
static int read_secret(uint8_t *buf, size_t *ret_n) {
        size_t n = 0;

        for (;;) {
                ssize_t k = read(STDIN_FILENO, buf + n, TS_SECRET_MAX + 1 - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        cli_error("cannot read the secret from standard input: %s", strerror(errno));
                        return -1;
                }
                if (k == 0)
                        break;
                n += (size_t) k;
                if (n > TS_SECRET_MAX) {
                        cli_error("the secret on standard input is longer than %u bytes (the TPM seals at most "
                                  "that much: seal a key, not the data)", TS_SECRET_MAX);
                        return -1;
                }
        }
        if (n == 0) {
                cli_error("no secret on standard input");
                return -1;
        }
        *ret_n = n;
        return 0;
}

/* The literal states: the current one, then each prediction's. */
static int literal_states(const seal_opts *o, cli_tpm *t, seal_file *f) {
        f->n_states = 1 + o->n_preds;
        f->states = calloc(f->n_states, sizeof(*f->states));
        if (!f->states) {
                cli_error("out of memory");
                return -1;
        }
        if (seal_current_values(t, o->pcrs_file, f->pcrs, f->states[0]) < 0)
                return -1;
        return seal_pred_states(o->preds, o->n_preds, PRED_POINT_BOOT, f->pcrs, f->states + 1);
}

static int seal_tpm(const seal_opts *o, seal_file *f, const char *pin, const uint8_t *secret, size_t n) {
        ESYS_TR srk = ESYS_TR_NONE;
        mb_policy policy;
        cli_tpm t;
        int r = EXIT_BAD_INPUT;

        if (cli_tpm_connect(&t) < 0)
                return EXIT_BAD_INPUT;
        if (seal_srk(&t, o->state_dir ? o->state_dir : SEAL_STATE_DIR, &srk, &f->srk))
                goto out;
        if (f->literal ? literal_states(o, &t, f) < 0 || seal_literal_policy(f, &policy) < 0
                       : seal_signed_setup(&t, o->state_dir, f) < 0 || seal_signed_policy(&f->policy_key, f->pin, &policy) < 0)
                goto out;
        r = ts_seal(&t, srk, &policy, pin, secret, n, &f->pub, &f->priv);
out:
        if (srk != ESYS_TR_NONE)
                Esys_TR_Close(t.esys, &srk);
        cli_tpm_disconnect(&t);
        return r;
}

static int run_seal(const seal_opts *o) {
        seal_file *f = calloc(1, sizeof(*f));
        uint8_t secret[TS_SECRET_MAX + 1];
        size_t n = 0;
        char *pin = NULL, *text = NULL;
        struct stat st;
        int r = EXIT_BAD_INPUT;

        if (!f) {
                cli_error("out of memory");
                return EXIT_BAD_INPUT;
        }
        /* Refused before the secret is read or the TPM is touched. */
        if (lstat(o->out, &st) == 0) {
                cli_error("%s exists; not overwriting it", o->out);
                goto out;
        }
        f->literal = o->literal;
        f->pin = o->pin || o->pin_file;
        f->pcrs = o->select ? o->select : SEAL_DEFAULT_PCRS;
        /* Both modes: seal_signed_policy adds it for every disk key. */
        f->fence = SEAL_FENCE_PCRS;
        if (read_secret(secret, &n) < 0)
                goto out;
        if (f->pin && !(pin = seal_pin_read(o->pin_file, true)))
                goto out;
        r = seal_tpm(o, f, pin, secret, n);
        if (r == 0) {
                text = seal_file_format(f);
                r = !text ? (cli_error("out of memory"), EXIT_BAD_INPUT)
                          : seal_write_new(o->out, CLI_MODE_SECRET, text, strlen(text)) < 0 ? EXIT_BAD_INPUT : 0;
        }
out:
        OPENSSL_cleanse(secret, sizeof(secret));
        cli_secret_free(pin);
        free(text);
        seal_file_free(f);
        free(f);
        return r;
}

int cmd_seal(int argc, char **argv) {
        static const struct option longopts[] = {
                { "state-dir", required_argument, NULL, 'S' },
                { "select", required_argument, NULL, 's' },
                { "signed", no_argument, NULL, 'g' },
                { "literal", no_argument, NULL, 'L' },
                { "pcrs", required_argument, NULL, 'p' },
                { "pin", no_argument, NULL, 'P' },
                { "pin-file", required_argument, NULL, 'F' },
                { "output", required_argument, NULL, 'o' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        seal_opts o = { 0 };
        int c;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "ho:", longopts, "seal")) != -1) {
                int once = 0;

                switch (c) {
                case 'S': once = cli_opt_once(&o.state_dir, "--state-dir", optarg); break;
                case 'p': once = cli_opt_once(&o.pcrs_file, "--pcrs", optarg); break;
                case 'F': once = cli_opt_once(&o.pin_file, "--pin-file", optarg); break;
                case 'o': once = cli_opt_once(&o.out, "-o", optarg); break;
                case 'g': o.signed_mode = true; break;
                case 'L': o.literal = true; break;
                case 'P': o.pin = true; break;
                case 's':
                        if (cli_pcr_select_parse(optarg, &o.select) < 0)
                                return cli_usage_error("seal", "--select %s: want PCR numbers 0-23 and ranges, "
                                                       "e.g. 4,5,7,9,12", optarg);
                        if (o.select & SEAL_FENCE_PCRS)
                                return cli_usage_error("seal", "--select %s: PCR %u is the unseal fence: every sealed "
                                                       "key requires it at zero already (docs/SEALING.md)", optarg,
                                                       MB_UNSEAL_FENCE_PCR);
                        break;
                case 'h': cli_help(stdout, "seal"); return 0;
                default: return EXIT_BAD_INPUT;
                }
                if (once < 0)
                        return EXIT_BAD_INPUT;
        }
        if (!o.out)
                return cli_usage_error("seal", "no -o FILE (where the sealed secret goes)");
        if (o.literal && o.signed_mode)
                return cli_usage_error("seal", "--signed and --literal cannot be used together");
        if (o.pin && o.pin_file)
                return cli_usage_error("seal", "--pin and --pin-file cannot be used together");
        if (optind < argc && !o.literal)
                return cli_usage_error("seal", "unexpected argument '%s' (predictions go with --literal)", argv[optind]);
        if (!o.literal && o.pcrs_file)
                return cli_usage_error("seal", "--pcrs goes with --literal (a signed seal binds no PCR values; "
                                       "approve them with 'mshim policy approve')");
        if ((size_t) (argc - optind) >= SEAL_MAX_STATES)
                return cli_usage_error("seal", "at most %u states (the current one and %u predictions)",
                                       SEAL_MAX_STATES, SEAL_MAX_STATES - 1);
        o.preds = argv + optind;
        o.n_preds = (size_t) (argc - optind);
        return run_seal(&o);
}
