/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The boot plan (src/plan.c) with everything an attacker sets: loader.conf,
 * the entry files' names (boot counters, "NAME+LEFT-DONE.conf") and bytes,
 * and the Boot Loader Interface variables LoaderEntryOneShot and
 * LoaderEntryDefault. fuzz_bls covers the entry and loader.conf parsers
 * with fixed names; this target lets the input choose the names and the
 * variables too.
 *
 * Input: fields separated by NUL bytes: loader.conf; the entry names,
 * '/'-separated (at most 8); LoaderEntryOneShot ("-" first: not set);
 * LoaderEntryDefault; then one field per entry, its bytes ("\x01" alone:
 * unreadable).
 */
#include <stdlib.h>
#include <string.h>

#include "mb/plan.h"
#include "plan_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define N_MAX 8

/* The next NUL-separated field of buf from *off (the rest when no NUL). */
static mb_str field(const char *buf, size_t size, size_t *off) {
        mb_str s = { buf + *off, 0 };

        while (*off < size && buf[*off])
                (*off)++, s.len++;
        if (*off < size)
                (*off)++;
        return s;
}

/* A counter the plan found must be the name's own, and the name the loader
 * renames the file to must carry LEFT - 1 (not below 0) and DONE + 1. */
static void check_counter(const mb_plan_entry *e) {
        mb_plan_counter again;
        size_t n;

        if (!e->counter.counted)
                return;
        if (e->counter.left > MB_PLAN_COUNTER_MAX || e->counter.done > MB_PLAN_COUNTER_MAX ||
            e->counter.stem >= e->id.len)
                abort();
        n = strnlen(e->next_name, sizeof(e->next_name));
        if (n == sizeof(e->next_name))
                abort();
        if (!n)
                return; /* no rename: the counters are at their limit */
        mb_plan_counter_parse((mb_str) { e->next_name, n }, &again);
        if (!again.counted || again.left != (e->counter.left ? e->counter.left - 1 : 0) ||
            (e->counter.done < MB_PLAN_COUNTER_MAX && again.done != e->counter.done + 1))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const mb_boot_policy policy = { .totp = MB_TOTP_SHOW };
        char *buf = malloc(size ? size : 1), names[N_MAX][MB_PLAN_NAME_MAX];
        mb_plan_entry e[N_MAX], *pv[N_MAX];
        mb_plan_vars vars = { 0 };
        size_t off = 0, n = 0;
        mb_str conf, list, one, def;
        mb_plan p;

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        conf = field(buf, size, &off);
        list = field(buf, size, &off);
        one = field(buf, size, &off);
        def = field(buf, size, &off);
        vars.oneshot_set = !(one.len && one.p[0] == '-');
        vars.oneshot = one;
        vars.entry_default = def;
        for (size_t i = 0; i <= list.len && n < N_MAX;) {
                size_t j = i;
                while (j < list.len && list.p[j] != '/')
                        j++;
                size_t len = j - i < MB_PLAN_NAME_MAX - 1 ? j - i : MB_PLAN_NAME_MAX - 1;
                memcpy(names[n], list.p + i, len);
                names[n][len] = 0;
                mb_str body = field(buf, size, &off);
                e[n] = (mb_plan_entry) { .id = { names[n], len } };
                if (!(body.len == 1 && body.p[0] == 1)) {
                        e[n].buf = body.p;
                        e[n].size = body.len;
                }
                pv[n] = &e[n];
                n++;
                i = j + 1;
        }

        if (mb_plan_build(&policy, &vars, MB_PLAN_CONF_READ, conf.p, conf.len, pv, n, &p) != MB_OK)
                abort();
        /* Every entry exactly once: tried or measured as unusable. */
        fuzz_plan_check(&p, e, n);
        for (size_t k = 0; k < n; k++)
                check_counter(&e[k]);
        /* OneShot is deleted whenever it exists, whatever it names. */
        if (p.delete_oneshot != vars.oneshot_set)
                abort();
        free(buf);
        return 0;
}
