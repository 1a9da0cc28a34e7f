/* SPDX-License-Identifier: BSD-2-Clause */
/* PCR tables (tools/lib/pcrtable.h): `mshim log`, `mshim predict` and
 * `mshim pcrs` print their PCR values through these two printers; and the
 * events behind one PCR, as `mshim log --pcrs` and `mshim unseal` list them
 * under a PCR that does not match (cli.h). */
#include "pcrtable.h"

void pcrtab_add(pcrtab *t, uint16_t alg, uint16_t size, bool computable, uint32_t shown,
                const uint8_t (*pcr)[MB_HASH_MAX]) {
        if (t->n_banks == MB_TCGLOG_MAX_ALGS)
                return;
        t->banks[t->n_banks++] = (pcrtab_bank) { alg, size, computable, shown, pcr };
}

/* "    4 : 0x<UPPER HEX>", as tpm2_pcrread writes it (mb_pcrs_parse reads it back). */
static void row_pcrread(const pcrtab_bank *b, uint32_t i) {
        char line[16];

        snprintf(line, sizeof(line), "    %-2u: 0x", i);
        out_puts(line);
        for (uint32_t k = 0; k < b->size; k++) {
                snprintf(line, sizeof(line), "%02X", b->pcr[i][k]);
                out_puts(line);
        }
}

/* "  PCR  4: <hex>[  changed]", or the reason the PCR has no value. */
static void row_list(const pcrtab *t, const pcrtab_bank *b, uint32_t i) {
        char line[16];

        snprintf(line, sizeof(line), "  PCR %2u: ", i);
        out_puts(line);
        if (t->unpredictable & (1u << i)) {
                out_puts("unpredictable: ");
                out_puts(t->reason[i]);
                return;
        }
        out_hex(b->pcr[i], b->size);
        if (t->changed & (1u << i))
                out_puts("  changed");
}

void pcrtab_text(const pcrtab *t, pcrtab_style style, const char *prefix) {
        char lb[16];

        for (uint32_t n = 0; n < t->n_banks; n++) {
                const pcrtab_bank *b = &t->banks[n];

                out_puts(style == PCRTAB_PCRREAD ? "  " : prefix);
                out_puts(cli_alg_label(b->alg, lb));
                if (!b->computable) {
                        out_puts(": not computed (mshim cannot hash this algorithm)\n");
                        continue;
                }
                out_puts(":\n");
                for (uint32_t i = 0; i < MB_PCR_COUNT; i++) {
                        if (!(b->shown & (1u << i)))
                                continue;
                        if (style == PCRTAB_PCRREAD)
                                row_pcrread(b, i);
                        else
                                row_list(t, b, i);
                        out_putc('\n');
                }
        }
}

void pcrtab_json(const pcrtab *t, mb_emit *e) {
        char lb[16], idx[4];

        mb_emit_begin_obj(e, "pcrs");
        for (uint32_t n = 0; n < t->n_banks; n++) {
                const pcrtab_bank *b = &t->banks[n];
                /* A bank mshim cannot hash has no values to offer. */
                if (!b->computable)
                        continue;
                mb_emit_begin_obj(e, cli_alg_label(b->alg, lb));
                for (uint32_t i = 0; i < MB_PCR_COUNT; i++) {
                        if (!(b->shown & ~t->unpredictable & (1u << i)))
                                continue;
                        snprintf(idx, sizeof(idx), "%u", i);
                        mb_emit_hex(e, idx, b->pcr[i], b->size);
                }
                mb_emit_end_obj(e);
        }
        mb_emit_end_obj(e);
}

void cli_log_pcr_events(const uint8_t *data, size_t size, uint32_t pcr, uint16_t alg) {
        mb_tcglog log;
        mb_tcglog_event ev;
        char lb[16], line[64];
        bool any = false;

        if (mb_tcglog_open(&log, data, size) != MB_OK)
                return;
        out_puts("    events extended into it:\n");
        while (mb_tcglog_next(&log, &ev) == MB_OK) {
                const mb_tcglog_digest *d = mb_tcglog_event_digest(&ev, alg);
                const char *name = mb_tcglog_type_name(ev.type);
                if (ev.pcr != pcr || ev.type == MB_EV_NO_ACTION || !d)
                        continue;
                any = true;
                snprintf(line, sizeof(line), "      #%u %s %s:", ev.number, name ? name : "?", cli_alg_label(alg, lb));
                out_puts(line);
                out_hex(d->bytes, d->size);
                out_putc('\n');
        }
        if (!any)
                out_puts("      none: the log never extends it, so it should still hold its reset value\n"
                         "      (something outside the firmware log, e.g. the OS, extended it)\n");
}
