/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim totp enroll / remove: a TOTP secret (RFC 6238) becomes an HMAC-SHA1
 * key inside the TPM, persistent at TOTP_HANDLE under the storage root key,
 * usable only under a PCR policy, so that the loader can show the current
 * code before the kernel runs and nothing can compute it once the boot
 * differs (docs/SEALING.md "TOTP", issue 12). The loader's data goes onto
 * the ESP (docs/CONFIG.md "<ESP>/loader/mshim/totp"). mshim totp recover is
 * tools/cmd/totp_recovery.c.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <qrencode.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include "cli.h"
#include "predict.h"
#include "safeio.h"
#include "sealcmd.h"
#include "tpmseal.h"
#include "totp.h"
#include "mb/bls.h"
#include "mb/policy.h"
#include "mb/sealfile.h"
#include "mb/tcglog.h"

/* The key's persistent handle: owner range (TCG provisioning guidance
 * §7.8: 0x81000000-0x817FFFFF), "MT" like the counter's "MS". */
#define TOTP_HANDLE 0x81004D54u
#define TOTP_ESP_FILE SEAL_TOTP_FILE
/* The default PCRs: mshim (4), its configuration (5), Secure Boot (7) and
 * the kernel command line (12); the kernel is in 4. Not 9: the kernel's
 * stub extends it after the loader has shown the code (docs/SEALING.md). */
#define TOTP_SELECT_DEFAULT SEAL_TOTP_DEFAULT_PCRS
/* What enroll checks (and with --configure edits) so that the loader shows
 * the code: loader.conf's totp key (docs/CONFIG.md). */
#define TOTP_CONF_FILE "loader/loader.conf"
#define TOTP_CONF_LINE "totp show"
/* The enrolment file is small; a huge one is not ours. */
#define TOTP_FILE_MAX ((size_t) 1 << 20)


/* ---- the secret, its URI and QR code ---------------------------------------- */

int totp_label_check(const char *label) {
        size_t n = strlen(label);

        if (n == 0 || n > TOTP_LABEL_MAX) {
                cli_error("the label must be 1 to %u bytes (it is %zu)", TOTP_LABEL_MAX, n);
                return -1;
        }
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) label[i] < 0x20 || label[i] == 0x7f) {
                        cli_error("the label may not hold control characters");
                        return -1;
                }
        return 0;
}

void totp_base32(const uint8_t secret[MB_TOTP_SECRET_SIZE], char ret[TOTP_BASE32_SIZE]) {
        static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
        uint32_t acc = 0;
        int bits = 0;
        size_t k = 0;

        /* 160 bits are 32 groups of 5: no partial group, no '=' padding. */
        for (size_t i = 0; i < MB_TOTP_SECRET_SIZE; i++) {
                acc = (acc << 8) | secret[i];
                bits += 8;
                while (bits >= 5) {
                        bits -= 5;
                        ret[k++] = alphabet[(acc >> bits) & 31];
                }
        }
        ret[k] = 0;
}

/* RFC 3986 §2.3: unreserved characters as they are, the rest %XX. */
static void put_pct(const char *s) {
        static const char hex[] = "0123456789ABCDEF";

        for (; *s; s++) {
                unsigned char c = (unsigned char) *s;
                if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || strchr("-._~", c)) {
                        out_putc((char) c);
                } else {
                        out_putc('%');
                        out_putc(hex[c >> 4]);
                        out_putc(hex[c & 15]);
                }
        }
}

/* Two module rows per text line with half blocks; two modules of quiet
 * zone. On a terminal, black on white whatever its colours; elsewhere
 * dark modules as blocks (for a light background: paper, an editor). */
static void put_qr(const QRcode *q, bool tty) {
        static const char *cell[4] = { " ", "\xe2\x96\x80", "\xe2\x96\x84", "\xe2\x96\x88" }; /* ▀ ▄ █ */
        const int quiet = 2, w = q->width + 2 * quiet;

        for (int y = -quiet; y < q->width + quiet; y += 2) {
                out_puts(tty ? "\033[30;47m" : "");
                for (int x = -quiet; x < q->width + quiet && x < w; x++) {
                        int dark = 0;
                        for (int half = 0; half < 2; half++) {
                                int yy = y + half;
                                if (x >= 0 && x < q->width && yy >= 0 && yy < q->width &&
                                    (q->data[yy * q->width + x] & 1))
                                        dark |= 1 << half;
                        }
                        out_puts(cell[dark]);
                }
                out_puts(tty ? "\033[0m\n" : "\n");
        }
}

int totp_show_uri(const char *label, const uint8_t secret[MB_TOTP_SECRET_SIZE], bool uri_only) {
        char b32[TOTP_BASE32_SIZE], digits[16];
        out_capture uri = { 0 };
        QRcode *q;
        int r = 0;

        totp_base32(secret, b32);
        snprintf(digits, sizeof(digits), "%u", MB_TOTP_DIGITS);
        out_capture_begin(&uri);
        out_puts("otpauth://totp/");
        put_pct(label);
        out_puts("?secret=");
        out_puts(b32);
        out_puts("&issuer=mshim&algorithm=SHA1&digits=");
        out_puts(digits);
        snprintf(digits, sizeof(digits), "%u", MB_TOTP_PERIOD);
        out_puts("&period=");
        out_puts(digits);
        out_putc(0);
        out_capture_end(&uri);
        OPENSSL_cleanse(b32, sizeof(b32));
        if (!uri.buf) {
                cli_error("out of memory");
                return EXIT_BAD_INPUT;
        }
        out_puts(uri.buf);
        out_putc('\n');
        if (!uri_only) {
                /* Level M: the URI fits a version-5 code, readable off a screen. */
                q = QRcode_encodeString(uri.buf, 0, QR_ECLEVEL_M, QR_MODE_8, 1);
                if (q) {
                        put_qr(q, isatty(STDOUT_FILENO));
                        QRcode_free(q);
                } else {
                        cli_error("cannot make a QR code of the URI: %s", strerror(errno));
                        r = EXIT_BAD_INPUT;
                }
        }
        OPENSSL_cleanse(uri.buf, uri.cap);
        out_capture_free(&uri);
        if (out_finish() < 0)
                r = EXIT_BAD_INPUT;
        return r;
}

