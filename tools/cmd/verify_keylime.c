/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim verify keylime-refstate [--log LOG] [--state PRED.json]... -o OUT:
 * the measured-boot reference state Keylime's verifier checks an mshim
 * boot against with mshim's policy module (tools/keylime/mshim_keylime.py,
 * docs/ATTESTATION.md "Keylime"): the allowed boots, each as the sha256
 * values of PCRs 0-9 and 12-14 a boot's log must replay to. The boot the
 * log describes (this machine's by default) and each end-of-boot
 * prediction (`mshim predict --json`), so a kernel upgrade is allowed
 * before it boots, as a sealed disk follows it.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "help.h"
#include "mb/tcglog.h"
#include "predjson.h"
#include "safeio.h"
#include "verify.h"

#define REFSTATE_PCRS   0x73ffu         /* PCRs 0-9, 12-14: what the policy module checks */
#define REFSTATE_LOG_MAX_MIB 32
#define MAX_STATES      64
#define DEFAULT_LOG     "/sys/kernel/security/tpm0/binary_bios_measurements"

typedef struct refstate_opts {
        const char *log, *out;
        const char *states[MAX_STATES];
        size_t n_states;
        bool no_log;
} refstate_opts;

/* One boot of the refstate: its name and its sha256 PCR values (NULL: a
 * PCR it does not constrain, one a prediction could not predict). */
typedef struct ref_boot {
        const char *name;
        uint8_t pcr[MB_PCR_COUNT][32];
        uint32_t given;
} ref_boot;

/* The log's sha256 replay of REFSTATE_PCRS into b. */
static int boot_of_log(const char *path, ref_boot *b) {
        mb_tcglog log;
        mb_tcglog_event ev;
        mb_replay *rp = calloc(1, sizeof(*rp));
        const mb_pcr_bank *bank;
        cli_file f;
        mb_err r = MB_ERR_INVALID;
        int ret = EXIT_BAD_INPUT;

        if (!rp || cli_file_load_max(path, (size_t) REFSTATE_LOG_MAX_MIB << 20, "an event log", &f) < 0) {
                free(rp);
                return ret;
        }
        if ((r = mb_tcglog_open(&log, f.data, f.size)) != MB_OK) {
                cli_error("%s: not a TCG event log (%s)", path, mb_strerror(r));
                goto out;
        }
        mb_replay_init(rp, &log);
        while ((r = mb_tcglog_next(&log, &ev)) == MB_OK)
                mb_replay_event(rp, &ev);
        bank = r == MB_END ? mb_replay_bank(rp, MB_ALG_SHA256) : NULL;
        if (r != MB_END)
                cli_error("%s: event %u (at byte %zu) does not parse: %s", path, log.next_number, log.off,
                          mb_strerror(r));
        else if (!bank || !bank->computable)
                cli_error("%s: no sha256 digests: Keylime's mshim policy checks the sha256 bank", path);
        else {
                for (uint32_t i = 0; i < MB_PCR_COUNT; i++)
                        if (REFSTATE_PCRS & (1u << i))
                                memcpy(b->pcr[i], bank->pcr[i], 32);
                b->given = REFSTATE_PCRS;
                ret = 0;
        }
out:
        cli_file_free(&f);
        free(rp);
        return ret;
}

/* An end-of-boot prediction's sha256 values (its unpredictable PCRs left
 * unconstrained); a TOTP-point prediction or a refused boot is refused. */
static int boot_of_prediction(const char *path, ref_boot *b) {
        pred_json p;

        if (pred_json_load(path, &p) < 0)
                return EXIT_BAD_INPUT;
        if (p.point != PRED_POINT_BOOT || p.refused) {
                cli_error("%s: %s: a reference state is a whole boot; use `mshim predict --json` (without "
                          "--totp-point)", path, p.refused ? "a boot the firmware or mshim would refuse" :
                          p.point == PRED_POINT_TOTP ? "a prediction of the TOTP point" : "it does not say its point");
                return EXIT_BAD_INPUT;
        }
        for (uint32_t i = 0; i < MB_PCR_COUNT; i++) {
                const uint8_t *v = mb_pcrs_get(&p.pcrs, MB_ALG_SHA256, i);
                if (!(REFSTATE_PCRS & (1u << i)) || !v || (p.unpredictable & (1u << i)))
                        continue;
                memcpy(b->pcr[i], v, 32);
                b->given |= 1u << i;
        }
        if (!(b->given & (1u << 4))) {
                cli_error("%s: no sha256 value of PCR 4 (which images boot): not a reference state", path);
                return EXIT_BAD_INPUT;
        }
        return 0;
}

static void put_str(cli_out *o, const char *s) {
        char buf[8];

        cli_out_write(o, "\"", 1);
        for (; *s; s++) {
                if (*s == '"' || *s == '\\' || (unsigned char) *s < 0x20) {
                        snprintf(buf, sizeof(buf), "\\u%04x", (unsigned char) *s);
                        cli_out_write(o, buf, 6);
                } else
                        cli_out_write(o, s, 1);
        }
        cli_out_write(o, "\"", 1);
}

/* The refstate (docs/ATTESTATION.md "Keylime"): mshim_refstate 1 and the boots. */
static int write_refstate(const char *path, const ref_boot *boots, size_t n) {
        cli_out o;
        char buf[96];

        if (cli_out_open(&o, path, CLI_MODE_PUBLIC) < 0)
                return EXIT_BAD_INPUT;
        cli_out_write(&o, "{\"mshim_refstate\": 1, \"boots\": [", 32);
        for (size_t k = 0; k < n; k++) {
                bool first = true;
                cli_out_write(&o, k ? ",\n  {\"name\": " : "\n  {\"name\": ", k ? 13 : 12);
                put_str(&o, boots[k].name);
                cli_out_write(&o, ", \"pcrs\": {\"sha256\": {", 22);
                for (uint32_t i = 0; i < MB_PCR_COUNT; i++) {
                        if (!(boots[k].given & (1u << i)))
                                continue;
                        int len = snprintf(buf, sizeof(buf), "%s\"%u\": \"", first ? "" : ", ", i);
                        cli_out_write(&o, buf, (size_t) len);
                        for (size_t j = 0; j < 32; j++) {
                                snprintf(buf, sizeof(buf), "%02x", boots[k].pcr[i][j]);
                                cli_out_write(&o, buf, 2);
                        }
                        cli_out_write(&o, "\"", 1);
                        first = false;
                }
                cli_out_write(&o, "}}}", 3);
        }
        cli_out_write(&o, "\n]}\n", 4);
        return cli_out_commit(&o) < 0 ? EXIT_BAD_INPUT : 0;
}

static int refstate_run(const refstate_opts *o) {
        ref_boot *boots = calloc(o->n_states + 1, sizeof(*boots));
        size_t n = 0;
        int r = 0;

        if (!boots) {
                cli_error("out of memory");
                return EXIT_BAD_INPUT;
        }
        if (!o->no_log) {
                boots[0].name = o->log;
                r = boot_of_log(o->log, &boots[n++]);
        }
        for (size_t i = 0; r == 0 && i < o->n_states; i++) {
                boots[n].name = o->states[i];
                r = boot_of_prediction(o->states[i], &boots[n++]);
        }
        if (r == 0)
                r = write_refstate(o->out, boots, n);
        if (r == 0)
                fprintf(stderr, "%s: %zu allowed boot%s\n", o->out, n, n == 1 ? "" : "s");
        free(boots);
        return r;
}

int verify_keylime_refstate(int argc, char **argv) {
        static const struct option longopts[] = {
                { "log", required_argument, NULL, 'l' },
                { "no-log", no_argument, NULL, 'N' },
                { "state", required_argument, NULL, 's' },
                { "output", required_argument, NULL, 'o' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        refstate_opts o = { .log = DEFAULT_LOG };
        const char *log = NULL;
        cli_input in[MAX_STATES + 1];
        int c;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "ho:", longopts, "verify")) != -1) {
                switch (c) {
                case 'l':
                        if (cli_opt_once(&log, "--log", optarg) < 0)
                                return EXIT_BAD_INPUT;
                        break;
                case 'N': o.no_log = true; break;
                case 's':
                        if (o.n_states == MAX_STATES)
                                return cli_usage_error("verify", "--state given more than %d times", MAX_STATES);
                        o.states[o.n_states++] = optarg;
                        break;
                case 'o':
                        if (cli_opt_once(&o.out, "-o", optarg) < 0)
                                return EXIT_BAD_INPUT;
                        break;
                case 'h': cli_help(stdout, "verify"); return 0;
                default: return EXIT_BAD_INPUT;
                }
        }
        if (argc != optind || !o.out)
                return cli_usage_error("verify", "verify keylime-refstate takes -o REFSTATE and no other argument");
        if (o.no_log && log)
                return cli_usage_error("verify", "--no-log excludes --log");
        if (o.no_log && !o.n_states)
                return cli_usage_error("verify", "--no-log needs at least one --state PRED.json");
        if (log)
                o.log = log;
        in[0] = (cli_input) { "the event log", o.no_log ? NULL : o.log };
        for (size_t i = 0; i < o.n_states; i++)
                in[i + 1] = (cli_input) { "a prediction", o.states[i] };
        if (cli_out_not_input(o.out, in, o.n_states + 1) < 0)
                return EXIT_BAD_INPUT;
        return refstate_run(&o);
}
