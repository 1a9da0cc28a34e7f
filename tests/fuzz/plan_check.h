/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The boot plan's invariant, for the fuzz targets that build plans
 * (fuzz_bls.c, fuzz_plan.c): each of the n entries is in exactly one of
 * the plan's lists, tried (a usable entry, parsed) or measured as
 * unusable; chainload exactly when nothing is usable; the built-in
 * policy's TOTP floor (show) kept. abort() on a plan that breaks it.
 */
#ifndef MB_FUZZ_PLAN_CHECK_H
#define MB_FUZZ_PLAN_CHECK_H

#include <stdlib.h>
#include "mb/plan.h"

static inline void fuzz_plan_check(const mb_plan *p, const mb_plan_entry *e, size_t n) {
        uint64_t seen = 0;      /* n <= MB_PLAN_MAX_ENTRIES (64) */

        if (p->n_boot + p->n_unusable != n || p->chainload != (p->n_boot == 0) || p->totp < MB_TOTP_SHOW)
                abort();
        for (size_t k = 0; k < n; k++) {
                bool tried = k < p->n_boot;
                size_t i = tried ? p->boot[k] : p->unusable[k - p->n_boot];

                if (i >= n || (seen >> i & 1) || (e[i].bad_tag == 0) != tried)
                        abort();
                seen |= (uint64_t) 1 << i;
        }
}

#endif
