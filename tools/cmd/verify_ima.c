/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim verify ima LIST --pcr ALG:HEX... [--ima-allow FILE]: an IMA
 * measurement list (securityfs ima/binary_runtime_measurements) judged
 * against PCR 10's value in each bank given and, with an allowlist, every
 * file it measured (docs/ATTESTATION.md "IMA"). The value comes from a
 * quote the verifier checked (`mshim verify EVIDENCE --ima` does this
 * with the quote's own), so nothing of the list is trusted that PCR 10
 * does not bind.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "help.h"
#include "ima.h"
#include "verify.h"

#define IMA_LIST_MAX_MIB 1024   /* 10^6 entries are ~200 MiB */
#define MAX_BANKS 4

typedef struct ima_opts {
        ima_bank banks[MAX_BANKS];
        uint8_t want[MAX_BANKS][MB_HASH_MAX];
        size_t n_banks;
        const char *allow;
} ima_opts;

/* --pcr ALG:HEX: the bank's PCR 10. */
static int pcr_arg(ima_opts *o, const char *arg) {
        static const char hexdigits[] = "0123456789abcdef";
        const char *colon = strchr(arg, ':');
        char name[16];
        size_t size, i;
        uint16_t alg;

        if (!colon || (size_t) (colon - arg) >= sizeof(name))
                return cli_usage_error("verify", "--pcr wants ALG:HEX (sha256:...), not '%s'", arg);
        snprintf(name, sizeof(name), "%.*s", (int) (colon - arg), arg);
        alg = mb_hash_alg_by_name(name);
        size = mb_hash_size(alg);
        if (!size || alg == MB_ALG_SM3_256 || strlen(colon + 1) != 2 * size)
                return cli_usage_error("verify", "--pcr %s: not a sha1, sha256, sha384 or sha512 value in hex", arg);
        if (o->n_banks == MAX_BANKS)
                return cli_usage_error("verify", "--pcr given more than %d times", MAX_BANKS);
        for (i = 0; i < o->n_banks; i++)
                if (o->banks[i].alg == alg)
                        return cli_usage_error("verify", "--pcr: the %s bank given twice", name);
        for (i = 0; i < 2 * size; i++) {
                const char *d = strchr(hexdigits, colon[1 + i] | 0x20);
                if (!colon[1 + i] || !d)
                        return cli_usage_error("verify", "--pcr %s: not hex", arg);
                o->want[o->n_banks][i / 2] = (uint8_t) (o->want[o->n_banks][i / 2] << 4 | (d - hexdigits));
        }
        o->banks[o->n_banks] = (ima_bank) { .alg = alg, .want = o->want[o->n_banks] };
        o->n_banks++;
        return 0;
}

static void print_verdict(const char *list, const ima_opts *o, const ima_verdict *v) {
        char lb[16];

        printf("IMA list %s: %u entries; the first %u replay to PCR 10 in", list, v->entries, v->covered);
        for (size_t b = 0; b < o->n_banks; b++)
                printf("%s %s", b ? "," : "", cli_alg_label(o->banks[b].alg, lb));
        printf("\n");
        if (v->entries > v->covered)
                printf("after the quote: %u entries, not judged (IMA appended them later)\n", v->entries - v->covered);
        printf("violations: %u\n", v->violations);
        if (v->has_aggregate) {
                printf("boot_aggregate: %s:", v->aggregate_alg);
                for (size_t i = 0; i < v->aggregate_size; i++)
                        printf("%02x", v->aggregate[i]);
                printf("\n");
        }
        if (o->allow)
                printf("allowlist %s: %s\n", o->allow, v->refused ? "refused" : "every entry allowed");
}

/* Judge the list; 0 accepted, EXIT_CHECK_FAILED refused, EXIT_BAD_INPUT. */
static int judge(const char *list, ima_opts *o) {
        ima_allow allow = { 0 };
        ima_verdict *v = calloc(1, sizeof(*v));
        cli_file f;
        int r = EXIT_BAD_INPUT;
        char lb[16];

        if (!v || (o->allow && ima_allow_load(o->allow, &allow) < 0))
                goto out;
        if (cli_file_load_max(list, (size_t) IMA_LIST_MAX_MIB << 20, "an IMA measurement list", &f) < 0)
                goto out;
        r = ima_judge(list, f.data, f.size, o->banks, o->n_banks, o->allow ? &allow : NULL, v);
        cli_file_free(&f);
        if (r == EXIT_CHECK_FAILED) {
                for (size_t b = 0; b < o->n_banks; b++)
                        cli_error("%s does not replay to PCR 10 in %s at any entry: the list is not the one PCR 10 "
                                  "holds (an entry edited, removed or added; or another boot's)", list,
                                  cli_alg_label(o->banks[b].alg, lb));
                goto out;
        }
        if (r)
                goto out;
        print_verdict(list, o, v);
        if (v->refused) {
                cli_error("refused: %s", v->why);
                r = EXIT_CHECK_FAILED;
        }
out:
        ima_allow_free(&allow);
        free(v);
        return r;
}

int verify_ima(int argc, char **argv) {
        static const struct option longopts[] = {
                { "pcr", required_argument, NULL, 'p' },
                { "ima-allow", required_argument, NULL, 'A' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        ima_opts o = { 0 };
        int c;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "h", longopts, "verify")) != -1) {
                switch (c) {
                case 'p':
                        if (pcr_arg(&o, optarg))
                                return EXIT_BAD_INPUT;
                        break;
                case 'A':
                        if (cli_opt_once(&o.allow, "--ima-allow", optarg) < 0)
                                return EXIT_BAD_INPUT;
                        break;
                case 'h': cli_help(stdout, "verify"); return 0;
                default: return EXIT_BAD_INPUT;
                }
        }
        if (argc - optind != 1 || !o.n_banks)
                return cli_usage_error("verify", "verify ima takes one LIST and at least one --pcr ALG:HEX");
        return judge(argv[optind], &o);
}
