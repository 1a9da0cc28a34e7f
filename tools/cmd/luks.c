/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim luks: a LUKS2 volume unlocked by the TPM in one command
 * (docs/SEALING.md "mshim luks"). enroll adds a key slot with a random key,
 * seals the key as `mshim seal` does (the signed policy) and keeps the
 * sealed key in a LUKS2 token of type mshim-tpm2 next to the slot it opens,
 * optionally with a recovery key in a slot of its own (token
 * mshim-recovery, no secret in it), and sets the keyscript in crypttab;
 * list shows them; remove kills their slots and removes their tokens.
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include "luks2.h"
#include "safeio.h"
#include "sealcmd.h"

/* Where `make install` puts the keyscript (Makefile LIBDIR). */
#ifndef MB_LIBDIR
#define MB_LIBDIR "/usr/local/lib/mshim"
#endif
#define LUKS_KEYSCRIPT MB_LIBDIR "/cryptroot-unseal"
#define LUKS_CRYPTTAB "/etc/crypttab"
/* The random key of the TPM's key slot: 256 bits. */
#define LUKS_KEY_SIZE 32
/* The recovery key: 256 random bits as 64 modhex characters in 8 groups
 * of 8 ("cbdefghijklnrtuv": letters that are the same on most keyboard
 * layouts, as YubiKey's modhex and systemd-cryptenroll's recovery keys). */
#define RECOVERY_BYTES 32
#define RECOVERY_LEN (RECOVERY_BYTES * 2 + RECOVERY_BYTES / 4 - 1)
/* Largest crypttab mshim edits. */
#define CRYPTTAB_MAX ((size_t) 1 << 20)

typedef struct enroll_opts {
        const char *device, *unlock_file, *pin_file, *state_dir, *crypttab, *keyscript;
        bool pin, recovery, no_crypttab;
        uint32_t pcrs;
} enroll_opts;

/* ---- crypttab ----------------------------------------------------------------------- */

/* A crypttab line's fields (crypttab(5): name, source, key file, options),
 * as offsets into the line. */
typedef struct ct_line {
        size_t start[4], end[4];
        int n;
} ct_line;

static void ct_fields(const char *l, size_t len, ct_line *ret) {
        size_t i = 0;

        ret->n = 0;
        while (ret->n < 4) {
                while (i < len && (l[i] == ' ' || l[i] == '\t'))
                        i++;
                if (i == len || l[i] == '#')
                        return;
                ret->start[ret->n] = i;
                while (i < len && l[i] != ' ' && l[i] != '\t')
                        i++;
                ret->end[ret->n++] = i;
        }
}

/* Does source (a crypttab field) name the volume: UUID=its LUKS UUID, or
 * a path to the same file or block device. */
static bool ct_names(const char *src, const char *device, const char *uuid) {
        if (!strncasecmp(src, "UUID=", 5))
                return uuid && !strcasecmp(src + 5, uuid);
        return src[0] == '/' && cli_same_file(src, device);
}

/* An option list has the keyscript already (any path to ours), another
 * keyscript (refused: it would be replaced), or none. */
enum { KS_NONE, KS_OURS, KS_OTHER };
static int ct_keyscript(const char *opts, size_t n, const char **ret_other, size_t *ret_len) {
        for (size_t i = 0; i < n;) {
                size_t e = i;
                while (e < n && opts[e] != ',')
                        e++;
                if (e - i > 10 && !strncmp(opts + i, "keyscript=", 10)) {
                        static const char ours[] = "/cryptroot-unseal";
                        size_t l = e - i - 10;
                        if (l >= sizeof(ours) - 1 && !strncmp(opts + e - (sizeof(ours) - 1), ours, sizeof(ours) - 1))
                                return KS_OURS;
                        *ret_other = opts + i + 10;
                        *ret_len = l;
                        return KS_OTHER;
                }
                i = e + 1;
        }
        return KS_NONE;
}

/* The crypttab with the volume's line given keyscript=PATH: *ret_new NULL
 * when the line has it already. 0, or an exit status with a message;
 * nothing is written here. */
