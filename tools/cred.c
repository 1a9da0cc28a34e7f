/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Certificates and private keys as users have them: PEM or DER, keys
 * protected by a passphrase or not. A passphrase comes from --pass-file
 * (its first line, as `openssl -passin file:` reads it) or is asked on the
 * terminal without echo, the way sbsign, pesign and mokutil ask.
 */
#include <errno.h>
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
#include "sigs.h"

/* A passphrase is at most this long (OpenSSL's own prompt allows 1024). */
#define PASS_MAX 1023

X509 *cred_load_cert(const char *path) {
        cli_file f;
        BIO *bio = NULL;
        X509 *x = NULL;
        long n;

        if (cli_file_load(path, &f) < 0)
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

/* While echo is off, a signal that ends mshim must turn it back on first,
 * or the user's shell is left without echo. The handler restores the
 * terminal and the signal's previous disposition, then re-raises it. */
static const int tty_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
static struct sigaction tty_old_actions[MB_ARRAY_SIZE(tty_signals)];
static struct termios tty_saved;
static volatile sig_atomic_t tty_fd = -1;

static void tty_restore_signals(void) {
        for (size_t i = 0; i < MB_ARRAY_SIZE(tty_signals); i++)
                sigaction(tty_signals[i], &tty_old_actions[i], NULL);
}

static void tty_on_signal(int sig) {
        if (tty_fd >= 0)
                tcsetattr(tty_fd, TCSAFLUSH, &tty_saved);
        tty_restore_signals();
        raise(sig);
}

static int tty_echo_off(int fd) {
        struct sigaction sa = { .sa_handler = tty_on_signal };
        struct termios t;

        if (tcgetattr(fd, &tty_saved) < 0)
                return -1;
        t = tty_saved;
        t.c_lflag &= (tcflag_t) ~ECHO;
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < MB_ARRAY_SIZE(tty_signals); i++)
                sigaction(tty_signals[i], &sa, &tty_old_actions[i]);
        tty_fd = fd;
        if (tcsetattr(fd, TCSAFLUSH, &t) < 0) {
                tty_fd = -1;
                tty_restore_signals();
                return -1;
        }
        return 0;
}

static void tty_echo_on(int fd) {
        tcsetattr(fd, TCSAFLUSH, &tty_saved);
        tty_fd = -1;
        tty_restore_signals();
}

/* One line from fd into buf (NUL-terminated, newline dropped): its length,
 * or -1 (read error, or longer than PASS_MAX). */
static int read_line(int fd, char buf[PASS_MAX + 1]) {
        int n = 0;
        char c;

        for (;;) {
                ssize_t r = read(fd, &c, 1);

                if (r < 0 && errno == EINTR)
                        continue;
                if (r <= 0 || c == '\n')
                        break;
                if (n == PASS_MAX)
                        return -1;
                buf[n++] = c;
        }
        if (n > 0 && buf[n - 1] == '\r')
                n--;
        buf[n] = 0;
        return n;
}

static int ask_tty(const char *key_path, char buf[PASS_MAX + 1]) {
        int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC), n = -1;

        if (fd < 0) {
                cli_error("%s is protected by a passphrase and there is no terminal to ask it on; "
                          "give --pass-file FILE", key_path);
                return -1;
        }
        if (tty_echo_off(fd) < 0) {
                cli_error("%s is protected by a passphrase and the terminal cannot hide it: %s; "
                          "give --pass-file FILE", key_path, strerror(errno));
                close(fd);
                return -1;
        }
        dprintf(fd, "Enter the passphrase for %s: ", key_path);
        n = read_line(fd, buf);
        tty_echo_on(fd);
        dprintf(fd, "\n");
        close(fd);
        if (n < 0)
                cli_error("cannot read the passphrase for %s (at most %d bytes)", key_path, PASS_MAX);
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

        if (cli_file_load(c->pass_file, &f) < 0)
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

        if (cli_file_load(path, &f) < 0)
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
