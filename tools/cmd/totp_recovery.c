/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The TOTP recovery file: the secret encrypted under a password, for the
 * day the TPM no longer gives codes (the PCR policy no longer matches, the
 * TPM was cleared or replaced) and the user needs the code, or the secret
 * to enrol again without touching the phone. The key is scrypt (RFC 7914)
 * of the password, the cipher AES-256-GCM with the file's header as
 * additional data, both OpenSSL's (docs/SEALING.md "TOTP recovery file").
 * mshim totp recover is the one place on the host that computes a code.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include "cli.h"
#include "policykey.h"
#include "safeio.h"
#include "totp.h"

#define REC_FIRST "mshim-totp-recovery 1"
/* OWASP's scrypt minimum for passwords: N = 2^17, r = 8, p = 1 (128 MiB).
 * A file may ask for more, up to REC_LOG2_N_MAX, never less than the
 * minimum: a file edited to a weak KDF is refused, not trusted. */
#define REC_LOG2_N 17u
#define REC_LOG2_N_MIN 14u
#define REC_LOG2_N_MAX 20u
#define REC_R 8u
#define REC_P 1u
#define REC_SALT 16u
#define REC_NONCE 12u   /* GCM's 96-bit IV (SP 800-38D §8.2) */
#define REC_TAG 16u
#define REC_KEY 32u
#define REC_FILE_MAX ((size_t) 1 << 16)

typedef struct rec_file {
        char label[TOTP_LABEL_MAX + 1];
        unsigned log2_n;
        uint8_t salt[REC_SALT], nonce[REC_NONCE], ct[MB_TOTP_SECRET_SIZE], tag[REC_TAG];
        size_t aad_len;         /* the header: every line before "secret" */
} rec_file;

/* ---- the key and the cipher --------------------------------------------------- */

static int derive(const char *password, const rec_file *f, uint8_t key[REC_KEY]) {
        uint64_t n = (uint64_t) 1 << f->log2_n;
        /* scrypt's working memory is 128 * r * N bytes, plus a little. */
        uint64_t maxmem = 128u * REC_R * (n + REC_P + 2) + ((uint64_t) 1 << 20);

        if (EVP_PBE_scrypt(password, strlen(password), f->salt, REC_SALT, n, REC_R, REC_P, maxmem, key, REC_KEY) != 1) {
                cli_error("scrypt failed (out of memory?)");
                return -1;
        }
        return 0;
}

/* AES-256-GCM over the 20-byte secret: enc 1 encrypts into f->ct and
 * f->tag, enc 0 decrypts f->ct into secret and checks the tag (-1: wrong
 * password or a changed file, the same to GCM). */
static int gcm(int enc, const uint8_t key[REC_KEY], rec_file *f, const char *aad, uint8_t secret[MB_TOTP_SECRET_SIZE]) {
        EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
        int len = 0, ok;

        ok = c && EVP_CipherInit_ex(c, EVP_aes_256_gcm(), NULL, key, f->nonce, enc) == 1 &&
             EVP_CipherUpdate(c, NULL, &len, (const uint8_t *) aad, (int) f->aad_len) == 1;
        if (ok && enc)
                ok = EVP_CipherUpdate(c, f->ct, &len, secret, MB_TOTP_SECRET_SIZE) == 1 &&
                     EVP_CipherFinal_ex(c, f->ct + len, &len) == 1 &&
                     EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, REC_TAG, f->tag) == 1;
        else if (ok)
                ok = EVP_CipherUpdate(c, secret, &len, f->ct, MB_TOTP_SECRET_SIZE) == 1 &&
                     EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, REC_TAG, f->tag) == 1 &&
                     EVP_CipherFinal_ex(c, secret + len, &len) == 1;
        EVP_CIPHER_CTX_free(c);
        return ok ? 0 : -1;
}

/* ---- the file ------------------------------------------------------------- */

static void put_kv_hex(const char *key, const uint8_t *p, size_t n) {
        out_puts(key);
        out_putc(' ');
        out_hex(p, n);
        out_putc('\n');
}

/* The header, byte for byte what the reader authenticates. */
static void put_header(const rec_file *f) {
        char line[96];

        out_puts(REC_FIRST "\nlabel ");
        out_puts(f->label);
        snprintf(line, sizeof(line), "\nalgorithm sha1\ndigits %u\nperiod %u\nkdf scrypt\nscrypt-log2-n %u\n",
                 MB_TOTP_DIGITS, MB_TOTP_PERIOD, f->log2_n);
        out_puts(line);
        snprintf(line, sizeof(line), "scrypt-r %u\nscrypt-p %u\ncipher aes-256-gcm\n", REC_R, REC_P);
        out_puts(line);
        put_kv_hex("salt", f->salt, REC_SALT);
        put_kv_hex("nonce", f->nonce, REC_NONCE);
}

