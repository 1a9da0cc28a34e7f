/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim pcrs: the TPM's PCR values (tools/lib/tpm.c, the reader `mshim log
 * --tpm` uses), printed in tpm2_pcrread's layout, which mb_pcrs_parse and
 * so `mshim log --pcrs` read back, or as JSON (schema mshim-pcrs/1, the
 * "pcrs" member of mshim-log/1 plus the schema and mshim's version).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "pcrtable.h"

#define JSON_SCHEMA "mshim-pcrs/1"

typedef struct pcrs_opts {
        uint16_t algs[MB_TCGLOG_MAX_ALGS];
        uint32_t n_algs;        /* 0: every active bank */
        uint32_t mask;          /* bit i: PCR i */
        bool json, have_banks, have_select;
} pcrs_opts;

/* "sha1,sha256": names as mshim prints them (mb_hash_name). */
static int parse_banks(const char *arg, pcrs_opts *o) {
        char name[32];

        for (const char *p = arg;; p++) {
                size_t n = strcspn(p, ",");
                uint16_t alg;

                if (n == 0 || n >= sizeof(name))
                        return cli_usage_error("pcrs", "--bank wants bank names separated by commas, not '%s'", arg);
                memcpy(name, p, n);
                name[n] = 0;
                alg = mb_hash_alg_by_name(name);
                if (!alg)
                        return cli_usage_error("pcrs", "unknown bank '%s' (sha1, sha256, sha384, sha512, sm3_256)", name);
                if (!mb_hash_size(alg))
                        return cli_usage_error("pcrs", "mshim cannot read %s PCRs", name);
                for (uint32_t i = 0; i < o->n_algs; i++)
                        if (o->algs[i] == alg)
                                return cli_usage_error("pcrs", "bank %s named twice", name);
                if (o->n_algs == MB_TCGLOG_MAX_ALGS)
                        return cli_usage_error("pcrs", "at most %d banks", MB_TCGLOG_MAX_ALGS);
                o->algs[o->n_algs++] = alg;
                p += n;
                if (!*p)
                        return 0;
        }
}

/* "0-7,14": numbers and ranges, comma-separated. */
static int parse_select(const char *arg, uint32_t *ret) {
        if (cli_pcr_select_parse(arg, ret) == 0)
                return 0;
        return cli_usage_error("pcrs", "--select wants PCR numbers 0-23 and ranges, as 0-7,14, not '%s'", arg);
}

/* The values read, in mask: tpm2_pcrread's layout, or JSON. */
static void print(const mb_pcr_values *v, uint32_t mask, bool json) {
        pcrtab t = { 0 };
        json_sink js;

        for (uint32_t b = 0; b < v->n_banks; b++)
                pcrtab_add(&t, v->banks[b].alg, v->banks[b].size, true, mask & v->banks[b].present, v->banks[b].pcr);
        if (!json) {
                pcrtab_text(&t, PCRTAB_PCRREAD, NULL);
                return;
        }
        json_sink_init(&js);
        mb_emit_begin_obj(&js.emit, NULL);
        mb_emit_cstr(&js.emit, "schema", JSON_SCHEMA);
        mb_emit_cstr(&js.emit, "mshim_version", MB_VERSION);
        pcrtab_json(&t, &js.emit);
        mb_emit_end_obj(&js.emit);
        out_putc('\n');
}

static int parse_opts(int argc, char **argv, pcrs_opts *o) {
        static const struct option longopts[] = {
                { "bank", required_argument, NULL, 'b' },
                { "select", required_argument, NULL, 's' },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        int c;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "h", longopts, "pcrs")) != -1) {
                switch (c) {
                case 'b':
                        if (o->have_banks)
                                return cli_usage_error("pcrs", "--bank given twice (name several banks in one, as sha1,sha256)");
                        o->have_banks = true;
                        if (parse_banks(optarg, o))
                                return EXIT_BAD_INPUT;
                        break;
                case 's':
                        if (o->have_select)
                                return cli_usage_error("pcrs", "--select given twice (name several PCRs in one, as 0-7,14)");
                        o->have_select = true;
                        if (parse_select(optarg, &o->mask))
                                return EXIT_BAD_INPUT;
                        break;
                case 'j': o->json = true; break;
                case 'h': cli_help(stdout, "pcrs"); return -1;
                default: return EXIT_BAD_INPUT;
                }
        }
        if (optind < argc)
                return cli_usage_error("pcrs", "pcrs takes no arguments, only options ('%s')", argv[optind]);
        return 0;
}

int cmd_pcrs(int argc, char **argv) {
        pcrs_opts o = { .mask = MB_PCR_ALL };
        mb_pcr_values *v;
        int r = parse_opts(argc, argv, &o);

        if (r)
                return r < 0 ? 0 : r;
        /* Over 3 KiB per bank: not for the stack of a small thread. */
        v = calloc(1, sizeof(*v));
        if (!v) {
                cli_error("out of memory");
                return EXIT_BAD_INPUT;
        }
        r = EXIT_BAD_INPUT;
        if (cli_tpm_read_pcrs(o.algs, o.n_algs, o.mask, v) == 0) {
                print(v, o.mask, o.json);
                r = out_finish() < 0 ? EXIT_BAD_INPUT : 0;
        }
        free(v);
        return r;
}