static int ct_edit(const enroll_opts *o, const char *uuid, const cli_file *f, char **ret_new) {
        const char *t = (const char *) f->data, *line = NULL;
        size_t n = f->size, found = 0;
        ct_line fl = { 0 };
        char *out;

        for (size_t i = 0; i < n;) {
                const char *l = t + i, *nl = memchr(l, '\n', n - i);
                size_t ll = nl ? (size_t) (nl - l) : n - i;
                ct_line c;
                char src[4096];

                ct_fields(l, ll, &c);
                if (c.n >= 2 && c.end[1] - c.start[1] < sizeof(src)) {
                        memcpy(src, l + c.start[1], c.end[1] - c.start[1]);
                        src[c.end[1] - c.start[1]] = 0;
                        if (ct_names(src, o->device, uuid)) {
                                found++;
                                line = l;
                                fl = c;
                        }
                }
                i += ll + 1;
        }
        if (found != 1) {
                cli_error("%s: %s line names %s (by UUID=%s or its path); give --no-crypttab and add the keyscript "
                          "option yourself", o->crypttab, found ? "more than one" : "no", o->device, uuid ? uuid : "?");
                return EXIT_BAD_INPUT;
        }
        if (fl.n == 4) {
                const char *other = NULL;
                size_t ol = 0;
                int k = ct_keyscript(line + fl.start[3], fl.end[3] - fl.start[3], &other, &ol);
                if (k == KS_OURS) {
                        *ret_new = NULL;
                        return 0;
                }
                if (k == KS_OTHER) {
                        cli_error("%s: the line of %s has keyscript=%.*s; not replacing it", o->crypttab, o->device,
                                  (int) ol, other);
                        return EXIT_BAD_INPUT;
                }
        }
        /* Before the line's end (or its options' end): ",keyscript=PATH",
         * or " none luks,keyscript=PATH" for a line with no key file. */
        {
                size_t at = (size_t) (line - t) + (fl.n == 4 ? fl.end[3] : fl.end[fl.n - 1]);
                const char *add = fl.n == 4 ? "," : fl.n == 3 ? " luks," : " none luks,";
                size_t al = strlen(add) + strlen("keyscript=") + strlen(o->keyscript);

                out = malloc(n + al + 1);
                if (!out) {
                        cli_error("out of memory");
                        return EXIT_BAD_INPUT;
                }
                memcpy(out, t, at);
                snprintf(out + at, al + 1, "%skeyscript=%s", add, o->keyscript);
                memcpy(out + at + al, t + at, n - at);
                out[n + al] = 0;
        }
        *ret_new = out;
        return 0;
}

/* ---- enroll --------------------------------------------------------------------------- */

static char *uuid_of(const luks2_hdr *h) {
        char *argv[] = { "cryptsetup", "luksUUID", (char *) h->device, NULL };
        cli_run_io_opts io = { .out_max = 256 };
        char *out = NULL;

        io.ret_out = &out;
        if (cli_run_io(argv, &io)) {
                free(out);
                cli_error("%s: cryptsetup luksUUID failed", h->device);
                return NULL;
        }
        out[strcspn(out, "\n")] = 0;
        return out;
}

/* The existing passphrase, asked on the terminal (cryptsetup's wording). */
static char *ask_unlock(const char *device) {
        int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
        char prompt[4200], *s;

        if (fd < 0) {
                cli_error("there is no terminal to ask a passphrase of %s on; give --unlock-key-file FILE", device);
                return NULL;
        }
        snprintf(prompt, sizeof(prompt), "Enter an existing passphrase of %s: ", device);
        s = cli_tty_secret(fd, prompt);
        close(fd);
        return s;
}

/* The key sealed as `mshim seal` seals (signed policy, state_dir's policy
 * key, the unseal fence, PolicyAuthValue with a PIN): the sealed file's text. */
