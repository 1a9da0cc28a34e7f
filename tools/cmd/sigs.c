/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim sigs: the Authenticode signatures of an EFI image, for people who
 * know sbsigntool and pesign: list them (sbverify --list, pesign -S), verify
 * them against a certificate (sbverify --cert) and remove one (pesign -u N
 * -r, sbattach --remove). The certificate table is read with the core's PE
 * code (src/pe.c); the signatures are read and checked as firmware does by
 * tools/lib/authenticode.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/x509_vfy.h>
#include "cli.h"
#include "safeio.h"
#include "sigs.h"
#include "mb/pe.h"
#include "mb/sha.h"

typedef void (*sig_visit)(const sig_entry *s, void *u);

/* Call fn for each signature of the image at path; *ret_n counts them.
 * 0, or EXIT_BAD_INPUT for an unreadable image or a malformed table (and
 * then fn has not been called: the table is checked whole first). */
static int for_each_sig(const char *path, sig_visit fn, void *u, size_t *ret_n) {
        const uint8_t *table = NULL;
        size_t tsize = 0, off = 0, n = 0;
        mb_pe_cert c;
        cli_file f;
        mb_pe pe;
        mb_err e;

        if (cli_file_load(path, &f) < 0)
                return EXIT_BAD_INPUT;
        e = mb_pe_parse(f.data, f.size, &pe);
        if (e == MB_OK && mb_pe_cert_table(&pe, &table, &tsize) == MB_OK)
                while ((e = mb_pe_cert_next(table, tsize, &off, &c)) == MB_OK)
                        n++;
        if (e != MB_OK && e != MB_END) {
                cli_error("%s: not a valid PE/COFF image or signature table (%s)", path, mb_strerror(e));
                cli_file_free(&f);
                return EXIT_BAD_INPUT;
        }
        off = 0;
        for (size_t i = 0; i < n && mb_pe_cert_next(table, tsize, &off, &c) == MB_OK; i++) {
                sig_entry s;

                sig_decode(&pe, &c, i, &s);
                fn(&s, u);
                PKCS7_free(s.p7);
        }
        cli_file_free(&f);
        *ret_n = n;
        return 0;
}

/* X509_NAME_oneline's "/CN=.../O=..." form, as sbverify and `vars list`
 * print names. */
static void put_name(const char *label, const X509_NAME *name) {
        char buf[512];

        out_puts(label);
        out_puts(X509_NAME_oneline(name, buf, sizeof(buf)) ? buf : "(unreadable name)");
        out_putc('\n');
}

/* ---- list ---------------------------------------------------------------- */

/* "sha256" as mshim names its algorithms elsewhere; OpenSSL's short name
 * for the others ("MD5"). */
static const char *digest_name(int nid) {
        const char *n = mb_hash_name(sig_alg_of_nid(nid));

        return n ? n : OBJ_nid2sn(nid);
}

static void list_one(const sig_entry *s, void *u) {
        STACK_OF(PKCS7_SIGNER_INFO) *sis;
        STACK_OF(X509) *certs, *signers;
        char line[160];

        if (!s->p7) {
                snprintf(line, sizeof(line),
                         "signature %zu: not an Authenticode signature (WIN_CERTIFICATE revision 0x%04x, type 0x%04x)\n",
                         s->index, s->wc.revision, s->wc.type);
                out_puts(line);
                return;
        }
        snprintf(line, sizeof(line), "signature %zu: %s, %s\n", s->index, digest_name(s->nid),
                 s->match == 1 ? "digest matches the image"
                 : s->match == 0 ? "digest does NOT match the image" : "digest not checked (unsupported algorithm)");
        out_puts(line);
        signers = PKCS7_get0_signers(s->p7, NULL, 0);
        ERR_clear_error();
        if (signers && sk_X509_num(signers) == 1)
                put_name("  signer subject: ", X509_get_subject_name(sk_X509_value(signers, 0)));
        else
                out_puts("  signer subject: (its certificate is not in the signature)\n");
        sk_X509_free(signers);
        sis = PKCS7_get_signer_info(s->p7);
        for (int i = 0; i < sk_PKCS7_SIGNER_INFO_num(sis); i++)
                put_name("  signer issuer:  ", sk_PKCS7_SIGNER_INFO_value(sis, i)->issuer_and_serial->issuer);
        certs = s->p7->d.sign->cert;
        for (int i = 0; i < sk_X509_num(certs); i++) {
                put_name("  certificate subject: ", X509_get_subject_name(sk_X509_value(certs, i)));
                put_name("  certificate issuer:  ", X509_get_issuer_name(sk_X509_value(certs, i)));
        }
}

static int do_list(const char *image) {
        size_t n = 0;
        int r = for_each_sig(image, list_one, NULL, &n);

        if (r == 0 && n == 0)
                out_puts("(no signatures)\n");
        return out_finish() < 0 ? EXIT_BAD_INPUT : r;
}

/* ---- verify -------------------------------------------------------------- */

typedef struct verify_ctx {
        X509_STORE *store;
        size_t verified;
} verify_ctx;

static void verify_one(const sig_entry *s, void *u) {
        verify_ctx *v = u;
        char why[256], line[400];
        const char *bad = sig_verify_why(s, v->store, why, sizeof(why));

        if (bad)
                snprintf(line, sizeof(line), "signature %zu: not verified: %s\n", s->index, bad);
        else
                snprintf(line, sizeof(line), "signature %zu: verified\n", s->index);
        out_puts(line);
        v->verified += !bad;
}

