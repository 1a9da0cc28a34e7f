/* SPDX-License-Identifier: BSD-2-Clause */
/* LUKS2 headers through the cryptsetup program (tools/lib/luks2.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/evp.h>
#include "cli.h"
#include "luks2.h"
#include "safeio.h"

/* The JSON area is at most 4 MiB (LUKS2 on-disk format, §2: metadata
 * sizes up to 4 MiB); luksDump prints it once. */
#define META_MAX ((size_t) 4 << 20)

static int cryptsetup(char **argv, const cli_feed *feeds, size_t n_feeds, char **out, bool quiet) {
        cli_run_io_opts o = { .feeds = feeds, .n_feeds = n_feeds, .ret_out = out, .out_max = META_MAX, .quiet = quiet };
        return cli_run_io(argv, &o);
}

/* What cryptsetup prints: the JSON area is at most META_MAX bytes, and
 * each value takes two of them at least ("0,"); its integers are below
 * 2^63 (json-c's int64), whatever a token of another program holds. */
static const jr_limits meta_limits = { META_MAX, META_MAX / 2, INT64_MAX };

/* bit i for each "i" of a "keyslots" array; -1 when it is not one. */
static int slot_mask(const jr_node *a, uint32_t *ret) {
        uint32_t m = 0;

        if (!a || a->type != JR_ARRAY)
                return -1;
        for (size_t i = 0; i < a->n_kids; i++) {
                const char *t = jr_str(&a->kids[i]);
                uint32_t s;
                if (!t || !jr_decimal(t, LUKS2_SLOTS - 1, &s))
                        return -1;
                m |= 1u << s;
        }
        *ret = m;
        return 0;
}

static int take_meta(luks2_hdr *h) {
        const jr_node *ks = jr_get(h->meta, "keyslots"), *tk = jr_get(h->meta, "tokens");
        uint32_t id;

        if (!ks || ks->type != JR_OBJECT || !tk || tk->type != JR_OBJECT)
                goto bad;
        for (size_t i = 0; i < ks->n_kids; i++) {
                if (!jr_decimal(ks->kids[i].key, LUKS2_SLOTS - 1, &id))
                        goto bad;
                h->keyslots |= 1u << id;
        }
        for (size_t i = 0; i < tk->n_kids; i++) {
                luks2_token *t;
                if (!jr_decimal(tk->kids[i].key, LUKS2_TOKENS - 1, &id))
                        goto bad;
                t = &h->tokens[id];
                t->json = &tk->kids[i];
                t->type = jr_str(jr_get(t->json, "type"));
                if (!t->type || slot_mask(jr_get(t->json, "keyslots"), &t->keyslots) < 0)
                        goto bad;
        }
        return 0;
bad:
        cli_error("%s: cryptsetup's LUKS2 metadata is not what the LUKS2 format says (keyslots, tokens)", h->device);
        return -1;
}

/* Why `cryptsetup luksDump --dump-json-metadata DEVICE` failed with status
 * r: cryptsetup missing, not a LUKS2 volume (isLuks says so), else the
 * dump's own error, shown this time. The hint about cryptsetup's version
 * is for a dump that exited with an error on a LUKS2 volume, not for one
 * killed by a signal. */
static int dump_failed(const char *device, char **dump, int r) {
        char *is[] = { "cryptsetup", "isLuks", "--type", "luks2", (char *) device, NULL };
        char *out = NULL;
        int s;

        if (r == 127) {
                cli_error("cannot run cryptsetup: is it installed (Debian: cryptsetup-bin)?");
        } else if (r > 0 && (s = cryptsetup(is, NULL, 0, NULL, true)) > 0 && s != 127) {
                cli_error("%s is not a LUKS2 volume (cryptsetup isLuks --type luks2)", device);
        } else {
                cryptsetup(dump, NULL, 0, &out, false);
                cli_error("%s: cryptsetup luksDump --dump-json-metadata failed%s", device,
                          r > 0 ? " (cryptsetup 2.5 or later needed)" : "");
        }
        free(out);
        return EXIT_BAD_INPUT;
}