static int seal_key(const enroll_opts *o, const char *pin, const uint8_t *key, char **ret_text) {
        ESYS_TR srk = ESYS_TR_NONE;
        seal_file f = { .pin = pin != NULL, .pcrs = o->pcrs, .fence = SEAL_FENCE_PCRS };
        mb_policy policy;
        cli_tpm t;
        int r = EXIT_BAD_INPUT;

        if (cli_tpm_connect(&t) < 0)
                return EXIT_BAD_INPUT;
        if (seal_srk(&t, o->state_dir ? o->state_dir : SEAL_STATE_DIR, &srk, &f.srk) == 0 &&
            seal_signed_setup(&t, o->state_dir, &f) == 0 && seal_signed_policy(&f.policy_key, f.pin, &policy) == 0)
                r = ts_seal(&t, srk, &policy, pin, key, LUKS_KEY_SIZE, &f.pub, &f.priv);
        if (srk != ESYS_TR_NONE)
                Esys_TR_Close(t.esys, &srk);
        cli_tpm_disconnect(&t);
        if (r == 0 && !(*ret_text = seal_file_format(&f)))
                r = EXIT_BAD_INPUT;
        return r;
}

static char *tpm2_token_json(const enroll_opts *o, int slot, const char *sealed) {
        size_t n = strlen(sealed), cap = 4 * (n / 3 + 1) + 512;
        char pcrs[CLI_PCR_LIST_MAX], *j = malloc(cap), *b64 = malloc(4 * (n / 3 + 1) + 1);

        if (!j || !b64) {
                free(j);
                free(b64);
                cli_error("out of memory");
                return NULL;
        }
        EVP_EncodeBlock((unsigned char *) b64, (const unsigned char *) sealed, (int) n);
        cli_pcr_select_print(o->pcrs, pcrs);
        /* PCRs as a JSON array; the sealed file (docs/SEALING.md "Files")
         * is what unseal reads, the other members say what it holds. */
        snprintf(j, cap, "{\"type\":\"%s\",\"keyslots\":[\"%d\"],\"mshim-version\":%d,\"mshim-policy\":\"signed\","
                 "\"mshim-pcrs\":[%s],\"mshim-pin\":%s,\"mshim-sealed\":\"%s\"}",
                 LUKS2_TOKEN_TPM2, slot, LUKS2_TOKEN_VERSION, pcrs, o->pin || o->pin_file ? "true" : "false", b64);
        free(b64);
        return j;
}

static void recovery_key(char out[RECOVERY_LEN + 1], const uint8_t *raw) {
        static const char modhex[] = "cbdefghijklnrtuv";
        size_t k = 0;

        for (size_t i = 0; i < RECOVERY_BYTES; i++) {
                if (i && i % 4 == 0)
                        out[k++] = '-';
                out[k++] = modhex[raw[i] >> 4];
                out[k++] = modhex[raw[i] & 15];
        }
        out[k] = 0;
}

typedef struct enroll_run {
        const enroll_opts *o;
        luks2_hdr h;
        char *uuid, *unlock, *pin, *sealed, *json, *ct_new;
        cli_file ct;
        bool ct_loaded;
        uint8_t key[LUKS_KEY_SIZE];
        char rk[RECOVERY_LEN + 1];
        int slot, token, rslot, rtoken;
} enroll_run;

/* Take back a key slot and token this run added (when a later step fails). */
static void undo(enroll_run *r, int slot, int token) {
        if (token >= 0)
                luks2_token_remove(&r->h, token);
        if (slot >= 0 && luks2_kill_slot(&r->h, slot) == 0)
                cli_error("%s: key slot %d taken back", r->o->device, slot);
}

static int add_recovery(enroll_run *r) {
        uint8_t raw[RECOVERY_BYTES];
        char json[256];
        int e;

        if (RAND_priv_bytes(raw, sizeof(raw)) != 1) {
                cli_error("cannot make a random recovery key (OpenSSL RAND_priv_bytes)");
                return EXIT_BAD_INPUT;
        }
        recovery_key(r->rk, raw);
        OPENSSL_cleanse(raw, sizeof(raw));
        r->h.keyslots |= 1u << r->slot;
        r->h.tokens[r->token].type = LUKS2_TOKEN_TPM2;
        if ((r->rslot = luks2_free_slot(&r->h)) < 0 || (r->rtoken = luks2_free_token(&r->h, -1)) < 0)
                return EXIT_BAD_INPUT;
        e = luks2_add_key(&r->h, r->rslot, r->o->unlock_file, r->unlock, r->unlock ? strlen(r->unlock) : 0, r->rk,
                          strlen(r->rk));
        if (e)
                return e;
        snprintf(json, sizeof(json), "{\"type\":\"%s\",\"keyslots\":[\"%d\"],\"mshim-version\":%d}",
                 LUKS2_TOKEN_RECOVERY, r->rslot, LUKS2_TOKEN_VERSION);
        if (luks2_token_import(&r->h, r->rtoken, json) < 0) {
                undo(r, r->rslot, -1);
                return EXIT_BAD_INPUT;
        }
        return 0;
}

