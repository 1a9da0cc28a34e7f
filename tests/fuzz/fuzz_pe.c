/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: PE/COFF images. mb_pe_parse on the input; on success
 * mb_pe_check_loadable, every section header and data directory, the .sbat section (fed to the
 * SBAT parser and, NUL-split, to the revocation check against a fixed
 * policy), the certificate table and its WIN_CERTIFICATE entries, and the
 * Authenticode hash with SHA-256 and SHA-1 through both entry points, which
 * must agree.
 */
#include <stdlib.h>
#include <string.h>

#include "mb/pe.h"
#include "mb/sbat.h"
#include "mb/sha.h"
#include "sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


static void touch_str(mb_str s) {
        if (s.len && !s.p)
                abort();
        fuzz_read((const uint8_t *) s.p, s.len);
}

static void sbat_section(const uint8_t *p, size_t n) {
        static const char policy[] = "sbat,1,2023012900\nshim,2\ngrub,3\ngrub.debian,4\nmshim,1\n";
        mb_sbat_iter it;
        mb_sbat_entry e, bad;
        size_t lineno = 0, records = 0;
        uint32_t min_gen = 0;
        bool revoked = false;
        mb_err r;

        mb_sbat_init(&it, p, n);
        while ((r = mb_sbat_next(&it, &e)) == MB_OK) {
                touch_str(e.component); touch_str(e.vendor_name); touch_str(e.vendor_package);
                touch_str(e.vendor_version); touch_str(e.vendor_url);
                if (e.component.len == 0 || e.generation == 0 || ++records > n)
                        abort();
        }
        r = mb_sbat_validate(p, n, &lineno);
        fuzz_checksum += r + lineno;
        if (mb_sbat_check(p, n, policy, sizeof(policy) - 1, &revoked, &bad, &min_gen) == MB_OK && revoked) {
                touch_str(bad.component);
                if (min_gen <= bad.generation)
                        abort(); /* revoked, but the policy does not ask for more */
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint8_t *buf = malloc(size ? size : 1);
        uint8_t d1[MB_HASH_MAX], d2[MB_HASH_MAX];
        static const uint16_t algs[] = { MB_ALG_SHA256, MB_ALG_SHA1 };
        const uint8_t *p;
        size_t n;
        mb_pe pe;

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        if (mb_pe_parse(buf, size, &pe) != MB_OK) {
                /* The one-shot hash must refuse what the parser refuses. */
                if (mb_pe_authenticode(buf, size, MB_ALG_SHA256, d1) == MB_OK)
                        abort();
                free(buf);
                return 0;
        }
        if (pe.buf != buf || pe.size != size || pe.n_sections > MB_PE_MAX_SECTIONS ||
            pe.size_of_headers > size)
                abort();

        for (uint16_t i = 0; i <= pe.n_sections; i++) {
                mb_pe_section s;
                mb_err r = mb_pe_section_at(&pe, i, &s);

                if ((r == MB_OK) != (i < pe.n_sections))
                        abort();
                if (r == MB_OK && s.raw_size)
                        fuzz_inside(buf, size, buf + s.raw_offset, s.raw_size);
        }
        /* The loader's layout checks: a loadable image has its entry point
         * and headers inside SizeOfImage. */
        if (mb_pe_check_loadable(&pe) == MB_OK &&
            (pe.entry_point >= pe.size_of_image || pe.size_of_headers > pe.size_of_image))
                abort();
        for (uint32_t i = 0; i <= pe.n_dirs && i < 64; i++) {
                uint32_t a, l;
                mb_err r = mb_pe_data_dir(&pe, i, &a, &l);

                if ((r == MB_OK) != (i < pe.n_dirs))
                        abort();
                if (r == MB_OK)
                        fuzz_checksum += a + l;
        }

        if (mb_pe_find_section(&pe, ".sbat", &p, &n) == MB_OK) {
                fuzz_inside(buf, size, p, n);
                fuzz_read(p, n);
                sbat_section(p, n);
        }
        if (mb_pe_find_section(&pe, ".sbatlevel", &p, &n) == MB_OK) {
                const char *t;
                size_t tl;

                fuzz_inside(buf, size, p, n);
                for (int latest = 0; latest < 2; latest++)
                        if (mb_sbat_level_section(p, n, latest, &t, &tl) == MB_OK) {
                                fuzz_inside(p, n, (const uint8_t *) t, tl);
                                fuzz_read((const uint8_t *) t, tl);
                        }
        }

        if (mb_pe_cert_table(&pe, &p, &n) == MB_OK) {
                size_t off = 0, count = 0;
                mb_pe_cert c;

                fuzz_inside(buf, size, p, n);
                if (n == 0 || p + n != buf + size)
                        abort(); /* the table is the end of the file */
                while (mb_pe_cert_next(p, n, &off, &c) == MB_OK) {
                        fuzz_inside(p, n, c.data, c.size);
                        fuzz_read(c.data, c.size);
                        fuzz_checksum += c.revision + c.type;
                        if (++count > n / 8 + 1)
                                abort(); /* no progress */
                }
        } else if (pe.cert_size)
                abort();

        for (size_t k = 0; k < sizeof(algs) / sizeof(algs[0]); k++) {
                size_t dl = mb_hash_size(algs[k]);

                memset(d1, 0, sizeof(d1));
                memset(d2, 0xff, sizeof(d2));
                if (dl == 0 || mb_pe_authenticode_parsed(&pe, algs[k], d1) != MB_OK ||
                    mb_pe_authenticode(buf, size, algs[k], d2) != MB_OK || memcmp(d1, d2, dl) != 0)
                        abort();
                fuzz_read(d1, dl);
        }
        free(buf);
        return 0;
}
