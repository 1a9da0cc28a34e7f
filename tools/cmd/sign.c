/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim sign, mshim pe-hash, mshim sbat: Authenticode signing of EFI images
 * (through sbsign, checked before and after with the core's PE parser and
 * Authenticode hash), the Authenticode digest, and an image's SBAT records.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/asn1.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>
#include "cli.h"
#include "imgsign.h"
#include "sigs.h"
#include "safeio.h"
#include "mb/pe.h"
#include "mb/sbat.h"
#include "mb/sha.h"

/* ---- mshim sign -------------------------------------------------------- */

int cmd_sign(int argc, char **argv) {
        static const struct option longopts[] = {
                { "key", required_argument, NULL, 'k' },
                { "cert", required_argument, NULL, 'c' },
                { "output", required_argument, NULL, 'o' },
                { "in-place", no_argument, NULL, 'i' },
                { "pass-file", required_argument, NULL, 'p' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        sign_opts o = { 0 };
        char *def_out = NULL;
        int c, r = 0;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "o:h", longopts, "sign")) != -1) {
                switch (c) {
                case 'k': r = cli_opt_once(&o.key, "--key", optarg); break;
                case 'c': r = cli_opt_once(&o.cert, "--cert", optarg); break;
                case 'o': r = cli_opt_once(&o.out, "-o/--output", optarg); break;
                case 'i': o.in_place = true; break;
                case 'p': r = cli_opt_once(&o.pass_file, "--pass-file", optarg); break;
                case 'h': cli_help(stdout, "sign"); return 0;
                default: return EXIT_BAD_INPUT;
                }
                if (r < 0)
                        return EXIT_BAD_INPUT;
        }
        if (argc - optind != 1 || !o.key || !o.cert)
                return cli_usage_error("sign", "sign needs --key, --cert and one IMAGE");
        o.image = argv[optind];
        if (o.in_place && o.out && !cli_same_file(o.image, o.out))
                return cli_usage_error("sign", "--in-place and --output %s name different files", o.out);
        if (o.in_place)
                o.out = o.image;
        if (!o.out) {
                size_t n = strlen(o.image) + sizeof(".signed");
                def_out = malloc(n);
                if (!def_out) {
                        cli_error("out of memory");
                        return EXIT_BAD_INPUT;
                }
                snprintf(def_out, n, "%s.signed", o.image);
                o.out = def_out;
        }
        r = sign_image(&o);
        free(def_out);
        return r;
}

/* ---- mshim pe-hash ----------------------------------------------------- */

int cmd_pe_hash(int argc, char **argv) {
        static const struct option longopts[] = {
                { "alg", required_argument, NULL, 'a' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        uint16_t alg = MB_ALG_SHA256;
        const char *alg_name = NULL;
        int c, r = 0;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "h", longopts, "pe-hash")) != -1) {
                switch (c) {
                case 'a':
                        if (cli_opt_once(&alg_name, "--alg", optarg) < 0)
                                return EXIT_BAD_INPUT;
                        alg = mb_hash_alg_by_name(optarg);
                        if (!mb_hash_size(alg))
                                return cli_usage_error("pe-hash", "unknown or unsupported --alg '%s' "
                                                       "(sha256, sha1, sha384, sha512)", optarg);
                        break;
                case 'h': cli_help(stdout, "pe-hash"); return 0;
                default: return EXIT_BAD_INPUT;
                }
        }
        if (optind >= argc)
                return cli_usage_error("pe-hash", "pe-hash needs at least one IMAGE");
        for (int i = optind; i < argc; i++) {
                uint8_t d[MB_HASH_MAX];
                cli_file f;
                mb_err e;

                if (cli_file_load(argv[i], &f) < 0) {
                        r = EXIT_BAD_INPUT;
                        continue;
                }
                e = mb_pe_authenticode(f.data, f.size, alg, d);
                cli_file_free(&f);
                if (e != MB_OK) {
                        cli_error("%s: not a valid PE/COFF image (%s)", argv[i], mb_strerror(e));
                        r = EXIT_BAD_INPUT;
                        continue;
                }
                out_hex(d, mb_hash_size(alg));
                out_puts("  ");
                out_puts(argv[i]);
                out_putc('\n');
        }
        out_flush();
        return r;
}

/* ---- mshim sbat -------------------------------------------------------- */

static void put_str(mb_str s) { out_put(s.p, s.len); }

static void print_entry(const mb_sbat_entry *e) {
        put_str(e->component);
        out_putc(',');
        out_u64(e->generation);
        out_putc(',');
        put_str(e->vendor_name);
        out_putc(',');
        put_str(e->vendor_package);
        out_putc(',');
        put_str(e->vendor_version);
        out_putc(',');
        put_str(e->vendor_url);
        out_putc('\n');
}

static int check_policy(const char *path, const uint8_t *sbat, size_t n) {
        cli_file pf;
        bool revoked = false;
        mb_sbat_entry e;
        uint32_t gen = 0;
        mb_err r;

        if (cli_file_load(path, &pf) < 0)
                return EXIT_BAD_INPUT;
        r = mb_sbat_check(sbat, n, pf.data, pf.size, &revoked, &e, &gen);
        cli_file_free(&pf);
        if (r != MB_OK) {
                cli_error("%s: malformed SbatLevel policy (%s)", path, mb_strerror(r));
                return EXIT_BAD_INPUT;
        }
        if (revoked) {
                cli_error("revoked: %.*s generation %u is below the policy's %u",
                          (int) e.component.len, e.component.p, e.generation, gen);
                return EXIT_CHECK_FAILED;
        }
        return 0;
}

static int show_sbat(const char *path, const char *policy) {
        cli_file f;
        mb_pe pe;
        const uint8_t *p;
        size_t n;
        mb_sbat_iter it;
        mb_sbat_entry e;
        size_t line = 0;
        mb_err r;
        int ret = EXIT_BAD_INPUT;

        if (cli_file_load(path, &f) < 0)
                return EXIT_BAD_INPUT;
        r = mb_pe_parse(f.data, f.size, &pe);
        if (r != MB_OK) {
                cli_error("%s: not a valid PE/COFF image (%s)", path, mb_strerror(r));
                goto out;
        }
        if (mb_pe_find_section(&pe, ".sbat", &p, &n) != MB_OK) {
                cli_error("%s: no .sbat section (shim refuses to load such an image)", path);
                goto out;
        }
        /* Validate the whole section before printing any of it. */
        r = mb_sbat_validate(p, n, &line);
        if (r != MB_OK) {
                cli_error("%s: malformed .sbat section, line %zu: %s", path, line, mb_strerror(r));
                goto out;
        }
        mb_sbat_init(&it, p, n);
        while (mb_sbat_next(&it, &e) == MB_OK)
                print_entry(&e);
        out_flush();
        ret = policy ? check_policy(policy, p, n) : 0;
out:
        cli_file_free(&f);
        return ret;
}

int cmd_sbat(int argc, char **argv) {
        static const struct option longopts[] = {
                { "policy", required_argument, NULL, 'p' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        const char *policy = NULL;
        int c;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "h", longopts, "sbat")) != -1) {
                switch (c) {
                case 'p':
                        if (cli_opt_once(&policy, "--policy", optarg) < 0)
                                return EXIT_BAD_INPUT;
                        break;
                case 'h': cli_help(stdout, "sbat"); return 0;
                default: return EXIT_BAD_INPUT;
                }
        }
        if (argc - optind != 1)
                return cli_usage_error("sbat", "sbat takes one IMAGE");
        return show_sbat(argv[optind], policy);
}