static char *header_text(const rec_file *f, size_t *ret_len) {
        out_capture c = { 0 };

        out_capture_begin(&c);
        put_header(f);
        out_capture_end(&c);
        if (!c.buf)
                cli_error("out of memory");
        *ret_len = c.len;
        return c.buf;
}

/* The password from --password-file, else asked on the terminal: twice
 * for a new file (a typo there would lock the secret away), once to
 * open one. */
static char *get_password(const char *password_file, const char *path, bool twice) {
        char prompt[256];
        int fd;
        char *s;

        if (password_file)
                return cli_secret_file(password_file, "a password file");
        fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
                cli_error("no terminal to ask %s's password on: give --password-file FILE", path);
                return NULL;
        }
        snprintf(prompt, sizeof(prompt), "Password for %s: ", path);
        s = twice ? cli_tty_new_secret(fd, prompt, "The same password again: ") : cli_tty_secret(fd, prompt);
        close(fd);
        return s;
}

int totp_recovery_write(const char *path, const char *password_file, const char *label,
                        const uint8_t secret[MB_TOTP_SECRET_SIZE]) {
        rec_file f = { .log2_n = REC_LOG2_N };
        uint8_t key[REC_KEY];
        char *password = get_password(password_file, path, true), *aad = NULL;
        out_capture c = { 0 };
        int r = -1;

        if (!password)
                return -1;
        if (!*password) {
                cli_error("the recovery file's password is empty");
                goto out;
        }
        snprintf(f.label, sizeof(f.label), "%s", label);
        if (RAND_bytes(f.salt, REC_SALT) != 1 || RAND_bytes(f.nonce, REC_NONCE) != 1) {
                cli_error("OpenSSL's random generator failed");
                goto out;
        }
        aad = header_text(&f, &f.aad_len);
        if (!aad || derive(password, &f, key) < 0 || gcm(1, key, &f, aad, (uint8_t *) secret) < 0)
                goto out;
        out_capture_begin(&c);
        out_put(aad, f.aad_len);
        put_kv_hex("secret", f.ct, MB_TOTP_SECRET_SIZE);
        put_kv_hex("tag", f.tag, REC_TAG);
        out_capture_end(&c);
        /* Encrypted, but only as strong as the password: owner-only. */
        r = c.buf ? seal_write_new(path, CLI_MODE_SECRET, c.buf, c.len) : -1;
out:
        OPENSSL_cleanse(key, sizeof(key));
        cli_secret_free(password);
        out_capture_free(&c);
        free(aad);
        return r;
}

/* "key hex" with exactly n bytes of lower-case hex. */
static bool get_hex(const char *line, const char *key, uint8_t *out, size_t n) {
        size_t k = strlen(key);

        if (strncmp(line, key, k) != 0 || line[k] != ' ' || strlen(line + k + 1) != 2 * n ||
            strspn(line + k + 1, "0123456789abcdef") != 2 * n)
                return false;
        for (size_t i = 0; i < n; i++)
                sscanf(line + k + 1 + 2 * i, "%2hhx", &out[i]);
        return true;
}

#define REC_LINES 14u

/* Strict: the values are read from their lines, the header is rebuilt
 * from them and must be the file's bytes, then the secret and the tag
 * lines end the file: any other byte anywhere is refused. */
