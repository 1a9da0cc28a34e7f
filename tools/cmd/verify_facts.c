/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What booted, as mshim verify shows it: the facts the core collects from
 * the log tied to the quote (src/facts.c, mb_facts_collect: only data
 * every digest of its event covers is decoded), formatted, with the
 * certificates' subjects (OpenSSL) and the --image files that name PCR 4's
 * images (docs/ATTESTATION.md "What booted: the facts").
 */
#include <stdlib.h>
#include <string.h>
#include <openssl/x509.h>
#include "attest.h"
#include "mb/facts.h"
#include "mb/pe.h"
#include "mb/policy.h"
#include "verify.h"

#define HEXLEN (2 * MB_HASH_MAX + 1)

struct vf_facts {
        mb_facts f;
        const char *image[MB_FACTS_EVENTS_MAX];     /* PCR 4, not bound: the --image it is, or NULL */
        const char *unseal_fence;                   /* "reached", "not-reached", "not-quoted", "other" */
};

static const char *const key_names[MB_FACTS_KEYS] = { "PK", "KEK", "db", "dbx" };

static void hex(char *out, const uint8_t *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                snprintf(out + 2 * i, 3, "%02x", p[i]);
        out[2 * n] = 0;
}

static void sha256_hex(char *out, const mb_facts_bytes *b) {
        uint8_t d[32];

        if (mb_hash_buf(MB_ALG_SHA256, b->p, b->size, d) == MB_OK)
                hex(out, d, 32);
        else
                out[0] = 0;
}

/* Printable ASCII of UTF-16LE (n bytes), other characters as '?', up to a
 * NUL. */
static void utf16_ascii(char *out, size_t out_n, const uint8_t *p, size_t n) {
        size_t k = 0;

        for (size_t i = 0; i + 1 < n && k + 1 < out_n; i += 2) {
                unsigned c = p[i] | (unsigned) p[i + 1] << 8;
                if (!c)
                        break;
                out[k++] = c >= 0x20 && c < 0x7f ? (char) c : '?';
        }
        out[k] = 0;
}

/* Printable ASCII of n bytes, others as '?', a final NUL dropped. */
static void ascii(char *out, size_t out_n, const uint8_t *p, size_t n) {
        size_t k = 0;

        for (size_t i = 0; i < n && k + 1 < out_n; i++) {
                if (!p[i] && i + 1 == n)
                        break;
                out[k++] = p[i] >= 0x20 && p[i] < 0x7f ? (char) p[i] : '?';
        }
        out[k] = 0;
}