/* From --secret-file (exactly 20 raw bytes) or OpenSSL's DRBG. */
static int secret_load(const char *path, uint8_t ret[MB_TOTP_SECRET_SIZE]) {
        cli_file f;
        int r = -1;

        if (!path) {
                if (RAND_priv_bytes(ret, MB_TOTP_SECRET_SIZE) == 1)
                        return 0;
                cli_error("OpenSSL's random generator failed");
                return -1;
        }
        if (cli_file_load_max(path, TOTP_FILE_MAX, "a TOTP secret", &f) < 0)
                return -1;
        if (f.size == MB_TOTP_SECRET_SIZE) {
                memcpy(ret, f.data, MB_TOTP_SECRET_SIZE);
                r = 0;
        } else {
                cli_error("%s: %zu bytes; a TOTP secret is %u raw bytes (HMAC-SHA1's key, RFC 6238)", path, f.size,
                          MB_TOTP_SECRET_SIZE);
        }
        cli_file_free(&f);
        return r;
}

/* ---- the policy -------------------------------------------------------------- */

/* The TOTP point, where the loader makes the code: right after it
 * measured the kernel command line (PCR 12, EV_IPL) and then the initrd
 * the code vouches for (PCR 12, MB_TAG_TOTP_INITRD), before StartImage
 * (docs/SEALING.md "TOTP"). Later events (the firmware's Exit Boot
 * Services actions in PCR 5, the fence, the stub's PCR 9) are not in the
 * state the policy must match. */
static bool totp_point(const mb_tcglog_event *ev) {
        return ev->pcr == 12 && ev->type == MB_EV_IPL;
}

static bool totp_initrd(const mb_tcglog_event *ev) {
        return ev->pcr == 12 && ev->type == MB_EV_EVENT_TAG && ev->data_size == MB_TOTP_INITRD_EVENT_SIZE &&
               mb_le32(ev->data) == MB_TAG_TOTP_INITRD;
}

typedef struct log_replay {
        mb_replay full, cut;    /* the whole log; the log up to the TOTP point */
        mb_pcr_values tpm;
} log_replay;

static int log_replay_run(const char *path, cli_file *f, log_replay *lr) {
        mb_tcglog log;
        mb_tcglog_event ev;
        bool at_point = false;
        mb_err e = mb_tcglog_open(&log, f->data, f->size);

        if (e != MB_OK) {
                cli_error("%s: not a TCG event log (%s)", path, log.err_reason ? log.err_reason : mb_strerror(e));
                return -1;
        }
        mb_replay_init(&lr->full, &log);
        mb_replay_init(&lr->cut, &log);
        while ((e = mb_tcglog_next(&log, &ev)) == MB_OK) {
                mb_replay_event(&lr->full, &ev);
                if (!at_point || totp_initrd(&ev))
                        mb_replay_event(&lr->cut, &ev);
                at_point |= totp_point(&ev);
        }
        if (e != MB_END) {
                cli_error("%s: event %u at byte %zu: %s", path, log.err_number, log.err_offset,
                          log.err_reason ? log.err_reason : mb_strerror(e));
                return -1;
        }
        if (!at_point) {
                cli_error("%s: no EV_IPL event in PCR 12 (the command line the loader measures before it shows "
                          "the code): this boot did not go through mshim; give --pcrs FILE", path);
                return -1;
        }
        return 0;
}

/* The current state at the TOTP point: this boot's event log replayed up
 * to it. The whole log must replay to the TPM's values, so a log that is
 * not this TPM's (or was cut) is refused. */
static int log_values(const totp_opts *o, cli_tpm *t, uint8_t *values) {
        log_replay *lr = calloc(1, sizeof(*lr));
        uint8_t now[SEAL_STATE_MAX];
        const mb_pcr_bank *full, *cut;
        cli_file f;
        size_t k = 0;
        int r = -1;

        if (!lr) {
                cli_error("out of memory");
                return -1;
        }
        if (cli_file_load(o->log, &f) < 0)
                goto out;
        if (log_replay_run(o->log, &f, lr) == 0 && seal_current_values(t, NULL, o->mask, now) == 0) {
                full = mb_replay_bank(&lr->full, MB_ALG_SHA256);
                cut = mb_replay_bank(&lr->cut, MB_ALG_SHA256);
                r = full && cut ? 0 : -1;
                if (r < 0)
                        cli_error("%s: no sha256 digests in the log", o->log);
                for (uint32_t i = 0; r == 0 && i < MB_PCR_COUNT; i++) {
                        if (!(o->mask & (1u << i)))
                                continue;
                        if (memcmp(now + SEAL_PCR_VALUE * k, full->pcr[i], SEAL_PCR_VALUE) != 0) {
                                cli_error("%s does not replay to the TPM's sha256 PCR %u: not this boot's log", o->log,
                                          i);
                                r = -1;
                        } else {
                                memcpy(values + SEAL_PCR_VALUE * k++, cut->pcr[i], SEAL_PCR_VALUE);
                        }
                }
        }
        cli_file_free(&f);
out:
        free(lr);
        return r;
}