static int rec_parse(const char *path, const cli_file *in, rec_file *f) {
        char *text = strndup((const char *) in->data, in->size), *save = NULL, *line[REC_LINES + 1] = { 0 }, *hdr = NULL;
        size_t n = 0;
        unsigned log2_n = 0;
        int r = -1;

        if (!text) {
                cli_error("out of memory");
                return -1;
        }
        for (char *p = strtok_r(text, "\n", &save); p && n <= REC_LINES; p = strtok_r(NULL, "\n", &save))
                line[n++] = p;
        if (n != REC_LINES || strncmp(line[1], "label ", 6) != 0 || strlen(line[1] + 6) > TOTP_LABEL_MAX ||
            sscanf(line[6], "scrypt-log2-n %u", &log2_n) != 1 || !get_hex(line[10], "salt", f->salt, REC_SALT) ||
            !get_hex(line[11], "nonce", f->nonce, REC_NONCE) || !get_hex(line[12], "secret", f->ct, MB_TOTP_SECRET_SIZE) ||
            !get_hex(line[13], "tag", f->tag, REC_TAG))
                goto out;
        snprintf(f->label, sizeof(f->label), "%s", line[1] + 6);
        f->log2_n = log2_n;
        hdr = header_text(f, &f->aad_len);
        /* Header, then "secret" (7 + 40 + 1 bytes) and "tag" (4 + 32 + 1). */
        if (hdr && in->size == f->aad_len + 48 + 37 && memcmp(in->data, hdr, f->aad_len) == 0)
                r = 0;
out:
        if (r < 0)
                cli_error("%s: not a mshim TOTP recovery file, or a damaged one", path);
        else if (log2_n < REC_LOG2_N_MIN || log2_n > REC_LOG2_N_MAX) {
                cli_error("%s: scrypt cost 2^%u is outside 2^%u..2^%u; refusing it", path, log2_n, REC_LOG2_N_MIN,
                          REC_LOG2_N_MAX);
                r = -1;
        }
        free(text);
        free(hdr);
        return r;
}

/* The file's secret: 0, or an exit status with a message. */
static int rec_open(const char *path, const char *password_file, rec_file *f, uint8_t secret[MB_TOTP_SECRET_SIZE]) {
        uint8_t key[REC_KEY];
        char *password = NULL;
        cli_file in;
        int r = EXIT_BAD_INPUT;

        if (cli_file_load_max(path, REC_FILE_MAX, "a TOTP recovery file", &in) < 0)
                return EXIT_BAD_INPUT;
        if (rec_parse(path, &in, f) == 0 && (password = get_password(password_file, path, false)) &&
            derive(password, f, key) == 0) {
                if (gcm(0, key, f, (const char *) in.data, secret) == 0)
                        r = 0;
                else
                        cli_error("%s: wrong password (or the file was changed)", path);
        }
        OPENSSL_cleanse(key, sizeof(key));
        cli_secret_free(password);
        cli_file_free(&in);
        return r;
}

/* RFC 6238 with OpenSSL's HMAC-SHA1 and the core's truncation. */
static int code_at(const uint8_t secret[MB_TOTP_SECRET_SIZE], uint64_t t, uint32_t *ret) {
        uint8_t msg[MB_TOTP_COUNTER_SIZE], mac[EVP_MAX_MD_SIZE];
        unsigned mac_len = 0;
        int r;

        mb_totp_counter(t, MB_TOTP_PERIOD, msg);
        r = HMAC(EVP_sha1(), secret, MB_TOTP_SECRET_SIZE, msg, sizeof(msg), mac, &mac_len) &&
            mb_totp_truncate(mac, mac_len, MB_TOTP_DIGITS, ret) == MB_OK ? 0 : -1;
        OPENSSL_cleanse(mac, sizeof(mac));
        if (r < 0)
                cli_error("HMAC-SHA1 failed");
        return r;
}

static int parse_time(const char *s, uint64_t *ret) {
        char *end;
        unsigned long long v;

        errno = 0;
        v = strtoull(s, &end, 10);
        if (!s || *s < '0' || *s > '9' || *end || errno)
                return cli_usage_error("totp", "--time wants seconds since 1970-01-01 UTC, not '%s'", s);
        *ret = v;
        return 0;
}

int totp_recover(const totp_opts *o) {
        rec_file f = { 0 };
        uint8_t secret[MB_TOTP_SECRET_SIZE];
        uint64_t now = (uint64_t) time(NULL);
        uint32_t code = 0;
        char line[32];
        int r;

        if (o->time && parse_time(o->time, &now))
                return EXIT_BAD_INPUT;
        r = rec_open(o->args[0], o->password_file, &f, secret);
        /* For `mshim totp enroll --secret-file`: owner-only, never over a file. */
        if (r == 0 && o->secret_out)
                r = seal_write_new(o->secret_out, CLI_MODE_SECRET, secret, MB_TOTP_SECRET_SIZE) < 0 ? EXIT_BAD_INPUT : 0;
        if (r == 0 && o->uri)
                r = totp_show_uri(f.label, secret, false);
        if (r == 0 && !o->secret_out && !o->uri) {
                r = code_at(secret, now, &code) < 0 ? EXIT_BAD_INPUT : 0;
                snprintf(line, sizeof(line), "%0*u\n", (int) MB_TOTP_DIGITS, code);
                out_puts(r == 0 ? line : "");
                r = out_finish() < 0 ? EXIT_BAD_INPUT : r;
        }
        OPENSSL_cleanse(secret, sizeof(secret));
        return r;
}
