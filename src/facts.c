/* SPDX-License-Identifier: BSD-2-Clause */
/* What booted, from a log tied to a quote: include/mb/facts.h. */
#include "mb/facts.h"
#include "mb/sha.h"
#include "mb/totp.h"

bool mb_facts_bound(const mb_tcglog_event *ev) {
        uint8_t d[MB_HASH_MAX];

        for (uint32_t i = 0; i < ev->n_digests; i++) {
                const mb_tcglog_digest *g = &ev->digests[i];
                if (mb_hash_size(g->alg) != g->size || mb_hash_buf(g->alg, ev->data, ev->data_size, d) != MB_OK ||
                    mb_memcmp(d, g->bytes, g->size))
                        return false;
        }
        return ev->n_digests > 0;
}


/* UTF-16LE units equal to ASCII s (no NUL). */
static bool name_is(const mb_uefi_variable *v, const char *s) {
        size_t n = mb_strnlen(s, 16);

        if (v->name_units != n)
                return false;
        for (size_t i = 0; i < n; i++)
                if (v->name[2 * i] != (uint8_t) s[i] || v->name[2 * i + 1])
                        return false;
        return true;
}

/* A bound EV_EVENT_TAG (PFP §10.4.2: u32 id, u32 size, data): mshim's
 * TOTP events (docs/MEASUREMENTS.md "The TOTP fence", "The TOTP initrd
 * event") in PCR 12. */
static void tagged(mb_facts *f, mb_facts_event *o) {
        static const uint8_t fence[] = MB_TOTP_FENCE_TEXT;
        const uint8_t *d;

        if (o->data.size < 8 || mb_le32(o->data.p + 4) != o->data.size - 8)
                return;
        o->tagged = true;
        o->tag = mb_le32(o->data.p);
        o->tag_data = (mb_facts_bytes) { o->data.p + 8, o->data.size - 8 };
        d = o->tag_data.p;
        if (o->pcr != MB_TOTP_FENCE_PCR)
                return;
        if (o->tag == MB_TAG_TOTP_FENCE && o->tag_data.size == sizeof(fence) && !mb_memcmp(d, fence, sizeof(fence)))
                f->totp_fence = true;
        if (o->tag == MB_TAG_TOTP_INITRD && o->tag_data.size == 8 + 32) {
                f->have_initrd = true;
                f->initrd_size = mb_le64(d);
                f->initrd_sha256 = (mb_facts_bytes) { d + 8, 32 };
        }
}

/* A bound UEFI_VARIABLE_DATA in PCR 7: before PCR 7's separator Secure
 * Boot's configuration, after it an authority that verified an image
 * (docs/MEASUREMENTS.md, the PCR 7 list). The type is not bound, so the
 * place and the variable's own name decide. */
static void variable(mb_facts *f, mb_facts_event *o, bool after_sep) {
        static const char *const keys[MB_FACTS_KEYS] = { "PK", "KEK", "db", "dbx" };
        const mb_uefi_variable *v = &o->var;

        if (o->pcr != 7)
                return;
        if (!after_sep) {
                if (name_is(v, "SecureBoot") && v->data_size == 1)
                        f->secure_boot = v->data[0] == 1;
                for (size_t k = 0; k < MB_FACTS_KEYS; k++)
                        if (name_is(v, keys[k])) {
                                f->have_key[k] = true;
                                f->key[k] = (mb_facts_bytes) { v->data, v->data_size };
                        }
                return;
        }
        /* EFI_SIGNATURE_DATA: SignatureOwner, then the signature */
        if (f->n_auth < MB_FACTS_AUTH_MAX && v->data_size >= 16) {
                mb_facts_auth *a = &f->auth[f->n_auth++];
                a->var = *v;
                a->owner = (mb_facts_bytes) { v->data, 16 };
                a->sig = (mb_facts_bytes) { v->data + 16, v->data_size - 16 };
        }
}

static bool is_variable_type(uint32_t t) {
        return t == MB_EV_EFI_VARIABLE_DRIVER_CONFIG || t == MB_EV_EFI_VARIABLE_AUTHORITY || t == MB_EV_EFI_VARIABLE_BOOT;
}

static void one(mb_facts *f, const mb_tcglog_event *ev, bool *sep7) {
        mb_facts_event scratch = { 0 }, *o = &scratch;

        if (MB_FACTS_LISTED_PCRS & (1u << ev->pcr)) {
                if (f->n_ev < MB_FACTS_EVENTS_MAX)
                        o = &f->ev[f->n_ev++];
                else
                        f->more = true;
        }
        *o = (mb_facts_event) { .pcr = ev->pcr, .type = ev->type };
        for (uint32_t i = 0; i < ev->n_digests; i++)
                if (!o->digest.p || ev->digests[i].alg == MB_ALG_SHA256) {
                        o->alg = ev->digests[i].alg;
                        o->digest = (mb_facts_bytes) { ev->digests[i].bytes, ev->digests[i].size };
                }
        o->bound = mb_facts_bound(ev);
        if (!o->bound)
                return;
        o->data = (mb_facts_bytes) { ev->data, ev->data_size };
        if (ev->type == MB_EV_EVENT_TAG)
                tagged(f, o);
        if (is_variable_type(ev->type) && mb_evdata_variable(ev->data, ev->data_size, &o->var) == MB_OK) {
                o->variable = true;
                variable(f, o, *sep7);
        }
        if (ev->pcr == 7 && ev->type == MB_EV_SEPARATOR)
                *sep7 = true;
}

mb_err mb_facts_collect(const void *log, size_t size, uint32_t quoted, mb_facts *ret) {
        mb_tcglog l;
        mb_tcglog_event ev;
        bool sep7 = false;
        mb_err e = mb_tcglog_open(&l, log, size);

        if (e != MB_OK)
                return e;
        mb_memset(ret, 0, sizeof(*ret));
        ret->secure_boot = -1;
        while (mb_tcglog_next(&l, &ev) == MB_OK)
                if (ev.type != MB_EV_NO_ACTION && ev.pcr < MB_PCR_COUNT && (quoted & (1u << ev.pcr)))
                        one(ret, &ev, &sep7);
        return MB_OK;
}