/* The dump runs first and alone when it works: the keyscript reads the
 * header at every unlock (mshim luks list, then mshim unseal), and each
 * cryptsetup run costs a process start with its libraries in the
 * initramfs. A device that is not LUKS2 (LUKS1 included) fails the dump
 * (cryptsetup 2.6: "Dump operation is not supported for this device
 * type"); isLuks then names the reason. */
int luks2_read(const char *device, luks2_hdr *ret) {
        char *dump[] = { "cryptsetup", "luksDump", "--dump-json-metadata", (char *) device, NULL };
        luks2_hdr h = { .device = device };
        char *out = NULL;
        const char *err = NULL;
        size_t n, err_off = 0;
        int r;

        if (access(device, R_OK) < 0) {
                cli_error("cannot read %s: %s", device, strerror(errno));
                return EXIT_BAD_INPUT;
        }
        r = cryptsetup(dump, NULL, 0, &out, true);
        if (r) {
                free(out);
                return dump_failed(device, dump, r);
        }
        n = strlen(out);
        h.meta = jr_parse(out, n, &meta_limits, &err, &err_off);
        if (!h.meta)
                cli_error("cryptsetup luksDump --dump-json-metadata: not JSON (%s, near byte %zu)", err, err_off);
        r = !h.meta || take_meta(&h) < 0;
        free(out);
        if (r) {
                luks2_free(&h);
                return EXIT_BAD_INPUT;
        }
        *ret = h;
        return 0;
}

void luks2_free(luks2_hdr *h) {
        jr_free(h->meta);
        h->meta = NULL;
}

int luks2_free_slot(const luks2_hdr *h) {
        for (int i = 0; i < LUKS2_SLOTS; i++)
                if (!(h->keyslots & (1u << i)))
                        return i;
        cli_error("%s: no free key slot (LUKS2 has %d)", h->device, LUKS2_SLOTS);
        return -1;
}

int luks2_free_token(const luks2_hdr *h, int after) {
        for (int i = after + 1; i < LUKS2_TOKENS; i++)
                if (!h->tokens[i].type)
                        return i;
        cli_error("%s: no free token (LUKS2 has %d)", h->device, LUKS2_TOKENS);
        return -1;
}

int luks2_find(const luks2_hdr *h, const char *type) {
        int found = -1;

        for (int i = 0; i < LUKS2_TOKENS; i++) {
                if (!h->tokens[i].type || strcmp(h->tokens[i].type, type))
                        continue;
                if (found >= 0) {
                        cli_error("%s: more than one %s token (%d and %d): remove one with 'mshim luks remove'",
                                  h->device, type, found, i);
                        return -2;
                }
                found = i;
        }
        return found;
}

int luks2_token_slot(const luks2_token *t) {
        return t->type && __builtin_popcount(t->keyslots) == 1 ? __builtin_ctz(t->keyslots) : -1;
}

int luks2_add_key(const luks2_hdr *h, int slot, const char *unlock_file, const char *unlock, size_t unlock_n,
                  const void *key, size_t n) {
        char s[16];
        /* The existing passphrase on fd 3 (or the file as cryptsetup reads
         * --key-file), the new key on fd 4: pipes, never files. One try: a
         * pipe cannot be read again. */
        char *argv[] = { "cryptsetup", "luksAddKey", "--batch-mode", "--tries", "1", "--key-slot", s, "--pbkdf", "pbkdf2",
                         "--pbkdf-force-iterations", "1000", "--hash", "sha512", "--key-file",
                         unlock_file ? (char *) unlock_file : "/dev/fd/3", (char *) h->device, "/dev/fd/4", NULL };
        cli_feed feeds[] = { { 4, key, n }, { 3, unlock, unlock_n } };
        int r;

        snprintf(s, sizeof(s), "%d", slot);
        r = cryptsetup(argv, feeds, unlock_file ? 1 : 2, NULL, false);
        /* cryptsetup(8) "RETURN CODES": 2 is "no permission (bad passphrase)". */
        if (r == 2) {
                cli_error("%s: the passphrase opens no key slot; nothing added", h->device);
                return 1;
        }
        if (r) {
                cli_error("%s: cryptsetup luksAddKey failed; nothing added", h->device);
                return EXIT_BAD_INPUT;
        }
        return 0;
}