static void guid(char *out, const uint8_t *g) {
        snprintf(out, 40, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", g[3], g[2], g[1], g[0],
                 g[5], g[4], g[7], g[6], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
}

/* A bound tagged event's text: mshim's own tags decoded. */
static void tag_text(char *out, size_t n, const mb_facts_event *e) {
        char path[512];

        utf16_ascii(path, sizeof(path), e->tag_data.p, e->tag_data.size);
        switch (e->tag) {
        case MB_TAG_FILE_ABSENT: snprintf(out, n, "mshim: no file %s", path); break;
        case MB_TAG_FILE_UNREADABLE: snprintf(out, n, "mshim: unreadable file %s", path); break;
        case MB_TAG_EXIT: snprintf(out, n, "mshim: returned to the firmware"); break;
        case MB_TAG_CHAINLOAD: snprintf(out, n, "mshim: chainload with options \"%s\"", path); break;
        case MB_TAG_TOTP_FENCE: snprintf(out, n, "mshim: the TOTP fence"); break;
        case MB_TAG_TOTP_INITRD:
                if (e->tag_data.size == 40) {
                        char h[65];
                        hex(h, e->tag_data.p + 8, 32);
                        snprintf(out, n, "mshim: the initrd, %llu bytes, sha256 %s",
                                 (unsigned long long) mb_le64(e->tag_data.p), h);
                        break;
                }
                /* fall through */
        default: snprintf(out, n, "tag 0x%08x, %zu bytes of data", e->tag, e->tag_data.size);
        }
}

/* A bound event's data as text. */
static void what(char *out, size_t n, const mb_facts_event *e) {
        const char *tn = mb_tcglog_type_name(e->type);
        char s[600];

        if (e->variable) {
                utf16_ascii(s, 64, e->var.name, e->var.name_units * 2);
                snprintf(out, n, "variable %s, %zu bytes", s, e->var.data_size);
        } else if (e->tagged)
                tag_text(out, n, e);
        else if (e->type == MB_EV_SEPARATOR)
                snprintf(out, n, "separator");
        else if (e->type == MB_EV_EFI_ACTION || e->type == MB_EV_ACTION)
                ascii(out, n, e->data.p, e->data.size);
        else if (e->type == MB_EV_IPL && e->data.size >= 2 && e->data.size % 2 == 0 && !e->data.p[e->data.size - 1] &&
                 !e->data.p[e->data.size - 2]) {
                /* mshim's and systemd's command line: UTF-16LE with its NUL */
                utf16_ascii(s, sizeof(s), e->data.p, e->data.size);
                snprintf(out, n, "command line \"%s\"", s);
        } else if (e->type == MB_EV_IPL)
                ascii(out, n, e->data.p, e->data.size);
        else
                snprintf(out, n, "%s, %zu bytes of data", tn ? tn : "an event", e->data.size);
}

/* The --image whose Authenticode hash, in the event's bank, is its digest. */
static const char *image_name(const mb_facts_event *e, const verify_image *img, size_t n_img) {
        uint8_t d[MB_HASH_MAX];

        for (size_t i = 0; i < n_img; i++)
                if (mb_hash_size(e->alg) == e->digest.size &&
                    mb_pe_authenticode(img[i].data, img[i].size, e->alg, d) == MB_OK &&
                    !memcmp(d, e->digest.p, e->digest.size))
                        return img[i].name;
        return NULL;
}

/* PCR 15 as quoted: zero (the fence not up), or the fence's event alone
 * (docs/MEASUREMENTS.md "PCR 15"). 1, 0, or -1 (something else). */
int verify_unseal_fence(uint16_t alg, const uint8_t *value) {
        uint8_t v[MB_HASH_MAX] = { 0 }, d[MB_HASH_MAX];
        size_t n = mb_hash_size(alg);

        if (!memcmp(v, value, n))
                return 0;
        if (mb_hash_buf(alg, MB_UNSEAL_FENCE_EVENT, strlen(MB_UNSEAL_FENCE_EVENT), d) != MB_OK ||
            mb_pcr_extend(alg, v, d) != MB_OK)
                return -1;
        return memcmp(v, value, n) ? -1 : 1;
}

vf_facts *verify_facts(const uint8_t *log, size_t n, uint32_t quoted, int unseal_fence, const verify_image *img,
                       size_t n_img) {
        vf_facts *f = calloc(1, sizeof(*f));

        if (!f || mb_facts_collect(log, n, quoted, &f->f) != MB_OK) {
                free(f);
                return NULL;
        }
        f->unseal_fence = !(quoted & (1u << MB_UNSEAL_FENCE_PCR)) ? "not-quoted" : unseal_fence == 1 ? "reached"
                        : unseal_fence == 0 ? "not-reached" : "other";
        for (size_t i = 0; i < f->f.n_ev; i++)
                if (f->f.ev[i].pcr == 4 && !f->f.ev[i].bound)
                        f->image[i] = image_name(&f->f.ev[i], img, n_img);
        return f;
}

void verify_facts_free(vf_facts *f) {
        free(f);
}

/* ---- output ------------------------------------------------------------ */

void verify_json_str(const char *s) {
        putchar('"');
        for (; *s; s++) {
                unsigned char c = (unsigned char) *s;
                if (c == '"' || c == '\\')
                        printf("\\%c", c);
                else if (c < 0x20)
                        printf("\\u%04x", c);
                else
                        putchar(c);
        }
        putchar('"');
}

static void json_str_or_null(const char *s) {
        if (s && *s)
                verify_json_str(s);
        else
                printf("null");
}

/* An authority's variable, owner, SHA-256 and subject ("" when its
 * signature is not a certificate). */
typedef struct auth_text {
        char var[64], owner[40], sha256[65], subject[384];
} auth_text;

static void auth_of(const mb_facts_auth *a, auth_text *t) {
        const unsigned char *p = a->sig.p;
        X509 *x = d2i_X509(NULL, &p, (long) a->sig.size);

        utf16_ascii(t->var, sizeof(t->var), a->var.name, a->var.name_units * 2);
        guid(t->owner, a->owner.p);
        sha256_hex(t->sha256, &a->sig);
        t->subject[0] = 0;
        if (x)
                X509_NAME_oneline(X509_get_subject_name(x), t->subject, sizeof(t->subject));
        X509_free(x);
}

void verify_facts_json(const vf_facts *vf) {
        const mb_facts *f = &vf->f;
        char h[HEXLEN], w[640];
        auth_text at;

        printf("\"facts\": {\"secure_boot\": %s, \"keys\": {",
               f->secure_boot < 0 ? "null" : f->secure_boot ? "true" : "false");
        for (size_t k = 0; k < MB_FACTS_KEYS; k++) {
                sha256_hex(h, &f->key[k]);
                printf("%s\"%s\": ", k ? ", " : "", key_names[k]);
                json_str_or_null(f->have_key[k] ? h : NULL);
        }
        printf("}, \"authorities\": [");
        for (size_t i = 0; i < f->n_auth; i++) {
                auth_of(&f->auth[i], &at);
                printf("%s{\"variable\": ", i ? ", " : "");
                verify_json_str(at.var);
                printf(", \"owner\": \"%s\", \"sha256\": \"%s\", \"subject\": ", at.owner, at.sha256);
                json_str_or_null(at.subject);
                putchar('}');
        }
        printf("], \"events\": [");
        for (size_t i = 0; i < f->n_ev; i++) {
                const mb_facts_event *e = &f->ev[i];
                char lb[16];
                hex(h, e->digest.p, e->digest.size);
                if (e->bound)
                        what(w, sizeof(w), e);
                printf("%s{\"pcr\": %u, \"bank\": \"%s\", \"digest\": \"%s\", \"bound\": %s, \"data\": ", i ? ", " : "",
                       e->pcr, cli_alg_label(e->alg, lb), h, e->bound ? "true" : "false");
                json_str_or_null(e->bound ? w : NULL);
                printf(", \"image\": ");
                json_str_or_null(vf->image[i]);
                putchar('}');
        }
        printf("], \"events_truncated\": %s, \"initrd\": ", f->more ? "true" : "false");
        if (f->have_initrd) {
                hex(h, f->initrd_sha256.p, 32);
                printf("{\"size\": %llu, \"sha256\": \"%s\"}", (unsigned long long) f->initrd_size, h);
        } else
                printf("null");
        printf(", \"kernel_version\": null, \"totp_fence\": %s, \"unseal_fence\": \"%s\"}",
               f->totp_fence ? "true" : "false", vf->unseal_fence);
}

void verify_facts_text(const vf_facts *vf) {
        const mb_facts *f = &vf->f;
        char h[HEXLEN], w[640], lb[16];
        auth_text at;

        printf("what booted (digest-bound data only):\n");
        printf("  Secure Boot: %s\n", f->secure_boot < 0 ? "unknown (no digest-bound SecureBoot event in PCR 7)"
                                      : f->secure_boot ? "on" : "off");
        for (size_t k = 0; k < MB_FACTS_KEYS; k++) {
                sha256_hex(h, &f->key[k]);
                printf("  %-4s %s%s\n", key_names[k], f->have_key[k] ? "sha256 " : "", f->have_key[k] ? h : "not in the log");
        }
        for (size_t i = 0; i < f->n_auth; i++) {
                auth_of(&f->auth[i], &at);
                printf("  authority (%s): %s, owner %s, sha256 %s\n", at.var, at.subject[0] ? at.subject : "not a certificate",
                       at.owner, at.sha256);
        }
        for (size_t i = 0; i < f->n_ev; i++) {
                const mb_facts_event *e = &f->ev[i];
                hex(h, e->digest.p, e->digest.size);
                printf("  PCR %-2u %s %s  ", e->pcr, cli_alg_label(e->alg, lb), h);
                if (e->bound) {
                        what(w, sizeof(w), e);
                        printf("%s\n", w);
                } else if (e->pcr == 4)
                        printf("an image (Authenticode), %s\n", vf->image[i] ? vf->image[i] : "not one of the --image files");
                else
                        printf("(its data is not what the digest covers: not read)\n");
        }
        if (f->more)
                printf("  (more events, not listed)\n");
        if (f->have_initrd) {
                hex(h, f->initrd_sha256.p, 32);
                printf("  initrd: %llu bytes, sha256 %s (mshim's TOTP initrd event)\n", (unsigned long long) f->initrd_size, h);
        } else
                printf("  initrd: not known from digest-bound data (PCR 9's digest is the initrd's; compare a "
                       "reference state)\n");
        printf("  kernel version: not known from digest-bound data (the kernel is its Authenticode hash in PCR 4)\n");
        printf("  TOTP fence: %s\n", f->totp_fence ? "reached" : "not in the log");
        printf("  unseal fence (PCR 15): %s\n", vf->unseal_fence);
}