static int ct_write(enroll_run *r) {
        const enroll_opts *o = r->o;
        char *bak;
        int e = 0;

        if (o->no_crypttab) {
                printf("crypttab: add keyscript=%s to the options of %s's line, e.g.:\n"
                       "  luks-%s UUID=%s none luks,keyscript=%s\n", o->keyscript, o->device, r->uuid, r->uuid,
                       o->keyscript);
                return 0;
        }
        if (!r->ct_new) {
                printf("%s: the line of %s has the keyscript already\n", o->crypttab, o->device);
                return 0;
        }
        bak = malloc(strlen(o->crypttab) + sizeof(".mshim-bak"));
        if (!bak) {
                cli_error("out of memory");
                return EXIT_BAD_INPUT;
        }
        sprintf(bak, "%s.mshim-bak", o->crypttab);
        /* The backup is the file as it was before this edit. */
        if (cli_write_file(bak, CLI_MODE_SECRET, r->ct.data, r->ct.size) < 0 ||
            cli_write_file(o->crypttab, CLI_MODE_PUBLIC, r->ct_new, strlen(r->ct_new)) < 0) {
                cli_error("%s is enrolled, but %s is not edited: add keyscript=%s to its line's options", o->device,
                          o->crypttab, o->keyscript);
                e = EXIT_BAD_INPUT;
        } else
                printf("%s: keyscript=%s added to the line of %s (the old file: %s); run update-initramfs -u\n",
                       o->crypttab, o->keyscript, o->device, bak);
        free(bak);
        return e;
}

/* Everything that can be refused is, before the volume changes. */
static int enroll_check(enroll_run *r) {
        const enroll_opts *o = r->o;
        int e, id;

        if ((e = luks2_read(o->device, &r->h)))
                return e;
        if ((id = luks2_find(&r->h, LUKS2_TOKEN_TPM2)) != -1 ||
            (o->recovery && (id = luks2_find(&r->h, LUKS2_TOKEN_RECOVERY)) != -1)) {
                if (id >= 0)
                        cli_error("%s is enrolled already (token %d, %s, key slot %d); 'mshim luks remove' it first",
                                  o->device, id, r->h.tokens[id].type, luks2_token_slot(&r->h.tokens[id]));
                return EXIT_BAD_INPUT;
        }
        if ((r->slot = luks2_free_slot(&r->h)) < 0 || (r->token = luks2_free_token(&r->h, -1)) < 0 ||
            !(r->uuid = uuid_of(&r->h)))
                return EXIT_BAD_INPUT;
        if (o->no_crypttab)
                return 0;
        if (cli_file_load_max(o->crypttab, CRYPTTAB_MAX, "a crypttab", &r->ct) < 0)
                return EXIT_BAD_INPUT;
        r->ct_loaded = true;
        return ct_edit(o, r->uuid, &r->ct, &r->ct_new);
}

