/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim totp enroll / remove: a TOTP secret (RFC 6238) becomes an HMAC-SHA1
 * key inside the TPM, persistent at TOTP_HANDLE under the storage root key,
 * usable only under a PCR policy, so that the loader can show the current
 * code before the kernel runs and nothing can compute it once the boot
 * differs (docs/SEALING.md "TOTP", issue 12). The loader's data goes onto
 * the ESP (docs/CONFIG.md "<ESP>/loader/mshim/totp"). mshim totp recover is
 * tools/totp_recovery.c.
 */
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
#include "policykey.h"
#include "predjson.h"
#include "sealdata.h"
#include "safeio.h"
#include "tpmseal.h"
#include "totp.h"
#include "mb/policy.h"

/* The key's persistent handle: owner range (TCG provisioning guidance
 * §7.8: 0x81000000-0x817FFFFF), "MT" like the counter's "MS". */
#define TOTP_HANDLE 0x81004D54u
#define TOTP_ESP_DEFAULT "/boot/efi"
#define TOTP_STATE_DIR_DEFAULT "/var/lib/mshim"
#define TOTP_ESP_FILE "loader/mshim/totp"
/* The default PCRs: mshim (4), its configuration (5), Secure Boot (7) and
 * the kernel command line (12); the kernel is in 4. Not 9: the kernel's
 * stub extends it after the loader has shown the code (docs/SEALING.md). */
#define TOTP_SELECT_DEFAULT ((1u << 4) | (1u << 5) | (1u << 7) | (1u << 12))
/* The enrolment file is small; a huge one is not ours. */
#define TOTP_FILE_MAX ((size_t) 1 << 20)

typedef struct totp_opts {
        const char *secret_file, *label, *esp, *state_dir, *pcrs_file, *select, *recovery_file, *password_file;
        bool literal, is_signed, uri_only;
        uint32_t mask;
        char **preds;           /* --literal's PRED.json files */
        size_t n_preds;
} totp_opts;

/* dir/rel, malloc()ed (NULL with a message). */
static char *path_join(const char *dir, const char *rel) {
        size_t n = strlen(dir) + strlen(rel) + 2;
        char *p = malloc(n);

        if (p)
                snprintf(p, n, "%s/%s", dir, rel);
        else
                cli_error("out of memory");
        return p;
}

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

/* The PolicyPCR leaf of one boot state: PCRs of mask, sha256 bank,
 * values in ascending PCR order. */
static int state_leaf(const uint8_t *values, uint32_t mask, mb_policy *ret_leaf) {
        uint8_t digest[MB_POLICY_SIZE];

        mb_policy_reset(ret_leaf);
        if (mb_policy_pcr_digest(values, seal_pcr_count(mask), SEAL_PCR_VALUE, digest) != MB_OK ||
            mb_policy_pcr(ret_leaf, MB_ALG_SHA256, mask, digest) != MB_OK) {
                cli_error("cannot compute the PCR policy");
                return -1;
        }
        return 0;
}

/* The sha256 values of mask's PCRs now: the TPM's (t) or --pcrs FILE's. */
static int current_values(const totp_opts *o, cli_tpm *t, uint8_t *values) {
        mb_pcr_values *v = calloc(1, sizeof(*v));
        cli_file f;
        size_t k = 0;
        int r = -1;

        if (!v) {
                cli_error("out of memory");
                return -1;
        }
        if (o->pcrs_file) {
                if (cli_file_load(o->pcrs_file, &f) == 0) {
                        if (mb_pcrs_parse((const char *) f.data, f.size, v) == MB_OK)
                                r = 0;
                        else
                                cli_error("%s: not PCR values (tpm2_pcrread YAML or \"sha256:N=<hex>\" lines)",
                                          o->pcrs_file);
                        cli_file_free(&f);
                }
        } else {
                r = cli_tpm_pcr_read_bank(t, MB_ALG_SHA256, o->mask, v);
        }
        for (uint32_t i = 0; r == 0 && i < MB_PCR_COUNT; i++) {
                const uint8_t *p;
                if (!(o->mask & (1u << i)))
                        continue;
                p = mb_pcrs_get(v, MB_ALG_SHA256, i);
                if (!p) {
                        cli_error("%s has no sha256 value for PCR %u", o->pcrs_file ? o->pcrs_file : "the TPM", i);
                        r = -1;
                } else {
                        memcpy(values + SEAL_PCR_VALUE * k++, p, SEAL_PCR_VALUE);
                }
        }
        free(v);
        return r;
}

