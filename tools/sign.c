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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <openssl/asn1.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>
#include "cli.h"
#include "mb/pe.h"
#include "mb/sbat.h"
#include "mb/sha.h"

/* ---- reading a signature ------------------------------------------------- */

/* The digest an Authenticode signature vouches for: the messageDigest of
 * its SpcIndirectDataContent (Authenticode PE, "SpcIndirectDataContent"):
 * SEQUENCE { SpcAttributeTypeAndOptionalValue, DigestInfo { algorithm,
 * OCTET STRING } }. OpenSSL keeps that content as an opaque SEQUENCE. */
static int spc_digest(PKCS7 *p7, int *ret_nid, uint8_t *ret, size_t *ret_len) {
        const unsigned char *q, *end;
        ASN1_TYPE *t;
        X509_ALGOR *alg;
        long l;
        int tag, cls;

        if (!PKCS7_type_is_signed(p7) || !p7->d.sign->contents || !(t = p7->d.sign->contents->d.other) ||
            t->type != V_ASN1_SEQUENCE)
                return -1;
        q = t->value.sequence->data;
        end = q + t->value.sequence->length;
        if ((ASN1_get_object(&q, &l, &tag, &cls, end - q) & 0x80) || tag != V_ASN1_SEQUENCE)
                return -1;
        if (ASN1_get_object(&q, &l, &tag, &cls, end - q) & 0x80)
                return -1;
        q += l; /* skip SpcAttributeTypeAndOptionalValue */
        if ((ASN1_get_object(&q, &l, &tag, &cls, end - q) & 0x80) || tag != V_ASN1_SEQUENCE)
                return -1;
        alg = d2i_X509_ALGOR(NULL, &q, end - q);
        if (!alg)
                return -1;
        *ret_nid = OBJ_obj2nid(alg->algorithm);
        X509_ALGOR_free(alg);
        if ((ASN1_get_object(&q, &l, &tag, &cls, end - q) & 0x80) || tag != V_ASN1_OCTET_STRING ||
            l > MB_HASH_MAX)
                return -1;
        memcpy(ret, q, (size_t) l);
        *ret_len = (size_t) l;
        return 0;
}

static uint16_t alg_of_nid(int nid) {
        switch (nid) {
        case NID_sha1: return MB_ALG_SHA1;
        case NID_sha256: return MB_ALG_SHA256;
        case NID_sha384: return MB_ALG_SHA384;
        case NID_sha512: return MB_ALG_SHA512;
        }
        return 0;
}

/* Check that the last signature of a freshly signed image was made by
 * `cert` and names the image's Authenticode digest as the core computes
 * it: the result must be what firmware and shim will hash. 0, or 1 with a
 * message. */
static int verify_signed(const char *path, X509 *cert) {
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
                cli_error("%s: signed output has no readable certificate table (%s)", path,
                          mb_strerror(e == MB_END ? MB_ERR_NOTFOUND : e));
                goto out;
        }
        {
                const unsigned char *p = last.data;
                PKCS7 *p7 = d2i_PKCS7(NULL, &p, (long) last.size);
                STACK_OF(X509) *signers = p7 ? PKCS7_get0_signers(p7, NULL, 0) : NULL;
                bool ours = signers && sk_X509_num(signers) == 1 && X509_cmp(sk_X509_value(signers, 0), cert) == 0;

                sk_X509_free(signers);
                if (!p7 || spc_digest(p7, &nid, want, &dlen) < 0) {
                        PKCS7_free(p7);
                        cli_error("%s: the new signature is not an Authenticode PKCS#7 SignedData", path);
                        goto out;
                }
                PKCS7_free(p7);
                if (!ours) {
                        cli_error("%s: the new signature was not made with the given certificate", path);
                        goto out;
                }
        }
        alg = alg_of_nid(nid);
        if (!alg || mb_hash_size(alg) != dlen || mb_pe_authenticode_parsed(&pe, alg, got) != MB_OK) {
                cli_error("%s: the new signature uses an unsupported digest (%s)", path, OBJ_nid2sn(nid));
                goto out;
        }
        if (memcmp(want, got, dlen) != 0) {
                cli_error("%s: the signature's digest does not match the image's Authenticode hash", path);
                goto out;
        }
        r = 0;
out:
        cli_file_free(&f);
        return r;
}

/* ---- mshim sign -------------------------------------------------------- */

typedef struct sign_opts {
        const char *key, *cert, *out, *image;
        bool in_place;
} sign_opts;

/* An encrypted key would make OpenSSL prompt on the terminal; refuse it. */
static int no_passphrase(char *buf, int size, int rwflag, void *u) {
        return -1;
}

