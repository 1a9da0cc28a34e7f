/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: BLS Type #1 entries, loader.conf and the line iterator
 * under them, plus options joining, sorting and default-pattern matching on
 * what they return; and the boot plan (src/plan.c) of an ESP made of the
 * input: the whole input as loader.conf, the input cut at NUL bytes as up
 * to 8 entry files.
 */
#include <stdlib.h>
#include <string.h>

#include "mb/bls.h"
#include "mb/plan.h"
#include "plan_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static void touch(mb_str s) {
        if (s.len && !s.p)
                abort();
        for (size_t i = 0; i < s.len; i++)
                sink += (uint8_t) s.p[i];
}

/* The plan of the input as an ESP: every entry in exactly one of its
 * lists, usable ones parsed, unusable ones in name order, chainload only
 * with nothing usable. */
static void plan(const char *buf, size_t size) {
        static const char *const names[] = { "b.conf", "a.conf", "B.conf", "aa.conf", "z.conf", "c.conf", "a", "0.conf" };
        static const mb_boot_policy policy = { .totp = MB_TOTP_SHOW };
        mb_plan_entry e[8], *pv[8];
        size_t n = 0, start = 0;
        mb_plan p;

        for (size_t i = 0; i <= size && n < 8; i++)
                if (i == size || buf[i] == 0) {
                        e[n] = (mb_plan_entry) { .id = { names[n], strlen(names[n]) }, .buf = n == 3 ? NULL : buf + start,
                                                 .size = n == 3 ? 0 : i - start };
                        pv[n] = &e[n];
                        n++;
                        start = i + 1;
                }
        static const mb_plan_vars vars = { .oneshot_set = true, .oneshot = { "a", 1 }, .entry_default = { "c.conf", 6 } };

        if (mb_plan_build(&policy, &vars, MB_PLAN_CONF_READ, buf, size, pv, n, &p) != MB_OK)
                abort();
        fuzz_plan_check(&p, e, n);
        for (size_t k = 1; k < p.n_unusable; k++)
                if (strcmp(e[p.unusable[k - 1]].id.p, e[p.unusable[k]].id.p) >= 0)
                        abort(); /* name order */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *buf = malloc(size ? size : 1);
        mb_bls_entry e, e2;
        mb_loader_conf c;
        mb_conf_line l;
        size_t off = 0, lineno = 0, n = 0;
        char joined[512];
        uint8_t u16[256];
        static const mb_str id = { "debian-6.1.0-26-amd64.conf", 26 };
        static const mb_str id2 = { "fedora-6.5.conf", 15 };
        mb_err err;

        if (!buf)
                return 0;
        memcpy(buf, data, size);

        /* The raw line iterator: every slice must lie in the buffer. */
        while ((err = mb_conf_next(buf, size, &off, &lineno, &l)) == MB_OK) {
                if (l.key.p < buf || l.key.p + l.key.len > buf + size || l.value.len > size)
                        abort();
                touch(l.key);
                touch(l.value);
                if (++n > size + 1)
                        abort(); /* no progress */
        }

        if (mb_bls_parse_entry(buf, size, id, &e) == MB_OK) {
                touch(e.title); touch(e.version); touch(e.machine_id); touch(e.sort_key);
                touch(e.linux); touch(e.efi);
                if (e.n_initrd > MB_BLS_MAX_INITRD || e.n_options > MB_BLS_MAX_OPTIONS)
                        abort();
                for (size_t i = 0; i < e.n_initrd; i++)
                        touch(e.initrd[i]);
                for (size_t i = 0; i < e.n_options; i++)
                        touch(e.options[i]);
                size_t jl = 0;
                if (mb_bls_options_join(&e, joined, sizeof(joined), &jl) == MB_OK && (jl >= sizeof(joined) || joined[jl]))
                        abort();
                size_t ub = 0;
                if (mb_utf8_to_utf16le(joined, jl < sizeof(joined) ? jl : 0, u16, sizeof(u16), &ub) == MB_OK && ub > sizeof(u16))
                        abort();
                sink += (uint64_t) mb_bls_compare(&e, &e) + mb_vercmp(e.version, e.title);
                e2 = e;
                e2.id = id2;
                int ab = mb_bls_compare(&e, &e2), ba = mb_bls_compare(&e2, &e);
                if ((ab < 0) != (ba > 0) || (ab > 0) != (ba < 0))
                        abort(); /* the sort order must be antisymmetric */
                sink += mb_bls_is_default(e.title, &e);
                if (e.n_options)
                        sink += mb_glob_match(e.options[0], e.title);
        }

        if (mb_loader_conf_parse(buf, size, &c) == MB_OK) {
                touch(c.default_glob);
                touch(c.chainload);
                sink += (uint64_t) c.timeout + c.tpm_required;
                sink += mb_glob_match(c.default_glob, c.chainload);
        }
        plan(buf, size);
        free(buf);
        return 0;
}