/* The first state at the TOTP point: --pcrs FILE as given, this boot's
 * (--this-boot: log_values), else the next boot's, predicted before the
 * TPM was opened (enroll_predict). The literal policy's first state, the
 * signed mode's first approval. */
static int first_values(const totp_opts *o, cli_tpm *t, uint8_t *values) {
        if (o->pcrs_file)
                return seal_current_values(t, o->pcrs_file, o->mask, values);
        if (o->this_boot)
                return log_values(o, t, values);
        memcpy(values, o->predicted, seal_pcr_count(o->mask) * SEAL_PCR_VALUE);
        return 0;
}

/* The literal policy's states: first_values, then each PRED.json's. */
static int literal_states(const totp_opts *o, cli_tpm *t, seal_file *f) {
        f->n_states = 1 + o->n_args;
        f->states = calloc(f->n_states, sizeof(*f->states));
        if (!f->states) {
                cli_error("out of memory");
                return -1;
        }
        if (first_values(o, t, f->states[0]) < 0)
                return -1;
        return seal_pred_states(o->args, o->n_args, PRED_POINT_TOTP, f->pcrs, f->states + 1);
}

/* The policy (docs/SEALING.md "Policies", as a sealed secret's without a
 * PIN; signed: PolicyAuthorize with the policyRef "mshim-totp", "The TOTP
 * key") and what the loader needs of it, in f. Signed: the first
 * approval's values (this boot's TOTP point) in first. */
static int totp_policy(const totp_opts *o, cli_tpm *t, seal_file *f, mb_policy *ret, uint8_t *first) {
        f->literal = o->literal;
        f->pcrs = o->mask;
        if (f->literal)
                return literal_states(o, t, f) < 0 || seal_literal_policy(f, ret) < 0 ? -1 : 0;
        return seal_signed_setup(t, o->state_dir, f) < 0 || first_values(o, t, first) < 0 ||
                               seal_totp_policy(&f->policy_key, f->pcrs, ret) < 0
                       ? -1 : 0;
}

/* ---- the TPM key ---------------------------------------------------------------- */

/* An HMAC-SHA1 signing key (TPM 2.0 Part 2 §12.2.3.3: KEYEDHASH with the
 * HMAC scheme), usable only through its policy: no userWithAuth, and
 * adminWithPolicy so that no empty authValue opens the admin role either;
 * noDA, since there is no authValue to guess and failed attempts (a fenced
 * boot) must not lock the TPM out for PIN-protected secrets. */
static void key_template(const mb_policy *policy, TPM2B_PUBLIC *ret) {
        *ret = (TPM2B_PUBLIC) {
                .publicArea = {
                        .type = TPM2_ALG_KEYEDHASH,
                        .nameAlg = TPM2_ALG_SHA256,
                        .objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_ADMINWITHPOLICY |
                                            TPMA_OBJECT_NODA | TPMA_OBJECT_SIGN_ENCRYPT,
                        .parameters.keyedHashDetail.scheme = {
                                .scheme = TPM2_ALG_HMAC,
                                .details.hmac.hashAlg = TPM2_ALG_SHA1,
                        },
                },
        };
        ret->publicArea.authPolicy.size = MB_POLICY_SIZE;
        memcpy(ret->publicArea.authPolicy.buffer, policy->d, MB_POLICY_SIZE);
}

/* The object at TOTP_HANDLE: 1 none, 0 (ret_obj set), or an exit status. */
static int key_lookup(cli_tpm *t, ESYS_TR *ret_obj) {
        TSS2_RC rc = Esys_TR_FromTPMPublic(t->esys, TOTP_HANDLE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ret_obj);

        if (ts_rc_base(rc) == TPM2_RC_HANDLE)
                return 1;
        if (rc != TSS2_RC_SUCCESS) {
                cli_error("reading the TPM's handle 0x%08x (ReadPublic) failed: %s", TOTP_HANDLE, Tss2_RC_Decode(rc));
                return EXIT_BAD_INPUT;
        }
        return 0;
}

/* Create the key under the SRK (the secret encrypted on the bus), load it
 * and make it persistent. ret_name: the persistent key's Name. */
static int key_enroll(cli_tpm *t, const char *state_dir, const mb_policy *policy,
                      const uint8_t secret[MB_TOTP_SECRET_SIZE], TPM2B_NAME *ret_name) {
        TPM2B_SENSITIVE_CREATE in = { 0 };
        TPM2B_PUBLIC tmpl, pub, srk_pub;
        TPM2B_PRIVATE priv;
        TPM2B_NAME *name = NULL;
        ESYS_TR srk = ESYS_TR_NONE, obj = ESYS_TR_NONE, persistent = ESYS_TR_NONE;
        TSS2_RC rc;
        int r;

        r = seal_srk(t, state_dir, &srk, &srk_pub);
        if (r)
                return r;
        key_template(policy, &tmpl);
        memcpy(in.sensitive.data.buffer, secret, MB_TOTP_SECRET_SIZE);
        in.sensitive.data.size = MB_TOTP_SECRET_SIZE;
        r = ts_create(t, srk, &tmpl, &in, &pub, &priv);
        if (r == 0) {
                rc = Esys_Load(t->esys, srk, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &priv, &pub, &obj);
                if (rc == TSS2_RC_SUCCESS)
                        rc = Esys_EvictControl(t->esys, ESYS_TR_RH_OWNER, obj, ESYS_TR_PASSWORD, ESYS_TR_NONE,
                                               ESYS_TR_NONE, TOTP_HANDLE, &persistent);
                if (rc == TSS2_RC_SUCCESS)
                        rc = Esys_TR_GetName(t->esys, persistent, &name);
                if (rc != TSS2_RC_SUCCESS) {
                        cli_error("making the TOTP key persistent at 0x%08x (Load, EvictControl) failed: %s",
                                  TOTP_HANDLE, Tss2_RC_Decode(rc));
                        r = EXIT_BAD_INPUT;
                }
        }
        if (r == 0)
                *ret_name = *name;
        Esys_Free(name);
        ts_flush(t, &obj);
        if (persistent != ESYS_TR_NONE)
                Esys_TR_Close(t->esys, &persistent);
        Esys_TR_Close(t->esys, &srk);
        return r;
}