static int enroll(enroll_run *r) {
        const enroll_opts *o = r->o;
        char pcrs[CLI_PCR_LIST_MAX];
        int e;

        if ((e = enroll_check(r)))
                return e;
        if (!o->unlock_file && !(r->unlock = ask_unlock(o->device)))
                return EXIT_BAD_INPUT;
        if ((o->pin || o->pin_file) && !(r->pin = seal_pin_read(o->pin_file, true)))
                return EXIT_BAD_INPUT;
        if (RAND_priv_bytes(r->key, sizeof(r->key)) != 1) {
                cli_error("cannot make a random key (OpenSSL RAND_priv_bytes)");
                return EXIT_BAD_INPUT;
        }
        /* Sealed first: a TPM that refuses leaves the volume as it was. */
        if ((e = seal_key(o, r->pin, r->key, &r->sealed)))
                return e;
        if (!(r->json = tpm2_token_json(o, r->slot, r->sealed)))
                return EXIT_BAD_INPUT;
        if ((e = luks2_add_key(&r->h, r->slot, o->unlock_file, r->unlock, r->unlock ? strlen(r->unlock) : 0, r->key,
                               sizeof(r->key))))
                return e;
        if (luks2_token_import(&r->h, r->token, r->json) < 0) {
                undo(r, r->slot, -1);
                return EXIT_BAD_INPUT;
        }
        if (o->recovery && (e = add_recovery(r))) {
                undo(r, r->slot, r->token);
                return e;
        }
        cli_pcr_select_print(o->pcrs, pcrs);
        printf("%s: key slot %d opens with the TPM (token %d, %s; signed policy, PCRs %s%s)\n", o->device, r->slot,
               r->token, LUKS2_TOKEN_TPM2, pcrs, r->pin ? ", PIN" : "");
        if (o->recovery)
                printf("%s: key slot %d opens with this recovery key (token %d, %s); it is shown only now, write "
                       "it down:\n%s\n", o->device, r->rslot, r->rtoken, LUKS2_TOKEN_RECOVERY, r->rk);
        fflush(stdout);
        return ct_write(r);
}

static int cmd_enroll(int argc, char **argv) {
        static const struct option longopts[] = {
                { "unlock-key-file", required_argument, NULL, 'u' },
                { "pin", no_argument, NULL, 'P' },
                { "pin-file", required_argument, NULL, 'F' },
                { "tpm2-with-pin", no_argument, NULL, 'P' },
                { "recovery-key", no_argument, NULL, 'R' },
                { "tpm2-pcrs", required_argument, NULL, 's' },
                { "state-dir", required_argument, NULL, 'S' },
                { "crypttab", required_argument, NULL, 'c' },
                { "no-crypttab", no_argument, NULL, 'n' },
                { "keyscript", required_argument, NULL, 'k' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        enroll_opts o = { .crypttab = NULL, .keyscript = NULL };
        enroll_run r = { .o = &o, .slot = -1, .token = -1, .rslot = -1, .rtoken = -1 };
        int c, e;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "h", longopts, "luks")) != -1) {
                int once = 0;

                switch (c) {
                case 'u': once = cli_opt_once(&o.unlock_file, "--unlock-key-file", optarg); break;
                case 'F': once = cli_opt_once(&o.pin_file, "--pin-file", optarg); break;
                case 'S': once = cli_opt_once(&o.state_dir, "--state-dir", optarg); break;
                case 'c': once = cli_opt_once(&o.crypttab, "--crypttab", optarg); break;
                case 'k': once = cli_opt_once(&o.keyscript, "--keyscript", optarg); break;
                case 'P': o.pin = true; break;
                case 'R': o.recovery = true; break;
                case 'n': o.no_crypttab = true; break;
                case 's':
                        if (cli_pcr_select_parse(optarg, &o.pcrs) < 0 || !o.pcrs)
                                return cli_usage_error("luks", "--tpm2-pcrs %s: want PCR numbers 0-23 and ranges, "
                                                       "e.g. 4,5,7,9,12", optarg);
                        if (o.pcrs & SEAL_FENCE_PCRS)
                                return cli_usage_error("luks", "--tpm2-pcrs %s: PCR %u is the unseal fence: every "
                                                       "sealed key requires it at zero already (docs/SEALING.md)",
                                                       optarg, MB_UNSEAL_FENCE_PCR);
                        break;
                case 'h': cli_help(stdout, "luks"); return 0;
                default: return EXIT_BAD_INPUT;
                }
                if (once < 0)
                        return EXIT_BAD_INPUT;
        }
        if (argc - optind != 1)
                return cli_usage_error("luks", "luks enroll takes one DEVICE");
        if (o.pin && o.pin_file)
                return cli_usage_error("luks", "--pin and --pin-file cannot be used together");
        if (o.no_crypttab && (o.crypttab || o.keyscript))
                return cli_usage_error("luks", "--no-crypttab and --crypttab/--keyscript cannot be used together");
        if (o.keyscript && o.keyscript[0] != '/')
                return cli_usage_error("luks", "--keyscript %s: want an absolute path", o.keyscript);
        o.device = argv[optind];
        o.crypttab = o.crypttab ? o.crypttab : LUKS_CRYPTTAB;
        o.keyscript = o.keyscript ? o.keyscript : LUKS_KEYSCRIPT;
        o.pcrs = o.pcrs ? o.pcrs : SEAL_DEFAULT_PCRS;
        e = enroll(&r);
        OPENSSL_cleanse(r.key, sizeof(r.key));
        OPENSSL_cleanse(r.rk, sizeof(r.rk));
        cli_secret_free(r.unlock);
        cli_secret_free(r.pin);
        free(r.sealed);
        free(r.json);
        free(r.uuid);
        free(r.ct_new);
        if (r.ct_loaded)
                cli_file_free(&r.ct);
        luks2_free(&r.h);
        return e;
}

