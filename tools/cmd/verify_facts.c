/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What booted, as facts, from an event log that replayed to a verified
 * quote (docs/ATTESTATION.md "What booted"). Replay binds each event's
 * PCR, its place among that PCR's events and its digests, nothing else:
 * neither its type nor its data. So an event's data is read only when
 * every digest it carries is the hash of that data (the data is then the
 * preimage the TPM extended: go-attestation's event-log-disclosure rule),
 * and an event whose digest covers something outside the log (an image,
 * an initrd, a file mshim read) is known by its digest alone. Only quoted
 * PCRs count.
 */
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include "attest.h"
#include "mb/evdata.h"
#include "mb/pe.h"
#include "mb/policy.h"
#include "mb/tcglog.h"
#include "mb/totp.h"
#include "verify.h"

/* The PCRs whose events are listed one by one: the boot path (PC Client
 * PFP §3.3.4: 4 images, 5 configuration, 9 and 12 the kernel's and
 * mshim's). */
#define LISTED_PCRS ((1u << 4) | (1u << 5) | (1u << 9) | (1u << 12))
#define VF_EVENTS_MAX 256u
#define VF_AUTH_MAX 32u
#define HEXLEN (2 * MB_HASH_MAX + 1)

typedef struct vf_event {
        uint32_t pcr;
        char alg[16];           /* the bank of digest: sha256 when the event has it */
        char digest[HEXLEN];
        bool bound;             /* every digest is the hash of the data */
        char what[640];         /* bound: the data, decoded; else "" */
        const char *name;       /* PCR 4, not bound: the --image it is, or NULL */
} vf_event;

typedef struct vf_auth {
        char var[32], owner[40], sha256[65];
        char subject[384];      /* "" when the data is not a certificate */
} vf_auth;

struct vf_facts {
        int secure_boot;                /* -1 not in the log as bound data, 0 off, 1 on */
        char keys[4][65];               /* PK, KEK, db, dbx: SHA-256 of the contents; "" not seen */
        vf_auth auth[VF_AUTH_MAX];
        size_t n_auth;
        vf_event ev[VF_EVENTS_MAX];
        size_t n_ev;
        bool more;                      /* events past VF_EVENTS_MAX (not listed) */
        bool totp_fence;
        bool have_initrd;               /* mshim's TOTP initrd event */
        uint64_t initrd_size;
        char initrd_sha256[65];
        const char *unseal_fence;       /* "reached", "not-reached", "not-quoted", "other" (the log's events) */
};

static const char *const key_names[4] = { "PK", "KEK", "db", "dbx" };

static void hex(char *out, const uint8_t *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                snprintf(out + 2 * i, 3, "%02x", p[i]);
        out[2 * n] = 0;
}

static void sha256_hex(char *out, const uint8_t *p, size_t n) {
        uint8_t d[32];

        if (mb_hash_buf(MB_ALG_SHA256, p, n, d) == MB_OK)
                hex(out, d, 32);
        else
                out[0] = 0;
}

/* Every digest of ev is the hash of its data, and there is one. */
static bool data_bound(const mb_tcglog_event *ev) {
        uint8_t d[MB_HASH_MAX];

        for (uint32_t i = 0; i < ev->n_digests; i++) {
                const mb_tcglog_digest *g = &ev->digests[i];
                if (mb_hash_size(g->alg) != g->size || mb_hash_buf(g->alg, ev->data, ev->data_size, d) != MB_OK ||
                    memcmp(d, g->bytes, g->size))
                        return false;
        }
        return ev->n_digests > 0;
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

static uint32_t le32(const uint8_t *p) {
        return p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

/* A bound EV_EVENT_TAG (PFP §10.4.2): mshim's own tags decoded. */
static void tag_what(vf_facts *f, vf_event *o, const mb_tcglog_event *ev) {
        char path[512];
        uint32_t tag, n;
        const uint8_t *d;

        if (ev->data_size < 8 || (n = le32(ev->data + 4)) != ev->data_size - 8) {
                snprintf(o->what, sizeof(o->what), "a tagged event that does not parse");
                return;
        }
        tag = le32(ev->data);
        d = ev->data + 8;
        utf16_ascii(path, sizeof(path), d, n);
        switch (tag) {
        case MB_TAG_FILE_ABSENT: snprintf(o->what, sizeof(o->what), "mshim: no file %s", path); break;
        case MB_TAG_FILE_UNREADABLE: snprintf(o->what, sizeof(o->what), "mshim: unreadable file %s", path); break;
        case MB_TAG_EXIT: snprintf(o->what, sizeof(o->what), "mshim: returned to the firmware"); break;
        case MB_TAG_CHAINLOAD:
                utf16_ascii(path, sizeof(path), d, n);
                snprintf(o->what, sizeof(o->what), "mshim: chainload with options \"%s\"", path);
                break;
        case MB_TAG_TOTP_FENCE:
                if (n == MB_TOTP_FENCE_EVENT_SIZE - 8 && !memcmp(d, MB_TOTP_FENCE_TEXT, n)) {
                        snprintf(o->what, sizeof(o->what), "mshim: the TOTP fence");
                        f->totp_fence |= ev->pcr == MB_TOTP_FENCE_PCR;
                } else
                        snprintf(o->what, sizeof(o->what), "mshim: a TOTP fence tag with other data");
                break;
        case MB_TAG_TOTP_INITRD:
                if (n != 40) {
                        snprintf(o->what, sizeof(o->what), "mshim: a TOTP initrd tag with other data");
                        break;
                }
                f->initrd_size = (uint64_t) le32(d) | (uint64_t) le32(d + 4) << 32;
                hex(f->initrd_sha256, d + 8, 32);
                f->have_initrd = ev->pcr == 12;
                snprintf(o->what, sizeof(o->what), "mshim: the initrd, %llu bytes, sha256 %s",
                         (unsigned long long) f->initrd_size, f->initrd_sha256);
                break;
        default:
                snprintf(o->what, sizeof(o->what), "tag 0x%08x, %u bytes of data", tag, n);
        }
}

/* A bound PCR 7 UEFI_VARIABLE_DATA: before PCR 7's separator the Secure
 * Boot configuration, after it an authority that verified an image. */
static void variable(vf_facts *f, vf_event *o, const mb_tcglog_event *ev, bool after_sep) {
        mb_uefi_variable var;
        char name[32];

        if (mb_evdata_variable(ev->data, ev->data_size, &var) != MB_OK) {
                snprintf(o->what, sizeof(o->what), "a variable event that does not parse");
                return;
        }
        utf16_ascii(name, sizeof(name), var.name, var.name_units * 2);
        snprintf(o->what, sizeof(o->what), "variable %s, %zu bytes", name, var.data_size);
        if (ev->pcr != 7)
                return;
        if (!after_sep && !strcmp(name, "SecureBoot") && var.data_size == 1)
                f->secure_boot = var.data[0] == 1;
        for (size_t k = 0; !after_sep && k < 4; k++)
                if (!strcmp(name, key_names[k]))
                        sha256_hex(f->keys[k], var.data, var.data_size);
        if (after_sep && f->n_auth < VF_AUTH_MAX && var.data_size >= 16) {
                /* EFI_SIGNATURE_DATA: SignatureOwner, then the signature
                 * (a certificate's DER, or a hash) */
                vf_auth *a = &f->auth[f->n_auth++];
                const unsigned char *p = var.data + 16;
                X509 *x = d2i_X509(NULL, &p, (long) (var.data_size - 16));
                snprintf(a->var, sizeof(a->var), "%s", name);
                guid(a->owner, var.data);
                sha256_hex(a->sha256, var.data + 16, var.data_size - 16);
                a->subject[0] = 0;
                if (x)
                        X509_NAME_oneline(X509_get_subject_name(x), a->subject, sizeof(a->subject));
                X509_free(x);
        }
}

static void describe(vf_facts *f, vf_event *o, const mb_tcglog_event *ev, bool after_sep7) {
        const char *tn = mb_tcglog_type_name(ev->type);

        switch (ev->type) {
        case MB_EV_SEPARATOR: snprintf(o->what, sizeof(o->what), "separator"); break;
        case MB_EV_EFI_ACTION:
        case MB_EV_ACTION: ascii(o->what, sizeof(o->what), ev->data, ev->data_size); break;
        case MB_EV_IPL:
                /* mshim's and systemd's command line: UTF-16LE with its NUL */
                if (ev->data_size >= 2 && ev->data_size % 2 == 0 && !ev->data[ev->data_size - 1] &&
                    !ev->data[ev->data_size - 2]) {
                        char line[600];
                        utf16_ascii(line, sizeof(line), ev->data, ev->data_size);
                        snprintf(o->what, sizeof(o->what), "command line \"%s\"", line);
                } else
                        ascii(o->what, sizeof(o->what), ev->data, ev->data_size);
                break;
        case MB_EV_EVENT_TAG: tag_what(f, o, ev); break;
        case MB_EV_EFI_VARIABLE_DRIVER_CONFIG:
        case MB_EV_EFI_VARIABLE_AUTHORITY:
        case MB_EV_EFI_VARIABLE_BOOT:
                variable(f, o, ev, after_sep7);
                break;
        default: snprintf(o->what, sizeof(o->what), "%s, %u bytes of data", tn ? tn : "an event", ev->data_size);
        }
}

/* The --image files' Authenticode hashes, in the bank of alg. */
static const char *image_name(const mb_tcglog_event *ev, const verify_image *img, size_t n_img, uint16_t alg,
                              const uint8_t *digest) {
        for (size_t i = 0; i < n_img; i++) {
                uint8_t d[MB_HASH_MAX];
                if (mb_pe_authenticode(img[i].data, img[i].size, alg, d) == MB_OK &&
                    !memcmp(d, digest, mb_hash_size(alg)))
                        return img[i].name;
        }
        return NULL;
}

static void add_event(vf_facts *f, const mb_tcglog_event *ev, bool bound, const verify_image *img, size_t n_img) {
        const mb_tcglog_digest *g = &ev->digests[0];
        vf_event *o;

        if (f->n_ev == VF_EVENTS_MAX) {
                f->more = true;
                return;
        }
        o = &f->ev[f->n_ev++];
        for (uint32_t i = 0; i < ev->n_digests; i++)
                if (ev->digests[i].alg == MB_ALG_SHA256)
                        g = &ev->digests[i];
        o->pcr = ev->pcr;
        o->bound = bound;
        cli_alg_label(g->alg, o->alg);
        hex(o->digest, g->bytes, g->size);
        o->what[0] = 0;
        o->name = !bound && ev->pcr == 4 ? image_name(ev, img, n_img, g->alg, g->bytes) : NULL;
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
        mb_tcglog l;
        mb_tcglog_event ev;
        bool sep7 = false;

        if (!f || mb_tcglog_open(&l, log, n) != MB_OK) {
                free(f);
                return NULL;
        }
        f->secure_boot = -1;
        f->unseal_fence = !(quoted & (1u << MB_UNSEAL_FENCE_PCR)) ? "not-quoted" : unseal_fence == 1 ? "reached"
                        : unseal_fence == 0 ? "not-reached" : "other";
        while (mb_tcglog_next(&l, &ev) == MB_OK) {
                bool bound;
                vf_event scratch, *o = &scratch;
                if (ev.type == MB_EV_NO_ACTION || ev.pcr >= MB_PCR_COUNT || !(quoted & (1u << ev.pcr)))
                        continue;
                bound = data_bound(&ev);
                if (LISTED_PCRS & (1u << ev.pcr)) {
                        add_event(f, &ev, bound, img, n_img);
                        if (f->n_ev && !f->more)
                                o = &f->ev[f->n_ev - 1];
                }
                if (bound)
                        describe(f, o, &ev, sep7);
                sep7 |= ev.pcr == 7 && ev.type == MB_EV_SEPARATOR && bound;
        }
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

void verify_facts_json(const vf_facts *f) {
        printf("\"facts\": {\"secure_boot\": %s, \"keys\": {",
               f->secure_boot < 0 ? "null" : f->secure_boot ? "true" : "false");
        for (size_t k = 0; k < 4; k++) {
                printf("%s\"%s\": ", k ? ", " : "", key_names[k]);
                json_str_or_null(f->keys[k]);
        }
        printf("}, \"authorities\": [");
        for (size_t i = 0; i < f->n_auth; i++) {
                printf("%s{\"variable\": ", i ? ", " : "");
                verify_json_str(f->auth[i].var);
                printf(", \"owner\": \"%s\", \"sha256\": \"%s\", \"subject\": ", f->auth[i].owner, f->auth[i].sha256);
                json_str_or_null(f->auth[i].subject);
                putchar('}');
        }
        printf("], \"events\": [");
        for (size_t i = 0; i < f->n_ev; i++) {
                const vf_event *e = &f->ev[i];
                printf("%s{\"pcr\": %u, \"bank\": \"%s\", \"digest\": \"%s\", \"bound\": %s, \"data\": ", i ? ", " : "",
                       e->pcr, e->alg, e->digest, e->bound ? "true" : "false");
                json_str_or_null(e->bound ? e->what : NULL);
                printf(", \"image\": ");
                json_str_or_null(e->name);
                putchar('}');
        }
        printf("], \"events_truncated\": %s, \"initrd\": ", f->more ? "true" : "false");
        if (f->have_initrd)
                printf("{\"size\": %llu, \"sha256\": \"%s\"}", (unsigned long long) f->initrd_size, f->initrd_sha256);
        else
                printf("null");
        printf(", \"kernel_version\": null, \"totp_fence\": %s, \"unseal_fence\": \"%s\"}",
               f->totp_fence ? "true" : "false", f->unseal_fence);
}

void verify_facts_text(const vf_facts *f) {
        printf("what booted (digest-bound data only):\n");
        printf("  Secure Boot: %s\n", f->secure_boot < 0 ? "unknown (no digest-bound SecureBoot event in PCR 7)"
                                      : f->secure_boot ? "on" : "off");
        for (size_t k = 0; k < 4; k++)
                printf("  %-4s %s%s\n", key_names[k], f->keys[k][0] ? "sha256 " : "", f->keys[k][0] ? f->keys[k] : "not in the log");
        for (size_t i = 0; i < f->n_auth; i++)
                printf("  authority (%s): %s, owner %s, sha256 %s\n", f->auth[i].var,
                       f->auth[i].subject[0] ? f->auth[i].subject : "not a certificate", f->auth[i].owner, f->auth[i].sha256);
        for (size_t i = 0; i < f->n_ev; i++) {
                const vf_event *e = &f->ev[i];
                printf("  PCR %-2u %s %s  ", e->pcr, e->alg, e->digest);
                if (e->bound)
                        printf("%s\n", e->what);
                else if (e->pcr == 4)
                        printf("an image (Authenticode), %s\n", e->name ? e->name : "not one of the --image files");
                else
                        printf("(its data is not what the digest covers: not read)\n");
        }
        if (f->more)
                printf("  (more events, not listed)\n");
        if (f->have_initrd)
                printf("  initrd: %llu bytes, sha256 %s (mshim's TOTP initrd event)\n",
                       (unsigned long long) f->initrd_size, f->initrd_sha256);
        else
                printf("  initrd: not known from digest-bound data (PCR 9's digest is the initrd's; compare a "
                       "reference state)\n");
        printf("  kernel version: not known from digest-bound data (the kernel is its Authenticode hash in PCR 4)\n");
        printf("  TOTP fence: %s\n", f->totp_fence ? "reached" : "not in the log");
        printf("  unseal fence (PCR 15): %s\n", f->unseal_fence);
}