/* Evict the persistent key (EvictControl of a persistent handle removes
 * it, Part 3 §28.5). */
static int key_evict(cli_tpm *t, ESYS_TR obj) {
        ESYS_TR none = ESYS_TR_NONE;
        TSS2_RC rc = Esys_EvictControl(t->esys, ESYS_TR_RH_OWNER, obj, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                                       TOTP_HANDLE, &none);

        if (rc != TSS2_RC_SUCCESS) {
                cli_error("removing the TOTP key at 0x%08x (EvictControl) failed: %s", TOTP_HANDLE, Tss2_RC_Decode(rc));
                return EXIT_BAD_INPUT;
        }
        return 0;
}

/* An HMAC key of key_template's kind (any policy): what enroll makes. */
static bool key_is_totp(cli_tpm *t, ESYS_TR obj) {
        TPM2B_PUBLIC *pub = NULL;
        TPM2B_PUBLIC want;
        mb_policy none = { 0 };
        bool ok;

        if (Esys_ReadPublic(t->esys, obj, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &pub, NULL, NULL) != TSS2_RC_SUCCESS)
                return false;
        key_template(&none, &want);
        ok = pub->publicArea.type == want.publicArea.type &&
             pub->publicArea.objectAttributes == want.publicArea.objectAttributes &&
             pub->publicArea.parameters.keyedHashDetail.scheme.scheme == TPM2_ALG_HMAC &&
             pub->publicArea.parameters.keyedHashDetail.scheme.details.hmac.hashAlg == TPM2_ALG_SHA1;
        Esys_Free(pub);
        return ok;
}

/* ---- the ESP file ---------------------------------------------------------------- */

/* <ESP>/loader/mshim, made if missing (the ESP itself must exist). */
static int esp_dirs(const char *esp) {
        static const char *const dirs[] = { "loader", "loader/mshim" };
        struct stat st;

        if (stat(esp, &st) < 0 || !S_ISDIR(st.st_mode)) {
                cli_error("%s: not a directory (the ESP's mount point: --esp DIR)", esp);
                return -1;
        }
        for (size_t i = 0; i < MB_ARRAY_SIZE(dirs); i++) {
                char *d = seal_path(esp, dirs[i]);
                int r = d && (mkdir(d, 0755) == 0 || errno == EEXIST) ? 0 : -1;
                if (d && r < 0)
                        cli_error("%s: %s", d, strerror(errno));
                free(d);
                if (r < 0)
                        return -1;
        }
        return 0;
}

/* A TPM2B_PUBLIC, marshalled, into a field of the ESP file. */
static int marshal_public(const TPM2B_PUBLIC *pub, uint8_t *buf, size_t *ret_size) {
        size_t off = 0;

        if (Tss2_MU_TPM2B_PUBLIC_Marshal(pub, buf, MB_SEAL_BLOB_MAX, &off) != TSS2_RC_SUCCESS) {
                cli_error("cannot marshal the policy key");
                return -1;
        }
        *ret_size = off;
        return 0;
}

/* The ESP file's text (docs/CONFIG.md), in the core's codec; malloc()ed. */
static char *esp_text(const seal_file *f, const mb_policy *policy, const TPM2B_NAME *name, size_t *ret_len) {
        mb_totp_enrolment *e = calloc(1, sizeof(*e));
        uint8_t *states = f->n_states ? malloc(f->n_states * SEAL_STATE_MAX) : NULL;
        size_t state_size = seal_pcr_count(f->pcrs) * SEAL_PCR_VALUE;
        size_t cap = 4096 + 2 * f->n_states * (state_size + 8);
        char *text = malloc(cap);
        mb_err err = MB_ERR_NOSPACE;

        if (e && text && (states || !f->n_states)) {
                *e = (mb_totp_enrolment) { .handle = TOTP_HANDLE, .name_size = name->size, .bank = MB_ALG_SHA256,
                                           .pcrs = f->pcrs, .mode = f->literal ? MB_SEAL_LITERAL : MB_SEAL_SIGNED,
                                           .n_states = f->n_states, .states = states, .nv_index = f->nv_index };
                memcpy(e->name, name->name, name->size);
                memcpy(e->policy, policy->d, MB_POLICY_SIZE);
                for (size_t i = 0; i < f->n_states; i++)
                        memcpy(states + i * state_size, f->states[i], state_size);
                if (!f->literal) {
                        e->nv_name_size = f->nv_name.size;
                        memcpy(e->nv_name, f->nv_name.name, f->nv_name.size);
                }
                err = f->literal || marshal_public(&f->policy_key, e->policy_key, &e->policy_key_size) == 0
                              ? mb_totp_enrolment_write(e, text, cap, ret_len) : MB_ERR_INVALID;
        }
        if (err != MB_OK) {
                cli_error("cannot write the enrolment file: %s", mb_strerror(err));
                free(text);
                text = NULL;
        }
        free(states);
        free(e);
        return text;
}

/* The Name the enrolment file at path records. 1: no file. */
static int recorded_name(const char *path, TPM2B_NAME *ret) {
        mb_totp_enrolment e;
        int k = totp_enrolment_load(path, &e);

        if (k < 0)
                cli_error("%s: remove the file by hand if it is not mshim's", path);
        if (k == 0) {
                ret->size = (UINT16) e.name_size;
                memcpy(ret->name, e.name, e.name_size);
        }
        return k;
}