/* The literal policy: PolicyPCR of the current state and of each
 * predicted one, joined by an OR tree (docs/SEALING.md "Policies"); the
 * states' values go into f for the loader. */
static int literal_policy(const totp_opts *o, cli_tpm *t, totp_file *f) {
        size_t n = 1 + o->n_preds;
        mb_policy *leaves = calloc(n, sizeof(*leaves));
        pred_json *p = calloc(1, sizeof(*p));
        int r = leaves && p && (f->states = calloc(n, sizeof(*f->states))) ? 0 : -1;

        if (r < 0)
                cli_error("out of memory");
        for (size_t i = 0; r == 0 && i < n; i++) {
                if (i == 0)
                        r = current_values(o, t, f->states[0]);
                else
                        r = pred_json_load(o->preds[i - 1], p) < 0 ||
                            pred_json_values(o->preds[i - 1], p, o->mask, f->states[i]) < 0 ? -1 : 0;
                if (r == 0)
                        r = state_leaf(f->states[i], o->mask, &leaves[i]);
        }
        if (r == 0 && n == 1)
                f->policy = leaves[0];
        else if (r == 0 && mb_policy_tree_root(leaves, n, &f->policy) != MB_OK) {
                cli_error("cannot compute the PolicyOR tree of %zu states", n);
                r = -1;
        }
        f->n_states = r == 0 ? n : 0;
        free(leaves);
        free(p);
        return r;
}

/* The signed policy: PolicyAuthorize by the policy key of `mshim policy
 * init`, policyRef empty (docs/SEALING.md "Policies"). */
static int signed_policy(const totp_opts *o, totp_file *f) {
        char *pub = path_join(o->state_dir, "policy.pub");
        TPM2B_NAME name;
        int r = -1;

        if (pub && pk_load_public(pub, &f->policy_key) == 0) {
                mb_policy_reset(&f->policy);
                if (ts_public_name(&f->policy_key, &name) == 0 &&
                    mb_policy_authorize(&f->policy, name.name, name.size, NULL, 0) == MB_OK)
                        r = 0;
                else
                        cli_error("%s: cannot compute the PolicyAuthorize digest", pub);
        } else if (pub) {
                cli_error("no policy key: run `mshim policy init` (or give --literal)");
        }
        free(pub);
        return r;
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
static int key_enroll(cli_tpm *t, const mb_policy *policy, const uint8_t secret[MB_TOTP_SECRET_SIZE],
                      TPM2B_NAME *ret_name) {
        TPM2B_SENSITIVE_CREATE in = { 0 };
        TPM2B_PUBLIC tmpl, pub, srk_pub;
        TPM2B_PRIVATE priv;
        TPM2B_NAME *name = NULL;
        ESYS_TR srk = ESYS_TR_NONE, obj = ESYS_TR_NONE, persistent = ESYS_TR_NONE;
        TSS2_RC rc;
        int r;

        r = ts_srk_provision(t, &srk, &srk_pub);
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
                char *d = path_join(esp, dirs[i]);
                int r = d && (mkdir(d, 0755) == 0 || errno == EEXIST) ? 0 : -1;
                if (d && r < 0)
                        cli_error("%s: %s", d, strerror(errno));
                free(d);
                if (r < 0)
                        return -1;
        }
        return 0;
}

/* The Name the ESP file records, to check that the key at the handle is
 * the enrolled one before removing it. 1: no file. */
static int esp_recorded_name(const char *path, TPM2B_NAME *ret) {
        totp_file f;

        if (access(path, F_OK) < 0 && errno == ENOENT)
                return 1;
        if (totp_file_load(path, &f) < 0)
                return -1;
        *ret = f.name;
        totp_file_free(&f);
        return 0;
}

/* ---- the commands ---------------------------------------------------------------- */

