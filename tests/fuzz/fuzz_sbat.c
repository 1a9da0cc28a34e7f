/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: SBAT. The input is split at its first NUL byte: the
 * part before is an image's .sbat section, the part after an SbatLevel
 * policy (without a NUL the whole input is both). Runs the .sbat iterator
 * and mb_sbat_validate, the policy iterator, mb_sbat_check (image against
 * policy, and the image against itself), mb_sbat_policy_select with the
 * policy as SbatLevel and the image text as SbatLevelRT (attributes from
 * the first byte), and mb_sbat_level_section on the whole input.
 */
#include <stdlib.h>
#include <string.h>

#include "mb/sbat.h"
#include "mb/varstore.h"
#include "sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void touch(const void *base, size_t size, mb_str s) {
        fuzz_inside(base, size, s.p, s.len);
        fuzz_read(s.p, s.len);
}

/* Iterate all records; returns the final status. */
static mb_err walk(const void *p, size_t n, bool policy, size_t *ret_records) {
        mb_sbat_iter it;
        mb_sbat_entry e;
        size_t records = 0, lastline = 0;
        mb_err r;

        if (policy)
                mb_sbat_policy_init(&it, p, n);
        else
                mb_sbat_init(&it, p, n);
        while ((r = mb_sbat_next(&it, &e)) == MB_OK) {
                touch(p, n, e.component);
                touch(p, n, e.vendor_name);
                touch(p, n, e.vendor_package);
                touch(p, n, e.vendor_version);
                touch(p, n, e.vendor_url);
                if (e.component.len == 0 || e.generation == 0 || e.lineno <= lastline || ++records > n)
                        abort();
                for (size_t i = 0; i < e.component.len; i++)
                        if (e.component.p[i] == ',' || e.component.p[i] == '\n' || e.component.p[i] == '\0')
                                abort();
                lastline = e.lineno;
        }
        *ret_records = records;
        return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *buf = malloc(size ? size : 1);
        const uint8_t *nul = memchr(data, 0, size);
        size_t img_n = nul ? (size_t) (nul - data) : size;
        const char *pol = nul ? buf + img_n + 1 : buf;
        size_t pol_n = nul ? size - img_n - 1 : size;
        size_t recs = 0, lineno = 0;
        mb_sbat_entry bad;
        uint32_t min_gen = 0;
        bool revoked = false;
        mb_err r, rv;

        if (!buf)
                return 0;
        memcpy(buf, data, size);

        r = walk(buf, img_n, false, &recs);
        rv = mb_sbat_validate(buf, img_n, &lineno);
        if ((r == MB_END) != (rv == MB_OK))
                abort(); /* the iterator and the validator disagree */
        walk(pol, pol_n, true, &recs);
        /* The whole input as a NUL-padded section: valid only if the part
         * after the NUL is all NULs. */
        walk(buf, size, false, &recs);

        if (mb_sbat_check(buf, img_n, pol, pol_n, &revoked, &bad, &min_gen) == MB_OK) {
                if (revoked) {
                        touch(buf, img_n, bad.component);
                        if (min_gen <= bad.generation)
                                abort();
                }
                if (rv != MB_OK)
                        abort(); /* checked an image .sbat that does not validate */
        }
        /* The image as its own policy: revoked only when it names one
         * component twice with different generations. */
        if (mb_sbat_check(buf, img_n, buf, img_n, &revoked, &bad, &min_gen) == MB_OK && revoked &&
            min_gen <= bad.generation)
                abort();

        /* Policy selection: an accepted policy borrows its text from the
         * variable, never longer than it, and parses. */
        {
                uint32_t a = size ? data[0] : 0;
                mb_sbat_var v[MB_SBAT_N_SOURCES] = {
                        [MB_SBAT_LEVEL] = { .present = a & 0x80, .attributes = a & 0x27, .data = pol, .size = pol_n },
                        [MB_SBAT_LEVEL_RT] = { .present = a & 0x40, .attributes = (a >> 3) & 0x7, .data = buf, .size = img_n },
                };
                mb_sbat_policy sel;
                mb_sbat_source src;

                if (mb_sbat_policy_select(v, &sel, &src) == MB_OK) {
                        if (sel.n > MB_SBAT_N_SOURCES)
                                abort();
                        for (size_t i = 0; i < sel.n; i++) {
                                const mb_sbat_var *o = &v[sel.p[i].source];
                                if (!o->present || sel.p[i].text != o->data || sel.p[i].len > o->size ||
                                    walk(sel.p[i].text, sel.p[i].len, true, &recs) != MB_END)
                                        abort();
                        }
                }
        }

        for (int latest = 0; latest < 2; latest++) {
                const char *t;
                size_t tl;

                if (mb_sbat_level_section(buf, size, latest, &t, &tl) == MB_OK) {
                        fuzz_inside(buf, size, t, tl + 1);
                        if (t[tl] != '\0' || memchr(t, 0, tl))
                                abort();
                        walk(t, tl, true, &recs);
                }
        }
        free(buf);
        return 0;
}