/* The enrolled key's Name, to check that the key at the handle is the
 * enrolled one before removing it: the state directory's trusted copy's,
 * and an ESP copy that differs from it is refused. An enrolment made by
 * an older mshim has no trusted copy: the ESP file's Name then, said so.
 * 1: neither file. */
static int enrolled_name(const char *esp_file, const char *trusted, TPM2B_NAME *ret) {
        int k = recorded_name(trusted, ret);

        if (k == 0 && access(esp_file, F_OK) == 0 && seal_totp_esp_check(trusted, esp_file) < 0)
                return -1;
        if (k != 1)
                return k;
        k = recorded_name(esp_file, ret);
        if (k == 0)
                fprintf(stderr, "mshim: %s: no trusted copy (enrolled by an older mshim): checking the key against "
                        "%s\n", trusted, esp_file);
        return k;
}

/* Remove path if it is there; -1 with a message when it cannot be. */
static int remove_file(const char *path) {
        if (unlink(path) == 0) {
                printf("removed %s\n", path);
                return 0;
        }
        if (errno == ENOENT)
                return 0;
        cli_error("%s: %s", path, strerror(errno));
        return -1;
}

/* ---- the commands ---------------------------------------------------------------- */

/* Every option of every totp command, one table: each command then
 * refuses the ones it does not take (allowed: the option characters). */
static int totp_parse(int argc, char **argv, const char *allowed, totp_opts *o) {
        static const struct option longopts[] = {
                { "signed", no_argument, NULL, 'S' },
                { "literal", no_argument, NULL, 'L' },
                { "select", required_argument, NULL, 's' },
                { "pcrs", required_argument, NULL, 'p' },
                { "secret-file", required_argument, NULL, 'f' },
                { "label", required_argument, NULL, 'l' },
                { "esp", required_argument, NULL, 'E' },
                { "uri", no_argument, NULL, 'u' },
                { "state-dir", required_argument, NULL, 'd' },
                { "recovery-file", required_argument, NULL, 'r' },
                { "password-file", required_argument, NULL, 'P' },
                { "log", required_argument, NULL, 'g' },
                { "time", required_argument, NULL, 't' },
                { "secret-out", required_argument, NULL, 'o' },
                { "pass-file", required_argument, NULL, 'F' },
                { "configure", no_argument, NULL, 'C' },
                { "this-boot", no_argument, NULL, 'B' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        const char *esp = NULL, *state_dir = NULL;
        int c, once;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "h", longopts, "totp")) != -1) {
                once = 0;
                if (c != 'h' && c != '?' && !strchr(allowed, c)) {
                        for (size_t i = 0; longopts[i].name; i++)
                                if (longopts[i].val == c)
                                        return cli_usage_error("totp", "totp %s does not take --%s", argv[0],
                                                               longopts[i].name);
                }
                switch (c) {
                case 'S': o->is_signed = true; break;
                case 'L': o->literal = true; break;
                case 's': once = cli_opt_once(&o->select, "--select", optarg); break;
                case 'p': once = cli_opt_once(&o->pcrs_file, "--pcrs", optarg); break;
                case 'f': once = cli_opt_once(&o->secret_file, "--secret-file", optarg); break;
                case 'l': once = cli_opt_once(&o->label, "--label", optarg); break;
                case 'E': once = cli_opt_once(&esp, "--esp", optarg); break;
                case 'u': o->uri = true; break;
                case 'd': once = cli_opt_once(&state_dir, "--state-dir", optarg); break;
                case 'r': once = cli_opt_once(&o->recovery_file, "--recovery-file", optarg); break;
                case 'P': once = cli_opt_once(&o->password_file, "--password-file", optarg); break;
                case 'g': once = cli_opt_once(&o->log, "--log", optarg); break;
                case 't': once = cli_opt_once(&o->time, "--time", optarg); break;
                case 'o': once = cli_opt_once(&o->secret_out, "--secret-out", optarg); break;
                case 'F': once = cli_opt_once(&o->pass_file, "--pass-file", optarg); break;
                case 'C': o->configure = true; break;
                case 'B': o->this_boot = true; break;
                case 'h': cli_help(stdout, "totp"); return -1;
                default: return EXIT_BAD_INPUT;
                }
                if (once < 0)
                        return EXIT_BAD_INPUT;
        }
        o->args = argv + optind;
        o->n_args = (size_t) (argc - optind);
        o->esp = esp ? esp : o->esp;
        o->state_dir = state_dir ? state_dir : o->state_dir;
        return 0;
}

static int enroll_check(totp_opts *o) {
        if (o->select && cli_pcr_select_parse(o->select, &o->mask) < 0)
                return cli_usage_error("totp", "--select wants PCR numbers 0-23 and ranges, as 4,5,7,12, not '%s'",
                                       o->select);
        if (o->is_signed && o->literal)
                return cli_usage_error("totp", "--signed and --literal exclude each other");
        if (!o->literal && o->n_args)
                return cli_usage_error("totp", "PRED.json files go with --literal ('%s'); with --signed, approve "
                                       "more boots with mshim policy approve --totp", o->args[0]);
        if (o->pcrs_file && (o->log || o->this_boot))
                return cli_usage_error("totp", "--pcrs excludes --log and --this-boot (the first state from a "
                                       "file, or from this boot's log)");
        o->log = o->log ? o->log : SEAL_LOG;
        if (o->password_file && !o->recovery_file)
                return cli_usage_error("totp", "--password-file goes with --recovery-file");
        if (o->n_args + 1 > MB_POLICY_TREE_MAX_LEAVES)
                return cli_usage_error("totp", "at most %u boot states (the current one and %u PRED.json files)",
                                       MB_POLICY_TREE_MAX_LEAVES, MB_POLICY_TREE_MAX_LEAVES - 1);
        o->is_signed = !o->literal;
        return 0;
}