static int enroll_opts(int argc, char **argv, totp_opts *o) {
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
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        int c, once;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "h", longopts, "totp")) != -1) {
                once = 0;
                switch (c) {
                case 'S': o->is_signed = true; break;
                case 'L': o->literal = true; break;
                case 's': once = cli_opt_once(&o->select, "--select", optarg); break;
                case 'p': once = cli_opt_once(&o->pcrs_file, "--pcrs", optarg); break;
                case 'f': once = cli_opt_once(&o->secret_file, "--secret-file", optarg); break;
                case 'l': once = cli_opt_once(&o->label, "--label", optarg); break;
                case 'E': once = cli_opt_once(&o->esp, "--esp", optarg); break;
                case 'u': o->uri_only = true; break;
                case 'd': once = cli_opt_once(&o->state_dir, "--state-dir", optarg); break;
                case 'r': once = cli_opt_once(&o->recovery_file, "--recovery-file", optarg); break;
                case 'P': once = cli_opt_once(&o->password_file, "--password-file", optarg); break;
                case 'h': cli_help(stdout, "totp"); return -1;
                default: return EXIT_BAD_INPUT;
                }
                if (once < 0)
                        return EXIT_BAD_INPUT;
        }
        if (o->select && seal_pcrs_parse(o->select, &o->mask) < 0)
                return cli_usage_error("totp", "--select wants PCR numbers 0-23 and ranges, as 4,5,7,12, not '%s'",
                                       o->select);
        if (o->is_signed && o->literal)
                return cli_usage_error("totp", "--signed and --literal exclude each other");
        if (!o->literal && (optind < argc || o->pcrs_file))
                return cli_usage_error("totp", "PRED.json files and --pcrs go with --literal ('%s')",
                                       optind < argc ? argv[optind] : o->pcrs_file);
        if (o->password_file && !o->recovery_file)
                return cli_usage_error("totp", "--password-file goes with --recovery-file");
        o->is_signed = !o->literal;
        o->esp = o->esp ? o->esp : TOTP_ESP_DEFAULT;
        o->preds = argv + optind;
        o->n_preds = (size_t) (argc - optind);
        if (o->n_preds + 1 > MB_POLICY_TREE_MAX_LEAVES)
                return cli_usage_error("totp", "at most %u boot states (the current one and %u PRED.json files)",
                                       MB_POLICY_TREE_MAX_LEAVES, MB_POLICY_TREE_MAX_LEAVES - 1);
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

/* Undo a half-done enrolment: the key, then the files written. */
static void enroll_undo(cli_tpm *t, const char *esp_file, bool esp_written) {
        ESYS_TR obj = ESYS_TR_NONE;

        if (key_lookup(t, &obj) == 0)
                key_evict(t, obj);
        if (esp_written)
                unlink(esp_file);
}

/* The policy, the key, the ESP file, the recovery file: each step undone
 * when a later one fails, so a failed enrolment leaves nothing behind. */
static int enroll(totp_opts *o) {
        uint8_t secret[MB_TOTP_SECRET_SIZE];
        char *label = o->label ? strdup(o->label) : default_label();
        char *path = path_join(o->esp, TOTP_ESP_FILE), *text = NULL;
        totp_file f = { .handle = TOTP_HANDLE, .literal = o->literal, .pcrs = o->mask };
        cli_tpm t = { 0 };
        ESYS_TR obj = ESYS_TR_NONE;
        bool connected = false, esp_written = false;
        int r = EXIT_BAD_INPUT, k;

        if (!label || !path || totp_label_check(label) < 0 || secret_load(o->secret_file, secret) < 0 ||
            refuse_existing(path, "a TOTP enrolment") < 0 ||
            (o->recovery_file && refuse_existing(o->recovery_file, "a file")) || esp_dirs(o->esp) < 0 ||
            (o->is_signed && signed_policy(o, &f) < 0) || cli_tpm_connect(&t) < 0)
                goto out;
        connected = true;
        k = key_lookup(&t, &obj);
        if (k == 0) {
                Esys_TR_Close(t.esys, &obj);
                cli_error("the TPM already has an object at 0x%08x: mshim never replaces it (mshim totp remove first)",
                          TOTP_HANDLE);
                goto out;
        }
        if (k != 1 || (o->literal && literal_policy(o, &t, &f) < 0) || key_enroll(&t, &f.policy, secret, &f.name) != 0)
                goto out;
        text = totp_file_format(&f);
        esp_written = text && seal_write_new(path, CLI_MODE_PUBLIC, text, strlen(text)) == 0;
        if (!esp_written ||
            (o->recovery_file && totp_recovery_write(o->recovery_file, o->password_file, label, secret) < 0)) {
                if (!text)
                        cli_error("out of memory");
                enroll_undo(&t, path, esp_written);
                goto out;
        }
        r = totp_show_uri(label, secret, o->uri_only);
out:
        OPENSSL_cleanse(secret, sizeof(secret));
        if (connected)
                cli_tpm_disconnect(&t);
        totp_file_free(&f);
        free(text);
        free(label);
        free(path);
        return r;
}

