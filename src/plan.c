/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The boot plan (include/mb/plan.h): the one place that decides what mshim
 * does with an ESP; the loader executes it and `mshim predict` assumes it.
 */
#include "mb/plan.h"
#include "mb/emit.h"
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

/* Decimal digits [p, end) as a value of at most MB_PLAN_COUNTER_MAX. */
static bool counter_number(const char *p, const char *end, uint32_t *ret) {
        uint32_t v = 0;

        if (p == end)
                return false;
        for (; p < end; p++) {
                if (*p < '0' || *p > '9' || v > (MB_PLAN_COUNTER_MAX - (uint32_t) (*p - '0')) / 10)
                        return false;
                v = v * 10 + (uint32_t) (*p - '0');
        }
        *ret = v;
        return true;
}

/* BLS "Boot counting": "+LEFT" or "+LEFT-DONE" right before ".conf" (the
 * listing's case of the suffix), after a NAME of at least one byte. */
void mb_plan_counter_parse(mb_str name, mb_plan_counter *ret) {
        static const char suffix[] = ".conf";
        size_t slen = sizeof(suffix) - 1, plus, dash;
        mb_plan_counter c = { 0 };

        mb_memset(ret, 0, sizeof(*ret));
        if (name.len <= slen + 2)
                return;
        for (size_t i = 0; i < slen; i++)
                if ((name.p[name.len - slen + i] | 0x20) != suffix[i])
                        return;
        plus = name.len - slen;
        while (plus > 0 && name.p[plus - 1] != '+')
                plus--;
        if (plus < 2)
                return;         /* no '+', or no NAME before it */
        for (dash = plus; dash < name.len - slen && name.p[dash] != '-'; dash++)
                ;
        if (!counter_number(name.p + plus, name.p + dash, &c.left))
                return;
        if (dash < name.len - slen && !counter_number(name.p + dash + 1, name.p + name.len - slen, &c.done))
                return;
        c.counted = true;
        c.stem = plus - 1;
        *ret = c;
}

mb_err mb_plan_entry_id(mb_str name, char *buf, size_t cap, mb_str *ret) {
        mb_plan_counter c;
        size_t slen = 5, n;     /* ".conf" */

        mb_plan_counter_parse(name, &c);
        n = c.counted ? c.stem + slen : name.len;
        if (n > cap)
                return MB_ERR_NOSPACE;
        if (c.counted) {
                mb_memcpy(buf, name.p, c.stem);
                mb_memcpy(buf + c.stem, name.p + name.len - slen, slen);
        } else if (n) {
                mb_memcpy(buf, name.p, n);
        }
        *ret = (mb_str) { buf, n };
        return MB_OK;
}

/* "NAME+LEFT-DONE.conf" of the next boot: one try less (not below 0), one
 * more done (systemd-boot's rename). */
static void next_name(mb_plan_entry *e) {
        mb_strbuf b;
        mb_str n = e->id;

        mb_strbuf_init(&b, e->next_name, sizeof(e->next_name));
        mb_strbuf_put(&b, n.p, e->counter.stem + 1);
        mb_strbuf_u64(&b, e->counter.left ? e->counter.left - 1 : 0);
        mb_strbuf_put(&b, "-", 1);
        mb_strbuf_u64(&b, e->counter.done < MB_PLAN_COUNTER_MAX ? e->counter.done + 1 : MB_PLAN_COUNTER_MAX);
        mb_strbuf_put(&b, n.p + n.len - 5, 5);
}