/* ---- list ----------------------------------------------------------------------------- */

static int cmd_list(int argc, char **argv) {
        static const struct option longopts[] = { { "help", no_argument, NULL, 'h' }, { 0 } };
        luks2_hdr h;
        int c, e;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "h", longopts, "luks")) != -1) {
                if (c == 'h') {
                        cli_help(stdout, "luks");
                        return 0;
                }
                return EXIT_BAD_INPUT;
        }
        if (argc - optind != 1)
                return cli_usage_error("luks", "luks list takes one DEVICE");
        if ((e = luks2_read(argv[optind], &h)))
                return e;
        for (int s = 0; s < LUKS2_SLOTS; s++) {
                const char *what = "passphrase or key file";
                int tok = -1;

                if (!(h.keyslots & (1u << s)))
                        continue;
                for (int i = 0; i < LUKS2_TOKENS; i++)
                        if (h.tokens[i].type && (h.tokens[i].keyslots & (1u << s))) {
                                tok = i;
                                what = h.tokens[i].type;
                        }
                printf("keyslot %d: %s", s, what);
                if (tok >= 0)
                        printf(" (token %d)", tok);
                if (tok >= 0 && !strcmp(what, LUKS2_TOKEN_TPM2)) {
                        seal_file f;
                        TPM2B_NAME name;
                        char pcrs[CLI_PCR_LIST_MAX];
                        int id;
                        /* What the sealed key says, not the token's
                         * other members: it is what the TPM enforces. */
                        if (luks2_sealed(&h, &f, &id) == 0 && ts_public_name(&f.policy_key, &name) == 0) {
                                cli_pcr_select_print(f.pcrs, pcrs);
                                printf(": signed policy, policy key ");
                                for (size_t k = 0; k < name.size; k++)
                                        printf("%02x", name.name[k]);
                                printf(", PCRs %s, fence %s, pin %s", pcrs, f.fence ? "15" : "none", f.pin ? "yes" : "no");
                                seal_file_free(&f);
                        } else
                                printf(": unreadable");
                } else if (tok >= 0 && strcmp(what, LUKS2_TOKEN_RECOVERY))
                        printf(": not mshim's");
                putchar('\n');
        }
        for (int i = 0; i < LUKS2_TOKENS; i++)
                if (h.tokens[i].type && !h.tokens[i].keyslots)
                        printf("token %d: %s, no key slot\n", i, h.tokens[i].type);
        luks2_free(&h);
        return out_finish() < 0 || fflush(stdout) ? EXIT_BAD_INPUT : 0;
}

/* ---- remove --------------------------------------------------------------------------- */

static bool is_mshim(const luks2_token *t) {
        return t->type && (!strcmp(t->type, LUKS2_TOKEN_TPM2) || !strcmp(t->type, LUKS2_TOKEN_RECOVERY));
}

/* The key slots that open without a TPM or another device: those no token
 * names, and recovery keys. */
static uint32_t typed_slots(const luks2_hdr *h) {
        uint32_t m = h->keyslots;

        for (int i = 0; i < LUKS2_TOKENS; i++)
                if (h->tokens[i].type && strcmp(h->tokens[i].type, LUKS2_TOKEN_RECOVERY))
                        m &= ~h->tokens[i].keyslots;
        return m;
}