static int do_verify(const char *image, const char *cert_path) {
        verify_ctx v = { 0 };
        X509 *cert = cred_load_cert(cert_path);
        size_t n = 0;
        int r = EXIT_BAD_INPUT;

        if (!cert)
                return EXIT_BAD_INPUT;
        v.store = sig_firmware_store(cert);
        if (!v.store) {
                cli_error("out of memory");
                goto out;
        }
        r = for_each_sig(image, verify_one, &v, &n);
        if (out_finish() < 0)
                r = EXIT_BAD_INPUT;
        if (r != 0)
                goto out;
        r = v.verified ? 0 : EXIT_CHECK_FAILED;
        if (!n)
                cli_error("%s is not signed", image);
        else if (!v.verified)
                cli_error("%s: no signature verifies against %s", image, cert_path);
out:
        X509_STORE_free(v.store);
        X509_free(cert);
        return r;
}

/* ---- remove -------------------------------------------------------------- */

static int parse_index(const char *s, size_t *ret) {
        char *end;
        unsigned long v;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (*s < '0' || *s > '9' || *end || errno) {
                cli_error("'%s' is not a signature number (0, 1, ... as 'mshim sigs list' shows)", s);
                return -1;
        }
        *ret = v;
        return 0;
}

static void count_only(const sig_entry *s, void *u) {
}

static int do_remove(const char *image, const char *index_arg, const char *out, bool in_place) {
        uint8_t *buf = NULL;
        size_t index, n = 0, new_size;
        cli_file f;
        mb_err e;
        int r;

        if (parse_index(index_arg, &index) < 0)
                return EXIT_BAD_INPUT;
        if (!in_place && cli_same_file(image, out)) {
                cli_error("output %s is the input image; use --in-place to replace it", out);
                return EXIT_BAD_INPUT;
        }
        r = for_each_sig(image, count_only, NULL, &n);
        if (r == 0 && index >= n) {
                cli_error("%s has %zu signature%s: there is no signature %zu", image, n, n == 1 ? "" : "s", index);
                r = EXIT_BAD_INPUT;
        }
        if (r != 0 || cli_file_load(image, &f) < 0)
                return EXIT_BAD_INPUT;
        r = EXIT_BAD_INPUT;
        buf = malloc(f.size ? f.size : 1);
        if (!buf) {
                cli_error("out of memory reading %s", image);
                goto out;
        }
        memcpy(buf, f.data, f.size);
        e = mb_pe_remove_cert(buf, f.size, index, &new_size);
        if (e != MB_OK) {
                cli_error("%s: cannot remove signature %zu (%s)", image, index, mb_strerror(e));
                goto out;
        }
        if (cli_write_file(out, CLI_MODE_PUBLIC, buf, new_size) < 0)
                goto out;
        printf("removed signature %zu of %s -> %s\n", index, image, out);
        r = 0;
out:
        free(buf);
        cli_file_free(&f);
        return r;
}

/* ---- command line ---------------------------------------------------------- */

typedef struct sigs_opts {
        const char *cert, *out;
        bool in_place;
} sigs_opts;

/* Options may come anywhere after the subcommand; each at most once. */
static int parse_sigs_opts(int argc, char **argv, sigs_opts *o) {
        static const struct option longopts[] = {
                { "cert", required_argument, NULL, 'c' },
                { "output", required_argument, NULL, 'o' },
                { "in-place", no_argument, NULL, 'i' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        int c;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "o:h", longopts, "sigs")) != -1) {
                const char **slot = c == 'c' ? &o->cert : c == 'o' ? &o->out : NULL;

                if (c == 'h') {
                        cli_help(stdout, "sigs");
                        return 1;
                }
                if (c == 'i')
                        o->in_place = true;
                else if (!slot)
                        return -1;      /* cli_getopt said why */
                else if (*slot) {
                        cli_usage_error("sigs", "%s given twice", c == 'c' ? "--cert" : "--output");
                        return -1;
                } else
                        *slot = optarg;
        }
        return 0;
}

int cmd_sigs(int argc, char **argv) {
        const char *sub = argc > 1 ? argv[1] : NULL;
        sigs_opts o = { 0 };
        int r, nargs;

        if (!sub)
                return cli_usage_error("sigs", "sigs needs a command: list, verify or remove");
        if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
                cli_help(stdout, "sigs");
                return 0;
        }
        if (strcmp(sub, "list") && strcmp(sub, "verify") && strcmp(sub, "remove"))
                return cli_usage_error("sigs", "unknown sigs command '%s'", sub);
        r = parse_sigs_opts(argc - 1, argv + 1, &o);
        if (r)
                return r > 0 ? 0 : EXIT_BAD_INPUT;
        nargs = argc - 1 - optind;
        if (!strcmp(sub, "list")) {
                if (nargs != 1 || o.cert || o.out || o.in_place)
                        return cli_usage_error("sigs", "sigs list takes one IMAGE and no options");
                return do_list(argv[1 + optind]);
        }
        if (!strcmp(sub, "verify")) {
                if (nargs != 1 || !o.cert || o.out || o.in_place)
                        return cli_usage_error("sigs", "sigs verify takes --cert CERT and one IMAGE");
                return do_verify(argv[1 + optind], o.cert);
        }
        if (nargs != 2 || o.cert || !o.out == !o.in_place)
                return cli_usage_error("sigs", "sigs remove takes IMAGE, N and one of -o OUT or --in-place");
        return do_remove(argv[1 + optind], argv[2 + optind], o.in_place ? argv[1 + optind] : o.out, o.in_place);
}