static void plan_entry(mb_plan_entry *e) {
        mb_str id;

        mb_memset(&e->bls, 0, sizeof(e->bls));
        e->err = MB_OK;
        e->bad_tag = 0;
        mb_plan_counter_parse(e->id, &e->counter);
        e->next_name[0] = 0;
        if (e->counter.counted)
                next_name(e);
        /* A name too long for the id is unreadable to mshim as well. */
        if (mb_plan_entry_id(e->id, e->id_buf, sizeof(e->id_buf), &id) != MB_OK) {
                e->bad_tag = MB_TAG_FILE_UNREADABLE;
                return;
        }
        if (!e->buf || e->size > MB_CONF_FILE_MAX) {
                e->bad_tag = MB_TAG_FILE_UNREADABLE;
                return;
        }
        e->err = mb_bls_parse_entry(e->buf, e->size, id, &e->bls);
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

static int u32_cmp(uint32_t a, uint32_t b) {
        return (a > b) - (a < b);
}

/* Usable entries: no tries left last, then mb_bls_compare, then more
 * tries left first, fewer done first (systemd-boot's boot_entry_compare);
 * unusable ones by name. */
static int entry_order(const mb_plan_entry *a, const mb_plan_entry *b) {
        bool bad_a = a->counter.counted && a->counter.left == 0, bad_b = b->counter.counted && b->counter.left == 0;
        int c;

        if (a->bad_tag)
                c = id_compare(a, b);
        else if (bad_a != bad_b)
                c = bad_a ? 1 : -1;
        else if ((c = mb_bls_compare(&a->bls, &b->bls)) == 0 && a->counter.counted && b->counter.counted)
                c = u32_cmp(b->counter.left, a->counter.left) ? u32_cmp(b->counter.left, a->counter.left)
                                                               : u32_cmp(a->counter.done, b->counter.done);

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

bool mb_plan_id_matches(mb_str want, const mb_bls_entry *e) {
        static const char suffix[] = ".conf";
        size_t slen = sizeof(suffix) - 1;
        mb_str id = e->id;

        if (want.len == id.len && mb_memcmp(want.p, id.p, id.len) == 0)
                return true;
        return id.len > slen && mb_memcmp(id.p + id.len - slen, suffix, slen) == 0 && want.len == id.len - slen &&
               mb_memcmp(want.p, id.p, want.len) == 0;
}

/* The position in boot[] of the first entry the id names; n_boot if none. */
static size_t find_id(const mb_plan *p, mb_plan_entry *const *entries, mb_str id) {
        for (size_t i = 0; id.len && i < p->n_boot; i++)
                if (mb_plan_id_matches(id, &entries[p->boot[i]]->bls))
                        return i;
        return p->n_boot;
}

static size_t find_glob(const mb_plan *p, mb_plan_entry *const *entries, mb_str glob) {
        for (size_t i = 0; glob.len && i < p->n_boot; i++)
                if (mb_bls_is_default(glob, &entries[p->boot[i]]->bls))
                        return i;
        return p->n_boot;
}

/* The default (systemd-boot's precedence, the Boot Loader Interface's
 * variables before loader.conf), then rotate the sorted usable entries
 * so it comes first. */
static void plan_default(mb_plan *p, const mb_plan_vars *vars, mb_plan_entry *const *entries) {
        size_t first, tmp[MB_PLAN_MAX_ENTRIES];

        if (vars && vars->oneshot_set && (first = find_id(p, entries, vars->oneshot)) < p->n_boot)
                p->default_from = MB_PLAN_DEFAULT_ONESHOT;
        else if (vars && (first = find_id(p, entries, vars->entry_default)) < p->n_boot)
                p->default_from = MB_PLAN_DEFAULT_VAR;
        else if ((first = find_glob(p, entries, p->conf.default_glob)) < p->n_boot)
                p->default_from = MB_PLAN_DEFAULT_CONF;
        else
                first = 0;
        p->default_pos = first;
        for (size_t k = 0; k < p->n_boot; k++)
                tmp[k] = p->boot[(first + k) % p->n_boot];
        for (size_t k = 0; k < p->n_boot; k++)
                p->boot[k] = tmp[k];
}

/* How the menu appears (loader.conf(5)'s timeout), and its editor: the
 * built-in policy's "editor no" wins over anything loader.conf says, and
 * loader.conf may only turn it off (docs/CONFIG.md "The boot menu"). */
static void plan_menu(mb_plan *p, const mb_boot_policy *policy) {
        int64_t t = p->conf.timeout;

        p->menu = t == MB_TIMEOUT_MENU_FORCE ? MB_PLAN_MENU_FORCE
                : t == MB_TIMEOUT_MENU_DISABLED ? MB_PLAN_MENU_DISABLED
                : t > 0 ? MB_PLAN_MENU_TIMEOUT : MB_PLAN_MENU_HIDDEN;
        /* 1..MB_TIMEOUT_MAX (UINT32_MAX): fits. */
        p->menu_timeout = p->menu == MB_PLAN_MENU_TIMEOUT ? (uint32_t) t : 0;
        p->editor = !policy->editor_off && p->conf.editor != MB_NO;
}

static mb_plan_step step(uint32_t pcr, mb_plan_src src, uint32_t type, uint32_t tag, size_t entry) {
        return (mb_plan_step) { .pcr = (uint8_t) pcr, .src = (uint8_t) src, .type = type, .tag = tag,
                                /* < MB_PLAN_MAX_ENTRIES: fits */
                                .entry = (uint16_t) entry };
}

size_t mb_plan_try_steps(mb_totp_mode totp, bool linux_entry, bool counted, size_t entry,
                         mb_plan_step ret[MB_PLAN_TRY_STEPS]) {
        size_t n = 0;

        /* The file before anything it names is read: what the PCR says was
         * considered, even if it then fails. */
        ret[n++] = step(5, MB_PLAN_SRC_ENTRY, MB_EV_EVENT_TAG, MB_TAG_BLS_ENTRY, entry);
        /* One try used, before its image is loaded: a kernel that hangs
         * has been counted (BLS "Boot counting"). */
        if (counted)
                ret[n++] = step(0, MB_PLAN_SRC_COUNTER, 0, 0, entry);
        /* After LoadImage (the firmware's PCR 4 event): the very buffer
         * the image gets as LoadOptions. */
        ret[n++] = step(12, MB_PLAN_SRC_CMDLINE, MB_EV_IPL, 0, entry);
        ret[n++] = step(9, MB_PLAN_SRC_INITRD, MB_EV_EVENT_TAG, MB_TAG_LINUX_INITRD, entry);
        /* The TOTP point: what the code vouches for, then the fence. An
         * EFI program loads its own initrd after the code: none for it. */
        if (totp != MB_TOTP_NO && linux_entry)
                ret[n++] = step(12, MB_PLAN_SRC_TOTP_INITRD, MB_EV_EVENT_TAG, MB_TAG_TOTP_INITRD, entry);
        if (totp != MB_TOTP_NO)
                ret[n++] = step(12, MB_PLAN_SRC_TOTP_FENCE, MB_EV_EVENT_TAG, MB_TAG_TOTP_FENCE, entry);
        /* Nothing mshim starts may find PCR 13 at zero, whatever
         * loader.conf says (docs/SEALING.md "The TOTP key"). */
        ret[n++] = step(13, MB_PLAN_SRC_TOTP_LOCK, MB_EV_EVENT_TAG, MB_TAG_TOTP_FENCE, entry);
        return n;
}

/* The sequence of mshim's own measurements (docs/MEASUREMENTS.md). */
static void plan_steps(mb_plan *p, mb_plan_entry *const *entries) {
        p->start[p->n_start++] = step(5, MB_PLAN_SRC_LOADER_CONF, MB_EV_EVENT_TAG, p->conf_tag, 0);
        /* Every unusable file before anything is booted: a broken entry is
         * never the PCR 5 of no entry. */
        for (size_t k = 0; k < p->n_unusable; k++)
                p->start[p->n_start++] = step(5, MB_PLAN_SRC_UNUSABLE, MB_EV_EVENT_TAG,
                                              entries[p->unusable[k]]->bad_tag, p->unusable[k]);
        for (size_t k = 0; k < p->n_boot; k++)
                p->n_tries[k] = mb_plan_try_steps(p->totp, entries[p->boot[k]]->bls.linux.len > 0,
                                                  entries[p->boot[k]]->counter.counted, p->boot[k], p->tries[k]);
        /* As shim: the options passed on, so PCR 12 never stays at its
         * reset value; the fence (no code: an EFI program loads after it). */
        p->chain[p->n_chain++] = step(12, MB_PLAN_SRC_CHAINLOAD, MB_EV_EVENT_TAG, MB_TAG_CHAINLOAD, 0);
        if (p->totp != MB_TOTP_NO)
                p->chain[p->n_chain++] = step(12, MB_PLAN_SRC_TOTP_FENCE, MB_EV_EVENT_TAG, MB_TAG_TOTP_FENCE, 0);
        p->chain[p->n_chain++] = step(13, MB_PLAN_SRC_TOTP_LOCK, MB_EV_EVENT_TAG, MB_TAG_TOTP_FENCE, 0);
        /* Both PCRs mshim owns, then the lock: the firmware may start
         * another loader without a TPM reset. */
        p->exit[p->n_exit++] = step(5, MB_PLAN_SRC_EXIT, MB_EV_EVENT_TAG, MB_TAG_EXIT, 0);
        p->exit[p->n_exit++] = step(12, MB_PLAN_SRC_EXIT, MB_EV_EVENT_TAG, MB_TAG_EXIT, 0);
        p->exit[p->n_exit++] = step(13, MB_PLAN_SRC_TOTP_LOCK, MB_EV_EVENT_TAG, MB_TAG_TOTP_FENCE, 0);
}

mb_err mb_plan_build(const mb_boot_policy *policy, const mb_plan_vars *vars, mb_plan_conf_state conf_state,
                     const char *conf, size_t conf_size, mb_plan_entry *const *entries, size_t n, mb_plan *ret) {
        mb_plan p;

        if (!policy || !ret || n > MB_PLAN_MAX_ENTRIES || (n && !entries) ||
            (vars && ((!vars->oneshot.p && vars->oneshot.len) || (!vars->entry_default.p && vars->entry_default.len))) ||
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
        plan_default(&p, vars, entries);
        plan_menu(&p, policy);
        p.delete_oneshot = vars && vars->oneshot_set;
        p.chainload = p.n_boot == 0;
        plan_steps(&p, entries);
        *ret = p;
        return MB_OK;
}

size_t mb_plan_sorted(const mb_plan *p, size_t k) {
        return p->boot[(k + p->n_boot - p->default_pos) % p->n_boot];
}

mb_err mb_plan_choose(mb_plan *p, size_t entry, const mb_str *edited) {
        size_t first = 0, boot[MB_PLAN_MAX_ENTRIES], n_tries[MB_PLAN_MAX_ENTRIES];
        mb_plan_step tries[MB_PLAN_MAX_ENTRIES][MB_PLAN_TRY_STEPS];

        while (first < p->n_boot && p->boot[first] != entry)
                first++;
        if (first == p->n_boot)
                return MB_ERR_NOTFOUND;
        if (edited && !p->editor)
                return MB_ERR_UNSUPPORTED;
        if (edited && !edited->p && edited->len)
                return MB_ERR_INVALID;
        if (edited && edited->len > MB_PLAN_CMDLINE_MAX)
                return MB_ERR_TOOLONG;
        /* Rotate boot[] and its tries together: each try names its entry,
         * so its steps stay what they were. */
        for (size_t k = 0; k < p->n_boot; k++) {
                size_t from = (first + k) % p->n_boot;

                boot[k] = p->boot[from];
                n_tries[k] = p->n_tries[from];
                mb_memcpy(tries[k], p->tries[from], sizeof(tries[k]));
        }
        mb_memcpy(p->boot, boot, p->n_boot * sizeof(boot[0]));
        mb_memcpy(p->n_tries, n_tries, p->n_boot * sizeof(n_tries[0]));
        mb_memcpy(p->tries, tries, p->n_boot * sizeof(tries[0]));
        p->default_pos = (p->default_pos + first) % p->n_boot;
        p->chosen = true;
        if (edited) {
                for (size_t s = 0; s < p->n_tries[0]; s++)
                        if (p->tries[0][s].src == MB_PLAN_SRC_CMDLINE)
                                p->tries[0][s].src = MB_PLAN_SRC_CMDLINE_EDITED;
                p->edited_set = true;
                p->edited = *edited;
        }
        return MB_OK;
}