static char *default_label(void) {
        char host[TOTP_LABEL_MAX + 1] = "";

        if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
                snprintf(host, sizeof(host), "mshim");
        return strdup(host);
}

/* Refuse an existing file before the TPM is touched. */
static int refuse_existing(const char *path, const char *what) {
        if (access(path, F_OK) == 0) {
                cli_error("%s: %s exists; mshim never overwrites an enrolment (mshim totp remove first)", path, what);
                return -1;
        }
        return 0;
}

/* Undo a half-done enrolment: the key, then the files written (NULL: not
 * written). */
static void enroll_undo(cli_tpm *t, const char *esp_file, const char *trusted, const char *approval_path) {
        ESYS_TR obj = ESYS_TR_NONE;

        if (key_lookup(t, &obj) == 0)
                key_evict(t, obj);
        if (esp_file)
                unlink(esp_file);
        if (trusted)
                unlink(trusted);
        if (approval_path)
                unlink(approval_path);
}

/* The enrolment's two copies: the loader's on the ESP, and the trusted
 * one in the state directory (made 0700 if missing) that the host's
 * commands read and check the ESP's against (docs/SEALING.md "The TOTP
 * key"). *ret_esp, *ret_trusted: whether each was written. */
static int write_copies(const totp_opts *o, const char *path, const char *trusted, const char *text, size_t len,
                        bool *ret_esp, bool *ret_trusted) {
        *ret_esp = seal_write_new(path, CLI_MODE_PUBLIC, text, len) == 0;
        if (!*ret_esp)
                return -1;
        if (mkdir(o->state_dir, 0700) < 0 && errno != EEXIST) {
                cli_error("cannot create %s: %s", o->state_dir, strerror(errno));
                return -1;
        }
        *ret_trusted = seal_write_new(trusted, CLI_MODE_PUBLIC, text, len) == 0;
        return *ret_trusted ? 0 : -1;
}

/* Signed: the first approval, of this boot's TOTP point (values), into
 * ESP/loader/mshim/totp-approvals; its path in *ret_path. */
static int first_approval(const totp_opts *o, cli_tpm *t, const uint8_t *values, char **ret_path) {
        char *dir = seal_path(o->esp, MB_TOTP_APPROVALS_DIR);
        seal_signer s;
        int r = -1;

        if (seal_signer_init(&s, o->state_dir, o->pass_file) == 0 && dir &&
            seal_approve(t, &s, dir, o->mask, values, "enrolment", "", SEAL_TOTP, ret_path) == 0) {
                if (o->pcrs_file)
                        fprintf(stderr, "approval of the TOTP point of %s: %s\n", o->pcrs_file, *ret_path);
                else if (o->this_boot)
                        fprintf(stderr, "approval of this boot's TOTP point: %s\n", *ret_path);
                else
                        fprintf(stderr, "approval of the next boot's TOTP point (predicted from %s): %s\n", o->esp,
                                *ret_path);
                r = 0;
        }
        seal_signer_done(&s);
        free(dir);
        return r;
}

/* ---- loader.conf: the code is shown only when it says so ------------------------ */

/* ESP/loader/loader.conf as enroll found it, and as --configure makes it. */
typedef struct totp_conf {
        char *path;
        cli_file old;
        bool existed;           /* old was read (else there was no file) */
        uint8_t *next;          /* non-NULL: the bytes --configure writes */
        size_t next_size;
        bool written;
} totp_conf;

/* The line number of the line of buf whose key (its first word) is
 * "totp", 0 when none: the line a person wrote to choose. */
static size_t conf_totp_line(const uint8_t *buf, size_t size) {
        size_t i = 0, j, line = 1;

        while (i < size) {
                for (j = i; j < size && (buf[j] == ' ' || buf[j] == '\t'); j++)
                        ;
                if (size - j >= 4 && memcmp(buf + j, "totp", 4) == 0 &&
                    (size - j == 4 || strchr(" \t\r\n", buf[j + 4])))
                        return line;
                for (; i < size && buf[i] != '\n'; i++)
                        ;
                i += i < size;
                line++;
        }
        return 0;
}

/* The refusal, or with --pcrs (values the caller computed for a
 * loader.conf of its own) a warning: 0, or EXIT_CHECK_FAILED. */
static int conf_refuse(const totp_opts *o, const char *msg) {
        if (o->pcrs_file && !o->configure) {
                fprintf(stderr, "mshim: warning: %s\n", msg);
                return 0;
        }
        cli_error("%s", msg);
        return EXIT_CHECK_FAILED;
}

/* The boot that will show the code has TOTP on in loader.conf (docs/CONFIG.md
 * "TOTP"); when the file does not say so: the refusal naming the line to
 * add, or with --configure that line appended to the file's bytes (a line
 * the person wrote, "totp no", is never overridden). 0, or an exit status. */
