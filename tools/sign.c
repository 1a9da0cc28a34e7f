/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim sign, mshim pe-hash, mshim sbat: Authenticode signing of EFI images
 * (through sbsign, checked before and after with the core's PE parser and
 * Authenticode hash), the Authenticode digest, and an image's SBAT records.
 */
#include <errno.h>
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
#include "safeio.h"
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
                if (!p7 || spc_digest(p7, &nid, want, &dlen) < 0) {
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
        alg = alg_of_nid(nid);
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

static void usage_sign(FILE *f) {
        fprintf(f,
"Usage: mshim sign --key KEY.pem --cert CERT.pem [-o OUT | --in-place] IMAGE\n"
"\n"
"Sign an EFI image (mshimx64.efi, a kernel with an EFI stub, any PE/COFF\n"
"executable) with an Authenticode signature, for firmware's db or shim's\n"
"MokList. The signing itself is done by sbsign (package sbsigntool); mshim\n"
"checks everything around it:\n"
"  - IMAGE parses as a PE32/PE32+ image;\n"
"  - KEY.pem (an unencrypted PEM private key) and CERT.pem (a PEM X.509\n"
"    certificate) load and belong together;\n"
"  - OUT is not IMAGE unless --in-place is given, and never KEY.pem or\n"
"    CERT.pem (symlinks and hard links count);\n"
"  - afterwards, the new signature was made with CERT.pem and its digest equals\n"
"    the Authenticode hash of the output as mshim's own PE code computes it.\n"
"A signature already present is kept; the new one is appended (sbsign's rule).\n"
"The output is written to a temporary file next to OUT and renamed into place\n"
"only when every check passed; nothing is left behind on failure or on\n"
"SIGINT/SIGTERM. Through a symlink (/vmlinuz) the target is signed. A\n"
"replaced OUT keeps its owner, group and mode; a new one gets 0666 less\n"
"the umask. See docs/SIGNING.md and docs/FILES.md.\n"
"\n"
"Options:\n"
"  --key FILE      private key, PEM (at most 1 MiB)\n"
"  --cert FILE     certificate, PEM (at most 1 MiB)\n"
"  -o, --output FILE  where to write the signed image (default: IMAGE.signed)\n"
"  --in-place      replace IMAGE with its signed version\n"
"  -h, --help      show this help\n"
"Each option may be given once.\n"
"\n"
"Exit status: 0 signed; 1 the signed result failed verification; 2 bad usage,\n"
"an unreadable or malformed image, key or certificate, or sbsign failed.\n");
}

typedef struct sign_opts {
        const char *key, *cert, *out, *image;
        bool in_place;
} sign_opts;

/* An encrypted key would make OpenSSL prompt on the terminal; refuse it. */
static int no_passphrase(char *buf, int size, int rwflag, void *u) {
        return -1;
}

/* Key and certificate files are a few KiB; a wrong, huge file is refused
 * before OpenSSL scans all of it for a PEM header (docs/FILES.md). */
#define CRED_MAX ((size_t) 1 << 20)

/* The file at path as a memory BIO over its mapping (f keeps it). */
static BIO *pem_bio(const char *path, const char *what, cli_file *f) {
        BIO *b;

        if (cli_file_load_max(path, CRED_MAX, what, f) < 0)
                return NULL;
        b = BIO_new_mem_buf(f->data, (int) f->size);
        if (!b) {
                cli_error("out of memory");
                cli_file_free(f);
        }
        return b;
}

static void pem_done(BIO *b, cli_file *f) {
        BIO_free(b);
        cli_file_free(f);
}

static int load_credentials(const sign_opts *o, EVP_PKEY **ret_key, X509 **ret_cert) {
        BIO *b;
        cli_file f;
        EVP_PKEY *key = NULL;
        X509 *cert = NULL;

        if (!(b = pem_bio(o->key, "a private key", &f)))
                return -1;
        key = PEM_read_bio_PrivateKey(b, NULL, no_passphrase, NULL);
        pem_done(b, &f);
        if (!key) {
                cli_error("%s: not a PEM private key (or one protected by a passphrase)", o->key);
                return -1;
        }
        if (!(b = pem_bio(o->cert, "a certificate", &f)))
                goto fail;
        cert = PEM_read_bio_X509(b, NULL, NULL, NULL);
        pem_done(b, &f);
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

/* Run sbsign without a shell; its messages are shown as mshim's, naming
 * OUT where sbsign names the temporary file. */
static int run_sbsign(const sign_opts *o, const char *tmp) {
        char *args[] = { "sbsign", "--key", (char *) o->key, "--cert", (char *) o->cert,
                         "--output", (char *) tmp, (char *) o->image, NULL };
        int r = cli_run(args, tmp, o->out);

        if (r == 127)
                cli_error("sign needs sbsign (install the Debian package sbsigntool)");
        else if (r != 0)
                cli_error("sbsign failed on %s", o->image);
        return r == 0 ? 0 : -1;
}

static int do_sign(const sign_opts *o) {
        const cli_input inputs[] = { { "the key", o->key }, { "the certificate", o->cert } };
        EVP_PKEY *key = NULL;
        X509 *cert = NULL;
        cli_out out = { .fd = -1, .slot = -1 };
        int r = EXIT_BAD_INPUT;

        if (check_image(o->image) < 0 || load_credentials(o, &key, &cert) < 0)
                goto out;
        if (!o->in_place && cli_same_file(o->image, o->out)) {
                cli_error("output %s is the input image; use --in-place to replace it", o->out);
                goto out;
        }
        if (cli_out_not_input(o->out, inputs, MB_ARRAY_SIZE(inputs)) < 0 ||
            cli_out_open(&out, o->out, CLI_MODE_PUBLIC) < 0 || run_sbsign(o, out.tmp) < 0)
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
        int c, r = 0;

        optind = 1;
        while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
                switch (c) {
                case 'k': r = cli_opt_once(&o.key, "--key", optarg); break;
                case 'c': r = cli_opt_once(&o.cert, "--cert", optarg); break;
                case 'o': r = cli_opt_once(&o.out, "-o/--output", optarg); break;
                case 'i': o.in_place = true; break;
                case 'h': usage_sign(stdout); return 0;
                default: usage_sign(stderr); return EXIT_BAD_INPUT;
                }
                if (r < 0)
                        return EXIT_BAD_INPUT;
        }
        if (argc - optind != 1 || !o.key || !o.cert) {
                cli_error("sign needs --key, --cert and one IMAGE; see 'mshim sign --help'");
                return EXIT_BAD_INPUT;
        }
        o.image = argv[optind];
        if (o.in_place && o.out && !cli_same_file(o.image, o.out)) {
                cli_error("--in-place and --output %s name different files", o.out);
                return EXIT_BAD_INPUT;
        }
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

static void usage_pe_hash(FILE *f) {
        fprintf(f,
"Usage: mshim pe-hash [--alg ALG] IMAGE...\n"
"\n"
"Print the Authenticode digest of each PE/COFF image, as \"HEX  IMAGE\"\n"
"(the format of sha256sum). This is the digest firmware logs in PCR 4 for\n"
"an EFI application, the one a signature's SpcIndirectDataContent names,\n"
"and the one a db, dbx or MokList hash entry must hold; `pesign -h` prints\n"
"the same value. It covers the headers without the CheckSum field and the\n"
"certificate table entry, the sections in file order and any data after\n"
"them, but not the signatures, so signing does not change it.\n"
"\n"
"Options:\n"
"  --alg ALG    sha256 (default), sha1, sha384 or sha512\n"
"  -h, --help   show this help\n"
"\n"
"Exit status: 0 success; 2 bad usage or an image that is unreadable or not\n"
"a valid PE/COFF file (the other images are still hashed).\n");
}

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
        while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
                switch (c) {
                case 'a':
                        if (cli_opt_once(&alg_name, "--alg", optarg) < 0)
                                return EXIT_BAD_INPUT;
                        alg = mb_hash_alg_by_name(optarg);
                        if (!mb_hash_size(alg)) {
                                cli_error("unknown or unsupported --alg '%s' (sha256, sha1, sha384, sha512)", optarg);
                                return EXIT_BAD_INPUT;
                        }
                        break;
                case 'h': usage_pe_hash(stdout); return 0;
                default: usage_pe_hash(stderr); return EXIT_BAD_INPUT;
                }
        }
        if (optind >= argc) {
                cli_error("pe-hash needs at least one IMAGE; see 'mshim pe-hash --help'");
                return EXIT_BAD_INPUT;
        }
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

static void usage_sbat(FILE *f) {
        fprintf(f,
"Usage: mshim sbat [--policy FILE] IMAGE\n"
"\n"
"Print the SBAT records of an EFI image's .sbat section, one CSV line each:\n"
"component,generation,vendor_name,vendor_package_name,vendor_version,vendor_url\n"
"(shim's SBAT.md). The section must start with the \"sbat,1\" record, hold\n"
"exactly six fields a record, positive generations, no NUL byte before the\n"
"end of its text and no line over %d bytes.\n"
"\n"
"With --policy, also check the image against an SbatLevel revocation policy\n"
"(the text shim keeps in the SbatLevel variable, e.g. \"sbat,1,2024010900\\n\n"
"shim,4\\ngrub,4\\n\"): the image is revoked when one of its records names a\n"
"component the policy lists with a higher generation.\n"
"\n"
"Options:\n"
"  --policy FILE  SbatLevel text to check the image against\n"
"  -h, --help     show this help\n"
"\n"
"Exit status: 0 success (and not revoked); 1 revoked by the policy; 2 bad\n"
"usage, an unreadable or non-PE file, a missing or malformed .sbat section,\n"
"or a malformed policy.\n", MB_SBAT_MAX_LINE);
}

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
        while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
                switch (c) {
                case 'p':
                        if (cli_opt_once(&policy, "--policy", optarg) < 0)
                                return EXIT_BAD_INPUT;
                        break;
                case 'h': usage_sbat(stdout); return 0;
                default: usage_sbat(stderr); return EXIT_BAD_INPUT;
                }
        }
        if (argc - optind != 1) {
                cli_error("sbat takes one IMAGE; see 'mshim sbat --help'");
                return EXIT_BAD_INPUT;
        }
        return show_sbat(argv[optind], policy);
}
