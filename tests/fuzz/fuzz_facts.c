/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: src/facts.c. The input as the event log of evidence a
 * machine sent (which a verifier reads once it replays to the quote):
 * mb_facts_collect for every PCR and for PCR 7 alone. Every slice it hands
 * back must lie inside the input and is read (ASan checks the reads); a
 * bound event's data must hash to its digest (mb_facts_bound again); only
 * bound events are decoded; a tagged event's data must be the data after
 * its 8-byte header; authorities have a 16-byte owner; the counts stay
 * within their arrays; the fences and the initrd come from PCR 12.
 */
#include <stdlib.h>
#include <string.h>
#include "mb/facts.h"
#include "sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void slice(const uint8_t *buf, size_t size, mb_facts_bytes b) {
        if (!b.p && b.size)
                abort();
        if (b.p) {
                fuzz_inside(buf, size, b.p, b.size);
                fuzz_read(b.p, b.size);
        }
}

static void check(const uint8_t *buf, size_t size, const mb_facts *f, uint32_t quoted) {
        if (f->n_ev > MB_FACTS_EVENTS_MAX || f->n_auth > MB_FACTS_AUTH_MAX || f->secure_boot < -1 || f->secure_boot > 1)
                abort();
        for (size_t k = 0; k < MB_FACTS_KEYS; k++)
                if (f->have_key[k])
                        slice(buf, size, f->key[k]);
        for (size_t i = 0; i < f->n_auth; i++) {
                if (f->auth[i].owner.size != 16)
                        abort();
                slice(buf, size, f->auth[i].owner);
                slice(buf, size, f->auth[i].sig);
                fuzz_inside(buf, size, f->auth[i].var.name, 2 * f->auth[i].var.name_units);
        }
        for (size_t i = 0; i < f->n_ev; i++) {
                const mb_facts_event *e = &f->ev[i];
                if (!(quoted & (1u << e->pcr)) || !(MB_FACTS_LISTED_PCRS & (1u << e->pcr)))
                        abort();
                slice(buf, size, e->digest);
                slice(buf, size, e->data);
                if (!e->bound && (e->data.p || e->tagged || e->variable))
                        abort();
                if (e->tagged && (e->tag_data.p != e->data.p + 8 || e->tag_data.size + 8 != e->data.size))
                        abort();
                if (e->variable)
                        fuzz_inside(buf, size, e->var.data, e->var.data_size);
        }
        if (f->have_initrd) {
                if (f->initrd_sha256.size != 32)
                        abort();
                slice(buf, size, f->initrd_sha256);
        }
        if ((f->totp_fence || f->have_initrd) && !(quoted & (1u << 12)))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint8_t *buf = malloc(size ? size : 1);
        mb_facts *f = malloc(sizeof(*f));

        if (!buf || !f)
                abort();
        memcpy(buf, data, size);
        if (mb_facts_collect(buf, size, 0xffffffu, f) == MB_OK)
                check(buf, size, f, 0xffffffu);
        if (mb_facts_collect(buf, size, 1u << 7, f) == MB_OK) {
                check(buf, size, f, 1u << 7);
                if (f->n_ev)
                        abort();
        }
        free(f);
        free(buf);
        return 0;
}