static int conf_check(const totp_opts *o, totp_conf *c) {
        static const char add[] = TOTP_CONF_LINE "\n";
        mb_loader_conf lc;
        size_t line, nl;
        char msg[1024];

        c->path = seal_path(o->esp, TOTP_CONF_FILE);
        if (!c->path) {
                cli_error("out of memory");
                return EXIT_BAD_INPUT;
        }
        if (access(c->path, F_OK) == 0 || errno != ENOENT) {
                if (cli_file_load_max(c->path, MB_CONF_FILE_MAX, "a loader.conf", &c->old) < 0)
                        return EXIT_BAD_INPUT;
                c->existed = true;
        }
        if (mb_loader_conf_parse(c->existed ? (const char *) c->old.data : "", c->existed ? c->old.size : 0, &lc) !=
            MB_OK) {
                cli_error("%s:%zu: a line mshim cannot read (docs/CONFIG.md): fix it before enrolling", c->path,
                          lc.err_line);
                return EXIT_BAD_INPUT;
        }
        if (lc.totp != MB_TOTP_NO)
                return 0;
        line = c->existed ? conf_totp_line(c->old.data, c->old.size) : 0;
        if (line) {
                snprintf(msg, sizeof(msg), "%s:%zu turns the code off: the loader would show no code for this "
                         "enrolment. Change that line to '" TOTP_CONF_LINE "' (--configure does not override a line "
                         "you wrote), then enroll again", c->path, line);
                return conf_refuse(o, msg);
        }
        if (!o->configure) {
                snprintf(msg, sizeof(msg), "%s has no 'totp' line: the loader would show no code for this enrolment. "
                         "Add the line '" TOTP_CONF_LINE "' to it, or enroll with --configure (which adds it), then "
                         "enroll again", c->path);
                return conf_refuse(o, msg);
        }
        /* Appended after the file's own lines, each left as it was. */
        nl = c->existed && c->old.size && c->old.data[c->old.size - 1] != '\n';
        c->next_size = (c->existed ? c->old.size : 0) + nl + strlen(add);
        if (c->next_size > MB_CONF_FILE_MAX) {
                cli_error("%s: no room for the line '" TOTP_CONF_LINE "' (mshim reads at most %u bytes)", c->path,
                          MB_CONF_FILE_MAX);
                return EXIT_BAD_INPUT;
        }
        c->next = malloc(c->next_size);
        if (!c->next) {
                cli_error("out of memory");
                return EXIT_BAD_INPUT;
        }
        if (c->existed && c->old.size)
                memcpy(c->next, c->old.data, c->old.size);
        if (nl)
                c->next[c->old.size] = '\n';
        memcpy(c->next + c->next_size - strlen(add), add, strlen(add));
        return 0;
}

/* --configure's edit, through safeio (atomic, the file's owner and mode
 * kept); said on standard error with what else it changes. */
static int conf_write(const totp_opts *o, totp_conf *c) {
        if (!c->next)
                return 0;
        if (cli_write_file(c->path, CLI_MODE_PUBLIC, c->next, c->next_size) < 0)
                return -1;
        c->written = true;
        fprintf(stderr, "added the line '" TOTP_CONF_LINE "' to %s. It is measured (PCR 5) and turns on the TOTP "
                "initrd event (PCR 12): approve the next boot for your disk keys too:\n"
                "  mshim predict --esp %s --json > next.json && mshim policy approve --predicted next.json\n",
                c->path, o->esp);
        return 0;
}

/* A failed enrolment puts loader.conf back as it was. */
static void conf_undo(totp_conf *c) {
        if (!c->written)
                return;
        if (c->existed)
                cli_write_file(c->path, CLI_MODE_PUBLIC, c->old.data, c->old.size);
        else
                unlink(c->path);
}

static void conf_free(totp_conf *c) {
        if (c->existed)
                cli_file_free(&c->old);
        free(c->next);
        free(c->path);
}

/* The policy, the key, the ESP file, the recovery file: each step undone
 * when a later one fails, so a failed enrolment leaves nothing behind. */
static int enroll(totp_opts *o) {
        uint8_t secret[MB_TOTP_SECRET_SIZE];
        char *label = o->label ? strdup(o->label) : default_label();
        char *path = seal_path(o->esp, TOTP_ESP_FILE), *text = NULL, *first_path = NULL;
        char *trusted = seal_path(o->state_dir, SEAL_TOTP_TRUSTED);
        uint8_t first[SEAL_STATE_MAX], predicted[SEAL_STATE_MAX];
        totp_conf conf = { 0 };
        seal_file f = { 0 };
        mb_policy policy;
        TPM2B_NAME name;
        cli_tpm t = { 0 };
        ESYS_TR obj = ESYS_TR_NONE;
        size_t len = 0;
        bool connected = false, esp_written = false, trusted_written = false;
        int r = EXIT_BAD_INPUT, k;

        if (!label || !path || !trusted || totp_label_check(label) < 0 || secret_load(o->secret_file, secret) < 0 ||
            refuse_existing(path, "a TOTP enrolment") < 0 || refuse_existing(trusted, "a TOTP enrolment") < 0 ||
            (o->recovery_file && refuse_existing(o->recovery_file, "a file")) || esp_dirs(o->esp) < 0)
                goto out;
        /* loader.conf and the prediction (which opens the TPM itself, for
         * the baseline's PCRs) before this command's TPM connection. */
        k = conf_check(o, &conf);
        if (k == 0 && !o->pcrs_file && !o->this_boot) {
                k = predict_totp_values(o->esp, o->log, conf.next, conf.next_size, o->mask, predicted);
                o->predicted = predicted;
        }
        if (k) {
                r = k;
                goto out;
        }
        if (cli_tpm_connect(&t) < 0)
                goto out;
        connected = true;
        k = key_lookup(&t, &obj);
        if (k == 0) {
                Esys_TR_Close(t.esys, &obj);
                cli_error("the TPM already has an object at 0x%08x: mshim never replaces it (mshim totp remove first)",
                          TOTP_HANDLE);
                goto out;
        }
        if (k != 1 || totp_policy(o, &t, &f, &policy, first) < 0 || key_enroll(&t, o->state_dir, &policy, secret, &name) != 0)
                goto out;
        text = esp_text(&f, &policy, &name, &len);
        if (!text || write_copies(o, path, trusted, text, len, &esp_written, &trusted_written) < 0 ||
            (!f.literal && first_approval(o, &t, first, &first_path) < 0) || conf_write(o, &conf) < 0 ||
            (o->recovery_file && totp_recovery_write(o->recovery_file, o->password_file, label, secret) < 0)) {
                enroll_undo(&t, esp_written ? path : NULL, trusted_written ? trusted : NULL, first_path);
                conf_undo(&conf);
                goto out;
        }
        r = totp_show_uri(label, secret, o->uri);
out:
        OPENSSL_cleanse(secret, sizeof(secret));
        if (connected)
                cli_tpm_disconnect(&t);
        seal_file_free(&f);
        conf_free(&conf);
        free(first_path);
        free(text);
        free(label);
        free(path);
        free(trusted);
        return r;
}