int luks2_kill_slot(const luks2_hdr *h, int slot) {
        char s[16];
        char *argv[] = { "cryptsetup", "luksKillSlot", "--batch-mode", (char *) h->device, s, NULL };

        snprintf(s, sizeof(s), "%d", slot);
        if (cryptsetup(argv, NULL, 0, NULL, false)) {
                cli_error("%s: cryptsetup luksKillSlot %d failed", h->device, slot);
                return -1;
        }
        return 0;
}

int luks2_token_import(const luks2_hdr *h, int id, const char *json) {
        char s[16];
        char *argv[] = { "cryptsetup", "token", "import", "--json-file", "-", "--token-id", s, (char *) h->device, NULL };
        cli_feed feed = { 0, json, strlen(json) };

        snprintf(s, sizeof(s), "%d", id);
        if (cryptsetup(argv, &feed, 1, NULL, false)) {
                cli_error("%s: cryptsetup token import (token %d) failed", h->device, id);
                return -1;
        }
        return 0;
}

int luks2_token_remove(const luks2_hdr *h, int id) {
        char s[16];
        char *argv[] = { "cryptsetup", "token", "remove", "--token-id", s, (char *) h->device, NULL };

        snprintf(s, sizeof(s), "%d", id);
        if (cryptsetup(argv, NULL, 0, NULL, false)) {
                cli_error("%s: cryptsetup token remove (token %d) failed", h->device, id);
                return -1;
        }
        return 0;
}

/* Base64 (RFC 4648 §4, no line breaks) into a malloc()ed buffer. */
static uint8_t *unbase64(const char *s, size_t *ret_n) {
        size_t len = strlen(s), pad = 0;
        uint8_t *out;
        int n;

        if (!len || len % 4 || len > (size_t) 1 << 24)
                return NULL;
        pad = (s[len - 1] == '=') + (s[len - 2] == '=');
        out = malloc(len / 4 * 3 + 1);
        if (!out)
                return NULL;
        n = EVP_DecodeBlock(out, (const unsigned char *) s, (int) len);
        if (n < 0 || (size_t) n < pad) {
                free(out);
                return NULL;
        }
        *ret_n = (size_t) n - pad;
        return out;
}

int luks2_sealed(const luks2_hdr *h, seal_file *ret, int *ret_id) {
        int id = luks2_find(h, LUKS2_TOKEN_TPM2);
        const luks2_token *t;
        const jr_node *ver;
        uint32_t v;
        uint8_t *text;
        size_t n;
        char name[4096 + 32];
        int r;

        if (id == -2)
                return EXIT_BAD_INPUT;
        if (id < 0) {
                cli_error("%s has no %s token (enrol it with 'mshim luks enroll')", h->device, LUKS2_TOKEN_TPM2);
                return EXIT_CHECK_FAILED;
        }
        t = &h->tokens[id];
        snprintf(name, sizeof(name), "%s, token %d", h->device, id);
        /* A number, or the same digits as a string. */
        ver = jr_get(t->json, "mshim-version");
        if (!ver || (ver->type != JR_NUMBER && ver->type != JR_STRING) || !jr_decimal(ver->str, 1000, &v) ||
            v != LUKS2_TOKEN_VERSION) {
                cli_error("%s: not a version %d %s token (written by another mshim?)", name, LUKS2_TOKEN_VERSION,
                          LUKS2_TOKEN_TPM2);
                return EXIT_BAD_INPUT;
        }
        if (luks2_token_slot(t) < 0) {
                cli_error("%s: the token names no key slot, or several", name);
                return EXIT_BAD_INPUT;
        }
        if (!jr_str(jr_get(t->json, "mshim-sealed")) || !(text = unbase64(jr_str(jr_get(t->json, "mshim-sealed")), &n))) {
                cli_error("%s: its mshim-sealed member is not base64", name);
                return EXIT_BAD_INPUT;
        }
        r = seal_file_parse(name, (const char *) text, n, ret) < 0 ? EXIT_BAD_INPUT : 0;
        free(text);
        if (r == 0)
                *ret_id = id;
        return r;
}
