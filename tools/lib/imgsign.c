/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Authenticode signing of an EFI image (imgsign.h), for mshim sign and
 * mshim install: through sbsign, checked before and after with the core's
 * PE parser and Authenticode hash.
 */
#include <errno.h>
#include <fcntl.h>
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

int sign_image(const sign_opts *o) {
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

        return sign_image(&o);
}