/* The TOTP approvals (ESP/loader/mshim/totp-approvals/NAME.approval): of no
 * use without the key, and a new enrolment writes its own first one (of
 * the same name when the boot and epoch are the same). */
static int remove_approvals(const char *esp) {
        char *dir = seal_path(esp, MB_TOTP_APPROVALS_DIR), *p;
        DIR *d = dir ? opendir(dir) : NULL;
        struct dirent *de;
        size_t n;
        int r = 0;

        while (d && (de = readdir(d))) {
                n = strlen(de->d_name);
                if (de->d_name[0] == '.' || n <= 9 || strcmp(de->d_name + n - 9, ".approval"))
                        continue;
                p = seal_path(dir, de->d_name);
                if (p && unlink(p) == 0) {
                        printf("removed %s\n", p);
                } else {
                        cli_error("%s: %s", p ? p : de->d_name, p ? strerror(errno) : "out of memory");
                        r = -1;
                }
                free(p);
        }
        if (d)
                closedir(d);
        free(dir);
        return r;
}

/* The key goes first: a file left without its key is harmless, a key
 * left without its file would block the next enrolment unexplained. */
static int remove_enrolment(const totp_opts *o) {
        char *file = seal_path(o->esp, TOTP_ESP_FILE), *trusted = seal_path(o->state_dir, SEAL_TOTP_TRUSTED);
        TPM2B_NAME recorded, *name = NULL;
        cli_tpm t;
        ESYS_TR obj = ESYS_TR_NONE;
        int have_file, have_key, r = EXIT_BAD_INPUT;

        if (!file || !trusted || (have_file = enrolled_name(file, trusted, &recorded)) < 0 || cli_tpm_connect(&t) < 0) {
                free(file);
                free(trusted);
                return EXIT_BAD_INPUT;
        }
        have_key = key_lookup(&t, &obj);
        if (have_key > 1)
                goto out;
        if (have_key == 1 && have_file == 1) {
                cli_error("nothing is enrolled: no key at 0x%08x, no %s and no %s", TOTP_HANDLE, file, trusted);
                goto out;
        }
        if (have_key == 0) {
                bool same = have_file == 1 ||
                            (Esys_TR_GetName(t.esys, obj, &name) == TSS2_RC_SUCCESS && name->size == recorded.size &&
                             memcmp(name->name, recorded.name, recorded.size) == 0);
                if (!key_is_totp(&t, obj) || !same) {
                        cli_error("the object at 0x%08x is not %s: not removing it",
                                  TOTP_HANDLE, same ? "a mshim TOTP key" : "the key enrolled in that file");
                        goto out;
                }
                if (key_evict(&t, obj) != 0)
                        goto out;
                obj = ESYS_TR_NONE;
                printf("removed the TOTP key at 0x%08x\n", TOTP_HANDLE);
        } else {
                printf("no key at 0x%08x (already removed, or the TPM was cleared)\n", TOTP_HANDLE);
        }
        if (remove_file(file) < 0 || remove_file(trusted) < 0)
                goto out;
        r = remove_approvals(o->esp) < 0 ? EXIT_BAD_INPUT : 0;
out:
        Esys_Free(name);
        if (obj != ESYS_TR_NONE)
                Esys_TR_Close(t.esys, &obj);
        cli_tpm_disconnect(&t);
        free(file);
        free(trusted);
        return r;
}

int cmd_totp(int argc, char **argv) {
        totp_opts o = { .esp = SEAL_ESP, .state_dir = SEAL_STATE_DIR, .mask = TOTP_SELECT_DEFAULT };
        const char *sub = argc > 1 ? argv[1] : NULL;
        int r;

        if (!sub)
                return cli_usage_error("totp", "totp needs a command: enroll, remove or recover");
        if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
                cli_help(stdout, "totp");
                return 0;
        }
        if (!strcmp(sub, "enroll")) {
                r = totp_parse(argc - 1, argv + 1, "SLspgflEudrPFCB", &o);
                if (r == 0)
                        r = enroll_check(&o);
                return r ? (r < 0 ? 0 : r) : enroll(&o);
        }
        if (!strcmp(sub, "remove")) {
                r = totp_parse(argc - 1, argv + 1, "Ed", &o);
                if (r == 0 && o.n_args)
                        r = cli_usage_error("totp", "totp remove takes no arguments ('%s')", o.args[0]);
                return r ? (r < 0 ? 0 : r) : remove_enrolment(&o);
        }
        if (!strcmp(sub, "recover")) {
                r = totp_parse(argc - 1, argv + 1, "Ptuo", &o);
                if (r == 0 && o.n_args != 1)
                        r = cli_usage_error("totp", "totp recover takes one FILE (the recovery file)");
                return r ? (r < 0 ? 0 : r) : totp_recover(&o);
        }
        return cli_usage_error("totp", "unknown totp command '%s' (enroll, remove, recover)", sub);
}
