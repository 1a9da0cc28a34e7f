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
#include "sigs.h"
#include "safeio.h"
#include "mb/pe.h"
#include "mb/sbat.h"
#include "mb/sha.h"

/* Check that the last signature of a freshly signed image was made by
 * `cert` and names the image's Authenticode digest as the core computes
 * it: the result must be what firmware and shim will hash. 0, or 1 with a
 * message. */
static int verify_signed(const char *path, const char *shown, X509 *cert) {
        cli_file f;
        mb_pe pe;
        const uint8_t *table;
        size_t tsize, off = 0, dlen = 0;
        mb_pe_cert c, last = { 0 };
        uint8_t want[MB_HASH_MAX], got[MB_HASH_MAX];
        int nid = 0, r = EXIT_CHECK_FAILED;
        uint16_t alg;
        mb_err e;

        if (cli_file_load(path, &f) < 0)
                return EXIT_CHECK_FAILED;
        e = mb_pe_parse(f.data, f.size, &pe);
        if (e == MB_OK)
                e = mb_pe_cert_table(&pe, &table, &tsize);
        while (e == MB_OK && (e = mb_pe_cert_next(table, tsize, &off, &c)) == MB_OK)
                last = c;
        if (e != MB_END || !last.data) {
                cli_error("%s: signed output has no readable certificate table (%s)", shown,
                          mb_strerror(e == MB_END ? MB_ERR_NOTFOUND : e));
                goto out;
        }
        {
                const unsigned char *p = last.data;
                PKCS7 *p7 = d2i_PKCS7(NULL, &p, (long) last.size);
                STACK_OF(X509) *signers = p7 ? PKCS7_get0_signers(p7, NULL, 0) : NULL;
                bool ours = signers && sk_X509_num(signers) == 1 && X509_cmp(sk_X509_value(signers, 0), cert) == 0;

                sk_X509_free(signers);
                if (!p7 || sig_spc_digest(p7, &nid, want, &dlen) < 0) {
                        PKCS7_free(p7);
                        cli_error("%s: the new signature is not an Authenticode PKCS#7 SignedData", shown);
                        goto out;
                }
                PKCS7_free(p7);
                if (!ours) {
                        cli_error("%s: the new signature was not made with the given certificate", shown);
                        goto out;
                }
        }
        alg = sig_alg_of_nid(nid);
        if (!alg || mb_hash_size(alg) != dlen || mb_pe_authenticode_parsed(&pe, alg, got) != MB_OK) {
                cli_error("%s: the new signature uses an unsupported digest (%s)", shown, OBJ_nid2sn(nid));
                goto out;
        }
        if (memcmp(want, got, dlen) != 0) {
                cli_error("%s: the signature's digest does not match the image's Authenticode hash", shown);
                goto out;
        }
        r = 0;
out:
        cli_file_free(&f);
        return r;
}

/* ---- mshim sign -------------------------------------------------------- */

typedef struct sign_opts {
        const char *key, *cert, *out, *image, *pass_file;
        bool in_place;
} sign_opts;

static int load_credentials(const sign_opts *o, EVP_PKEY **ret_key, X509 **ret_cert) {
        EVP_PKEY *key = cred_load_key(o->key, o->pass_file);
        X509 *cert = key ? cred_load_cert(o->cert) : NULL;

        if (!cert)
                goto fail;
        if (X509_check_private_key(cert, key) != 1) {
                cli_error("%s does not belong to %s: the key does not match the certificate's public key",
                          o->key, o->cert);
                goto fail;
        }
        *ret_key = key;
        *ret_cert = cert;
        return 0;
fail:
        ERR_clear_error();
        EVP_PKEY_free(key);
        X509_free(cert);
        return -1;
}

static int check_image(const char *path) {
        cli_file f;
        mb_pe pe;
        mb_err e;

        if (cli_file_load(path, &f) < 0)
                return -1;
        e = mb_pe_parse(f.data, f.size, &pe);
        cli_file_free(&f);
        if (e != MB_OK) {
                cli_error("%s: not a valid PE/COFF image (%s)", path, mb_strerror(e));
                return -1;
        }
        return 0;
}

/* A pipe holding what `write` puts in a memory BIO, for sbsign to read as
 * the file /dev/fd/N: the key reaches sbsign decrypted without ever being
 * on disk, and a DER certificate reaches it as the PEM it wants. The whole
 * text goes in before sbsign starts, so it must fit in the pipe (64 KiB;
 * a non-blocking write says so instead of hanging), and the write end is
 * closed then, so sbsign sees the end of it; sbsign inherits the read end. */