static int load_credentials(const sign_opts *o, EVP_PKEY **ret_key, X509 **ret_cert) {
        FILE *f;
        EVP_PKEY *key = NULL;
        X509 *cert = NULL;

        if (!(f = fopen(o->key, "r"))) {
                cli_error("cannot open key %s: %s", o->key, strerror(errno));
                return -1;
        }
        key = PEM_read_PrivateKey(f, NULL, no_passphrase, NULL);
        fclose(f);
        if (!key) {
                cli_error("%s: not a PEM private key (or one protected by a passphrase)", o->key);
                return -1;
        }
        if (!(f = fopen(o->cert, "r"))) {
                cli_error("cannot open certificate %s: %s", o->cert, strerror(errno));
                goto fail;
        }
        cert = PEM_read_X509(f, NULL, NULL, NULL);
        fclose(f);
        if (!cert) {
                cli_error("%s: not a PEM X.509 certificate", o->cert);
                goto fail;
        }
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

/* Same file by identity, so "./a.efi" and "a.efi" or a hard link count too. */
static bool same_file(const char *a, const char *b) {
        struct stat sa, sb;

        if (stat(a, &sa) < 0 || stat(b, &sb) < 0)
                return strcmp(a, b) == 0;
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Run sbsign without a shell; its own messages go to stderr. */
static int run_sbsign(const sign_opts *o, const char *tmp) {
        char *args[] = { "sbsign", "--key", (char *) o->key, "--cert", (char *) o->cert,
                         "--output", (char *) tmp, (char *) o->image, NULL };
        int status;
        pid_t pid;

        out_flush();
        pid = fork();
        if (pid < 0) {
                cli_error("cannot start sbsign: %s", strerror(errno));
                return -1;
        }
        if (pid == 0) {
                execvp(args[0], args);
                fprintf(stderr, "%s: cannot run sbsign: %s%s\n", mb_prog, strerror(errno),
                        errno == ENOENT ? " (install the Debian package sbsigntool)" : "");
                _exit(127);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR) {
                        cli_error("waiting for sbsign: %s", strerror(errno));
                        return -1;
                }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 127)
                        cli_error("sbsign failed on %s", o->image);
                return -1;
        }
        return 0;
}

/* A temporary name next to `out` (same directory, so rename() is atomic). */
static char *temp_name(const char *out) {
        size_t n = strlen(out) + sizeof(".mshim-XXXXXX");
        char *t = malloc(n);
        int fd;

        if (!t)
                return NULL;
        snprintf(t, n, "%s.mshim-XXXXXX", out);
        fd = mkstemp(t);
        if (fd < 0) {
                cli_error("cannot create a temporary file next to %s: %s", out, strerror(errno));
                free(t);
                return NULL;
        }
        close(fd);
        return t;
}

static int do_sign(const sign_opts *o) {
        EVP_PKEY *key = NULL;
        X509 *cert = NULL;
        char *tmp = NULL;
        int r = EXIT_BAD_INPUT;

        if (check_image(o->image) < 0 || load_credentials(o, &key, &cert) < 0)
                goto out;
        if (!o->in_place && same_file(o->image, o->out)) {
                cli_usage_error("sign", "output %s is the input image; use --in-place to replace it", o->out);
                goto out;
        }
        tmp = temp_name(o->out);
        if (!tmp || run_sbsign(o, tmp) < 0)
                goto out;
        r = verify_signed(tmp, cert);
        if (r != 0)
                goto out;
        if (rename(tmp, o->out) < 0) {
                cli_error("cannot rename %s to %s: %s", tmp, o->out, strerror(errno));
                r = EXIT_BAD_INPUT;
                goto out;
        }
        printf("signed %s -> %s\n", o->image, o->out);
out:
        if (tmp && r != 0)
                unlink(tmp);
        free(tmp);
        EVP_PKEY_free(key);
        X509_free(cert);
        return r;
}

int cmd_sign(int argc, char **argv) {
        static const struct option longopts[] = {
                { "key", required_argument, NULL, 'k' },
                { "cert", required_argument, NULL, 'c' },
                { "output", required_argument, NULL, 'o' },
                { "in-place", no_argument, NULL, 'i' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        sign_opts o = { 0 };
        char *def_out = NULL;
        int c, r;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "o:h", longopts, "sign")) != -1) {
                switch (c) {
                case 'k': o.key = optarg; break;
                case 'c': o.cert = optarg; break;
                case 'o': o.out = optarg; break;
                case 'i': o.in_place = true; break;
                case 'h': cli_help(stdout, "sign"); return 0;
                default: return EXIT_BAD_INPUT;
                }
        }
        if (argc - optind != 1 || !o.key || !o.cert)
                return cli_usage_error("sign", "sign needs --key, --cert and one IMAGE");
        o.image = argv[optind];
        if (o.in_place && o.out && !same_file(o.image, o.out))
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
        int c, r = 0;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "h", longopts, "pe-hash")) != -1) {
                switch (c) {
                case 'a':
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
                case 'p': policy = optarg; break;
                case 'h': cli_help(stdout, "sbat"); return 0;
                default: return EXIT_BAD_INPUT;
                }
        }
        if (argc - optind != 1)
                return cli_usage_error("sbat", "sbat takes one IMAGE");
        return show_sbat(argv[optind], policy);
}
