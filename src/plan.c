/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The boot plan (include/mb/plan.h): the one place that decides what mshim
 * does with an ESP; the loader executes it and `mshim predict` assumes it.
 */
#include "mb/plan.h"
#include "mb/tcglog.h"

/* loader.conf: parsed, or the defaults of include/mb/plan.h. */
static void plan_conf(mb_plan_conf_state state, const char *buf, size_t size, mb_plan *p) {
        size_t err_line;

        mb_memset(&p->conf, 0, sizeof(p->conf));
        if (state == MB_PLAN_CONF_READ && size > MB_CONF_FILE_MAX)
                state = MB_PLAN_CONF_UNREADABLE;        /* mshim does not read past it */
        p->conf_tag = state == MB_PLAN_CONF_ABSENT ? MB_TAG_FILE_ABSENT
                    : state == MB_PLAN_CONF_UNREADABLE ? MB_TAG_FILE_UNREADABLE : MB_TAG_LOADER_CONF;
        if (state == MB_PLAN_CONF_READ && mb_loader_conf_parse(buf, size, &p->conf) == MB_OK) {
                p->conf_defaulted = false;
                return;
        }
        /* Keep the line a parse failure blamed, for the loader's message. */
        err_line = p->conf.err_line;
        mb_memset(&p->conf, 0, sizeof(p->conf));
        p->conf.err_line = err_line;
        p->conf.timeout = MB_TIMEOUT_UNSET;
        p->conf.totp_timeout = MB_TOTP_TIMEOUT_DEFAULT;
        p->conf_defaulted = state != MB_PLAN_CONF_ABSENT;
        p->conf.tpm_required = p->conf_defaulted ? MB_YES : MB_UNSET;
        p->conf.totp = p->conf_defaulted ? MB_TOTP_SHOW : MB_TOTP_NO;
}

static void plan_entry(mb_plan_entry *e) {
        mb_memset(&e->bls, 0, sizeof(e->bls));
        e->err = MB_OK;
        e->bad_tag = 0;
        if (!e->buf || e->size > MB_CONF_FILE_MAX) {
                e->bad_tag = MB_TAG_FILE_UNREADABLE;
                return;
        }
        e->err = mb_bls_parse_entry(e->buf, e->size, e->id, &e->bls);
        if (e->err != MB_OK)
                e->bad_tag = MB_TAG_BLS_ENTRY_BAD;
}

/* Byte order of the UTF-8 file names: the order a host tool gets from
 * sorting the names, whatever order the firmware lists them in. */
static int id_compare(const mb_plan_entry *a, const mb_plan_entry *b) {
        size_t n = a->id.len < b->id.len ? a->id.len : b->id.len;
        int c = n ? mb_memcmp(a->id.p, b->id.p, n) : 0;

        return c ? c : (a->id.len > b->id.len) - (a->id.len < b->id.len);
}

/* Usable entries in mb_bls_compare order, unusable ones by name. */
static int entry_order(const mb_plan_entry *a, const mb_plan_entry *b) {
        int c = a->bad_tag ? id_compare(a, b) : mb_bls_compare(&a->bls, &b->bls);

        /* Equal by the BLS rules (same sort key, version and id cannot
         * happen for two files, but keep the order total): by name. */
        return c ? c : id_compare(a, b);
}

/* Insertion sort of indices: a few dozen entries at most, and stable. */
static void sort_indices(size_t *v, size_t n, mb_plan_entry *const *entries) {
        for (size_t i = 1; i < n; i++) {
                size_t x = v[i], j = i;

                for (; j > 0 && entry_order(entries[x], entries[v[j - 1]]) < 0; j--)
                        v[j] = v[j - 1];
                v[j] = x;
        }
}

/* Rotate the sorted usable entries so the default comes first. */
static void plan_default(mb_plan *p, mb_plan_entry *const *entries) {
        size_t first = 0, tmp[MB_PLAN_MAX_ENTRIES];

        if (p->conf.default_glob.len)
                for (size_t i = 0; i < p->n_boot; i++)
                        if (mb_bls_is_default(p->conf.default_glob, &entries[p->boot[i]]->bls)) {
                                first = i;
                                break;
                        }
        for (size_t k = 0; k < p->n_boot; k++)
                tmp[k] = p->boot[(first + k) % p->n_boot];
        for (size_t k = 0; k < p->n_boot; k++)
                p->boot[k] = tmp[k];
}

mb_err mb_plan_build(const mb_boot_policy *policy, mb_plan_conf_state conf_state, const char *conf,
                     size_t conf_size, mb_plan_entry *const *entries, size_t n, mb_plan *ret) {
        mb_plan p;

        if (!policy || !ret || n > MB_PLAN_MAX_ENTRIES || (n && !entries) ||
            (conf_state == MB_PLAN_CONF_READ && !conf && conf_size))
                return MB_ERR_INVALID;
        mb_memset(&p, 0, sizeof(p));
        plan_conf(conf_state, conf, conf_size, &p);
        /* The built-in policy sets the floors; loader.conf can only raise
         * them (docs/CONFIG.md "The built-in boot policy"). */
        p.tpm_required = policy->tpm_required || p.conf.tpm_required == MB_YES;
        p.tpm_failure_boot = policy->tpm_failure_boot;
        p.totp = mb_boot_totp_mode(policy, p.conf.totp);

        for (size_t i = 0; i < n; i++) {
                if (!entries[i])
                        return MB_ERR_INVALID;
                plan_entry(entries[i]);
                if (entries[i]->bad_tag)
                        p.unusable[p.n_unusable++] = i;
                else
                        p.boot[p.n_boot++] = i;
        }
        sort_indices(p.boot, p.n_boot, entries);
        sort_indices(p.unusable, p.n_unusable, entries);
        plan_default(&p, entries);
        p.chainload = p.n_boot == 0;
        *ret = p;
        return MB_OK;
}