static int cmd_remove(int argc, char **argv) {
        static const struct option longopts[] = {
                { "slot", required_argument, NULL, 's' },
                { "wipe-slot", required_argument, NULL, 'w' },
                { "all", no_argument, NULL, 'a' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        const char *what = NULL;
        uint32_t kill = 0, sel = 0;
        luks2_hdr h;
        int c, e;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "h", longopts, "luks")) != -1) {
                switch (c) {
                case 's':
                case 'w':
                        if (cli_opt_once(&what, c == 's' ? "--slot" : "--wipe-slot", optarg) < 0)
                                return EXIT_BAD_INPUT;
                        break;
                case 'a':
                        if (cli_opt_once(&what, "--all", "all") < 0)
                                return EXIT_BAD_INPUT;
                        break;
                case 'h': cli_help(stdout, "luks"); return 0;
                default: return EXIT_BAD_INPUT;
                }
        }
        if (argc - optind != 1)
                return cli_usage_error("luks", "luks remove takes one DEVICE");
        what = what ? what : "tpm2";
        if (strcmp(what, "tpm2") && strcmp(what, "recovery") && strcmp(what, "all") &&
            (strspn(what, "0123456789") != strlen(what) || strlen(what) > 2 || atoi(what) >= LUKS2_SLOTS))
                return cli_usage_error("luks", "--wipe-slot %s: want tpm2, recovery, all or a key slot number", what);
        if ((e = luks2_read(argv[optind], &h)))
                return e;
        for (int i = 0; i < LUKS2_TOKENS; i++) {
                const luks2_token *t = &h.tokens[i];
                if (!is_mshim(t))
                        continue;
                if (!strcmp(what, "all") || (!strcmp(what, "tpm2") && !strcmp(t->type, LUKS2_TOKEN_TPM2)) ||
                    (!strcmp(what, "recovery") && !strcmp(t->type, LUKS2_TOKEN_RECOVERY)) ||
                    (what[0] >= '0' && what[0] <= '9' && (t->keyslots & (1u << atoi(what))))) {
                        sel |= 1u << i;
                        kill |= t->keyslots;
                }
        }
        e = EXIT_BAD_INPUT;
        if (!sel)
                cli_error("%s: no key slot of mshim's (%s) to remove%s", h.device, what,
                          what[0] >= '0' && what[0] <= '9' ? " (a slot mshim did not make: cryptsetup luksKillSlot)" : "");
        else if (!(typed_slots(&h) & ~kill))
                cli_error("%s: refusing: no passphrase or recovery key slot would be left to open it without the TPM",
                          h.device);
        else
                e = 0;
        /* Each slot first, then its token: a failure leaves at worst a token
         * for a slot that is gone, which list shows and --all removes. */
        for (int i = 0; e == 0 && i < LUKS2_TOKENS; i++) {
                const luks2_token *t = &h.tokens[i];
                int s = luks2_token_slot(t);
                if (!(sel & (1u << i)))
                        continue;
                if ((s >= 0 && (h.keyslots & (1u << s)) && luks2_kill_slot(&h, s) < 0) || luks2_token_remove(&h, i) < 0)
                        e = EXIT_BAD_INPUT;
                else if (s >= 0)
                        printf("%s: key slot %d and token %d (%s) removed\n", h.device, s, i, t->type);
                else
                        printf("%s: token %d (%s) removed\n", h.device, i, t->type);
        }
        luks2_free(&h);
        return e;
}

int cmd_luks(int argc, char **argv) {
        const char *sub = argc > 1 ? argv[1] : NULL;

        if (!sub)
                return cli_usage_error("luks", "luks needs a command (enroll, list, remove)");
        if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
                cli_help(stdout, "luks");
                return 0;
        }
        if (!strcmp(sub, "enroll"))
                return cmd_enroll(argc - 1, argv + 1);
        if (!strcmp(sub, "list"))
                return cmd_list(argc - 1, argv + 1);
        if (!strcmp(sub, "remove"))
                return cmd_remove(argc - 1, argv + 1);
        return cli_usage_error("luks", "unknown luks command '%s'", sub);
}