static int pem_pipe(BIO *mem, const char *what, int *ret_fd) {
        char *data;
        long n = BIO_get_mem_data(mem, &data);
        ssize_t w = -1;
        int p[2];

        if (n <= 0 || pipe(p) < 0) {
                cli_error("cannot hand the %s to sbsign: %s", what, n <= 0 ? "encoding failed" : strerror(errno));
                return -1;
        }
        if (fcntl(p[1], F_SETFL, O_NONBLOCK) == 0)
                while ((w = write(p[1], data, (size_t) n)) < 0 && errno == EINTR)
                        ;
        close(p[1]);
        if (w != n) {
                cli_error("cannot hand the %s to sbsign: %s", what, w != n ? "too large for a pipe" : strerror(errno));
                close(p[0]);
                return -1;
        }
        *ret_fd = p[0];
        return 0;
}

static int credential_pipes(EVP_PKEY *key, X509 *cert, int *ret_key_fd, int *ret_cert_fd) {
        BIO *kb = BIO_new(BIO_s_secmem()), *cb = BIO_new(BIO_s_mem());
        int r = -1;

        *ret_key_fd = *ret_cert_fd = -1;
        if (kb && cb && PEM_write_bio_PrivateKey(kb, key, NULL, NULL, 0, NULL, NULL) && PEM_write_bio_X509(cb, cert) &&
            pem_pipe(kb, "key", ret_key_fd) == 0 && pem_pipe(cb, "certificate", ret_cert_fd) == 0)
                r = 0;
        else if (*ret_key_fd >= 0) {
                close(*ret_key_fd);
                *ret_key_fd = -1;
        }
        BIO_free(kb);   /* a secmem BIO clears its buffer when freed */
        BIO_free(cb);
        return r;
}

/* Run sbsign without a shell (cli_run: its messages are shown as mshim's,
 * naming OUT where sbsign names the temporary file, and it is stopped with
 * mshim on a signal). Key and certificate reach it through pipes. */
static int run_sbsign(const sign_opts *o, EVP_PKEY *key, X509 *cert, const char *tmp) {
        char kpath[32], cpath[32];
        char *args[] = { "sbsign", "--key", kpath, "--cert", cpath, "--output", (char *) tmp, (char *) o->image, NULL };
        int kfd, cfd, r;

        if (credential_pipes(key, cert, &kfd, &cfd) < 0)
                return -1;
        snprintf(kpath, sizeof(kpath), "/dev/fd/%d", kfd);
        snprintf(cpath, sizeof(cpath), "/dev/fd/%d", cfd);
        r = cli_run(args, tmp, o->out);
        close(kfd);
        close(cfd);
        if (r == 127)
                cli_error("sign needs sbsign (install the Debian package sbsigntool)");
        else if (r != 0)
                cli_error("sbsign failed on %s", o->image);
        return r == 0 ? 0 : -1;
}

static int do_sign(const sign_opts *o) {
        const cli_input inputs[] = { { "the key", o->key }, { "the certificate", o->cert },
                                     { "the passphrase file", o->pass_file } };
        EVP_PKEY *key = NULL;
        X509 *cert = NULL;
        cli_out out = { .fd = -1, .slot = -1 };
        int r = EXIT_BAD_INPUT;

        if (check_image(o->image) < 0 || load_credentials(o, &key, &cert) < 0)
                goto out;
        if (!o->in_place && cli_same_file(o->image, o->out)) {
                cli_usage_error("sign", "output %s is the input image; use --in-place to replace it", o->out);
                goto out;
        }
        if (cli_out_not_input(o->out, inputs, MB_ARRAY_SIZE(inputs)) < 0 ||
            cli_out_open(&out, o->out, CLI_MODE_PUBLIC) < 0 || run_sbsign(o, key, cert, out.tmp) < 0)
                goto out;
        r = verify_signed(out.tmp, o->out, cert);
        if (r != 0)
                goto out;
        if (cli_out_commit(&out) < 0) {
                r = EXIT_BAD_INPUT;
                goto out;
        }
        printf("signed %s -> %s\n", o->image, o->out);
out:
        cli_out_abort(&out);
        EVP_PKEY_free(key);
        X509_free(cert);
        return r;
}

/* mshim install's signing (cli.h): exactly `mshim sign --key --cert -o`. */
int cli_sign_image(const char *key, const char *cert, const char *pass_file, const char *image, const char *out) {
        const sign_opts o = { .key = key, .cert = cert, .pass_file = pass_file, .image = image, .out = out };

        return do_sign(&o);
}

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
        r = do_sign(&o);
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
