/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Certificates and private keys as users have them: PEM or DER, keys
 * protected by a passphrase or not. A passphrase comes from --pass-file
 * (its first line, as `openssl -passin file:` reads it) or is asked on the
 * terminal without echo, the way sbsign, pesign and mokutil ask.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include "cli.h"
#include "safeio.h"
#include "sigs.h"

/* A passphrase is at most this long (OpenSSL's own prompt allows 1024). */
#define PASS_MAX 1023

/* Keys, certificates and passphrase files are a few KiB: a wrong, huge
 * file is refused before OpenSSL scans all of it (docs/FILES.md). */
#define CRED_MAX ((size_t) 1 << 20)

X509 *cred_load_cert(const char *path) {
        cli_file f;
        BIO *bio = NULL;
        X509 *x = NULL;
        long n;

        if (cli_file_load_max(path, CRED_MAX, "a certificate", &f) < 0)
                return NULL;
        n = (long) (f.size > INT32_MAX ? INT32_MAX : f.size);
        bio = BIO_new_mem_buf(f.data, (int) n);
        if (bio)
                x = PEM_read_bio_X509(bio, NULL, NULL, NULL);
        if (!x) {
                const unsigned char *p = f.data;
                x = d2i_X509(NULL, &p, n);
        }
        BIO_free(bio);
        cli_file_free(&f);
        ERR_clear_error();
        if (!x)
                cli_error("%s: not a PEM or DER X.509 certificate", path);
        return x;
}

/* ---- asking on the terminal ---------------------------------------------- */

/* On /dev/tty, without echo (cli_tty_secret: the terminal is restored even
 * when a signal ends mshim at the prompt). */
static int ask_tty(const char *key_path, char buf[PASS_MAX + 1]) {
        int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC), n = -1;
        char prompt[PATH_MAX + 64];
        char *s;

        if (fd < 0) {
                cli_error("%s is protected by a passphrase and there is no terminal to ask it on; "
                          "give --pass-file FILE", key_path);
                return -1;
        }
        snprintf(prompt, sizeof(prompt), "Enter the passphrase for %s: ", key_path);
        s = cli_tty_secret(fd, prompt);
        close(fd);
        if (s && strlen(s) <= PASS_MAX) {
                n = (int) strlen(s);
                memcpy(buf, s, (size_t) n + 1);
        } else if (s) {
                cli_error("the passphrase for %s is longer than %d bytes", key_path, PASS_MAX);
        }
        cli_secret_free(s);
        return n;
}

/* ---- keys ---------------------------------------------------------------- */

typedef struct pass_ctx {
        const char *key_path, *pass_file;
        char pw[PASS_MAX + 1];
        int len;        /* -1 until asked for */
        bool failed;    /* no passphrase could be had (said why) */
} pass_ctx;

static int read_pass_file(pass_ctx *c) {
        cli_file f;
        size_t n = 0;

        if (cli_file_load_max(c->pass_file, CRED_MAX, "a passphrase file", &f) < 0)
                return -1;
        while (n < f.size && f.data[n] != '\n')
                n++;
        if (n > 0 && f.data[n - 1] == '\r')
                n--;
        if (n <= PASS_MAX) {
                memcpy(c->pw, f.data, n);
                c->pw[n] = 0;
                c->len = (int) n;
        }
        cli_file_free(&f);
        if (c->len < 0)
                cli_error("%s: the passphrase is longer than %d bytes", c->pass_file, PASS_MAX);
        return c->len < 0 ? -1 : 0;
}

/* OpenSSL calls this only for an encrypted key, possibly more than once
 * (one try per decoder): the passphrase is obtained once and kept. */
static int pass_cb(char *buf, int size, int rwflag, void *u) {
        pass_ctx *c = u;

        if (c->len < 0 && !c->failed) {
                if (c->pass_file)
                        c->failed = read_pass_file(c) < 0;
                else
                        c->failed = (c->len = ask_tty(c->key_path, c->pw)) < 0;
        }
        if (c->failed || c->len > size)
                return -1;
        memcpy(buf, c->pw, (size_t) c->len);
        return c->len;
}

EVP_PKEY *cred_load_key(const char *path, const char *pass_file) {
        pass_ctx c = { .key_path = path, .pass_file = pass_file, .len = -1 };
        OSSL_DECODER_CTX *d = NULL;
        EVP_PKEY *key = NULL;
        const unsigned char *p;
        size_t n;
        cli_file f;

        if (cli_file_load_max(path, CRED_MAX, "a private key", &f) < 0)
                return NULL;
        p = f.data;
        n = f.size;
        /* Any input format and structure (PEM or DER; PKCS#8, encrypted or
         * not, or a traditional RSA/EC key), but it must hold a private key. */
        d = OSSL_DECODER_CTX_new_for_pkey(&key, NULL, NULL, NULL, EVP_PKEY_KEYPAIR, NULL, NULL);
        if (!d || !OSSL_DECODER_CTX_set_pem_password_cb(d, pass_cb, &c) || !OSSL_DECODER_from_data(d, &p, &n))
                key = NULL;
        OSSL_DECODER_CTX_free(d);
        cli_file_free(&f);
        ERR_clear_error();
        if (!key && !c.failed) {
                if (c.len >= 0)
                        cli_error("%s: wrong passphrase (or a damaged key)", path);
                else
                        cli_error("%s: not a PEM or DER private key", path);
        }
        OPENSSL_cleanse(c.pw, sizeof(c.pw));
        return key;
}