static int remove_opts(int argc, char **argv, totp_opts *o) {
        static const struct option longopts[] = {
                { "esp", required_argument, NULL, 'E' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        int c;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "h", longopts, "totp")) != -1) {
                switch (c) {
                case 'E':
                        if (cli_opt_once(&o->esp, "--esp", optarg) < 0)
                                return EXIT_BAD_INPUT;
                        break;
                case 'h': cli_help(stdout, "totp"); return -1;
                default: return EXIT_BAD_INPUT;
                }
        }
        if (optind < argc)
                return cli_usage_error("totp", "totp remove takes no arguments ('%s')", argv[optind]);
        o->esp = o->esp ? o->esp : TOTP_ESP_DEFAULT;
        return 0;
}

/* The key goes first: a file left without its key is harmless, a key
 * left without its file would block the next enrolment unexplained. */
static int remove_enrolment(const totp_opts *o) {
        char *file = path_join(o->esp, TOTP_ESP_FILE);
        TPM2B_NAME recorded, *name = NULL;
        cli_tpm t;
        ESYS_TR obj = ESYS_TR_NONE;
        int have_file, have_key, r = EXIT_BAD_INPUT;

        if (!file || (have_file = esp_recorded_name(file, &recorded)) < 0 || cli_tpm_connect(&t) < 0) {
                free(file);
                return EXIT_BAD_INPUT;
        }
        have_key = key_lookup(&t, &obj);
        if (have_key > 1)
                goto out;
        if (have_key == 1 && have_file == 1) {
                cli_error("nothing is enrolled: no key at 0x%08x and no %s", TOTP_HANDLE, file);
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
        if (have_file == 0) {
                if (unlink(file) < 0) {
                        cli_error("%s: %s", file, strerror(errno));
                        goto out;
                }
                printf("removed %s\n", file);
        }
        r = 0;
out:
        Esys_Free(name);
        if (obj != ESYS_TR_NONE)
                Esys_TR_Close(t.esys, &obj);
        cli_tpm_disconnect(&t);
        free(file);
        return r;
}

int cmd_totp(int argc, char **argv) {
        totp_opts o = { .mask = TOTP_SELECT_DEFAULT };
        const char *sub = argc > 1 ? argv[1] : NULL;
        int r;

        if (!sub)
                return cli_usage_error("totp", "totp needs a command: enroll, remove or recover");
        if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
                cli_help(stdout, "totp");
                return 0;
        }
        if (!strcmp(sub, "recover"))
                return cmd_totp_recover(argc - 1, argv + 1);
        if (!strcmp(sub, "enroll")) {
                r = enroll_opts(argc - 1, argv + 1, &o);
                o.state_dir = o.state_dir ? o.state_dir : TOTP_STATE_DIR_DEFAULT;
                return r ? (r < 0 ? 0 : r) : enroll(&o);
        }
        if (!strcmp(sub, "remove")) {
                r = remove_opts(argc - 1, argv + 1, &o);
                return r ? (r < 0 ? 0 : r) : remove_enrolment(&o);
        }
        return cli_usage_error("totp", "unknown totp command '%s' (enroll, remove, recover)", sub);
}
