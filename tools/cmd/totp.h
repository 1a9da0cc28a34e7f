/* SPDX-License-Identifier: BSD-2-Clause */
/* mshim totp: the pieces tools/cmd/totp.c and tools/cmd/totp_recovery.c share. */
#ifndef MB_TOOLS_TOTP_H
#define MB_TOOLS_TOTP_H

#include "cli.h"
#include "mb/totp.h"

/* A label is what an authenticator app lists the code under. */
#define TOTP_LABEL_MAX 64u
/* RFC 4648 §6 base32 of the 20-byte secret: 32 characters, no padding. */
#define TOTP_BASE32_SIZE 33u

/* The options of mshim totp's commands (tools/cmd/totp.c parses them). */
typedef struct totp_opts {
        const char *secret_file, *label, *esp, *state_dir, *pcrs_file, *select, *recovery_file, *password_file;
        const char *pass_file;  /* --pass-file: the policy key's passphrase */
        const char *time, *secret_out, *log;
        bool literal, is_signed, uri;
        bool configure;         /* --configure: add "totp show" to loader.conf */
        bool this_boot;         /* --this-boot: the first state is this boot's TOTP point */
        const uint8_t *predicted;       /* else the next boot's (enroll_predict) */
        uint32_t mask;
        char **args;            /* enroll --literal's PRED.json files; recover's FILE */
        size_t n_args;
} totp_opts;

/* The label's bytes are printable (no control characters) and 1..64 long:
 * 0, or -1 with a message. */
int totp_label_check(const char *label);
/* RFC 4648 §6 base32 of secret, NUL-terminated. */
void totp_base32(const uint8_t secret[MB_TOTP_SECRET_SIZE], char ret[TOTP_BASE32_SIZE]);
/* The otpauth:// URI (Google Authenticator's key URI format) and, unless
 * uri_only, a QR code of it, on standard output. */
int totp_show_uri(const char *label, const uint8_t secret[MB_TOTP_SECRET_SIZE], bool uri_only);

/* Write the recovery file: the secret under password_file's password
 * (NULL: asked twice on the terminal). Never over an existing file. */
int totp_recovery_write(const char *path, const char *password_file, const char *label,
                        const uint8_t secret[MB_TOTP_SECRET_SIZE]);
/* mshim totp recover (o->args[0]: the file). */
int totp_recover(const totp_opts *o);

#endif
